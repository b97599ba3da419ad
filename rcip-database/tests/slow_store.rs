//! A slow store never stalls other invocations: the engine holds no lock and no executor
//! thread while a store call is pending, and the SQLite store does its blocking work on a
//! thread of its own. Every test runs on a current-thread runtime, where one blocked
//! poll would stop everything.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rcip_database::SqliteStore;
use rcip_records::{Actor, Caller, CreateRecord, Engine, GetRecord, MemoryStore, StoreError};
use rcip_relationship::{Package, parse_package};
use serde_json::json;
use uuid::Uuid;

mod store_support;
use store_support::{Step, Tap, Tapped};

/// A gate a blocking thread waits at until the test opens it.
#[derive(Debug, Default)]
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

/// The tap of a store whose `get`s in workspace `slow` wait at the gate on a blocking
/// thread, and that counts the commits it was asked for.
#[derive(Debug)]
struct Probe {
    slow: Option<&'static str>,
    gate: Arc<Gate>,
    slow_entered: AtomicBool,
    commits: AtomicUsize,
}

impl Probe {
    fn new<S>(inner: S, slow: Option<&'static str>) -> Tapped<S, Self> {
        Tapped {
            inner,
            tap: Self {
                slow,
                gate: Arc::default(),
                slow_entered: AtomicBool::new(false),
                commits: AtomicUsize::new(0),
            },
        }
    }
}

impl Tap for Probe {
    fn before_get(&self, workspace_id: &str, _id: Uuid) -> Option<Step<'_>> {
        if self.slow != Some(workspace_id) {
            return None;
        }
        self.slow_entered.store(true, Ordering::SeqCst);
        let gate = Arc::clone(&self.gate);
        Some(Box::pin(async move {
            tokio::task::spawn_blocking(move || gate.wait())
                .await
                .map_err(|e| StoreError(e.to_string()))
        }))
    }

    fn before_commit(&self) {
        self.commits.fetch_add(1, Ordering::SeqCst);
    }
}

fn notes() -> Package {
    parse_package(
        &json!({"protocol": "relationship/v1", "namespace": "notes", "version": 1,
            "types": {"note": {"kind": "entity", "schema": {"type": "object",
                "properties": {"text": {"type": "string"}}, "required": ["text"],
                "additionalProperties": false}}}})
        .to_string(),
    )
    .unwrap()
}

fn ada() -> Caller {
    Caller::human(Actor::new("ada"))
}

fn note(workspace: &str, key: &str) -> CreateRecord {
    CreateRecord::new(workspace, "c", "notes", "note", [("text", json!(key))], key)
}

#[tokio::test]
async fn a_pending_store_call_leaves_other_invocations_running() {
    let engine = Arc::new(
        Engine::new(Probe::new(MemoryStore::new(), Some("slow")))
            .with_program(notes())
            .unwrap(),
    );
    let slow = tokio::spawn({
        let engine = Arc::clone(&engine);
        async move {
            engine
                .get(&ada(), GetRecord::new("slow", Uuid::nil()))
                .await
        }
    });
    // Until the slow call is inside the store.
    while !engine.store().slow_entered.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    // Another invocation, on the same engine and the one executor thread, runs to its end.
    let created = engine.create(&ada(), note("fast", "k1")).await.unwrap();
    let read = engine
        .get(&ada(), GetRecord::new("fast", created.id))
        .await
        .unwrap();
    assert_eq!(read.id, created.id);
    assert!(!slow.is_finished(), "the slow call is still waiting");
    engine.store().gate.open();
    let error = slow.await.unwrap().unwrap_err();
    assert_eq!(error.code(), "RECORD_NOT_FOUND");
}

#[tokio::test]
async fn sqlite_waits_on_the_blocking_pool_not_the_executor() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("slow-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.db");
    let _ = std::fs::remove_file(&path);
    let writer = Arc::new(
        Engine::new(Probe::new(SqliteStore::open(&path).unwrap(), None))
            .with_program(notes())
            .unwrap(),
    );
    let reader = Engine::new(SqliteStore::open(&path).unwrap())
        .with_program(notes())
        .unwrap();
    let existing = writer.create(&ada(), note("w", "k0")).await.unwrap();
    // Another connection takes the database's write lock: the writer's next commit waits
    // for it inside SQLite.
    let lock = rusqlite::Connection::open(&path).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let commits = writer.store().commits.load(Ordering::SeqCst);
    let pending = tokio::spawn({
        let writer = Arc::clone(&writer);
        async move { writer.create(&ada(), note("w", "k1")).await }
    });
    // Until the commit has been handed to the store (its SQLite work is then queued).
    while writer.store().commits.load(Ordering::SeqCst) == commits {
        tokio::task::yield_now().await;
    }
    // Meanwhile the executor serves a read of the same database through another store.
    let read = reader
        .get(&ada(), GetRecord::new("w", existing.id))
        .await
        .unwrap();
    assert_eq!(read.revision, 1);
    assert!(!pending.is_finished(), "the commit waits for the lock");
    lock.execute_batch("ROLLBACK").unwrap();
    let created = pending.await.unwrap().unwrap();
    assert_eq!(created.revision, 1);
    drop((writer, reader, lock));
    std::fs::remove_dir_all(dir).unwrap();
}
