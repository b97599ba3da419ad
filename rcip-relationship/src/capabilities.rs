//! A package's commands as RCIP capability declarations.
//!
//! Each command becomes one capability with effect `write`, in the scope named after the
//! package's namespace (lower camel case), whose input is the command envelope:
//!
//! ```json
//! {"record_id": "…", "expected_revision": 3, "idempotency_key": "…", "input": { … }}
//! ```
//!
//! and whose output is the result of running it: the record id, its new revision, its
//! lifecycle state (types with a lifecycle) and the tasks of the `work.requested` intents it
//! recorded. Both schemas pass the runtime's strict checker: the package subset's only format,
//! `date-time`, becomes an RFC 3339 `pattern`, so that the schemas load in the reference too
//! (it refuses every format).

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::model::{Command, DataSchema, Package, TypeDef};
use super::naming::{command_capability_id, lower_camel};
use super::problem::{PackageError, Problem, ProblemCode};
use rcip_core::{CapabilityDefinition, Effect};

/// RFC 3339 `date-time` (section 5.6), as an ECMAScript pattern.
pub const DATE_TIME_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// The longest record id and idempotency key a command capability accepts.
pub const MAX_KEY_LENGTH: u64 = 200;

/// The scope id of a package's capabilities: its namespace in lower camel case.
#[must_use]
pub fn package_scope_id(package: &Package) -> String {
    lower_camel(&package.namespace).unwrap_or_else(|| package.namespace.to_string())
}

/// Packages that cannot be used side by side, as content identity decides: several versions
/// of one namespace are fine, and so is one package given twice, but one `namespace/version`
/// with two different contents ([`Package::digest`]) is a `VERSION_CONFLICT` at `/version`.
/// Different namespaces with one identifier form (`poll_2` and `poll2`: namespaces are
/// module names and, in lower camel case, capability-id prefixes) are a `DUPLICATE` at
/// `/namespace`. What `rcip-build` refuses and `rcip check` reports for a set of files.
///
/// ```
/// use std::path::PathBuf;
/// use rcip_relationship::{duplicate_namespaces, parse_package};
/// let package = |ns: &str, version: u64, description: &str| parse_package(&format!(r#"{{
///   "protocol": "relationship/v1", "namespace": "{ns}", "version": {version},
///   "description": "{description}", "types": {{"t": {{"kind": "entity", "schema":
///   {{"type": "object", "properties": {{}}, "required": [], "additionalProperties": false}}}}}}}}"#)).unwrap();
/// let errors = duplicate_namespaces(&[
///     (PathBuf::from("a.json"), package("poll2", 1, "")),
///     (PathBuf::from("b.json"), package("poll_2", 1, "")),
///     (PathBuf::from("c.json"), package("poll2", 2, "")),
///     (PathBuf::from("d.json"), package("poll2", 2, "")),
///     (PathBuf::from("e.json"), package("poll2", 1, "changed")),
/// ]);
/// let codes: Vec<_> = errors.iter().map(|e| e.problems[0].code.as_str()).collect();
/// assert_eq!(codes, ["DUPLICATE", "VERSION_CONFLICT"]);
/// assert_eq!(
///     errors[0].to_string(),
///     "b.json: /namespace: namespace \"poll_2\" is already declared by a.json (as \"poll2\"); one form per namespace"
/// );
/// assert_eq!(
///     errors[1].to_string(),
///     "e.json: /version: poll2 v1 is already declared by a.json with other content; a version names one content"
/// );
/// ```
#[must_use]
pub fn duplicate_namespaces(packages: &[(PathBuf, Package)]) -> Vec<PackageError> {
    // At most one error per package given: bounded by the caller's own list of files, so
    // not cut (each error is one problem).
    let digests: Vec<String> = packages.iter().map(|(_, p)| p.digest()).collect();
    let mut errors = Vec::new();
    for (i, (file, package)) in packages.iter().enumerate() {
        let form = package_scope_id(package);
        let earlier = packages[..i].iter().zip(&digests);
        // The first package of this form owns it: another namespace with it clashes.
        let problem = if let Some(((first, other), _)) = earlier
            .clone()
            .find(|((_, p), _)| package_scope_id(p) == form)
            .filter(|((_, p), _)| p.namespace != package.namespace)
        {
            Problem {
                pointer: "/namespace".to_owned(),
                code: ProblemCode::Duplicate,
                message: format!(
                    "namespace {:?} is already declared by {} (as {:?}); one form per namespace",
                    package.namespace,
                    first.display(),
                    other.namespace,
                ),
            }
        } else if let Some(((first, _), _)) = earlier.clone().find(|((_, p), digest)| {
            p.namespace == package.namespace
                && p.version == package.version
                && **digest != digests[i]
        }) {
            Problem {
                pointer: "/version".to_owned(),
                code: ProblemCode::VersionConflict,
                message: format!(
                    "{} v{} is already declared by {} with other content; a version names one content",
                    package.namespace,
                    package.version,
                    first.display(),
                ),
            }
        } else {
            continue;
        };
        errors.push(
            PackageError {
                file: None,
                problems: vec![problem],
            }
            .in_file(file),
        );
    }
    errors
}

