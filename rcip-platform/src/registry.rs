//! The operation registry: one row per platform operation, with its strict input schema,
//! its object output schema, the scope an agent needs and whether agents may call it.
//!
//! Every transport is generated from this one table: the RCIP capabilities
//! ([`capability_definitions`]), the MCP tools ([`tool_name`]: dots become underscores) and
//! the REST operations. [`parse_call`] is the first step of every call: an unknown operation
//! or arguments the schema refuses are answered 400 before anything else runs.
//!
//! ```
//! use rcip_platform::{PlatformCall, parse_call};
//! use serde_json::json;
//! let (spec, call) = parse_call("record.get", &json!({
//!     "workspace_id": "acme", "record_id": "0191d3f4-7a2b-7c3d-8e4f-5a6b7c8d9e0f"})).unwrap();
//! assert_eq!(spec.name, "record.get");
//! assert!(matches!(call, PlatformCall::RecordGet(_)));
//!
//! let refused = parse_call("record.get", &json!({"workspace_id": "acme"})).unwrap_err();
//! assert_eq!((refused.code, refused.status.as_u16()), ("INVALID_ARGUMENTS", 400));
//! assert_eq!(refused.issues[0].keyword, "required");
//! ```

use http::StatusCode;
use std::sync::{Arc, OnceLock};

use rcip_core::{ApplicationDefinition, CapabilityDefinition, Effect, ScopeDefinition};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::args::{
    ActivateProgram, AddMember, CreateCollection, CreateWorkspace, DraftProgram, GetProgram,
    GetWorkspace, GrantCollection, ListCapabilities, ListCollections, ListExamples, ListMembers,
    ListProgramVersions, ListWorkspaces, RemoveMember, RevokeCollection,
};
use super::error::PlatformError;
use rcip_core::ValidationIssue;
use rcip_records::DelegatedScope;
use rcip_records::{
    ArchiveRecord, ChangesFeed, CreateRecord, ExecuteCommand, GetRecord, ListCommands,
    RecordHistory, SearchRecords, UpdateRecord,
};
use rcip_relationship::{DEFAULT_PAGE_LIMIT, MAX_KEY_LENGTH, MAX_NAME_BYTES, MAX_PAGE_LIMIT};
use rcip_runtime::__private::shared::SchemaValidator;

/// Whether agents may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agents {
    /// Agents may (with the operation's scope).
    Allowed,
    /// Console-only: agents are refused whatever their scopes (403 `CONSOLE_ONLY`).
    ConsoleOnly,
    /// Agents may, for agent members only (`member.add`, `member.remove`): a change to a
    /// human member is console-only.
    AgentMembersOnly,
}

/// One operation of the platform.
#[derive(Debug)]
pub struct OperationSpec {
    /// The seed's spelling, e.g. `record.get`; also its RCIP capability id.
    pub name: &'static str,
    /// One line: what it does.
    pub summary: &'static str,
    /// The scope an agent needs (`None`: membership is enough).
    pub scope: Option<DelegatedScope>,
    /// Whether agents may call it.
    pub agents: Agents,
    /// Read, write or destructive (for RCIP and MCP annotations).
    pub effect: Effect,
    /// Whether it acts in an existing workspace (its `workspace_id` argument), so that the
    /// caller must be a member. `workspace.create`, `workspace.list` and `examples.list`
    /// do not.
    pub in_workspace: bool,
    /// The strict input schema (`additionalProperties: false`, required arguments).
    pub input: Value,
    /// The output schema (always an object).
    pub output: Value,
    validator: Option<Arc<SchemaValidator>>,
}

impl OperationSpec {
    /// Whether it changes state (and so takes an `idempotency_key`).
    #[must_use]
    pub fn is_mutation(&self) -> bool {
        self.effect != Effect::Read
    }

    /// Its MCP tool name: dots become underscores (`record_get`).
    #[must_use]
    pub fn tool_name(&self) -> String {
        tool_name(self.name)
    }
}

/// The MCP tool name of an operation: dots become underscores.
///
/// ```
/// assert_eq!(rcip_platform::tool_name("changes.feed"), "changes_feed");
/// ```
#[must_use]
pub fn tool_name(operation: &str) -> String {
    operation.replace('.', "_")
}

