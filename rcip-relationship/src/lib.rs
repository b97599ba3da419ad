//! The Relationship Protocol's `relationship/v1` programs: the package model, its validator
//! and rule evaluator, and (feature `engine`, default) the engine that executes programs over a
//! record store and binds their capabilities to an RCIP host.
//!
//! ## Packages
//!
//! A package declares record types (entities and relationships), their lifecycles and the
//! commands that change them. [`parse_package`] checks a package against every rule of the
//! form and reports all problems at once, each at its JSON Pointer with a stable
//! [`ProblemCode`]; a valid package becomes a [`Package`]. Rule expressions ([`Expr`]) are
//! evaluated against a record's data, a command's input and the lifecycle state.
//!
//! The normative JSON form and the evaluation semantics are in the project's
//! `docs/relationship-v1.md`.
//!
//! ```
//! use rcip_relationship::parse_package;
//! let package = parse_package(r#"{
//!   "protocol": "relationship/v1", "namespace": "polls", "version": 1,
//!   "types": {"poll": {
//!     "kind": "entity",
//!     "schema": {"type": "object", "properties": {"question": {"type": "string"}},
//!                "required": ["question"], "additionalProperties": false},
//!     "lifecycle": {"initial": "open", "states": ["open", "closed"]},
//!     "commands": {"close": {
//!       "input": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
//!       "from": ["open"], "to": "closed"}}
//!   }}
//! }"#).unwrap();
//! let poll = package.type_def("poll").unwrap();
//! assert_eq!(poll.command("close").unwrap().to.as_deref(), Some("closed"));
//! // The subset's default bound is written out.
//! assert!(poll.schema.json.contains(r#""maxLength":4000"#));
//! ```
//!
//! ## The engine (feature `engine`)
//!
//! [`Engine`] implements the seed's operations (`record.create`, `record.get`,
//! `record.update`, `record.archive`, `record.search`, `command.list`, `command.execute`,
//! `record.history`, `changes.feed`) as `async fn`s over any [`RecordStore`] (whose calls
//! return [`StoreFuture`]s); [`MemoryStore`] is the default, `SqliteStore` (feature `sqlite`)
//! keeps everything in one SQLite file and runs each call on a thread of its own, so a
//! slow store never holds an executor thread. Every operation takes the [`Caller`] (a human,
//! or an agent with delegated scopes) and its arguments ([`CreateRecord::new`], ...).
//! Every failure is a [`RecordError`] with a stable code and the seed's HTTP-style class.
//!
//! - An [`Authority`] decides every record access: [`Target::Record`] for a stored record,
//!   [`Target::New`] for the one a `record.create` would make.
//! - Idempotent replays are answered only after the caller's current access is checked, and
//!   are projected like fresh reads (participants it may not read are restricted).
//! - Paging cursors are tamper-evident: HMAC-SHA256 over position, workspace, query and
//!   principal, under [`Engine::with_cursor_key`].
//! - Programs are installed ([`Engine::with_program`]) or activated per workspace at run
//!   time ([`Engine::activate`]); a `namespace/version` names one content
//!   ([`Package::digest`]), and other content is `VERSION_CONFLICT`. A [`ProgramSource`]
//!   shows activations made by other instances.
//!
//! ## The platform layer (feature `engine`)
//!
//! What `docs/platform-design.md` puts in front of the engine: the directory ([`Workspace`],
//! [`Member`], [`Collection`], program drafts and versions, kept by a [`DirectoryStore`];
//! [`MemoryDirectory`] in memory, `SqliteStore` and `PostgresStore` durably), the operation
//! registry ([`operations`], [`parse_call`]:
//! every operation with its strict input schema, its scope and whether agents may call it,
//! and the RCIP capabilities generated from it), the one authorization decision
//! ([`authorize_call`]: `CONSOLE_ONLY`, `WORKSPACE_NOT_FOUND`, `INSUFFICIENT_SCOPE`,
//! `COLLECTION_NOT_FOUND`, `FORBIDDEN`), programs drafted and activated at run time
//! ([`check_package`], [`activation`], [`example_packages`]), and the one error every
//! platform operation answers with ([`PlatformError`]).
//!
//! [`Platform`] is the one entry of every operation ([`Platform::call`]): it parses the
//! arguments, reads the caller's access once, decides, and runs the operation on the
//! directory or on the engine under the record-level [`WorkspaceAuthority`];
//! [`Platform::bind`] puts the registry on an RCIP host.
//!
//! ## Features
//!
//! - `engine` (default): [`Engine`], the stores and `Engine::bind_package`; pulls in
//!   `rcip-runtime`. Without it the crate is the model and validator only, which is what
//!   `rcip-build` and `rcip check` use.
//! - `sqlite`: `SqliteStore` over the system's SQLite library; `sqlite-bundled` builds SQLite
//!   from source instead.
//! - `postgres`: `PostgresStore`, for several instances of a service on one PostgreSQL
//!   database (tokio-postgres, re-exported as `tokio_postgres` for its `Config`).
#![deny(missing_docs)]

