//! Commits built by hand, for the store tests below the engine, and a store wrapper for
//! tests that watch or stall an engine's store (`mod store_support;`); not every test file
//! uses every item.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;

use rcip_records::{
    Actor, ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, Record, RecordStore,
    ScanFilter, StoreError, StoreFuture,
};
use rcip_relationship::Kind;
use serde_json::{Value, json};
use uuid::Uuid;

pub fn uuid() -> Uuid {
    uuid::Builder::from_random_bytes(rcip_runtime::__private::shared::random_128()).into_uuid()
}

pub fn record(workspace: &str, data: Value) -> Record {
    let Value::Object(data) = data else {
        panic!("data must be an object")
    };
    Record {
        id: uuid(),
        workspace_id: workspace.to_owned(),
        collection_id: "c1".into(),
        namespace: "polls".into(),
        version: 1,
        type_name: "poll".into(),
        kind: Kind::Entity,
        revision: 1,
        data,
        participants: BTreeMap::new(),
        state: Some("open".into()),
        archived: false,
        created_at: 1_700_000_000_000,
        updated_at: 1_700_000_000_000,
    }
}

pub fn event(record: &Record, kind: EventKind) -> ChangeEvent {
    ChangeEvent {
        id: 0,
        event_id: uuid(),
        workspace_id: record.workspace_id.clone(),
        actor: Actor::new("ada").via("tests"),
        record_id: record.id,
        revision: record.revision,
        kind,
        at: "2023-11-14T22:13:20.000Z".into(),
        payload: json!({"revision": record.revision}),
    }
}

/// A commit of `record` at `expected` with one event (two for a command: its work request).
pub fn commit(record: &Record, expected: Option<u64>, key: &str) -> Commit {
    let mut events = vec![event(
        record,
        if expected.is_none() {
            EventKind::RecordCreated
        } else {
            EventKind::CommandExecuted
        },
    )];
    if expected.is_some() {
        events.push(event(record, EventKind::WorkRequested));
    }
    Commit {
        record: record.clone(),
        expected_revision: expected,
        events,
        idempotency: IdempotencyEntry {
            workspace_id: record.workspace_id.clone(),
            key: key.to_owned(),
            fingerprint: format!("fingerprint of {key}"),
            result: format!("{{\"key\": {key:?}}}"),
        },
    }
}

pub fn next(record: &Record) -> Record {
    let mut next = record.clone();
    next.revision += 1;
    next.updated_at += 1;
    next.data.insert("revised".into(), json!(next.revision));
    next
}

/// A step a [`Tap`] runs before a read.
pub type Step<'a> = Pin<Box<dyn Future<Output = Result<(), StoreError>> + Send + 'a>>;

/// What a test store adds around a real one: a step before each `get` (awaited before the
/// read; its error is the read's) and before each `commit`. The other reads pass through.
pub trait Tap: std::fmt::Debug + Send + Sync + 'static {
    /// The step before `get` of `id` in `workspace_id`, if any.
    fn before_get(&self, workspace_id: &str, id: Uuid) -> Option<Step<'_>> {
        let _ = (workspace_id, id);
        None
    }

    /// Called before each commit reaches the inner store.
    fn before_commit(&self) {}
}

/// A store around `inner` that runs `tap`'s steps; it derefs to the tap, so a test reads its
/// counters and gates through `engine.store()`.
#[derive(Debug, Default)]
pub struct Tapped<S, T> {
    // Fields drop in order: the inner store before its tap (a test schema outlives the
    // store's connections).
    pub inner: S,
    pub tap: T,
}

impl<S, T> Deref for Tapped<S, T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.tap
    }
}

impl<S: RecordStore, T: Tap> RecordStore for Tapped<S, T> {
    fn get<'a>(
        &'a self,
        workspace_id: &'a str,
        id: Uuid,
    ) -> StoreFuture<'a, Result<Option<Record>, StoreError>> {
        let Some(step) = self.tap.before_get(workspace_id, id) else {
            return self.inner.get(workspace_id, id);
        };
        Box::pin(async move {
            step.await?;
            self.inner.get(workspace_id, id).await
        })
    }

    fn scan<'a>(
        &'a self,
        workspace_id: &'a str,
        filter: &'a ScanFilter,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<(u64, Record)>, StoreError>> {
        self.inner.scan(workspace_id, filter, after, limit)
    }

    fn events<'a>(
        &'a self,
        workspace_id: &'a str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<ChangeEvent>, StoreError>> {
        self.inner.events(workspace_id, record, after, limit)
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        self.inner.idempotency(workspace_id, key)
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, Result<Vec<u64>, CommitError>> {
        self.tap.before_commit();
        self.inner.commit(commit)
    }

    fn cursor_secret(&self) -> StoreFuture<'_, Result<Option<[u8; 32]>, StoreError>> {
        self.inner.cursor_secret()
    }
}