/// An operation call whose arguments passed the schema, typed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(missing_docs)] // Each variant is the operation of its name, with its arguments.
pub enum PlatformCall {
    CapabilitiesList(ListCapabilities),
    WorkspaceList(ListWorkspaces),
    WorkspaceGet(GetWorkspace),
    WorkspaceCreate(CreateWorkspace),
    MemberList(ListMembers),
    MemberAdd(AddMember),
    MemberRemove(RemoveMember),
    CollectionList(ListCollections),
    CollectionCreate(CreateCollection),
    CollectionGrant(GrantCollection),
    CollectionRevoke(RevokeCollection),
    ProgramVersions(ListProgramVersions),
    ProgramGet(GetProgram),
    ExamplesList(ListExamples),
    ProgramDraft(DraftProgram),
    ProgramActivate(ActivateProgram),
    RecordGet(GetRecord),
    RecordSearch(SearchRecords),
    RecordCreate(CreateRecord),
    RecordUpdate(UpdateRecord),
    RecordArchive(ArchiveRecord),
    RecordHistory(RecordHistory),
    CommandList(ListCommands),
    CommandExecute(ExecuteCommand),
    ChangesFeed(ChangesFeed),
}

impl PlatformCall {
    /// The workspace it names (every operation but `workspace.list` and `examples.list`).
    #[must_use]
    pub fn workspace_id(&self) -> Option<&str> {
        use PlatformCall as C;
        Some(match self {
            C::WorkspaceList(_) | C::ExamplesList(_) => return None,
            C::CapabilitiesList(a) => &a.workspace_id,
            C::WorkspaceGet(a) => &a.workspace_id,
            C::WorkspaceCreate(a) => &a.workspace_id,
            C::MemberList(a) => &a.workspace_id,
            C::MemberAdd(a) => &a.workspace_id,
            C::MemberRemove(a) => &a.workspace_id,
            C::CollectionList(a) => &a.workspace_id,
            C::CollectionCreate(a) => &a.workspace_id,
            C::CollectionGrant(a) => &a.workspace_id,
            C::CollectionRevoke(a) => &a.workspace_id,
            C::ProgramVersions(a) => &a.workspace_id,
            C::ProgramGet(a) => &a.workspace_id,
            C::ProgramDraft(a) => &a.workspace_id,
            C::ProgramActivate(a) => &a.workspace_id,
            C::RecordGet(a) => &a.workspace_id,
            C::RecordSearch(a) => &a.workspace_id,
            C::RecordCreate(a) => &a.workspace_id,
            C::RecordUpdate(a) => &a.workspace_id,
            C::RecordArchive(a) => &a.workspace_id,
            C::RecordHistory(a) => &a.workspace_id,
            C::CommandList(a) => &a.workspace_id,
            C::CommandExecute(a) => &a.workspace_id,
            C::ChangesFeed(a) => &a.workspace_id,
        })
    }

    /// The idempotency key of a mutation.
    #[must_use]
    pub fn idempotency_key(&self) -> Option<&str> {
        use PlatformCall as C;
        Some(match self {
            C::WorkspaceCreate(a) => &a.idempotency_key,
            C::MemberAdd(a) => &a.idempotency_key,
            C::MemberRemove(a) => &a.idempotency_key,
            C::CollectionCreate(a) => &a.idempotency_key,
            C::CollectionGrant(a) => &a.idempotency_key,
            C::CollectionRevoke(a) => &a.idempotency_key,
            C::ProgramDraft(a) => &a.idempotency_key,
            C::ProgramActivate(a) => &a.idempotency_key,
            C::RecordCreate(a) => &a.idempotency_key,
            C::RecordUpdate(a) => &a.idempotency_key,
            C::RecordArchive(a) => &a.idempotency_key,
            C::CommandExecute(a) => &a.idempotency_key,
            _ => return None,
        })
    }
}

/// Every operation, in table order.
#[must_use]
pub fn operations() -> &'static [OperationSpec] {
    static TABLE: OnceLock<Vec<OperationSpec>> = OnceLock::new();
    TABLE.get_or_init(table)
}

/// The operation named `name` (the seed's spelling).
#[must_use]
pub fn operation(name: &str) -> Option<&'static OperationSpec> {
    operations().iter().find(|spec| spec.name == name)
}

/// Parses one call: finds the operation, checks the arguments against its strict schema,
/// then reads them into their type.
///
/// # Errors
///
/// 400 `UNKNOWN_OPERATION` (naming it, cut at
/// [`MAX_ECHOED_NAME`](crate::MAX_ECHOED_NAME) characters); 400 `INVALID_ARGUMENTS` with the
/// schema's issues (at most `rcip_runtime::MAX_VALIDATION_ISSUES`, then a truncation
/// marker), or with one issue for an argument the schema admits but its type refuses
/// (`program.activate` with both or neither of `draft_id` and `package`, a human given
/// scopes, an agent given a role).
pub fn parse_call(
    operation_name: &str,
    arguments: &Value,
) -> Result<(&'static OperationSpec, PlatformCall), PlatformError> {
    let spec = operation(operation_name)
        .ok_or_else(|| PlatformError::unknown_operation(operation_name))?;
    let validator = spec.validator.as_ref().ok_or_else(|| {
        PlatformError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "INTERNAL",
            format!("the input schema of {} does not compile", spec.name),
        )
    })?;
    validator.check(arguments).map_err(|issues| {
        PlatformError::invalid_arguments(
            format!("the arguments of {} do not match its schema", spec.name),
            issues,
        )
    })?;
    let call = typed(spec.name, arguments)?;
    refine(&call)?;
    Ok((spec, call))
}