mod capabilities;
mod digest;
mod model;
mod naming;
mod operations;
mod problem;
mod rule;
mod schema;
mod validate;

pub use capabilities::{
    DATE_TIME_PATTERN, MAX_KEY_LENGTH, command_capabilities, duplicate_namespaces, package_scope_id,
};
pub use model::{
    Command, DataSchema, Emit, Kind, Lifecycle, List, Package, RELATIONSHIP_PROTOCOL, Role, Text,
    TypeDef, TypeRef, UnknownState, View, WORK_REQUESTED,
};
pub use naming::{command_capability_id, lower_camel, pascal_case};
pub use operations::{
    DEFAULT_PAGE_LIMIT, FEED_OPERATION, MAX_PAGE_LIMIT, TYPE_OPERATIONS, TypeOperation,
    operation_capabilities, operation_capability_id, package_capabilities, view_capability_id,
};
pub use problem::{PackageError, Problem, ProblemCode};
pub use rule::{Comparison, Constant, Expr, Path, Root, Scope};
pub use schema::{DEFAULT_MAX_ITEMS, DEFAULT_MAX_LENGTH, MAX_SCHEMA_DEPTH};
pub use validate::{
    MAX_EMITS, MAX_NAME_BYTES, MAX_PACKAGE_BYTES, MAX_PACKAGE_DEPTH, MAX_PACKAGE_PROBLEMS,
    MAX_PATH_COMPONENTS, MAX_ROLE_PARTICIPANTS, MAX_RULE_DEPTH, MAX_RULE_OPERANDS, MAX_STATES,
    RuleRoots, is_valid_name, parse_package, parse_rule, validate_package,
};

// The engine: records, stores and capability bindings, over rcip-runtime.
#[cfg(feature = "engine")]
mod args;
#[cfg(feature = "engine")]
mod authority;
#[cfg(feature = "engine")]
mod authorize;
#[cfg(feature = "engine")]
mod bind;
#[cfg(feature = "engine")]
mod cursor;
#[cfg(feature = "engine")]
mod directory;
#[cfg(feature = "engine")]
mod directory_programs;
#[cfg(any(feature = "postgres", feature = "sqlite"))]
mod directory_rows;
#[cfg(feature = "engine")]
mod engine;
#[cfg(feature = "engine")]
mod error;
#[cfg(feature = "engine")]
mod memory;
#[cfg(feature = "engine")]
mod memory_directory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod pause;
#[cfg(feature = "engine")]
mod platform;
#[cfg(feature = "engine")]
mod platform_args;
#[cfg(feature = "engine")]
mod platform_authority;
#[cfg(feature = "engine")]
mod platform_bind;
#[cfg(feature = "engine")]
mod platform_error;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "engine")]
mod principal;
#[cfg(feature = "engine")]
mod programs;
#[cfg(feature = "engine")]
mod record;
#[cfg(feature = "engine")]
mod registry;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_directory;
#[cfg(feature = "engine")]
mod store;
#[cfg(feature = "engine")]
mod versions;