/// Every command of `package` as a capability definition, types and commands in name order.
///
/// ```
/// use rcip_relationship::{command_capabilities, parse_package};
/// let no_input = r#"{"type": "object", "properties": {}, "required": [], "additionalProperties": false}"#;
/// let package = parse_package(&format!(r#"{{
///   "protocol": "relationship/v1", "namespace": "crm", "version": 1,
///   "types": {{"deal_stage": {{"kind": "entity", "schema": {no_input},
///     "commands": {{"mark_won": {{"input": {no_input}}}, "mark_lost": {{"input": {no_input}}}}}}}}}
/// }}"#)).unwrap();
/// let ids: Vec<_> = command_capabilities(&package).into_iter().map(|c| c.id).collect();
/// assert_eq!(ids, ["crm.dealStage.markLost", "crm.dealStage.markWon"]);
/// ```
#[must_use]
pub fn command_capabilities(package: &Package) -> Vec<CapabilityDefinition> {
    let scope = package_scope_id(package);
    package
        .types
        .iter()
        .flat_map(|type_def| {
            type_def
                .commands
                .iter()
                .map(move |command| (type_def, command))
        })
        .filter_map(|(type_def, command)| command_capability(package, &scope, type_def, command))
        .collect()
}

fn command_capability(
    package: &Package,
    scope: &str,
    type_def: &TypeDef,
    command: &Command,
) -> Option<CapabilityDefinition> {
    let id = command_capability_id(&package.namespace, &type_def.name, &command.name)?;
    let title = format!(
        "{} {}",
        sentence_case(&command.name),
        type_def.name.replace('_', " ")
    );
    let mut description = command.description.as_deref().map_or_else(
        || {
            format!(
                "Runs command `{}` on a `{}` record ({} v{}).",
                command.name, type_def.name, package.namespace, package.version
            )
        },
        str::to_owned,
    );
    if let Some(to) = &command.to {
        description.push_str(&format!(" Moves the record to state `{to}`."));
    }
    let input = strict_schema(&command.input);
    Some(
        CapabilityDefinition::new(id, Effect::Write, title, description)
            .scope(scope)
            .tag(type_def.name.to_string())
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "record_id": {
                        "type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
                        "description": format!("The id of the `{}` record.", type_def.name),
                    },
                    "expected_revision": {
                        "type": "integer", "minimum": 1,
                        "description": "The record's revision the command expects; a stale one is refused.",
                    },
                    "idempotency_key": {
                        "type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
                        "description": "Replaying a key with the same arguments returns the first result.",
                    },
                    "input": input,
                },
                "required": ["record_id", "expected_revision", "idempotency_key", "input"],
                "additionalProperties": false,
            }))
            .output_schema(output_schema(type_def)),
    )
}

fn output_schema(type_def: &TypeDef) -> Value {
    let mut properties = Map::new();
    properties.insert("record_id".into(), json!({"type": "string"}));
    properties.insert("revision".into(), json!({"type": "integer", "minimum": 1}));
    let mut required = vec!["record_id", "revision", "work_requested"];
    if let Some(lifecycle) = &type_def.lifecycle {
        properties.insert(
            "state".into(),
            json!({"type": "string", "enum": lifecycle.states.iter().map(|s| s.as_ref()).collect::<Vec<&str>>()}),
        );
        required.push("state");
    }
    properties.insert(
        "work_requested".into(),
        json!({"type": "array", "items": {"type": "string"},
               "description": "The tasks of the work intents the command recorded."}),
    );
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// A package schema in the strict RCIP form: `format: date-time` becomes a `pattern`.
/// A package schema (validated, so it parses) in its strict form.
pub(super) fn strict_schema(schema: &DataSchema) -> Value {
    serde_json::from_str::<Value>(&schema.json)
        .map(strict_form)
        .unwrap_or(Value::Null)
}

fn strict_form(mut schema: Value) -> Value {
    fn walk(schema: &mut Value) {
        let Value::Object(map) = schema else { return };
        if map.remove("format").is_some() {
            map.insert("pattern".into(), Value::from(DATE_TIME_PATTERN));
        }
        if let Some(Value::Object(properties)) = map.get_mut("properties") {
            properties.values_mut().for_each(walk);
        }
        if let Some(items) = map.get_mut("items") {
            walk(items);
        }
    }
    walk(&mut schema);
    schema
}

/// `mark_won` -> `Mark won`.
fn sentence_case(name: &str) -> String {
    let spaced = name.replace('_', " ");
    let mut chars = spaced.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}
