//! Commits built by hand, for the store tests below the engine (`mod store_support;`); not
//! every test file uses every item.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::collections::BTreeMap;

use rcip_relationship::{Actor, ChangeEvent, Commit, EventKind, IdempotencyEntry, Kind, Record};
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
