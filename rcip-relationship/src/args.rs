//! The operations' arguments, as the seed names them (unknown fields are refused).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// `record.create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRecord {
    /// The workspace.
    pub workspace_id: String,
    /// The collection.
    pub collection_id: String,
    /// The program namespace.
    pub namespace: String,
    /// The program version (default: the only registered version of the namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The data, validated against the type's schema.
    pub data: Map<String, Value>,
    /// Role -> participant ids (relationships).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, Vec<Uuid>>,
    /// Replaying the key with the same arguments returns the first result.
    pub idempotency_key: String,
}

/// `record.get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetRecord {
    /// The workspace.
    pub workspace_id: String,
    /// The record.
    pub record_id: Uuid,
}

/// `record.update`'s data patch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patch {
    /// Fields to set.
    #[serde(default)]
    pub set: Map<String, Value>,
    /// Fields to remove.
    #[serde(default)]
    pub remove: Vec<String>,
}

/// `record.update`'s role patch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RolePatch {
    /// Participants to add, by role.
    #[serde(default)]
    pub add: BTreeMap<String, Vec<Uuid>>,
    /// Participants to remove, by role.
    #[serde(default)]
    pub remove: BTreeMap<String, Vec<Uuid>>,
}

/// `record.update`: data and roles, never the lifecycle state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateRecord {
    /// The workspace.
    pub workspace_id: String,
    /// The record.
    pub record_id: Uuid,
    /// The revision the caller read.
    pub expected_revision: u64,
    /// Idempotency key.
    pub idempotency_key: String,
    /// Data changes.
    #[serde(default)]
    pub patch: Patch,
    /// Role changes.
    #[serde(default)]
    pub roles: RolePatch,
}

/// `record.archive`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArchiveRecord {
    /// The workspace.
    pub workspace_id: String,
    /// The record.
    pub record_id: Uuid,
    /// The revision the caller read.
    pub expected_revision: u64,
    /// Idempotency key.
    pub idempotency_key: String,
}

/// `command.execute`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteCommand {
    /// The workspace.
    pub workspace_id: String,
    /// The record.
    pub record_id: Uuid,
    /// The command name.
    pub command: String,
    /// The revision the caller read.
    pub expected_revision: u64,
    /// Idempotency key.
    pub idempotency_key: String,
    /// The command's input.
    #[serde(default)]
    pub input: Map<String, Value>,
}

/// `command.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListCommands {
    /// The workspace.
    pub workspace_id: String,
    /// The record.
    pub record_id: Uuid,
    /// Input to check the requirements with (the input requirement is unknown without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Map<String, Value>>,
}

/// A view to search through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewRef {
    /// The program namespace.
    pub namespace: String,
    /// The program version (default: the only registered one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// The view name.
    pub view: String,
}

/// `record.search`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchRecords {
    /// The workspace.
    pub workspace_id: String,
    /// Only this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Only this type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// Only this program version (with `namespace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Only this lifecycle state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Only this collection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection_id: Option<String>,
    /// Only records whose data holds this text (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Search through a view instead (its type, `where` and projected fields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewRef>,
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `record.history`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordHistory {
    /// The workspace.
    pub workspace_id: String,
    /// The record.
    pub record_id: Uuid,
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `changes.feed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangesFeed {
    /// The workspace.
    pub workspace_id: String,
    /// A `next_cursor` or a stored `checkpoint`; none reads from the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Only events of records of this program namespace (the page may then be sparse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A page of results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Present when more may remain (a sparse page may be empty and still have one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// `changes.feed` only: where to poll from later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
}

/// `command.execute`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResult {
    /// The record.
    pub record_id: Uuid,
    /// Its new revision.
    pub revision: u64,
    /// Its new state (types with a lifecycle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The tasks of the work intents recorded.
    pub work_requested: Vec<String>,
}

/// One requirement of a command, as `command.list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    /// `state`, `guard` or `input`.
    pub kind: String,
    /// Whether it passes; `None` when it cannot be told (the guard or input without input).
    pub passed: Option<bool>,
    /// Why not, when it fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A command of a record, as `command.list` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandStatus {
    /// The command name.
    pub command: String,
    /// Its capability id.
    pub capability_id: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Each requirement.
    pub requirements: Vec<Requirement>,
    /// Whether every known requirement passes.
    pub runnable: bool,
}
