//! A package's record operations as RCIP capabilities, one set per type (and one per view),
//! next to the command capabilities of [`super::command_capabilities`].
//!
//! | capability | effect | the engine's operation |
//! | --- | --- | --- |
//! | `ns.type.get` | read | `record.get` |
//! | `ns.type.search` | read | `record.search` filtered to the type |
//! | `ns.type.commands` | read | `command.list` |
//! | `ns.type.create` | write | `record.create` |
//! | `ns.type.update` | write | `record.update` |
//! | `ns.type.archive` | write | `record.archive` |
//! | `ns.view` | read | `record.search` through the view |
//! | `ns.changes` | read | `changes.feed` for the program's records (events without payloads) |
//!
//! Every schema is strict and precise: `create` takes the type's data schema, `update` its
//! properties with none required, outputs are the type's record view. The workspace is not an
//! argument: a binding serves one workspace.

use serde_json::{Map, Value, json};

use super::capabilities::{MAX_KEY_LENGTH, package_scope_id, strict_schema};
use super::model::{Package, TypeDef, View};
use super::naming::lower_camel;
use rcip_core::{CapabilityDefinition, Effect};

/// The record operations each type has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeOperation {
    /// `ns.type.get`.
    Get,
    /// `ns.type.search`.
    Search,
    /// `ns.type.commands`.
    Commands,
    /// `ns.type.create`.
    Create,
    /// `ns.type.update`.
    Update,
    /// `ns.type.archive`.
    Archive,
}

impl TypeOperation {
    /// Every operation, in capability order.
    pub const ALL: [TypeOperation; 6] = [
        TypeOperation::Get,
        TypeOperation::Search,
        TypeOperation::Commands,
        TypeOperation::Create,
        TypeOperation::Update,
        TypeOperation::Archive,
    ];

    /// The last segment of its capability id.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            TypeOperation::Get => "get",
            TypeOperation::Search => "search",
            TypeOperation::Commands => "commands",
            TypeOperation::Create => "create",
            TypeOperation::Update => "update",
            TypeOperation::Archive => "archive",
        }
    }
}

/// The operations each type has, by the last segment of their capability id. A command may
/// not take one of these names (the validator refuses it: `RESERVED_NAME`).
pub const TYPE_OPERATIONS: [&str; 6] = {
    let mut names = [""; 6];
    let mut i = 0;
    while i < names.len() {
        names[i] = TypeOperation::ALL[i].as_str();
        i += 1;
    }
    names
};

/// The last segment of a package's change-feed capability (`polls.changes`); no view may
/// take this name (`RESERVED_NAME`).
pub const FEED_OPERATION: &str = "changes";

/// The fields of an event that the feed capability always shows (its output schema
/// requires them; the binding copies them).
#[doc(hidden)]
pub const EVENT_SUMMARY_FIELDS: [&str; 7] = [
    "id",
    "event_id",
    "kind",
    "record_id",
    "revision",
    "at",
    "actor",
];

/// Items per page of a search or the change feed when no limit is given.
pub const DEFAULT_PAGE_LIMIT: u64 = 20;
/// The largest page of a search or the change feed.
pub const MAX_PAGE_LIMIT: u64 = 100;

/// The longest text search a search capability accepts.
const MAX_QUERY_LENGTH: u64 = 200;

/// The capability id of a type's operation (`polls.poll.get`).
#[must_use]
pub fn operation_capability_id(
    namespace: &str,
    type_name: &str,
    operation: TypeOperation,
) -> Option<String> {
    Some(format!(
        "{}.{}.{}",
        lower_camel(namespace)?,
        lower_camel(type_name)?,
        operation.as_str()
    ))
}

/// The capability id of a view (`polls.openPolls`).
#[must_use]
pub fn view_capability_id(namespace: &str, view: &str) -> Option<String> {
    Some(format!(
        "{}.{}",
        lower_camel(namespace)?,
        lower_camel(view)?
    ))
}

/// Every record operation of `package`: for each type (in name order) its six operations,
/// then one search capability per view.
#[must_use]
pub fn operation_capabilities(package: &Package) -> Vec<CapabilityDefinition> {
    let scope = package_scope_id(package);
    let mut definitions = Vec::new();
    for type_def in package.types.iter() {
        // The type's schema and record view, built once for its six operations.
        let data = strict_schema(&type_def.schema);
        let view = record_view(package, type_def, data.clone());
        for operation in TypeOperation::ALL {
            let schemas = (&data, &view);
            if let Some(definition) = type_operation(package, &scope, type_def, schemas, operation)
            {
                definitions.push(definition);
            }
        }
    }
    for view in package.views.iter() {
        if let Some(definition) = view_search(package, &scope, view) {
            definitions.push(definition);
        }
    }
    if let Some(definition) = feed(package, &scope) {
        definitions.push(definition);
    }
    definitions
}

