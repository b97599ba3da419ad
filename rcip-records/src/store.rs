//! The storage interface the engine runs on, and the change events it keeps.
//!
//! A store is deliberately small: it reads records, scans them in insertion order, reads
//! events, and applies one [`Commit`] atomically: the record's new state, its events and the
//! idempotency entry together, or nothing. Every rule of the protocol lives in the engine, so
//! every store implementation behaves the same (the shared conformance suite checks that).

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::record::{Actor, Record};

/// What a change event records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind {
    /// `record.create`.
    #[serde(rename = "record.created")]
    RecordCreated,
    /// `record.update`.
    #[serde(rename = "record.updated")]
    RecordUpdated,
    /// `record.archive`.
    #[serde(rename = "record.archived")]
    RecordArchived,
    /// `command.execute`.
    #[serde(rename = "command.executed")]
    CommandExecuted,
    /// A command's `emit` entry: a durable intent, not an execution.
    #[serde(rename = "work.requested")]
    WorkRequested,
}

impl EventKind {
    /// Every kind.
    pub const ALL: [EventKind; 5] = [
        EventKind::RecordCreated,
        EventKind::RecordUpdated,
        EventKind::RecordArchived,
        EventKind::CommandExecuted,
        EventKind::WorkRequested,
    ];

    /// The wire spelling, such as `record.created`.
    ///
    /// ```
    /// use rcip_records::EventKind;
    /// assert_eq!(EventKind::parse(EventKind::WorkRequested.as_str()), Some(EventKind::WorkRequested));
    /// ```
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            EventKind::RecordCreated => "record.created",
            EventKind::RecordUpdated => "record.updated",
            EventKind::RecordArchived => "record.archived",
            EventKind::CommandExecuted => "command.executed",
            EventKind::WorkRequested => "work.requested",
        }
    }

    /// The kind spelled `name`.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// One entry of the change feed and of a record's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangeEvent {
    /// Ordered: a later event has a larger id. Assigned by the store.
    pub id: u64,
    /// Stable across reads; consumers deduplicate on it.
    pub event_id: Uuid,
    /// The workspace.
    pub workspace_id: String,
    /// Who made the change.
    pub actor: Actor,
    /// The record changed (or that emitted the work).
    pub record_id: Uuid,
    /// The record's revision after the change.
    pub revision: u64,
    /// What happened.
    pub kind: EventKind,
    /// When, RFC 3339.
    pub at: String,
    /// A record snapshot for changes; the task intent for work requests.
    pub payload: Value,
}

/// A remembered mutation: replaying its key returns its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdempotencyEntry {
    /// The workspace (keys are scoped to it).
    pub workspace_id: String,
    /// The caller's key.
    pub key: String,
    /// The operation and its arguments, canonical: a replay must match it exactly.
    pub fingerprint: String,
    /// The first call's result, as JSON.
    pub result: String,
}

/// One atomic change.
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// The record's new state.
    pub record: Record,
    /// `None` to create (the id must be new); else the revision the stored record must have.
    pub expected_revision: Option<u64>,
    /// Events to append, in order.
    pub events: Vec<ChangeEvent>,
    /// The idempotency entry to remember (every change has one); its key must be new.
    pub idempotency: IdempotencyEntry,
}

impl Commit {
    /// The checks every store makes before applying a commit, given the entry already
    /// stored under its key and the stored record's revision: the key is new, and the
    /// record is at the expected revision (or absent, for a create).
    ///
    /// # Errors
    ///
    /// [`CommitError::DuplicateKey`] or [`CommitError::Stale`].
    pub fn check(
        &self,
        existing: Option<IdempotencyEntry>,
        current_revision: Option<u64>,
    ) -> Result<(), CommitError> {
        if let Some(existing) = existing {
            return Err(CommitError::DuplicateKey(existing));
        }
        match (self.expected_revision, current_revision) {
            (None, None) => Ok(()),
            (Some(expected), Some(actual)) if expected == actual => Ok(()),
            (_, actual) => Err(CommitError::Stale {
                actual: actual.unwrap_or(0),
            }),
        }
    }
}

