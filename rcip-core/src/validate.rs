//! Definition validation: every rule of the reference, in its order, plus the ones the
//! reference leaves unchecked.
//!
//! The order of the checks is documented on [`validate_definition`].

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::depth::{MAX_VALUE_DEPTH, exceeds_depth};
use crate::schema::{SchemaViolation, StrictRule, check_strict};
use crate::{
    ApplicationDefinition, CapabilityDefinition, RCIP_PROTOCOL_VERSION, is_valid_identifier,
};

/// Which of a capability's two schemas an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaRole {
    /// The input schema.
    Input,
    /// The output schema.
    Output,
}

impl std::fmt::Display for SchemaRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SchemaRole::Input => "input",
            SchemaRole::Output => "output",
        })
    }
}

/// A definition that the runtime refuses, with a stable [`code`](Self::code) and the id it
/// is about. Messages of rules the reference has are its messages, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DefinitionError {
    /// `protocolVersion` is not `"1.0"`.
    #[error("Unsupported RCIP protocol version: {0} (expected 1.0)")]
    UnsupportedProtocolVersion(String),
    /// The application id does not follow the identifier grammar.
    #[error("Invalid RCIP application id: {0}")]
    InvalidApplicationId(String),
    /// The application name or description is blank.
    #[error("RCIP application {id} has an empty {field}.")]
    EmptyApplicationText {
        /// The application id.
        id: String,
        /// `name` or `description`.
        field: &'static str,
    },
    /// A scope id does not follow the grammar.
    #[error("Invalid or duplicate RCIP scope id: {0}")]
    InvalidScopeId(String),
    /// A scope id is declared twice.
    #[error("Invalid or duplicate RCIP scope id: {0}")]
    DuplicateScopeId(String),
    /// A scope title or description is blank.
    #[error("RCIP scope {id} has an empty {field}.")]
    EmptyScopeText {
        /// The scope id.
        id: String,
        /// `title` or `description`.
        field: &'static str,
    },
    /// A scope names a parent that is not declared.
    #[error("RCIP scope {id} references missing parent {parent_id}")]
    MissingParentScope {
        /// The scope id.
        id: String,
        /// The undeclared parent.
        parent_id: String,
    },
    /// Following parents from a scope leads back to it.
    #[error("RCIP scope {0} is its own ancestor (parentId cycle)")]
    ScopeParentCycle(String),
    /// A capability id does not follow the grammar.
    #[error("Invalid or duplicate RCIP capability id: {0}")]
    InvalidCapabilityId(String),
    /// A capability id is declared twice.
    #[error("Invalid or duplicate RCIP capability id: {0}")]
    DuplicateCapabilityId(String),
    /// A capability title or description is blank.
    #[error("RCIP capability {id} has an empty {field}.")]
    EmptyCapabilityText {
        /// The capability id.
        id: String,
        /// `title` or `description`.
        field: &'static str,
    },
    /// `usage.whenToUse` is blank.
    #[error("RCIP capability {0} has empty usage guidance.")]
    EmptyUsageGuidance(String),
    /// A capability names an undeclared scope.
    #[error("RCIP capability {id} references missing scope {scope_id}")]
    MissingScope {
        /// The capability id.
        id: String,
        /// The undeclared scope.
        scope_id: String,
    },
    /// A capability lists the same scope twice.
    #[error("RCIP capability {id} lists scope {scope_id} more than once")]
    DuplicateCapabilityScope {
        /// The capability id.
        id: String,
        /// The repeated scope.
        scope_id: String,
    },
    /// A schema is not valid JSON Schema 2020-12 or breaks a strict rule.
    #[error("RCIP capability {id} has an invalid {role} schema: {reason}")]
    InvalidSchema {
        /// The capability id.
        id: String,
        /// Input or output.
        role: SchemaRole,
        /// The strict rule's code, or `INVALID_JSON_SCHEMA` for a meta-schema failure.
        rule: &'static str,
        /// JSON Pointer to the offending schema location.
        pointer: String,
        /// What is wrong, and where.
        reason: String,
    },
    /// Two different schemas declare the same `$id`.
    #[error(
        "RCIP capability {id} declares schema $id {schema_id} that another, different schema already uses"
    )]
    ConflictingSchemaId {
        /// The capability id.
        id: String,
        /// The `$id`.
        schema_id: String,
    },
    /// A usage example has a blank description or an input its schema rejects.
    #[error("RCIP capability {0} has an invalid usage example.")]
    InvalidUsageExample(String),
}

