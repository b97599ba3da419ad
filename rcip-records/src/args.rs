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
    /// The program version (default: the highest visible in the workspace).
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
    /// The program version (default: the highest visible).
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

/// `command.list`'s answer: an object, as every operation's (`{"commands": [...]}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandList {
    /// The record's commands, in the type's order.
    pub commands: Vec<CommandStatus>,
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

// ------------------------------------------------------------------ constructors

/// Data fields from any `(name, value)` pairs: a [`Map`], an array of pairs, an iterator.
fn fields<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Value)>) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.into(), v)).collect()
}

impl CreateRecord {
    /// `record.create` of a `type_name` record of program `namespace` (its highest version
    /// visible in the workspace unless [`with_version`](Self::with_version) pins one) in
    /// `workspace_id`/`collection_id`, with `data`.
    ///
    /// ```
    /// use rcip_records::CreateRecord;
    /// use serde_json::json;
    /// let args = CreateRecord::new("w", "c", "polls", "poll",
    ///     [("question", json!("Lunch?")), ("options", json!(["a", "b"]))], "create-1")
    ///     .with_version(1);
    /// assert_eq!(args.data["question"], "Lunch?");
    /// assert_eq!(args.version, Some(1));
    /// ```
    #[must_use]
    pub fn new<K: Into<String>>(
        workspace_id: impl Into<String>,
        collection_id: impl Into<String>,
        namespace: impl Into<String>,
        type_name: impl Into<String>,
        data: impl IntoIterator<Item = (K, Value)>,
        idempotency_key: impl Into<String>,
    ) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            collection_id: collection_id.into(),
            namespace: namespace.into(),
            version: None,
            type_name: type_name.into(),
            data: fields(data),
            roles: BTreeMap::new(),
            idempotency_key: idempotency_key.into(),
        }
    }

    /// Pins the program version.
    #[must_use]
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }

    /// Adds `participants` to `role` (relationships).
    #[must_use]
    pub fn with_role(
        mut self,
        role: impl Into<String>,
        participants: impl IntoIterator<Item = Uuid>,
    ) -> Self {
        self.roles
            .entry(role.into())
            .or_default()
            .extend(participants);
        self
    }
}

impl GetRecord {
    /// `record.get` of `record_id` in `workspace_id`.
    #[must_use]
    pub fn new(workspace_id: impl Into<String>, record_id: Uuid) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            record_id,
        }
    }
}

impl UpdateRecord {
    /// `record.update` of `record_id`, read at `expected_revision`, changing nothing yet:
    /// add changes with the `with_` methods.
    ///
    /// ```
    /// use rcip_records::UpdateRecord;
    /// use serde_json::json;
    /// # let id = uuid::Uuid::nil();
    /// let args = UpdateRecord::new("w", id, 3, "update-1")
    ///     .with_set("vote_count", json!(4))
    ///     .with_remove("closed_reason");
    /// assert_eq!(args.patch.set["vote_count"], 4);
    /// assert_eq!(args.patch.remove, ["closed_reason"]);
    /// ```
    #[must_use]
    pub fn new(
        workspace_id: impl Into<String>,
        record_id: Uuid,
        expected_revision: u64,
        idempotency_key: impl Into<String>,
    ) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            record_id,
            expected_revision,
            idempotency_key: idempotency_key.into(),
            patch: Patch::default(),
            roles: RolePatch::default(),
        }
    }

    /// Sets data field `field` to `value`.
    #[must_use]
    pub fn with_set(mut self, field: impl Into<String>, value: Value) -> Self {
        self.patch.set.insert(field.into(), value);
        self
    }

    /// Removes data field `field`.
    #[must_use]
    pub fn with_remove(mut self, field: impl Into<String>) -> Self {
        self.patch.remove.push(field.into());
        self
    }

    /// Adds participant `id` to `role`.
    #[must_use]
    pub fn with_participant_added(mut self, role: impl Into<String>, id: Uuid) -> Self {
        self.roles.add.entry(role.into()).or_default().push(id);
        self
    }

    /// Removes participant `id` from `role`.
    #[must_use]
    pub fn with_participant_removed(mut self, role: impl Into<String>, id: Uuid) -> Self {
        self.roles.remove.entry(role.into()).or_default().push(id);
        self
    }
}

impl ArchiveRecord {
    /// `record.archive` of `record_id`, read at `expected_revision`.
    #[must_use]
    pub fn new(
        workspace_id: impl Into<String>,
        record_id: Uuid,
        expected_revision: u64,
        idempotency_key: impl Into<String>,
    ) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            record_id,
            expected_revision,
            idempotency_key: idempotency_key.into(),
        }
    }
}