/// `ns.changes`: the change feed of the program's records. Events come without their
/// payloads (record snapshots of any type have no one strict schema): a consumer reads the
/// record it cares about with `get`.
fn feed(package: &Package, scope: &str) -> Option<CapabilityDefinition> {
    let id = view_capability_id(&package.namespace, FEED_OPERATION)?;
    let text = json!({"type": "string"});
    let event = object(
        &[
            (
                "id",
                json!({"type": "integer", "minimum": 1, "description": "Ordered: later events have larger ids."}),
            ),
            (
                "event_id",
                json!({"type": "string", "description": "Stable: deduplicate on it."}),
            ),
            (
                "kind",
                json!({"type": "string", "enum": ["record.created", "record.updated", "record.archived", "command.executed", "work.requested"]}),
            ),
            ("record_id", text.clone()),
            ("revision", json!({"type": "integer", "minimum": 1})),
            ("at", text.clone()),
            (
                "actor",
                object(&[("id", text.clone()), ("client", text.clone())], &["id"]),
            ),
            (
                "task",
                json!({"type": "string", "description": "The task of a work.requested event."}),
            ),
            (
                "command",
                json!({"type": "string", "description": "The command of a command.executed or work.requested event."}),
            ),
        ],
        &EVENT_SUMMARY_FIELDS,
    );
    Some(
        CapabilityDefinition::new(id, Effect::Read, format!("Changes in {}", package.namespace.replace('_', " ")), format!(
                "The change feed of `{}` records, oldest first: pass `checkpoint` back to poll for later changes; deduplicate on `event_id`.",
                package.namespace
            ))
            .scope(scope)
            .input_schema(object(
                &[
                    ("cursor", json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
                        "description": "A next_cursor or a stored checkpoint; none reads from the start."})),
                    ("limit", json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT})),
                ],
                &[],
            ))
            .output_schema(object(
                &[
                    ("items", json!({"type": "array", "items": event})),
                    ("next_cursor", json!({"type": "string", "description": "Present when more may remain."})),
                    ("checkpoint", json!({"type": "string", "description": "Where to poll from later."})),
                ],
                &["items", "checkpoint"],
            )),
    )
}