/// [`parse_call`] for arguments a door already checked against the operation's input schema
/// (the MCP door's runtime validates every call against [`capability_definitions`], which
/// carry the same schemas): the typed read and the rules across arguments, without a second
/// pass of the schema over the same value.
///
/// ```
/// use rcip_platform::{PlatformCall, read_checked_call};
/// use serde_json::json;
///
/// let (_, call) = read_checked_call("record.get", &json!({
///     "workspace_id": "acme", "record_id": "0190b8c0-0000-7000-8000-000000000001"
/// })).unwrap();
/// assert!(matches!(call, PlatformCall::RecordGet(_)));
/// ```
///
/// # Errors
///
/// As [`parse_call`] for an unknown operation and for the rules across arguments; a value
/// that no schema check passed may still be refused by its type (400 `INVALID_ARGUMENTS`).
pub fn read_checked_call(
    operation_name: &str,
    arguments: &Value,
) -> Result<(&'static OperationSpec, PlatformCall), PlatformError> {
    let spec = operation(operation_name)
        .ok_or_else(|| PlatformError::unknown_operation(operation_name))?;
    let call = typed(spec.name, arguments)?;
    refine(&call)?;
    Ok((spec, call))
}

fn typed(name: &str, arguments: &Value) -> Result<PlatformCall, PlatformError> {
    use PlatformCall as C;
    fn read<T: DeserializeOwned>(arguments: &Value) -> Result<T, PlatformError> {
        T::deserialize(arguments).map_err(|error| {
            PlatformError::invalid_arguments(
                "the arguments do not match the operation",
                vec![ValidationIssue::new("", "type", error.to_string())],
            )
        })
    }
    Ok(match name {
        "capabilities.list" => C::CapabilitiesList(read(arguments)?),
        "workspace.list" => C::WorkspaceList(read(arguments)?),
        "workspace.get" => C::WorkspaceGet(read(arguments)?),
        "workspace.create" => C::WorkspaceCreate(read(arguments)?),
        "member.list" => C::MemberList(read(arguments)?),
        "member.add" => C::MemberAdd(read(arguments)?),
        "member.remove" => C::MemberRemove(read(arguments)?),
        "collection.list" => C::CollectionList(read(arguments)?),
        "collection.create" => C::CollectionCreate(read(arguments)?),
        "collection.grant" => C::CollectionGrant(read(arguments)?),
        "collection.revoke" => C::CollectionRevoke(read(arguments)?),
        "program.versions" => C::ProgramVersions(read(arguments)?),
        "program.get" => C::ProgramGet(read(arguments)?),
        "examples.list" => C::ExamplesList(read(arguments)?),
        "program.draft" => C::ProgramDraft(read(arguments)?),
        "program.activate" => C::ProgramActivate(read(arguments)?),
        "record.get" => C::RecordGet(read(arguments)?),
        "record.search" => C::RecordSearch(read(arguments)?),
        "record.create" => C::RecordCreate(read(arguments)?),
        "record.update" => C::RecordUpdate(read(arguments)?),
        "record.archive" => C::RecordArchive(read(arguments)?),
        "record.history" => C::RecordHistory(read(arguments)?),
        "command.list" => C::CommandList(read(arguments)?),
        "command.execute" => C::CommandExecute(read(arguments)?),
        "changes.feed" => C::ChangesFeed(read(arguments)?),
        other => return Err(PlatformError::unknown_operation(other)),
    })
}

/// The rules across arguments, which the schemas leave out so that they stay flat objects
/// (tool schemas of some clients refuse `oneOf` at the top).
fn refine(call: &PlatformCall) -> Result<(), PlatformError> {
    let refuse = |path: &str, keyword: &str, message: &str| {
        Err(PlatformError::invalid_arguments(
            message.to_owned(),
            vec![ValidationIssue::new(path, keyword, message)],
        ))
    };
    match call {
        PlatformCall::ProgramActivate(a) if a.draft_id.is_some() == a.package.is_some() => {
            refuse("", "oneOf", "give exactly one of draft_id and package")
        }
        PlatformCall::MemberAdd(a) if !a.member().is_consistent() => match a.kind {
            rcip_records::PrincipalKind::Human => refuse(
                if a.scopes.is_empty() {
                    "/role"
                } else {
                    "/scopes"
                },
                "const",
                "a human member is an owner or a member, with no scopes",
            ),
            rcip_records::PrincipalKind::Agent => {
                refuse("/role", "const", "an agent member takes scopes, not a role")
            }
        },
        _ => Ok(()),
    }
}

