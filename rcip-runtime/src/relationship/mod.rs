//! Relationship records and commands: the engine that executes compiled `relationship/v1`
//! programs over a record store.
//!
//! [`Engine`] implements the seed's operations (`record.create`, `record.get`,
//! `record.update`, `record.archive`, `record.search`, `command.list`, `command.execute`,
//! `record.history`, `changes.feed`) over any [`RecordStore`]; [`MemoryStore`] is the default,
//! `SqliteStore` (feature `sqlite`) keeps everything in one SQLite file.
//! Every failure is a [`RecordError`] with a stable code and the seed's HTTP-style class.

mod args;
mod authority;
mod bind;
mod cursor;
mod engine;
mod error;
mod memory;
mod record;
#[cfg(feature = "sqlite")]
mod sqlite;
mod store;

pub use args::{
    ArchiveRecord, ChangesFeed, CommandResult, CommandStatus, CreateRecord, ExecuteCommand,
    GetRecord, ListCommands, Page, Patch, RecordHistory, Requirement, RolePatch, SearchRecords,
    UpdateRecord, ViewRef,
};
pub use authority::{AllowAll, Authority, Operation};
pub use cursor::{DEFAULT_LIMIT, MAX_LIMIT};
pub use engine::{Engine, MAX_IDEMPOTENCY_KEY};
pub use error::RecordError;
pub use memory::MemoryStore;
pub use record::{Actor, ParticipantRef, Record, RecordView};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
pub use store::{
    ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, RecordStore, ScanFilter,
    StoreError,
};