#[cfg(feature = "engine")]
pub use args::{
    ArchiveRecord, ChangesFeed, CommandList, CommandResult, CommandStatus, CreateRecord,
    ExecuteCommand, GetRecord, ListCommands, Page, Patch, RecordHistory, Requirement, RolePatch,
    SearchRecords, UpdateRecord, ViewRef,
};
#[cfg(feature = "engine")]
pub use authority::{AllowAll, Authority, NewRecord, Operation, Target};
#[cfg(feature = "engine")]
pub use cursor::{DEFAULT_LIMIT, MAX_LIMIT};
#[cfg(feature = "engine")]
pub use engine::{Engine, MAX_IDEMPOTENCY_KEY};
#[cfg(feature = "engine")]
pub use error::RecordError;
#[cfg(feature = "engine")]
pub use memory::MemoryStore;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[doc(hidden)]
pub use pause::CommitPause;
#[cfg(feature = "postgres")]
pub use postgres::{DEFAULT_POOL_SIZE, PoolUse, PostgresStore};
#[cfg(feature = "engine")]
pub use principal::{Caller, DelegatedScope, PrincipalKind, ScopeSet, UnknownScope};
#[cfg(feature = "engine")]
pub use record::{Actor, ParticipantRef, Record, RecordView};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
// The platform layer: directory, the one authorization decision, the operation registry and
// programs at run time (docs/platform-design.md).
#[cfg(feature = "engine")]
pub use authorize::{
    Denial, MemberChange, authorize_call, authorize_collection, authorize_member_change,
    authorize_operation, collection_access, effective_scopes, is_membership_of, membership,
    readable_collections,
};
#[cfg(feature = "engine")]
pub use directory::{
    Access, Applied, Collection, DirectoryChange, DirectoryError, DirectoryFuture, DirectoryStore,
    Grant, Member, MemberRole, ProgramDraft, ProgramVersion, Visibility, Workspace,
    WorkspaceAccess,
};
#[cfg(feature = "engine")]
pub use directory_programs::DirectoryPrograms;
#[cfg(feature = "engine")]
pub use memory_directory::MemoryDirectory;
#[cfg(feature = "engine")]
pub use platform::{INSTALLED_BY, Platform};
#[cfg(feature = "engine")]
pub use platform_args::{
    ActivateProgram, AddMember, CreateCollection, CreateWorkspace, DraftProgram, GetProgram,
    GetWorkspace, GrantCollection, ListCapabilities, ListCollections, ListExamples, ListMembers,
    ListProgramVersions, ListWorkspaces, RemoveMember, RevokeCollection,
};
#[cfg(feature = "engine")]
pub use platform_authority::WorkspaceAuthority;
#[cfg(feature = "engine")]
pub use platform_error::{MAX_ECHOED_NAME, PlatformError};
#[cfg(feature = "engine")]
pub use programs::{
    Activation, CheckedPackage, EXAMPLE_PACKAGES, ExamplePackage, activation, check_package,
    example_packages, package_digest,
};
#[cfg(feature = "engine")]
pub use registry::{
    Agents, OperationSpec, PlatformCall, capability_definitions, operation, operations, parse_call,
    platform_definition, rcip_scope_id, tool_name,
};
#[cfg(feature = "engine")]
pub use store::{
    ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, RecordStore, ScanFilter,
    StoreError, StoreFuture,
};
#[cfg(feature = "postgres")]
pub use tokio_postgres;
#[cfg(feature = "engine")]
pub use versions::ProgramSource;

pub use rcip_core;

/// Includes the Rust that `rcip-build` generated from relationship program packages
/// (`$OUT_DIR/rcip_programs.rs`): one module per package namespace (its highest version, with
/// a `v1`, `v2`, ... submodule per version when the folder holds several).
///
/// ```ignore
/// // build.rs: rcip_build::Programs::new("programs").compile_or_fail();
/// mod programs {
///     rcip_relationship::include_programs!();
/// }
/// ```
#[macro_export]
macro_rules! include_programs {
    () => {
        ::core::include!(::core::concat!(
            ::core::env!("OUT_DIR"),
            "/rcip_programs.rs"
        ));
    };
}