// --- Schemas -------------------------------------------------------------------------------

/// A closed object: these properties, these required, nothing else.
fn closed(properties: &[(&str, Value)], required: &[&str]) -> Value {
    let mut props = Map::new();
    for (name, schema) in properties {
        props.insert((*name).to_owned(), schema.clone());
    }
    json!({"type": "object", "properties": props, "required": required,
           "additionalProperties": false})
}

/// A free object: validated later by the program (data, command input, a package).
fn free(description: &str) -> Value {
    json!({"type": "object", "additionalProperties": true, "description": description})
}

/// A key or name: 1 to `MAX_KEY_LENGTH` characters, never U+0000 (which PostgreSQL's text
/// cannot hold: refused here so that every store answers the same 400).
fn text(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
           "pattern": "^[^\\x00]*$", "description": description})
}

fn new_id(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[a-z0-9][a-z0-9_-]*$",
           "description": description})
}

fn name(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_NAME_BYTES,
           "pattern": "^[a-z][a-z0-9_]*$", "description": description})
}

fn uuid(description: &str) -> Value {
    json!({"type": "string", "format": "uuid", "description": description})
}

fn positive(description: &str) -> Value {
    json!({"type": "integer", "minimum": 1, "description": description})
}

fn workspace() -> (&'static str, Value) {
    ("workspace_id", text("The workspace."))
}

fn key() -> (&'static str, Value) {
    (
        "idempotency_key",
        text("Replaying a key with the same arguments returns the first result."),
    )
}

fn revision() -> (&'static str, Value) {
    (
        "expected_revision",
        positive("The record's revision the change expects; a stale one is refused (409)."),
    )
}

