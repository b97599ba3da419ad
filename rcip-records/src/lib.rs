//! The record engine of the Relationship Protocol's `relationship/v1` programs: records,
//! their lifecycles and commands, over any record store, with the programs' capabilities
//! bound to an RCIP host.
//!
//! [`Engine`] implements the seed's operations (`record.create`, `record.get`,
//! `record.update`, `record.archive`, `record.search`, `command.list`, `command.execute`,
//! `record.history`, `changes.feed`) as `async fn`s over any [`RecordStore`] (whose calls
//! return [`StoreFuture`]s); [`MemoryStore`] is the default, and `rcip-database` keeps
//! records in SQLite or PostgreSQL. Every operation takes the [`Caller`] (a human, or an
//! agent with delegated scopes) and its arguments ([`CreateRecord::new`], ...). Every failure
//! is a [`RecordError`] with a stable code and the seed's HTTP-style class.
//!
//! - An [`Authority`] decides every record access: [`Target::Record`] for a stored record,
//!   [`Target::New`] for the one a `record.create` would make.
//! - Idempotent replays are answered only after the caller's current access is checked, and
//!   are projected like fresh reads (participants it may not read are restricted).
//! - Paging cursors are tamper-evident: HMAC-SHA256 over position, workspace, query and
//!   principal. The key is [`Engine::with_cursor_key`]'s, or else the store's own
//!   ([`RecordStore::cursor_secret`]), so checkpoints on a durable store survive restarts.
//! - Programs are installed ([`Engine::with_program`]) or activated per workspace at run
//!   time ([`Engine::activate`]); a `namespace/version` names one content
//!   ([`Package::digest`](rcip_relationship::Package::digest)), and other content is
//!   `VERSION_CONFLICT`. A [`ProgramSource`] shows activations made by other instances.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use rcip_records::{Actor, Caller, CreateRecord, Engine, ExecuteCommand};
//! use serde_json::json;
//!
//! let package = rcip_relationship::parse_package(r#"{
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
//! let engine = Engine::in_memory().with_program(package).unwrap();
//! let ada = Caller::human(Actor::new("ada"));
//! let question = [("question", json!("Lunch?"))];
//! let poll = engine
//!     .create(&ada, CreateRecord::new("w", "c", "polls", "poll", question, "k1"))
//!     .await
//!     .unwrap();
//! let closed = engine
//!     .execute(&ada, ExecuteCommand::new("w", poll.id, "close", 1, "k2"))
//!     .await
//!     .unwrap();
//! assert_eq!(closed.state.as_deref(), Some("closed"));
//! # });
//! ```
#![deny(missing_docs)]

mod activation;
mod args;
mod authority;
mod bind;
mod cursor;
mod engine;
mod error;
mod memory;
mod principal;
mod record;
mod store;
mod versions;

pub use activation::{Activation, Pin, PinConflict, pin_rule};
pub use args::{
    ArchiveRecord, ChangesFeed, CommandList, CommandResult, CommandStatus, CreateRecord,
    ExecuteCommand, GetRecord, ListCommands, Page, Patch, RecordHistory, Requirement, RolePatch,
    SearchRecords, UpdateRecord, ViewRef,
};
pub use authority::{AllowAll, Authority, NewRecord, Operation, Target};
pub use cursor::{DEFAULT_LIMIT, MAX_LIMIT};
pub use engine::{Engine, MAX_IDEMPOTENCY_KEY};
pub use error::RecordError;
pub use memory::MemoryStore;
pub use principal::{Caller, DelegatedScope, PrincipalKind, ScopeSet, UnknownScope};
pub use record::{Actor, ParticipantRef, Record, RecordView};
pub use store::{
    ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, RecordStore, ScanFilter,
    StoreError, StoreFuture,
};
pub use versions::ProgramSource;

pub use rcip_relationship;

/// What rcip's own crates (the platform and the database stores) share with the engine;
/// not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bind::{
        Call, CapabilityFuture, Context, RunCapability, Target, bind_capabilities, feed_summary,
    };
    pub use crate::cursor::{CursorKey, CursorScope};
    pub use crate::record::timestamp;
}
