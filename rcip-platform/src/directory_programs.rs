//! The engine's [`ProgramSource`] over the directory: the programs activated in a workspace
//! (and the installed ones) as every instance on one database sees them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::directory::{DirectoryStore, ProgramVersion};
use rcip_records::{ProgramSource, StoreError, StoreFuture};
use rcip_relationship::{Package, validate_package};

/// Finds the programs the engine has not seen in the [`DirectoryStore`]: a version
/// activated through another instance, or installed, is runnable here at the next call
/// that names it. [`Platform::open`](crate::Platform::open) gives it to the engine.
///
/// A stored version is validated once per content: the parsed package is kept by its digest
/// (versions are immutable), so a record call without a version, which asks for the
/// highest one every time, costs the directory lookup only.
#[derive(Debug, Clone)]
pub struct DirectoryPrograms {
    directory: Arc<dyn DirectoryStore>,
    parsed: Arc<Mutex<HashMap<String, Package>>>,
}

impl DirectoryPrograms {
    /// Over `directory`.
    #[must_use]
    pub fn new(directory: Arc<dyn DirectoryStore>) -> Self {
        Self {
            directory,
            parsed: Arc::default(),
        }
    }
}

impl ProgramSource for DirectoryPrograms {
    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: Option<u64>,
    ) -> StoreFuture<'a, Result<Option<Package>, StoreError>> {
        Box::pin(async move {
            let found = match version {
                Some(version) => {
                    self.directory
                        .program(workspace_id, namespace, version)
                        .await?
                }
                // In (namespace, version) order: the last is the highest.
                None => self
                    .directory
                    .program_versions(workspace_id, Some(namespace))
                    .await?
                    .pop(),
            };
            found.map(|v| self.parse(&v)).transpose()
        })
    }
}

impl DirectoryPrograms {
    fn parse(&self, version: &ProgramVersion) -> Result<Package, StoreError> {
        let cached = || self.parsed.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(package) = cached().get(&version.digest) {
            return Ok(package.clone());
        }
        let package = compile(version)?;
        cached().insert(version.digest.clone(), package.clone());
        Ok(package)
    }
}

/// A stored version's package, parsed: it passed the validator when it was activated, so
/// a failure now is the store's (or a validator that became stricter), never the caller's.
fn compile(version: &ProgramVersion) -> Result<Package, StoreError> {
    validate_package(&version.package).map_err(|error| {
        StoreError(format!(
            "the stored package {}/{} no longer validates: {error}",
            version.namespace, version.version
        ))
    })
}