/// Why a commit was not applied (nothing of it was). Non-exhaustive, like every error here.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CommitError {
    /// The stored record is at another revision (or exists, for a create).
    #[error("stale revision: the record is at {actual}")]
    Stale {
        /// The stored revision (0 when a create found the id taken... which UUIDs make moot).
        actual: u64,
    },
    /// The idempotency key is already taken: here is its entry.
    #[error("idempotency key already used")]
    DuplicateKey(IdempotencyEntry),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A store's own failure (I/O, corruption).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

/// Which records a scan returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanFilter {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only this type (with `namespace`).
    pub type_name: Option<String>,
    /// Only this program version (with `namespace`).
    pub version: Option<u64>,
    /// Only records in this lifecycle state.
    pub state: Option<String>,
    /// Only this collection.
    pub collection_id: Option<String>,
    /// Archived records too.
    pub include_archived: bool,
}

impl ScanFilter {
    /// Whether `record` passes.
    #[must_use]
    pub fn matches(&self, record: &Record) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        is(&self.namespace, &record.namespace)
            && is(&self.type_name, &record.type_name)
            && self.version.is_none_or(|v| v == record.version)
            && self
                .state
                .as_deref()
                .is_none_or(|s| record.state.as_deref() == Some(s))
            && is(&self.collection_id, &record.collection_id)
            && (self.include_archived || !record.archived)
    }
}

/// What every store method returns: a boxed future the engine awaits, `Send` so that an
/// engine call can run on any executor thread.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Storage for records, events and idempotency entries.
///
/// Every method is asynchronous: a store that blocks (a file, a socket) does its blocking work
/// off the async executor (the SQLite store on a thread of its own), so a slow
/// store never stalls other invocations.
pub trait RecordStore: Send + Sync + std::fmt::Debug + 'static {
    /// The record `id` of `workspace_id`.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn get<'a>(
        &'a self,
        workspace_id: &'a str,
        id: Uuid,
    ) -> StoreFuture<'a, Result<Option<Record>, StoreError>>;

    /// Records of `workspace_id` passing `filter`, in insertion order, after position
    /// `after` (0: from the start), at most `limit`, each with its position.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn scan<'a>(
        &'a self,
        workspace_id: &'a str,
        filter: &'a ScanFilter,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<(u64, Record)>, StoreError>>;

    /// Events of `workspace_id` (of one record when `record` is given) with an id above
    /// `after`, in order, at most `limit`.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn events<'a>(
        &'a self,
        workspace_id: &'a str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<ChangeEvent>, StoreError>>;

    /// The entry remembered for `key` in `workspace_id`.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<IdempotencyEntry>, StoreError>>;

    /// Applies `commit` atomically; returns the ids given to its events.
    ///
    /// # Errors
    ///
    /// [`CommitError`]; nothing was applied.
    fn commit(&self, commit: Commit) -> StoreFuture<'_, Result<Vec<u64>, CommitError>>;

    /// The secret an [`Engine`](crate::Engine) tags its paging cursors under, kept with the
    /// data so that a cursor (a consumer's stored checkpoint) holds across restarts and on
    /// every instance of the same database: created by the first instance that asks, then the
    /// same for all. `None` (the default, and the memory store's answer): the engine draws a
    /// random key of its own.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn cursor_secret(&self) -> StoreFuture<'_, Result<Option<[u8; 32]>, StoreError>> {
        Box::pin(std::future::ready(Ok(None)))
    }
}

/// A shared store: several engines (instances of one service, in tests) over one store.
impl<S: RecordStore + ?Sized> RecordStore for std::sync::Arc<S> {
    fn get<'a>(
        &'a self,
        workspace_id: &'a str,
        id: Uuid,
    ) -> StoreFuture<'a, Result<Option<Record>, StoreError>> {
        (**self).get(workspace_id, id)
    }

    fn scan<'a>(
        &'a self,
        workspace_id: &'a str,
        filter: &'a ScanFilter,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<(u64, Record)>, StoreError>> {
        (**self).scan(workspace_id, filter, after, limit)
    }

    fn events<'a>(
        &'a self,
        workspace_id: &'a str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<ChangeEvent>, StoreError>> {
        (**self).events(workspace_id, record, after, limit)
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        (**self).idempotency(workspace_id, key)
    }

    fn cursor_secret(&self) -> StoreFuture<'_, Result<Option<[u8; 32]>, StoreError>> {
        (**self).cursor_secret()
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, Result<Vec<u64>, CommitError>> {
        (**self).commit(commit)
    }
}