impl DefinitionError {
    /// The stable machine code of this error.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            DefinitionError::UnsupportedProtocolVersion(_) => "UNSUPPORTED_PROTOCOL_VERSION",
            DefinitionError::InvalidApplicationId(_) => "INVALID_APPLICATION_ID",
            DefinitionError::EmptyApplicationText { .. } => "EMPTY_APPLICATION_TEXT",
            DefinitionError::InvalidScopeId(_) => "INVALID_SCOPE_ID",
            DefinitionError::DuplicateScopeId(_) => "DUPLICATE_SCOPE_ID",
            DefinitionError::EmptyScopeText { .. } => "EMPTY_SCOPE_TEXT",
            DefinitionError::MissingParentScope { .. } => "MISSING_PARENT_SCOPE",
            DefinitionError::ScopeParentCycle(_) => "SCOPE_PARENT_CYCLE",
            DefinitionError::InvalidCapabilityId(_) => "INVALID_CAPABILITY_ID",
            DefinitionError::DuplicateCapabilityId(_) => "DUPLICATE_CAPABILITY_ID",
            DefinitionError::EmptyCapabilityText { .. } => "EMPTY_CAPABILITY_TEXT",
            DefinitionError::EmptyUsageGuidance(_) => "EMPTY_USAGE_GUIDANCE",
            DefinitionError::MissingScope { .. } => "MISSING_SCOPE",
            DefinitionError::DuplicateCapabilityScope { .. } => "DUPLICATE_CAPABILITY_SCOPE",
            DefinitionError::InvalidSchema { .. } => "INVALID_SCHEMA",
            DefinitionError::ConflictingSchemaId { .. } => "CONFLICTING_SCHEMA_ID",
            DefinitionError::InvalidUsageExample(_) => "INVALID_USAGE_EXAMPLE",
        }
    }

    /// Builds the [`InvalidSchema`](Self::InvalidSchema) error for a strict-rule violation.
    #[must_use]
    pub fn from_violation(id: &str, role: SchemaRole, violation: SchemaViolation) -> Self {
        DefinitionError::InvalidSchema {
            id: id.to_owned(),
            role,
            rule: violation.rule.code(),
            reason: violation.to_string(),
            pointer: violation.pointer,
        }
    }
}