impl ExecuteCommand {
    /// `command.execute` of `command` on `record_id`, read at `expected_revision`, with no
    /// input (add it with [`with_input`](Self::with_input)).
    ///
    /// ```
    /// use rcip_records::ExecuteCommand;
    /// use serde_json::json;
    /// # let id = uuid::Uuid::nil();
    /// let args = ExecuteCommand::new("w", id, "close", 1, "close-1")
    ///     .with_input([("reason", json!("done"))]);
    /// assert_eq!(args.input["reason"], "done");
    /// ```
    #[must_use]
    pub fn new(
        workspace_id: impl Into<String>,
        record_id: Uuid,
        command: impl Into<String>,
        expected_revision: u64,
        idempotency_key: impl Into<String>,
    ) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            record_id,
            command: command.into(),
            expected_revision,
            idempotency_key: idempotency_key.into(),
            input: Map::new(),
        }
    }

    /// The command's input fields.
    #[must_use]
    pub fn with_input<K: Into<String>>(
        mut self,
        input: impl IntoIterator<Item = (K, Value)>,
    ) -> Self {
        self.input.extend(fields(input));
        self
    }
}

impl ListCommands {
    /// `command.list` of `record_id`'s commands.
    #[must_use]
    pub fn new(workspace_id: impl Into<String>, record_id: Uuid) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            record_id,
            input: None,
        }
    }

    /// Input to judge the commands' input and guard requirements with.
    #[must_use]
    pub fn with_input<K: Into<String>>(
        mut self,
        input: impl IntoIterator<Item = (K, Value)>,
    ) -> Self {
        self.input
            .get_or_insert_with(Map::new)
            .extend(fields(input));
        self
    }
}

impl ViewRef {
    /// View `view` of program `namespace` (its highest version unless one is given).
    #[must_use]
    pub fn new(namespace: impl Into<String>, view: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            version: None,
            view: view.into(),
        }
    }

    /// Pins the program version.
    #[must_use]
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }
}

impl SearchRecords {
    /// `record.search` of every record of `workspace_id` the caller may read (narrow it
    /// with the `with_` methods).
    ///
    /// ```
    /// use rcip_records::SearchRecords;
    /// let args = SearchRecords::new("w").with_type("polls", "poll").with_state("open").with_limit(10);
    /// assert_eq!(args.type_name.as_deref(), Some("poll"));
    /// ```
    #[must_use]
    pub fn new(workspace_id: impl Into<String>) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            ..Self::default()
        }
    }

    /// Only records of program `namespace`.
    #[must_use]
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Only records of type `type_name` of program `namespace`.
    #[must_use]
    pub fn with_type(mut self, namespace: impl Into<String>, type_name: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self.type_name = Some(type_name.into());
        self
    }

    /// Only records of this program version.
    #[must_use]
    pub fn with_version(mut self, version: u64) -> Self {
        self.version = Some(version);
        self
    }

    /// Only records in lifecycle state `state`.
    #[must_use]
    pub fn with_state(mut self, state: impl Into<String>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// Only records of collection `collection_id`.
    #[must_use]
    pub fn with_collection(mut self, collection_id: impl Into<String>) -> Self {
        self.collection_id = Some(collection_id.into());
        self
    }

    /// Only records whose data holds `query` (case-insensitive).
    #[must_use]
    pub fn with_query(mut self, query: impl Into<String>) -> Self {
        self.query = Some(query.into());
        self
    }

    /// Through view `view` (instead of namespace and type filters).
    #[must_use]
    pub fn with_view(mut self, view: ViewRef) -> Self {
        self.view = Some(view);
        self
    }

    /// At most `limit` items (1–100).
    #[must_use]
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// The page after `cursor` (a previous page's `next_cursor`).
    #[must_use]
    pub fn with_cursor(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }
}

impl RecordHistory {
    /// `record.history` of `record_id`, from its first event.
    #[must_use]
    pub fn new(workspace_id: impl Into<String>, record_id: Uuid) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            record_id,
            limit: None,
            cursor: None,
        }
    }

    /// At most `limit` events (1–100).
    #[must_use]
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// The page after `cursor`.
    #[must_use]
    pub fn with_cursor(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }
}

impl ChangesFeed {
    /// `changes.feed` of `workspace_id` from its first event.
    #[must_use]
    pub fn new(workspace_id: impl Into<String>) -> Self {
        Self {
            workspace_id: workspace_id.into(),
            cursor: None,
            limit: None,
            namespace: None,
        }
    }

    /// From `cursor` (a `next_cursor` or a stored `checkpoint`).
    #[must_use]
    pub fn with_cursor(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// At most `limit` events (1–100).
    #[must_use]
    pub fn with_limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Only events of records of program `namespace`.
    #[must_use]
    pub fn with_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }
}