fn type_operation(
    package: &Package,
    scope: &str,
    type_def: &TypeDef,
    (data, view): (&Value, &Value),
    operation: TypeOperation,
) -> Option<CapabilityDefinition> {
    let id = operation_capability_id(&package.namespace, &type_def.name, operation)?;
    let name = type_def.name.replace('_', " ");
    let record_id = json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
        "description": format!("The id of the `{}` record.", type_def.name)});
    let revision = json!({"type": "integer", "minimum": 1,
        "description": "The record's revision the change expects; a stale one is refused."});
    let key = json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
        "description": "Replaying a key with the same arguments returns the first result."});
    let (effect, title, description, input, output) = match operation {
        TypeOperation::Get => (
            Effect::Read,
            format!("Get {name}"),
            format!("Reads one `{}` record.", type_def.name),
            object(&[("record_id", record_id)], &["record_id"]),
            view.clone(),
        ),
        TypeOperation::Search => (
            Effect::Read,
            format!("Search {name} records"),
            format!(
                "Lists `{}` records, optionally by state, collection or text.",
                type_def.name
            ),
            search_input(type_def),
            page(view.clone()),
        ),
        TypeOperation::Commands => (
            Effect::Read,
            format!("List {name} commands"),
            format!(
                "Lists the commands of a `{}` record and which of their requirements pass.",
                type_def.name
            ),
            object(&[("record_id", record_id)], &["record_id"]),
            command_list(),
        ),
        TypeOperation::Create => {
            let mut fields = vec![
                (
                    "collection_id",
                    json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH}),
                ),
                ("idempotency_key", key),
                ("data", data.clone()),
            ];
            let mut required = vec!["collection_id", "idempotency_key", "data"];
            if !type_def.roles.is_empty() {
                fields.push(("roles", roles_schema(type_def, true)));
                required.push("roles");
            }
            (
                Effect::Write,
                format!("Create {name}"),
                format!(
                    "Creates a `{}` record{}.",
                    type_def.name,
                    type_def
                        .lifecycle
                        .as_ref()
                        .map(|l| format!(" in state `{}`", l.initial))
                        .unwrap_or_default()
                ),
                object(&fields, &required),
                view.clone(),
            )
        }
        TypeOperation::Update => {
            let mut fields = vec![
                ("record_id", record_id),
                ("expected_revision", revision),
                ("idempotency_key", key),
                ("patch", patch_schema(data)),
            ];
            if !type_def.roles.is_empty() {
                let roles = roles_schema(type_def, false);
                fields.push((
                    "roles",
                    object(&[("add", roles.clone()), ("remove", roles)], &[]),
                ));
            }
            (
                Effect::Write,
                format!("Update {name}"),
                format!(
                    "Changes a `{}` record's data{} (never its state).",
                    type_def.name,
                    if type_def.roles.is_empty() {
                        ""
                    } else {
                        " and participants"
                    }
                ),
                object(
                    &fields,
                    &["record_id", "expected_revision", "idempotency_key"],
                ),
                view.clone(),
            )
        }
        TypeOperation::Archive => (
            Effect::Write,
            format!("Archive {name}"),
            format!(
                "Archives a `{}` record: it stays readable and takes no more changes.",
                type_def.name
            ),
            object(
                &[
                    ("record_id", record_id),
                    ("expected_revision", revision),
                    ("idempotency_key", key),
                ],
                &["record_id", "expected_revision", "idempotency_key"],
            ),
            view.clone(),
        ),
    };
    Some(
        CapabilityDefinition::new(id, effect, title, description)
            .scope(scope)
            .tag(type_def.name.to_string())
            .input_schema(input)
            .output_schema(output),
    )
}

fn view_search(package: &Package, scope: &str, view: &View) -> Option<CapabilityDefinition> {
    let id = view_capability_id(&package.namespace, &view.name)?;
    let type_def = package.type_def(&view.type_name)?;
    let mut data = strict_schema(&type_def.schema);
    if let Value::Object(schema) = &mut data {
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            properties.retain(|name, _| view.fields.iter().any(|f| f == name));
        }
        if let Some(Value::Array(required)) = schema.get_mut("required") {
            required.retain(|name| {
                view.fields
                    .iter()
                    .any(|f| Some(f.as_ref()) == name.as_str())
            });
        }
    }
    Some(
        CapabilityDefinition::new(
            id,
            Effect::Read,
            format!("View {}", view.name.replace('_', " ")),
            format!(
                "Lists `{}` records through view `{}`: only its records, only its fields ({}).",
                view.type_name,
                view.name,
                view.fields.join(", ")
            ),
        )
        .scope(scope)
        .tag(type_def.name.to_string())
        .input_schema(search_input(type_def))
        .output_schema(page(record_view(package, type_def, data))),
    )
}

/// A closed object schema.
fn object(fields: &[(&str, Value)], required: &[&str]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(name, schema)| ((*name).to_owned(), schema.clone()))
        .collect();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn search_input(type_def: &TypeDef) -> Value {
    let mut fields = vec![
        (
            "collection_id",
            json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH}),
        ),
        (
            "query",
            json!({"type": "string", "minLength": 1, "maxLength": MAX_QUERY_LENGTH,
            "description": "Only records whose data contains this text (any case)."}),
        ),
        (
            "limit",
            json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT,
            "description": format!("Records per page (default {DEFAULT_PAGE_LIMIT}).")}),
        ),
        (
            "cursor",
            json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
            "description": "The previous page's next_cursor."}),
        ),
    ];
    if let Some(lifecycle) = &type_def.lifecycle {
        fields.push(("state", json!({"type": "string", "enum": lifecycle.states.iter().map(AsRef::as_ref).collect::<Vec<&str>>()})));
    }
    object(&fields, &[])
}

fn page(item: Value) -> Value {
    object(
        &[
            ("items", json!({"type": "array", "items": item})),
            (
                "next_cursor",
                json!({"type": "string", "description": "Present when more may remain."}),
            ),
        ],
        &["items"],
    )
}