/// Whether `s` is empty after JavaScript's `String.prototype.trim`, which the reference
/// uses for titles, descriptions and usage texts: Unicode `White_Space` as Rust has it, minus
/// U+0085 (NEL), plus U+FEFF (BOM). The macros call this same function.
///
/// ```
/// assert!(rcip_core::is_blank(" \u{feff}\t"));
/// assert!(!rcip_core::is_blank("\u{85}"));
/// ```
#[must_use]
pub fn is_blank(s: &str) -> bool {
    s.chars()
        .all(|c| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

/// Validates a definition with every rule that needs no JSON Schema validator, in this
/// order (the first failure is returned):
///
/// 1. `protocolVersion` is `"1.0"` *(rcip addition)*;
/// 2. the application id follows the identifier grammar; its name and description are not
///    blank *(blank checks: rcip addition)*;
/// 3. each scope id follows the grammar and is unique; its title and description are not
///    blank *(rcip addition)*;
/// 4. each non-empty `parentId` names a declared scope; then no scope is its own ancestor
///    *(cycle check: rcip addition)*;
/// 5. for each capability in order: id grammar and uniqueness; title and description not
///    blank *(rcip addition)*; usage `whenToUse` not blank; every scope id declared; no
///    scope id listed twice *(rcip addition)*;
/// 6. for each capability in order: its input schema, then its output schema, pass the
///    strict rules ([`check_strict`](crate::schema::check_strict)) *(the reference finds
///    these when its validator compiles the schema)* and no `$id` is used by two different
///    schemas *(Ajv's rule)*; then its usage examples have non-blank descriptions.
///
/// What needs a JSON Schema validator (meta-schema validity and example inputs) is checked by
/// the runtime in the same per-capability pass: strict rules and then meta-schema validity
/// of the input schema, the same for the output schema, then the examples, so that errors
/// come out in catalog order as the reference's do.
///
/// This is [`validate_structure`] followed, capability by capability, by
/// [`check_schema`] on its input and output schemas and [`check_examples`].
///
/// ```
/// use rcip_core::{ApplicationDefinition, DefinitionError, validate_definition};
/// let app = ApplicationDefinition::new("Polls", "Polls", "Polls.");
/// let err = validate_definition(&app).unwrap_err();
/// assert_eq!(err.code(), "INVALID_APPLICATION_ID");
/// assert_eq!(err.to_string(), "Invalid RCIP application id: Polls");
/// ```
pub fn validate_definition(definition: &ApplicationDefinition) -> Result<(), DefinitionError> {
    validate_structure(definition)?;
    let mut ids = SchemaIds::default();
    for capability in &definition.capabilities {
        check_schema(
            &capability.id,
            SchemaRole::Input,
            &capability.input_schema,
            &mut ids,
        )?;
        check_schema(
            &capability.id,
            SchemaRole::Output,
            &capability.output_schema,
            &mut ids,
        )?;
        check_examples(capability)?;
    }
    Ok(())
}

/// Rules 1 to 5 of [`validate_definition`]: everything but the schemas and examples.
pub fn validate_structure(definition: &ApplicationDefinition) -> Result<(), DefinitionError> {
    if definition.protocol_version != RCIP_PROTOCOL_VERSION {
        return Err(DefinitionError::UnsupportedProtocolVersion(
            definition.protocol_version.clone(),
        ));
    }
    let app = &definition.application;
    if !is_valid_identifier(&app.id) {
        return Err(DefinitionError::InvalidApplicationId(app.id.clone()));
    }
    for (field, text) in [("name", &app.name), ("description", &app.description)] {
        if is_blank(text) {
            return Err(DefinitionError::EmptyApplicationText {
                id: app.id.clone(),
                field,
            });
        }
    }

    let mut scopes: HashMap<&str, Option<&str>> = HashMap::new();
    for scope in &definition.scopes {
        if !is_valid_identifier(&scope.id) {
            return Err(DefinitionError::InvalidScopeId(scope.id.clone()));
        }
        let parent = scope.parent_id.as_deref().filter(|p| !p.is_empty());
        if scopes.insert(&scope.id, parent).is_some() {
            return Err(DefinitionError::DuplicateScopeId(scope.id.clone()));
        }
        for (field, text) in [("title", &scope.title), ("description", &scope.description)] {
            if is_blank(text) {
                return Err(DefinitionError::EmptyScopeText {
                    id: scope.id.clone(),
                    field,
                });
            }
        }
    }
    for scope in &definition.scopes {
        if let Some(parent) = scope.parent_id.as_deref().filter(|p| !p.is_empty())
            && !scopes.contains_key(parent)
        {
            return Err(DefinitionError::MissingParentScope {
                id: scope.id.clone(),
                parent_id: parent.to_owned(),
            });
        }
    }
    check_parent_cycles(definition, &scopes)?;

    let mut capability_ids = HashSet::new();
    for capability in &definition.capabilities {
        let id = &capability.id;
        if !is_valid_identifier(id) || !capability_ids.insert(id.as_str()) {
            return Err(if is_valid_identifier(id) {
                DefinitionError::DuplicateCapabilityId(id.clone())
            } else {
                DefinitionError::InvalidCapabilityId(id.clone())
            });
        }
        for (field, text) in [
            ("title", &capability.title),
            ("description", &capability.description),
        ] {
            if is_blank(text) {
                return Err(DefinitionError::EmptyCapabilityText {
                    id: id.clone(),
                    field,
                });
            }
        }
        if let Some(usage) = &capability.usage
            && is_blank(&usage.when_to_use)
        {
            return Err(DefinitionError::EmptyUsageGuidance(id.clone()));
        }
        let mut seen = HashSet::new();
        for scope_id in &capability.scope_ids {
            if !scopes.contains_key(scope_id.as_str()) {
                return Err(DefinitionError::MissingScope {
                    id: id.clone(),
                    scope_id: scope_id.clone(),
                });
            }
            if !seen.insert(scope_id.as_str()) {
                return Err(DefinitionError::DuplicateCapabilityScope {
                    id: id.clone(),
                    scope_id: scope_id.clone(),
                });
            }
        }
    }

    Ok(())
}

/// The `$id`s declared so far in one catalog, each with the schema that declared it.
#[derive(Debug, Default)]
pub struct SchemaIds<'a> {
    declared: HashMap<&'a str, &'a Value>,
}

/// Checks one schema against the strict rules and records its `$id`: a `$id` already used
/// by a *different* schema is an error (Ajv's rule), by an identical one is fine.
///
/// A schema nesting more than [`MAX_VALUE_DEPTH`] arrays and objects is refused first
/// (`INVALID_SCHEMA`, rule `SCHEMA_TOO_DEEP`, pointer `""`): the strict walk bounds only
/// the subschemas, while a `default`, `const` or `enum` value may be deeper, and comparing
/// two schemas for their `$id`, like compiling one later, recurses into every value.
///
/// ```
/// use rcip_core::depth::{dismantle, nested_arrays};
/// use rcip_core::{SchemaIds, SchemaRole, check_schema};
/// use serde_json::{Map, Value};
/// let mut schema = Map::new();
/// schema.insert("default".to_owned(), nested_arrays(200));
/// let schema = Value::Object(schema);
/// let error = check_schema("notes.list", SchemaRole::Input, &schema, &mut SchemaIds::default())
///     .unwrap_err();
/// assert_eq!(error.code(), "INVALID_SCHEMA");
/// dismantle(schema);
/// ```
pub fn check_schema<'a>(
    capability_id: &str,
    role: SchemaRole,
    schema: &'a Value,
    ids: &mut SchemaIds<'a>,
) -> Result<(), DefinitionError> {
    if exceeds_depth(schema, MAX_VALUE_DEPTH) {
        return Err(DefinitionError::InvalidSchema {
            id: capability_id.to_owned(),
            role,
            rule: StrictRule::SchemaTooDeep.code(),
            pointer: String::new(),
            reason: format!("a schema nests at most {MAX_VALUE_DEPTH} arrays and objects"),
        });
    }
    check_strict(schema).map_err(|v| DefinitionError::from_violation(capability_id, role, v))?;
    if let Some(schema_id) = schema.get("$id").and_then(Value::as_str) {
        match ids.declared.get(schema_id) {
            Some(previous) if *previous != schema => {
                return Err(DefinitionError::ConflictingSchemaId {
                    id: capability_id.to_owned(),
                    schema_id: schema_id.to_owned(),
                });
            }
            Some(_) => {}
            None => {
                ids.declared.insert(schema_id, schema);
            }
        }
    }
    Ok(())
}

