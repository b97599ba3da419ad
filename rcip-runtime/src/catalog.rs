//! The compiled catalog: a validated definition with every validator compiled once.
//!
//! Compile once, run many: a [`CompiledCatalog`] is an immutable value behind an `Arc`, so
//! any number of runtimes (one per server request, one per user session) can be created from
//! it with [`Runtime::from_catalog`](crate::Runtime::from_catalog) without any schema work.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use rcip_core::{
    ApplicationDefinition, ApplicationMetadata, CapabilityContract, CapabilityDefinition,
    DefinitionError, Schema, SchemaIds, SchemaRole, ScopeDefinition, check_examples, check_schema,
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
        let mut schemas = Interner::default();
        // First every check, on the borrowed definition (the `$id` record borrows its
        // schemas), capability by capability, so errors come out in catalog order.
        let mut entries = Vec::with_capacity(definition.capabilities.len());
        let mut ids = SchemaIds::default();
        for cap in &definition.capabilities {
            let input = schemas.intern(cap, SchemaRole::Input, &cap.input_schema, &mut ids)?;
            let output = schemas.intern(cap, SchemaRole::Output, &cap.output_schema, &mut ids)?;
            check_examples(cap)?;
            let examples = cap.usage.iter().flat_map(|u| u.examples.iter().flatten());
            for example in examples {
                if schemas.distinct[input].1.check(&example.input).is_err() {
                    return Err(DefinitionError::InvalidUsageExample(cap.id.clone()).into());
                }
            }
            entries.push((input, output));
        }
        drop(ids);

        // Then the contracts: each takes its definition's texts by move and the one shared
        // copy of each of its schemas (an equal copy of its own is dropped here).
        let ApplicationDefinition {
            application,
            scopes,
            capabilities: declared,
            ..
        } = definition;
        let mut capabilities = Vec::with_capacity(declared.len());
        for (mut cap, (input, output)) in declared.into_iter().zip(entries) {
            let (input_schema, input) = schemas.distinct[input].clone();
            let (output_schema, output) = schemas.distinct[output].clone();
            cap.input_schema = input_schema;
            cap.output_schema = output_schema;
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
        let scope_ids = scopes.iter().map(|s| s.id.clone()).collect();
        Ok(Arc::new(CompiledCatalog {
            application: Arc::new(application),
            scopes: Arc::from(scopes),
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

/// The distinct schemas of a catalog being compiled, each checked and compiled once, with
/// the capabilities' schemas mapped to them.
///
/// Identical schemas (by content) share one entry, so one validator, as the reference's
/// validator cache does; that is also what makes a repeated identical `$id` fine. Content is
/// told by [`Schema::shared`] (schemas are shared by content as they are made, so this is
/// mostly the schema itself); a value already seen is found by its address.
#[derive(Default)]
struct Interner {
    /// Each distinct schema (the live value of its content) and its validator.
    distinct: Vec<(Schema, Arc<SchemaValidator>)>,
    /// A schema value already seen (the definition's, or the live one of its content), by
    /// address; the definition and `distinct` keep each alive (so its address unique) while
    /// the interner is used.
    by_address: HashMap<*const Value, usize>,
}

impl Interner {
    /// The entry of `schema`, checked ([`check_schema`], `$id`s included) and compiled when
    /// its content is new.
    fn intern<'a>(
        &mut self,
        cap: &CapabilityDefinition,
        role: SchemaRole,
        schema: &'a Schema,
        ids: &mut SchemaIds<'a>,
    ) -> Result<usize, DefinitionError> {
        let address = Arc::as_ptr(schema.as_arc());
        if let Some(&entry) = self.by_address.get(&address) {
            // The very value that passed every check below.
            return Ok(entry);
        }
        // On a schema equal to one already interned it passes again and records nothing new.
        check_schema(&cap.id, role, schema, ids)?;
        let shared = schema.shared();
        let key = Arc::as_ptr(shared.as_arc());
        let entry = match self.by_address.get(&key) {
            Some(&entry) => entry,
            None => {
                let validator =
                    shared_validator(&shared).map_err(|reason| DefinitionError::InvalidSchema {
                        id: cap.id.clone(),
                        role,
                        rule: "INVALID_JSON_SCHEMA",
                        pointer: String::new(),
                        reason,
                    })?;
                self.distinct.push((shared, validator));
                self.by_address.insert(key, self.distinct.len() - 1);
                self.distinct.len() - 1
            }
        };
        self.by_address.insert(address, entry);
        Ok(entry)
    }
}

/// The validators compiled in this process, by the address of the schema value they were
/// compiled from. That value is the live one of its content ([`Schema::shared`]), so a
/// catalog compiled from an equal definition, in any runtime, reuses the validator of an
/// equal schema still alive. Both sides are `Weak`: the cache keeps nothing alive, and a `Weak<Value>` keeps
/// its allocation (so its address) from being reused while the entry exists.
static VALIDATORS: LazyLock<Mutex<Validators>> = LazyLock::new(Mutex::default);

#[derive(Default)]
struct Validators {
    by_address: HashMap<usize, (Weak<Value>, Weak<SchemaValidator>)>,
    /// Entries added since the last sweep of dead ones.
    added: usize,
}

/// The validator of `schema`: a live one compiled from the same value, or a new one.
fn shared_validator(schema: &Schema) -> Result<Arc<SchemaValidator>, String> {
    let value = schema.as_arc();
    let address = Arc::as_ptr(value) as usize;
    let live = |cache: &Validators| {
        let (held, validator) = cache.by_address.get(&address)?;
        held.upgrade()
            .filter(|held| Arc::ptr_eq(held, value))
            .and(validator.upgrade())
    };
    if let Some(validator) = live(&VALIDATORS.lock().unwrap_or_else(PoisonError::into_inner)) {
        return Ok(validator);
    }
    // Compiled outside the lock: another catalog's compile need not wait for this one.
    let validator = SchemaValidator::compile(schema)?;
    let mut cache = VALIDATORS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(raced) = live(&cache) {
        return Ok(raced);
    }
    cache
        .by_address
        .insert(address, (Arc::downgrade(value), Arc::downgrade(&validator)));
    cache.added += 1;
    // Amortized: a sweep when the additions since the last reach the table's size.
    if cache.added >= cache.by_address.len().max(64) {
        cache
            .by_address
            .retain(|_, (held, validator)| held.strong_count() > 0 && validator.strong_count() > 0);
        cache.added = 0;
    }
    Ok(validator)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rcip_core::{CapabilityDefinition, Effect};
    use serde_json::json;

    use super::*;

    fn definition() -> ApplicationDefinition {
        // Built apart each time, equal by content.
        ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
            CapabilityDefinition::new("notes.find", Effect::Read, "Find", "Finds a note.")
                .input_schema(json!({"type": "object",
                    "properties": {"text": {"type": "string", "maxLength": 77}},
                    "required": ["text"], "additionalProperties": false}))
                .output_schema(json!({"type": "string", "minLength": 7})),
        )
    }

    /// Schemas changed apart (`make_mut`, outside the table of live schemas) into equal
    /// values are still one entry: one value and one validator for both contracts.
    #[test]
    fn schemas_changed_apart_into_equal_values_are_one_entry() {
        let changed = |id: &str| {
            let mut schema = Schema::from(json!({"type": "string"}));
            schema.make_mut()["maxLength"] = json!(12_345);
            CapabilityDefinition::new(id, Effect::Read, "Find", "Finds.").output_schema(schema)
        };
        let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.")
            .capability(changed("notes.a"))
            .capability(changed("notes.b"));
        let (a, b) = (
            &definition.capabilities[0].output_schema,
            &definition.capabilities[1].output_schema,
        );
        assert!(!Schema::ptr_eq(a, b), "changed apart: two values");
        let catalog = CompiledCatalog::compile(definition).unwrap();
        let (a, b) = (&catalog.capabilities[0], &catalog.capabilities[1]);
        assert!(Arc::ptr_eq(&a.output, &b.output));
        assert!(Schema::ptr_eq(
            &a.contract.output_schema,
            &b.contract.output_schema
        ));
    }

    /// Two catalogs compiled from equal definitions built apart share their validators.
    #[test]
    fn equal_schemas_share_one_validator_across_catalogs() {
        let a = CompiledCatalog::compile(definition()).unwrap();
        let b = CompiledCatalog::compile(definition()).unwrap();
        assert!(Arc::ptr_eq(
            &a.capabilities[0].input,
            &b.capabilities[0].input
        ));
        assert!(Arc::ptr_eq(
            &a.capabilities[0].output,
            &b.capabilities[0].output
        ));
        // Once every holder is gone, a new compile makes a new one (nothing kept alive).
        let weak = Arc::downgrade(&a.capabilities[0].input);
        drop((a, b));
        assert_eq!(weak.strong_count(), 0);
        let c = CompiledCatalog::compile(definition()).unwrap();
        assert!(c.capabilities[0].input.check(&json!({"text": "x"})).is_ok());
    }
}