/// The record as a reader sees it (`RecordView`), with `data` described by `data`.
fn record_view(package: &Package, type_def: &TypeDef, data: Value) -> Value {
    let participant = json!({"anyOf": [
        {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"], "additionalProperties": false},
        {"type": "object", "properties": {"restricted": {"type": "boolean"}}, "required": ["restricted"], "additionalProperties": false}
    ]});
    let roles: Vec<(&str, Value)> = type_def
        .roles
        .iter()
        .map(|role| {
            (
                role.name.as_ref(),
                json!({"type": "array", "items": participant.clone()}),
            )
        })
        .collect();
    let text = json!({"type": "string"});
    let mut fields = vec![
        ("id", text.clone()),
        ("workspace_id", text.clone()),
        ("collection_id", text.clone()),
        (
            "namespace",
            json!({"type": "string", "enum": [package.namespace.as_ref()]}),
        ),
        (
            "version",
            json!({"type": "integer", "enum": [package.version]}),
        ),
        (
            "type",
            json!({"type": "string", "enum": [type_def.name.as_ref()]}),
        ),
        (
            "kind",
            json!({"type": "string", "enum": [type_def.kind.as_str()]}),
        ),
        ("revision", json!({"type": "integer", "minimum": 1})),
        ("data", data),
        ("participants", object(&roles, &[])),
        ("archived", json!({"type": "boolean"})),
        ("created_at", text.clone()),
        ("updated_at", text),
    ];
    let mut required: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    if let Some(lifecycle) = &type_def.lifecycle {
        fields.push(("state", json!({"type": "string", "enum": lifecycle.states.iter().map(AsRef::as_ref).collect::<Vec<&str>>()})));
        required.push("state");
    }
    object(&fields, &required)
}

/// `roles` of a relationship: each role a list of record ids, within its bounds when
/// `bounded` (create), any length when not (update's add/remove).
fn roles_schema(type_def: &TypeDef, bounded: bool) -> Value {
    let id = json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH});
    let fields: Vec<(&str, Value)> = type_def
        .roles
        .iter()
        .map(|role| {
            let schema = if bounded {
                json!({"type": "array", "items": id.clone(), "minItems": role.min, "maxItems": role.max})
            } else {
                json!({"type": "array", "items": id.clone(), "maxItems": 100})
            };
            (role.name.as_ref(), schema)
        })
        .collect();
    let required: Vec<&str> = if bounded {
        type_def
            .roles
            .iter()
            .filter(|r| r.min > 0)
            .map(|r| r.name.as_ref())
            .collect()
    } else {
        Vec::new()
    };
    object(&fields, &required)
}

/// `patch`: `set` takes any of the type's properties (none required), `remove` the optional
/// ones.
fn patch_schema(data: &Value) -> Value {
    let properties = data.get("properties").cloned().unwrap_or_else(|| json!({}));
    let required: Vec<&str> = data
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let optional: Vec<&str> = properties
        .as_object()
        .map(|p| {
            p.keys()
                .map(String::as_str)
                .filter(|k| !required.contains(k))
                .collect()
        })
        .unwrap_or_default();
    let set = json!({"type": "object", "properties": properties, "required": [], "additionalProperties": false});
    let mut fields = vec![("set", set)];
    if !optional.is_empty() {
        fields.push(("remove", json!({"type": "array", "items": {"type": "string", "enum": optional}, "maxItems": optional.len()})));
    }
    object(&fields, &[])
}

fn command_list() -> Value {
    let requirement = object(
        &[
            (
                "kind",
                json!({"type": "string", "enum": ["state", "input", "guard"]}),
            ),
            ("passed", json!({"type": ["boolean", "null"]})),
            ("reason", json!({"type": "string"})),
        ],
        &["kind", "passed"],
    );
    let status = object(
        &[
            ("command", json!({"type": "string"})),
            ("capability_id", json!({"type": "string"})),
            ("description", json!({"type": "string"})),
            (
                "requirements",
                json!({"type": "array", "items": requirement}),
            ),
            ("runnable", json!({"type": "boolean"})),
        ],
        &["command", "capability_id", "requirements", "runnable"],
    );
    object(
        &[("commands", json!({"type": "array", "items": status}))],
        &["commands"],
    )
}

/// Every capability of `package`: its commands, then its record operations.
#[must_use]
pub fn package_capabilities(package: &Package) -> Vec<CapabilityDefinition> {
    let mut definitions = super::command_capabilities(package);
    definitions.extend(operation_capabilities(package));
    definitions
}