/// Checks that no usage example of a capability has a blank description. (Whether each
/// example input is valid needs a validator: the runtime checks that.)
pub fn check_examples(capability: &CapabilityDefinition) -> Result<(), DefinitionError> {
    let mut examples = capability
        .usage
        .iter()
        .flat_map(|u| u.examples.iter().flatten());
    if examples.any(|e| is_blank(&e.description)) {
        return Err(DefinitionError::InvalidUsageExample(capability.id.clone()));
    }
    Ok(())
}

/// Walks each scope's parent chain; a chain longer than the number of scopes has looped.
fn check_parent_cycles(
    definition: &ApplicationDefinition,
    parents: &HashMap<&str, Option<&str>>,
) -> Result<(), DefinitionError> {
    // Scopes already known to reach a root: each is visited once overall, so this is linear.
    let mut rooted: HashSet<&str> = HashSet::new();
    for scope in &definition.scopes {
        let mut path: Vec<&str> = Vec::new();
        let mut on_path: HashSet<&str> = HashSet::new();
        let mut current = Some(scope.id.as_str());
        while let Some(id) = current {
            if rooted.contains(id) {
                break;
            }
            if !on_path.insert(id) {
                return Err(DefinitionError::ScopeParentCycle(id.to_owned()));
            }
            path.push(id);
            current = parents.get(id).copied().flatten();
        }
        rooted.extend(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_blank;

    #[test]
    fn blank_follows_javascript_trim() {
        assert!(is_blank(""));
        assert!(is_blank(" \t\n\r\u{a0}\u{2028}\u{3000}"));
        assert!(is_blank("\u{feff}"), "JS trims the byte-order mark");
        assert!(!is_blank("\u{85}"), "JS does not trim NEL");
        assert!(!is_blank(" x "));
    }
}
