//! What only several instances can show: separate processes (this test binary run again as
//! workers, each with its own `PostgresStore`) on one database schema. A barrier (an advisory
//! lock the parent holds until every worker waits on it) starts them together.
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use postgres_support::{Barrier, TestSchema, results, role, wait_barrier};
use rcip_database::PostgresStore;
use rcip_records::{Actor, Caller, Engine, EventKind, GetRecord, RecordStore};
use rcip_relationship::parse_package;
use serde_json::{Value, json};
use uuid::Uuid;

const W: &str = "workspace-1";
const BARRIER_VAR: &str = "RCIP_TEST_BARRIER";
const RECORD_VAR: &str = "RCIP_TEST_RECORD";
const KEY_VAR: &str = "RCIP_TEST_KEY";
const WORKERS: usize = 4;

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("worker without {name}"))
}

fn engine<S: RecordStore>(store: S) -> Engine<S> {
    let path = format!(
        "{}/../examples/programs/polls.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let polls = parse_package(&std::fs::read_to_string(path).unwrap()).unwrap();
    Engine::new(store).with_program(polls).unwrap()
}

fn ada() -> Caller {
    Caller::human(Actor::new("ada"))
}

fn args<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

fn fresh_key() -> String {
    uuid::Builder::from_random_bytes(rcip_runtime::__private::shared::random_128())
        .into_uuid()
        .to_string()
}

/// In the parent: a poll on a fresh schema's engine.
async fn schema_with_a_poll() -> Option<(TestSchema, Engine<PostgresStore>, Uuid)> {
    let schema = TestSchema::create().await?;
    let engine = engine(schema.open().await);
    let poll = engine
        .create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": "poll",
                "data": {"question": "Across processes?", "options": ["a", "b"], "vote_count": 1},
                "idempotency_key": fresh_key(),
            })),
        )
        .await
        .unwrap();
    Some((schema, engine, poll.id))
}

/// In a worker: `command.execute` of `close` at revision 1 on the parent's poll, with the key
/// given (or a fresh one); prints `worker-result: ok <result JSON>` or `worker-result: error <code> <status>`.
async fn execute_worker(key: Option<String>) {
    let schema = TestSchema::of_worker().unwrap();
    let engine = engine(schema.open().await);
    let record: Uuid = env(RECORD_VAR).parse().unwrap();
    wait_barrier(&schema, &env(BARRIER_VAR)).await;
    let outcome = engine
        .execute(
            &ada(),
            args(json!({
                "workspace_id": W, "record_id": record, "command": "close",
                "expected_revision": 1, "idempotency_key": key.unwrap_or_else(fresh_key),
                "input": {"reason": "done"},
            })),
        )
        .await;
    match outcome {
        Ok(result) => println!(
            "worker-result: ok {}",
            serde_json::to_string(&result).unwrap()
        ),
        Err(error) => println!("worker-result: error {} {}", error.code(), error.status()),
    }
}

/// Runs `WORKERS` workers of `test` in `role` started together; their result lines.
async fn run_together(
    schema: &TestSchema,
    test: &str,
    role: &str,
    env: &[(&str, String)],
) -> Vec<String> {
    let barrier = Barrier::hold(schema).await;
    let mut env = env.to_vec();
    env.push((BARRIER_VAR, barrier.key()));
    let workers = schema.spawn_workers(test, role, WORKERS, &env);
    barrier.release_when_waiting(WORKERS as i64).await;
    let outputs = workers.wait().await;
    let lines: Vec<String> = outputs.iter().flat_map(results).collect();
    assert_eq!(lines.len(), WORKERS, "one result per worker: {lines:?}");
    lines
}

#[tokio::test]
async fn instances_opening_together_migrate_once() {
    if role().as_deref() == Some("open") {
        let schema = TestSchema::of_worker().unwrap();
        wait_barrier(&schema, &env(BARRIER_VAR)).await;
        let store = schema.open().await;
        println!("worker-result: {:?}", store.migrated());
        return;
    }
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let lines = run_together(
        &schema,
        "instances_opening_together_migrate_once",
        "open",
        &[],
    )
    .await;
    let applied: Vec<&String> = lines.iter().filter(|l| *l != "[]").collect();
    assert_eq!(
        applied,
        ["[1, 2, 3, 4, 5]"],
        "exactly one instance migrated: {lines:?}"
    );
    let rows = schema
        .client()
        .await
        .query("SELECT version FROM rcip_migrations", &[])
        .await
        .unwrap();
    assert_eq!(
        rows.iter().map(|r| r.get::<_, i32>(0)).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
}

#[tokio::test]
async fn concurrent_executes_from_processes_have_one_winner() {
    if role().as_deref() == Some("execute") {
        return execute_worker(None).await;
    }
    let Some((schema, engine, poll)) = schema_with_a_poll().await else {
        return;
    };
    let lines = run_together(
        &schema,
        "concurrent_executes_from_processes_have_one_winner",
        "execute",
        &[(RECORD_VAR, poll.to_string())],
    )
    .await;
    let winners = lines.iter().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(winners, 1, "{lines:?}");
    for line in lines.iter().filter(|l| !l.starts_with("ok ")) {
        assert!(
            line == "error STALE_REVISION 409" || line == "error STATE_NOT_ALLOWED 409",
            "{line}"
        );
    }
    let read = engine
        .get(
            &ada(),
            GetRecord {
                workspace_id: W.into(),
                record_id: poll,
            },
        )
        .await
        .unwrap();
    assert_eq!((read.revision, read.state.as_deref()), (2, Some("closed")));
    let executed = engine
        .store()
        .events(W, Some(poll), 0, 100)
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == EventKind::CommandExecuted)
        .count();
    assert_eq!(executed, 1);
}

#[tokio::test]
async fn idempotency_keys_hold_across_processes() {
    if role().as_deref() == Some("replay") {
        return execute_worker(Some(env(KEY_VAR))).await;
    }
    let Some((schema, engine, poll)) = schema_with_a_poll().await else {
        return;
    };
    let key = fresh_key();
    let lines = run_together(
        &schema,
        "idempotency_keys_hold_across_processes",
        "replay",
        &[(RECORD_VAR, poll.to_string()), (KEY_VAR, key.clone())],
    )
    .await;
    // Every process is answered with the one result: the first call's, replayed.
    assert!(lines.iter().all(|l| l.starts_with("ok ")), "{lines:?}");
    assert!(lines.iter().all(|l| *l == lines[0]), "{lines:?}");
    let result: Value = serde_json::from_str(lines[0].trim_start_matches("ok ")).unwrap();
    assert_eq!(result["revision"], json!(2));
    // One effect: one revision, one execution event.
    let events = engine.store().events(W, Some(poll), 0, 100).await.unwrap();
    let executed = events
        .iter()
        .filter(|e| e.kind == EventKind::CommandExecuted)
        .count();
    assert_eq!(executed, 1, "{events:?}");
    let stored = engine.store().idempotency(W, &key).await.unwrap().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&stored.result).unwrap(),
        result
    );
}