fn paging() -> [(&'static str, Value); 2] {
    [
        (
            "limit",
            json!({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT,
                   "description": format!("Items per page (default {DEFAULT_PAGE_LIMIT}).")}),
        ),
        (
            "cursor",
            text("The previous page's next_cursor; opaque: never build or edit one."),
        ),
    ]
}

fn roles_map(description: &str) -> Value {
    json!({"type": "object", "description": description,
           "additionalProperties": {"type": "array", "maxItems": 100,
                                    "items": uuid("A participant record.")}})
}

fn scopes() -> Value {
    json!({"type": "array", "uniqueItems": true, "maxItems": DelegatedScope::ALL.len(),
           "items": {"type": "string", "enum": DelegatedScope::ALL.map(DelegatedScope::as_str)},
           "description": "Agents: the scopes delegated in this workspace."})
}

fn timestamp() -> Value {
    json!({"type": "string", "description": "RFC 3339."})
}

fn plain(kind: &str) -> Value {
    json!({ "type": kind })
}

fn page(item: Value, extra: &[(&str, Value)]) -> Value {
    let mut fields = vec![
        ("items", json!({"type": "array", "items": item})),
        (
            "next_cursor",
            json!({"type": "string", "description": "Present when more may remain."}),
        ),
    ];
    fields.extend(extra.iter().cloned());
    let mut required = vec!["items"];
    required.extend(extra.iter().map(|(name, _)| *name));
    closed(&fields, &required)
}

fn workspace_out() -> Value {
    closed(
        &[
            ("workspace_id", plain("string")),
            ("name", plain("string")),
            ("created_at", timestamp()),
        ],
        &["workspace_id", "name", "created_at"],
    )
}

fn member_out() -> Value {
    closed(
        &[
            ("principal_id", plain("string")),
            (
                "kind",
                json!({"type": "string", "enum": ["human", "agent"]}),
            ),
            (
                "role",
                json!({"type": "string", "enum": ["owner", "member", "agent"]}),
            ),
            ("scopes", scopes()),
        ],
        &["principal_id", "kind", "role"],
    )
}

fn access_enum() -> Value {
    json!({"type": "string", "enum": ["read", "write"]})
}

fn visibility_enum() -> Value {
    json!({"type": "string", "enum": ["workspace", "restricted"],
           "description": "workspace: every member; restricted: owners and grants."})
}

fn collection_out() -> Value {
    let grant = closed(
        &[("principal_id", plain("string")), ("access", access_enum())],
        &["principal_id", "access"],
    );
    closed(
        &[
            ("workspace_id", plain("string")),
            ("collection_id", plain("string")),
            ("name", plain("string")),
            ("visibility", visibility_enum()),
            ("grants", json!({"type": "array", "items": grant})),
            ("created_at", timestamp()),
        ],
        &[
            "workspace_id",
            "collection_id",
            "name",
            "visibility",
            "grants",
            "created_at",
        ],
    )
}

fn digest_out() -> Value {
    json!({"type": "string", "description": "sha256: + base64url of the SHA-256 of the RFC 8785 canonical package."})
}

fn version_out() -> Value {
    closed(
        &[
            (
                "workspace_id",
                json!({"type": "string", "description": "Absent for an installed package."}),
            ),
            ("namespace", plain("string")),
            ("version", positive("The version.")),
            ("digest", digest_out()),
            ("package", free("The package.")),
            ("activated_at", timestamp()),
            ("activated_by", plain("string")),
        ],
        &[
            "namespace",
            "version",
            "digest",
            "package",
            "activated_at",
            "activated_by",
        ],
    )
}

fn draft_out() -> Value {
    closed(
        &[
            ("draft_id", uuid("The draft.")),
            ("namespace", plain("string")),
            ("version", positive("The version.")),
            ("digest", digest_out()),
        ],
        &["draft_id", "namespace", "version", "digest"],
    )
}

fn example_out() -> Value {
    closed(
        &[
            ("name", plain("string")),
            ("namespace", plain("string")),
            ("version", positive("The version.")),
            ("digest", digest_out()),
            ("package", free("The package.")),
        ],
        &["name", "namespace", "version", "digest", "package"],
    )
}

fn record_out() -> Value {
    let participant = json!({"anyOf": [
        closed(&[("id", plain("string"))], &["id"]),
        closed(&[("restricted", json!({"type": "boolean", "const": true}))], &["restricted"]),
    ]});
    closed(
        &[
            ("id", plain("string")),
            ("workspace_id", plain("string")),
            ("collection_id", plain("string")),
            ("namespace", plain("string")),
            ("version", plain("integer")),
            ("type", plain("string")),
            (
                "kind",
                json!({"type": "string", "enum": ["entity", "relationship"]}),
            ),
            ("revision", plain("integer")),
            (
                "data",
                free("The data (a view's projection shows only its fields)."),
            ),
            (
                "participants",
                json!({"type": "object", "additionalProperties": {"type": "array", "items": participant}}),
            ),
            ("state", plain("string")),
            ("archived", plain("boolean")),
            ("created_at", timestamp()),
            ("updated_at", timestamp()),
        ],
        &[
            "id",
            "workspace_id",
            "collection_id",
            "namespace",
            "version",
            "type",
            "kind",
            "revision",
            "data",
            "participants",
            "archived",
            "created_at",
            "updated_at",
        ],
    )
}

fn event_out() -> Value {
    closed(
        &[
            ("id", positive("Ordered: later events have larger ids.")),
            (
                "event_id",
                json!({"type": "string", "description": "Stable: deduplicate on it."}),
            ),
            ("workspace_id", plain("string")),
            (
                "actor",
                closed(
                    &[("id", plain("string")), ("client", plain("string"))],
                    &["id"],
                ),
            ),
            ("record_id", plain("string")),
            ("revision", plain("integer")),
            (
                "kind",
                json!({"type": "string", "enum": ["record.created", "record.updated",
                       "record.archived", "command.executed", "work.requested"]}),
            ),
            ("at", timestamp()),
            (
                "payload",
                json!({"description": "A record snapshot for changes (participants redacted as get would), the task intent for work requests."}),
            ),
        ],
        &[
            "id",
            "event_id",
            "workspace_id",
            "actor",
            "record_id",
            "revision",
            "kind",
            "at",
        ],
    )
}

fn command_list_out() -> Value {
    let requirement = closed(
        &[
            (
                "kind",
                json!({"type": "string", "enum": ["state", "input", "guard"]}),
            ),
            ("passed", json!({"type": ["boolean", "null"]})),
            ("reason", plain("string")),
        ],
        &["kind", "passed"],
    );
    let status = closed(
        &[
            ("command", plain("string")),
            ("capability_id", plain("string")),
            ("description", plain("string")),
            (
                "requirements",
                json!({"type": "array", "items": requirement}),
            ),
            ("runnable", plain("boolean")),
        ],
        &["command", "capability_id", "requirements", "runnable"],
    );
    closed(
        &[("commands", json!({"type": "array", "items": status}))],
        &["commands"],
    )
}

fn command_result_out() -> Value {
    closed(
        &[
            ("record_id", plain("string")),
            ("revision", plain("integer")),
            ("state", plain("string")),
            (
                "work_requested",
                json!({"type": "array", "items": {"type": "string"}}),
            ),
        ],
        &["record_id", "revision", "work_requested"],
    )
}

fn search_in() -> Value {
    let mut fields = vec![
        workspace(),
        ("namespace", name("Only this program namespace.")),
        ("type", name("Only this type.")),
        (
            "version",
            positive("Only this program version (with namespace)."),
        ),
        ("state", name("Only this lifecycle state.")),
        ("collection_id", text("Only this collection.")),
        (
            "query",
            json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_LENGTH,
                   "description": "Only records whose data contains this text (any case)."}),
        ),
        (
            "view",
            closed(
                &[
                    ("namespace", name("The program namespace.")),
                    (
                        "version",
                        positive("The program version (default: the only one)."),
                    ),
                    ("view", name("The view.")),
                ],
                &["namespace", "view"],
            ),
        ),
    ];
    fields.extend(paging());
    closed(&fields, &["workspace_id"])
}

