//! The compiled catalog: a validated definition with every validator compiled once.
//!
//! Compile once, run many: a [`CompiledCatalog`] is an immutable value behind an `Arc`, so
//! any number of runtimes (one per server request, one per user session) can be created from
//! it with [`Runtime::from_catalog`](crate::Runtime::from_catalog) without any schema work.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rcip_core::{
    ApplicationDefinition, ApplicationMetadata, CapabilityContract, CapabilityDefinition,
    DefinitionError, SchemaIds, SchemaRole, ScopeDefinition, check_examples, check_schema,
    validate_structure,
};
use serde_json::Value;

use crate::validation::SchemaValidator;

/// One capability: its published contract and its compiled validators.
#[derive(Debug)]
pub(crate) struct CompiledCapability {
    pub(crate) contract: Arc<CapabilityContract>,
    pub(crate) input: Arc<SchemaValidator>,
    pub(crate) output: Arc<SchemaValidator>,
}

impl std::ops::Deref for CompiledCapability {
    type Target = CapabilityContract;

    fn deref(&self) -> &CapabilityContract {
        &self.contract
    }
}

/// A validated catalog with compiled validators and an id index.
///
/// ```
/// use rcip_runtime::{ApplicationDefinition, CapabilityDefinition, CompiledCatalog, Effect};
/// use rcip_runtime::{Runtime, RuntimeOptions};
///
/// let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
///     CapabilityDefinition::new("notes.count", Effect::Read, "Count notes", "Counts the notes.")
///         .output_schema(serde_json::json!({"type": "integer"})),
/// );
/// let catalog = CompiledCatalog::compile(definition)?;
/// // Cheap: no schema is compiled again.
/// let a = Runtime::from_catalog(catalog.clone(), RuntimeOptions::default());
/// let b = Runtime::from_catalog(catalog, RuntimeOptions::default());
/// # let _ = (a, b);
/// # Ok::<(), rcip_runtime::Error>(())
/// ```
#[derive(Debug)]
pub struct CompiledCatalog {
    pub(crate) application: Arc<ApplicationMetadata>,
    pub(crate) scopes: Arc<[ScopeDefinition]>,
    pub(crate) scope_ids: HashSet<String>,
    pub(crate) capabilities: Box<[CompiledCapability]>,
    /// A fast hasher, since lookups are on the invoke path; seeded per process (foldhash,
    /// like the reservation table), since a catalog that is data may come from elsewhere and
    /// must not be able to pick colliding ids.
    index: HashMap<Arc<str>, usize, foldhash::fast::RandomState>,
}

impl CompiledCatalog {
    /// Validates the definition (every rule of
    /// [`validate_definition`](rcip_core::validate_definition), plus meta-schema validity of
    /// each schema and each usage example against its input schema) and compiles each
    /// distinct schema once.
    ///
    /// # Errors
    ///
    /// The first [`DefinitionError`] found, wrapped in [`Error::Definition`](crate::Error).
    pub fn compile(definition: ApplicationDefinition) -> Result<Arc<Self>, crate::Error> {
        validate_structure(&definition)?;
        let mut ids = SchemaIds::default();
        // Identical schemas (by their JSON text) share one validator, as the reference's
        // validator cache does; that is also what makes a repeated identical `$id` fine.
        let mut cache: HashMap<String, Arc<SchemaValidator>> = HashMap::new();
        let mut compile = |cap: &CapabilityDefinition, role: SchemaRole, schema: &Value| {
            let key = schema.to_string();
            if let Some(found) = cache.get(&key) {
                return Ok(found.clone());
            }
            let validator = SchemaValidator::compile(schema).map_err(|reason| {
                DefinitionError::InvalidSchema {
                    id: cap.id.clone(),
                    role,
                    rule: "INVALID_JSON_SCHEMA",
                    pointer: String::new(),
                    reason,
                }
            })?;
            cache.insert(key, validator.clone());
            Ok::<_, DefinitionError>(validator)
        };

        let mut capabilities = Vec::with_capacity(definition.capabilities.len());
        // Capability by capability, so errors come out in catalog order.
        for cap in &definition.capabilities {
            check_schema(&cap.id, SchemaRole::Input, &cap.input_schema, &mut ids)?;
            let input = compile(cap, SchemaRole::Input, &cap.input_schema)?;
            check_schema(&cap.id, SchemaRole::Output, &cap.output_schema, &mut ids)?;
            let output = compile(cap, SchemaRole::Output, &cap.output_schema)?;
            check_examples(cap)?;
            let examples = cap.usage.iter().flat_map(|u| u.examples.iter().flatten());
            for example in examples {
                if input.check(&example.input).is_err() {
                    return Err(DefinitionError::InvalidUsageExample(cap.id.clone()).into());
                }
            }
            capabilities.push(CompiledCapability {
                contract: Arc::new(CapabilityContract::from(cap)),
                input,
                output,
            });
        }
        let index = capabilities
            .iter()
            .enumerate()
            .map(|(i, c)| (Arc::from(c.contract.id.as_str()), i))
            .collect();
        let scope_ids = definition.scopes.iter().map(|s| s.id.clone()).collect();
        Ok(Arc::new(CompiledCatalog {
            application: Arc::new(definition.application.clone()),
            scopes: Arc::from(definition.scopes.as_slice()),
            scope_ids,
            capabilities: capabilities.into_boxed_slice(),
            index,
        }))
    }

    /// The number of capabilities.
    #[must_use]
    pub fn len(&self) -> usize {
        self.capabilities.len()
    }

    /// Whether the catalog declares no capability.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.capabilities.is_empty()
    }

    /// Whether `id` is a declared capability.
    #[must_use]
    pub fn contains(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }

    /// The catalog position of a capability id, in O(1).
    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }
}
