//! The engine's programs: the installed ones (every workspace sees them) and those activated
//! in one workspace at run time, each `namespace/version` pinned to one content.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::activation::{Activation, Pin, PinConflict, pin_rule};
use super::error::RecordError;
use super::store::{StoreError, StoreFuture};
use rcip_relationship::{Package, TypeDef};
use rcip_runtime::__private::shared::SchemaValidator;

/// Where programs activated by other instances are found: the engine asks it when a
/// workspace names a program version it has not seen (and, for the highest version, on each
/// lookup without one), so that an activation on one instance is seen by every instance at
/// its next call. A store that keeps activated programs implements it.
pub trait ProgramSource: Send + Sync + fmt::Debug {
    /// The package activated in `workspace_id` as `namespace` at `version`; with no version,
    /// the highest version activated there. `None` when there is none.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: Option<u64>,
    ) -> StoreFuture<'a, Result<Option<Package>, StoreError>>;
}

/// A registered type: its program, definition and compiled schemas.
#[derive(Debug)]
pub(crate) struct TypeEntry {
    package: Arc<Package>,
    type_index: usize,
    pub(crate) data: Arc<SchemaValidator>,
    /// Per command (same order as the type's commands).
    pub(crate) inputs: Vec<Arc<SchemaValidator>>,
}

impl TypeEntry {
    pub(crate) fn def(&self) -> &TypeDef {
        &self.package.types[self.type_index]
    }
}

/// A program version, compiled: its package, digest and types (in the package's order).
#[derive(Debug)]
pub(crate) struct Registered {
    pub(crate) package: Arc<Package>,
    pub(crate) digest: String,
    pub(crate) types: Vec<Arc<TypeEntry>>,
}

impl Registered {
    /// Compiles every schema of `package`.
    pub(crate) fn compile(package: Package) -> Result<Self, RecordError> {
        let digest = package.digest();
        let package = Arc::new(package);
        let namespace = &package.namespace;
        let mut types = Vec::with_capacity(package.types.len());
        for (type_index, type_def) in package.types.iter().enumerate() {
            let compile = |json: &str| {
                serde_json::from_str::<Value>(json)
                    .map_err(|e| e.to_string())
                    .and_then(|schema| SchemaValidator::compile(&schema))
                    .map_err(|e| {
                        RecordError::InvalidArguments(format!(
                            "schema of {namespace}/{} does not compile: {e}",
                            type_def.name
                        ))
                    })
            };
            let data = compile(&type_def.schema.json)?;
            let inputs = type_def
                .commands
                .iter()
                .map(|c| compile(&c.input.json))
                .collect::<Result<_, _>>()?;
            types.push(Arc::new(TypeEntry {
                package: Arc::clone(&package),
                type_index,
                data,
                inputs,
            }));
        }
        Ok(Self {
            package,
            digest,
            types,
        })
    }

    pub(crate) fn type_entry(&self, type_name: &str) -> Option<Arc<TypeEntry>> {
        self.types
            .iter()
            .find(|t| t.def().name.as_ref() == type_name)
            .cloned()
    }

    fn version(&self) -> u64 {
        self.package.version
    }
}

/// namespace -> version -> program.
type Versions = HashMap<String, BTreeMap<u64, Arc<Registered>>>;

/// Every program the engine knows.
#[derive(Debug, Default)]
pub(crate) struct Programs {
    installed: Versions,
    workspaces: HashMap<String, Versions>,
}

impl Programs {
    /// The program `namespace` at `version` visible in `workspace_id` (its own, then the
    /// installed ones); without a version, the highest visible.
    pub(crate) fn find(
        &self,
        workspace_id: Option<&str>,
        namespace: &str,
        version: Option<u64>,
    ) -> Option<Arc<Registered>> {
        let own = workspace_id
            .and_then(|w| self.workspaces.get(w))
            .and_then(|v| v.get(namespace));
        let installed = self.installed.get(namespace);
        let pick = |versions: Option<&BTreeMap<u64, Arc<Registered>>>| {
            versions.and_then(|v| match version {
                Some(version) => v.get(&version).cloned(),
                None => v.values().next_back().cloned(),
            })
        };
        match (pick(own), pick(installed)) {
            (Some(a), Some(b)) => Some(if a.version() >= b.version() { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// Adds `program` (installed with no workspace), by the one-version-one-content rule
    /// ([`pin_rule`]): the same content again is a no-op (`Ok(false)`), other content at a
    /// pinned version is refused (installing a version some workspace activated with other
    /// content would change what that workspace's records mean).
    pub(crate) fn add(
        &mut self,
        workspace_id: Option<&str>,
        program: Registered,
    ) -> Result<(bool, Arc<Registered>), RecordError> {
        let namespace = program.package.namespace.to_string();
        let version = program.version();
        let pinned = |versions: &Versions| {
            versions
                .get(&namespace)
                .and_then(|v| v.get(&version))
                .map(|r| r.digest.clone())
        };
        let workspaces: Vec<&Versions> = match workspace_id {
            Some(w) => self.workspaces.get(w).into_iter().collect(),
            None => self.workspaces.values().collect(),
        };
        let installed = pinned(&self.installed);
        let own: Vec<String> = workspaces.into_iter().filter_map(pinned).collect();
        let pins = installed
            .iter()
            .map(|digest| Pin {
                installed: true,
                digest,
            })
            .chain(own.iter().map(|digest| Pin {
                installed: false,
                digest,
            }));
        match pin_rule(pins, workspace_id.is_none(), &program.digest) {
            Err(PinConflict) => return Err(RecordError::VersionConflict { namespace, version }),
            Ok(Activation::AlreadyActive) => {
                if let Some(existing) = self.find(workspace_id, &namespace, Some(version)) {
                    return Ok((false, existing));
                }
            }
            Ok(Activation::New) => {}
        }
        let versions = match workspace_id {
            Some(w) => self.workspaces.entry(w.to_owned()).or_default(),
            None => &mut self.installed,
        };
        let program = Arc::new(program);
        versions
            .entry(namespace)
            .or_default()
            .insert(version, Arc::clone(&program));
        Ok((true, program))
    }
}