fn with_paging(mut fields: Vec<(&'static str, Value)>, required: &[&str]) -> Value {
    fields.extend(paging());
    closed(&fields, required)
}

struct Row {
    name: &'static str,
    summary: &'static str,
    scope: Option<DelegatedScope>,
    agents: Agents,
    effect: Effect,
    in_workspace: bool,
    input: Value,
    output: Value,
}

#[allow(clippy::too_many_lines)] // The table: one entry per operation.
fn rows() -> Vec<Row> {
    use Agents::{AgentMembersOnly, Allowed, ConsoleOnly};
    use DelegatedScope as S;
    use Effect::{Destructive, Read, Write};
    let row = |name, summary, scope, agents, effect, input, output| Row {
        name,
        summary,
        scope,
        agents,
        effect,
        in_workspace: !matches!(
            name,
            "workspace.list" | "workspace.create" | "examples.list"
        ),
        input,
        output,
    };
    let record_id = || ("record_id", uuid("The record."));
    let collection = || ("collection_id", text("The collection."));
    let principal = || ("principal_id", text("The principal."));
    vec![
        row(
            "capabilities.list",
            "Lists the platform's operations the caller may call in the workspace (a program's records and commands are reached through the record and command operations).",
            None,
            Allowed,
            Read,
            with_paging(vec![workspace()], &["workspace_id"]),
            page(free("An RCIP capability definition."), &[]),
        ),
        row(
            "workspace.list",
            "Lists the workspaces the caller is a member of.",
            None,
            Allowed,
            Read,
            with_paging(vec![], &[]),
            page(workspace_out(), &[]),
        ),
        row(
            "workspace.get",
            "Reads one workspace.",
            None,
            Allowed,
            Read,
            closed(&[workspace()], &["workspace_id"]),
            workspace_out(),
        ),
        row(
            "workspace.create",
            "Creates a workspace with the caller as its first owner (console only).",
            None,
            ConsoleOnly,
            Write,
            closed(
                &[
                    ("workspace_id", new_id("The new workspace's id.")),
                    ("name", text("A display name.")),
                    key(),
                ],
                &["workspace_id", "name", "idempotency_key"],
            ),
            workspace_out(),
        ),
        row(
            "member.list",
            "Lists the workspace's members.",
            None,
            Allowed,
            Read,
            with_paging(vec![workspace()], &["workspace_id"]),
            page(member_out(), &[]),
        ),
        row(
            "member.add",
            "Adds a member or changes a member's role or scopes (agents: agent members only, within their own scopes).",
            Some(S::MembersManage),
            AgentMembersOnly,
            Write,
            closed(
                &[
                    workspace(),
                    principal(),
                    (
                        "kind",
                        json!({"type": "string", "enum": ["human", "agent"]}),
                    ),
                    (
                        "role",
                        json!({"type": "string", "enum": ["owner", "member"],
                               "description": "Humans only (default member)."}),
                    ),
                    ("scopes", scopes()),
                    key(),
                ],
                &["workspace_id", "principal_id", "kind", "idempotency_key"],
            ),
            member_out(),
        ),
        row(
            "member.remove",
            "Removes a member and its grants (agents: agent members only).",
            Some(S::MembersManage),
            AgentMembersOnly,
            Destructive,
            closed(
                &[workspace(), principal(), key()],
                &["workspace_id", "principal_id", "idempotency_key"],
            ),
            closed(
                &[
                    ("workspace_id", plain("string")),
                    ("principal_id", plain("string")),
                    ("removed", json!({"type": "boolean", "const": true})),
                ],
                &["workspace_id", "principal_id", "removed"],
            ),
        ),
        row(
            "collection.list",
            "Lists the collections the caller may read.",
            None,
            Allowed,
            Read,
            with_paging(vec![workspace()], &["workspace_id"]),
            page(collection_out(), &[]),
        ),
        row(
            "collection.create",
            "Creates a collection.",
            Some(S::CollectionsManage),
            Allowed,
            Write,
            closed(
                &[
                    workspace(),
                    ("collection_id", new_id("The new collection's id.")),
                    ("name", text("A display name.")),
                    ("visibility", visibility_enum()),
                    key(),
                ],
                &["workspace_id", "collection_id", "name", "idempotency_key"],
            ),
            collection_out(),
        ),
        row(
            "collection.grant",
            "Grants a member read or write access to a restricted collection.",
            Some(S::CollectionsManage),
            Allowed,
            Write,
            closed(
                &[
                    workspace(),
                    collection(),
                    principal(),
                    ("access", access_enum()),
                    key(),
                ],
                &[
                    "workspace_id",
                    "collection_id",
                    "principal_id",
                    "access",
                    "idempotency_key",
                ],
            ),
            collection_out(),
        ),
        row(
            "collection.revoke",
            "Revokes a principal's grant on a collection.",
            Some(S::CollectionsManage),
            Allowed,
            Destructive,
            closed(
                &[workspace(), collection(), principal(), key()],
                &[
                    "workspace_id",
                    "collection_id",
                    "principal_id",
                    "idempotency_key",
                ],
            ),
            collection_out(),
        ),
        row(
            "program.versions",
            "Lists the program versions the workspace sees (its own and the installed ones).",
            None,
            Allowed,
            Read,
            with_paging(
                vec![workspace(), ("namespace", name("Only this namespace."))],
                &["workspace_id"],
            ),
            page(version_out(), &[]),
        ),
        row(
            "program.get",
            "Reads one program version.",
            None,
            Allowed,
            Read,
            closed(
                &[
                    workspace(),
                    ("namespace", name("The namespace.")),
                    ("version", positive("The version.")),
                ],
                &["workspace_id", "namespace", "version"],
            ),
            version_out(),
        ),
        row(
            "examples.list",
            "Lists the bundled example packages (polls, hiring).",
            None,
            Allowed,
            Read,
            closed(&[], &[]),
            page(example_out(), &[]),
        ),
        row(
            "program.draft",
            "Validates a relationship/v1 package and keeps it as a draft.",
            Some(S::ProgramsDraft),
            Allowed,
            Write,
            closed(
                &[
                    workspace(),
                    ("package", free("The relationship/v1 package.")),
                    key(),
                ],
                &["workspace_id", "package", "idempotency_key"],
            ),
            draft_out(),
        ),
        row(
            "program.activate",
            "Activates a program version from a draft or a package; namespace/version pins its content.",
            Some(S::ProgramsActivate),
            Allowed,
            Write,
            closed(
                &[
                    workspace(),
                    ("draft_id", uuid("A draft (or give package).")),
                    (
                        "package",
                        free("A relationship/v1 package (or give draft_id)."),
                    ),
                    key(),
                ],
                &["workspace_id", "idempotency_key"],
            ),
            version_out(),
        ),
        row(
            "record.get",
            "Reads one record.",
            Some(S::RecordsRead),
            Allowed,
            Read,
            closed(&[workspace(), record_id()], &["workspace_id", "record_id"]),
            record_out(),
        ),
        row(
            "record.search",
            "Lists records by namespace, type, state, collection or text, or through a view.",
            Some(S::RecordsRead),
            Allowed,
            Read,
            search_in(),
            page(record_out(), &[]),
        ),
        row(
            "record.create",
            "Creates a record of a program type.",
            Some(S::RecordsWrite),
            Allowed,
            Write,
            closed(
                &[
                    workspace(),
                    collection(),
                    ("namespace", name("The program namespace.")),
                    (
                        "version",
                        positive("The program version (default: the only one)."),
                    ),
                    ("type", name("The type.")),
                    (
                        "data",
                        free("The data, validated against the type's schema."),
                    ),
                    (
                        "roles",
                        roles_map("Role -> participant ids (relationships)."),
                    ),
                    key(),
                ],
                &[
                    "workspace_id",
                    "collection_id",
                    "namespace",
                    "type",
                    "data",
                    "idempotency_key",
                ],
            ),
            record_out(),
        ),
        row(
            "record.update",
            "Changes a record's data and participants (never its state).",
            Some(S::RecordsWrite),
            Allowed,
            Write,
            closed(
                &[
                    workspace(),
                    record_id(),
                    revision(),
                    key(),
                    (
                        "patch",
                        closed(
                            &[
                                ("set", free("Fields to set.")),
                                (
                                    "remove",
                                    json!({"type": "array", "maxItems": 100,
                                           "items": {"type": "string", "minLength": 1, "maxLength": MAX_NAME_BYTES},
                                           "description": "Fields to remove."}),
                                ),
                            ],
                            &[],
                        ),
                    ),
                    (
                        "roles",
                        closed(
                            &[
                                ("add", roles_map("Participants to add, by role.")),
                                ("remove", roles_map("Participants to remove, by role.")),
                            ],
                            &[],
                        ),
                    ),
                ],
                &[
                    "workspace_id",
                    "record_id",
                    "expected_revision",
                    "idempotency_key",
                ],
            ),
            record_out(),
        ),
        row(
            "record.archive",
            "Archives a record: it stays readable and takes no more changes.",
            Some(S::RecordsWrite),
            Allowed,
            Destructive,
            closed(
                &[workspace(), record_id(), revision(), key()],
                &[
                    "workspace_id",
                    "record_id",
                    "expected_revision",
                    "idempotency_key",
                ],
            ),
            record_out(),
        ),
        row(
            "record.history",
            "Lists a record's change events, oldest first.",
            Some(S::RecordsRead),
            Allowed,
            Read,
            with_paging(
                vec![workspace(), record_id()],
                &["workspace_id", "record_id"],
            ),
            page(event_out(), &[]),
        ),
        row(
            "command.list",
            "Lists a record's commands and which of their requirements pass (with the input, when given).",
            Some(S::RecordsRead),
            Allowed,
            Read,
            closed(
                &[
                    workspace(),
                    record_id(),
                    ("input", free("Input to check the requirements with.")),
                ],
                &["workspace_id", "record_id"],
            ),
            command_list_out(),
        ),
        row(
            "command.execute",
            "Runs a record's command if authority, input, state, guard and revision permit it.",
            Some(S::CommandsExecute),
            Allowed,
            Write,
            closed(
                &[
                    workspace(),
                    record_id(),
                    ("command", name("The command.")),
                    revision(),
                    key(),
                    (
                        "input",
                        free("The command's input, validated against its schema."),
                    ),
                ],
                &[
                    "workspace_id",
                    "record_id",
                    "command",
                    "expected_revision",
                    "idempotency_key",
                ],
            ),
            command_result_out(),
        ),
        row(
            "changes.feed",
            "Lists change events after a cursor or checkpoint; store the checkpoint and deduplicate on event_id.",
            Some(S::RecordsRead),
            Allowed,
            Read,
            with_paging(
                vec![
                    workspace(),
                    ("namespace", name("Only events of this program's records.")),
                ],
                &["workspace_id"],
            ),
            page(
                event_out(),
                &[(
                    "checkpoint",
                    json!({"type": "string", "description": "Where to poll from later."}),
                )],
            ),
        ),
    ]
}

fn table() -> Vec<OperationSpec> {
    rows()
        .into_iter()
        .map(|row| OperationSpec {
            validator: SchemaValidator::compile(&row.input).ok(),
            name: row.name,
            summary: row.summary,
            scope: row.scope,
            agents: row.agents,
            effect: row.effect,
            in_workspace: row.in_workspace,
            input: row.input,
            output: row.output,
        })
        .collect()
}

// --- Generation ----------------------------------------------------------------------------

/// The RCIP scope of an operation: its delegated scope with `.` for `:` (`records.read`), or
/// `directory` for the reads that need membership only.
#[must_use]
pub fn rcip_scope_id(spec: &OperationSpec) -> String {
    spec.scope
        .map_or_else(|| "directory".to_owned(), |s| s.as_str().replace(':', "."))
}

/// The RCIP capability of every operation, in table order: id = the operation's name,
/// strict input, object output, its effect, idempotent (reads, and mutations through their
/// key), in its [`rcip_scope_id`], tagged `console-only` when agents may not call it.
#[must_use]
pub fn capability_definitions() -> &'static [CapabilityDefinition] {
    static DEFINITIONS: OnceLock<Vec<CapabilityDefinition>> = OnceLock::new();
    DEFINITIONS.get_or_init(definitions)
}

fn definitions() -> Vec<CapabilityDefinition> {
    operations()
        .iter()
        .map(|spec| {
            let title = spec.name.replace('.', " ");
            let mut capability =
                CapabilityDefinition::new(spec.name, spec.effect, title, spec.summary)
                    .scope(rcip_scope_id(spec))
                    .idempotent(true)
                    .input_schema(spec.input.clone())
                    .output_schema(spec.output.clone());
            if spec.agents == Agents::ConsoleOnly {
                capability = capability.tag("console-only");
            }
            capability
        })
        .collect()
}

/// The platform as one RCIP application definition: a scope per delegated scope plus
/// `directory`, and [`capability_definitions`].
///
/// ```
/// let definition = rcip_platform::platform_definition();
/// rcip_relationship::rcip_core::validate_definition(&definition).unwrap();
/// assert!(definition.capabilities.iter().any(|c| c.id == "program.activate"));
/// ```
#[must_use]
pub fn platform_definition() -> ApplicationDefinition {
    let mut definition = ApplicationDefinition::new(
        "relationship",
        "Relationship Protocol",
        "Workspaces, collections, programs activated at run time, and the records and commands they define.",
    )
    .scope(ScopeDefinition::new(
        "directory",
        "Directory",
        "Reads of workspaces, members, collections, program versions and examples: membership is enough.",
    ));
    for scope in DelegatedScope::ALL {
        definition = definition.scope(ScopeDefinition::new(
            scope.as_str().replace(':', "."),
            scope.as_str(),
            format!("What the delegated scope {scope} lets an agent do."),
        ));
    }
    for capability in capability_definitions().iter().cloned() {
        definition = definition.capability(capability);
    }
    definition
}
