//! rcip-mcp's state in PostgreSQL (a schema per test; skipped with one line without
//! `RCIP_TEST_POSTGRES_URL`). Tasks: one conformance suite for the memory store and
//! PostgreSQL, then what only a shared store shows: a task made through one instance is seen
//! and finished through another, and two instances finishing one task at once change it
//! exactly once. Sessions: owners and `initialize` parameters, read by another instance,
//! forgotten, and gone a day after they were opened. Stream events: replayed by another
//! instance exactly as sent, following an open stream to its answer, by unguessable ids.
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use futures_util::StreamExt;
use postgres_support::TestSchema;
use rcip_mcp::rmcp::model::{
    CallToolResult, ContentBlock, ErrorData, NumberOrString, ServerJsonRpcMessage,
    ServerNotification, ServerResult, ToolListChangedNotification,
};
use rcip_mcp::rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rcip_mcp::rmcp::transport::streamable_http_server::session::store::EventStore;
use rcip_mcp::{MemoryTaskStore, SessionOwner, SessionStore, TaskRecord, TaskState, TaskStore};
use rcip_runtime::Principal;
use serde_json::{Value, json};

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn task(id: &str, owner: Option<&str>, ttl_ms: u64) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.to_owned(),
        owner: owner.map(str::to_owned),
        capability_id: "reports.build".to_owned(),
        state: TaskState::Working,
        created_at: now,
        updated_at: now,
        ttl_ms,
    }
}

async fn conforms(store: &dyn TaskStore) {
    let now = now_ms();
    // Created and read back as given, the owner included.
    let created = task("t1", Some("ada"), 60_000);
    store.create(created.clone()).await.unwrap();
    assert_eq!(store.get("t1").await.unwrap(), Some(created.clone()));
    assert_eq!(store.get("t-unknown").await.unwrap(), None);
    let anonymous = task("t2", None, 60_000);
    store.create(anonymous.clone()).await.unwrap();
    assert_eq!(store.get("t2").await.unwrap().unwrap().owner, None);

    // Every state survives the round trip, with its detail.
    let asked = json!({"name": {"method": "elicitation/create", "params": {"message": "Name?"}}});
    assert!(
        store
            .set_state("t1", TaskState::InputRequired(asked.clone()), now + 1)
            .await
            .unwrap()
    );
    let read = store.get("t1").await.unwrap().unwrap();
    assert_eq!(read.state, TaskState::InputRequired(asked));
    assert_eq!(read.updated_at, now + 1);
    assert!(
        store
            .set_state("t1", TaskState::Working, now + 2)
            .await
            .unwrap()
    );
    let result = json!({"content": [{"type": "text", "text": "done"}], "isError": false});
    assert!(
        store
            .set_state("t1", TaskState::Completed(result.clone()), now + 3)
            .await
            .unwrap()
    );
    assert_eq!(
        store.get("t1").await.unwrap().unwrap().state,
        TaskState::Completed(result.clone())
    );

    // A finished task never changes: a late result cannot undo a cancellation.
    for later in [
        TaskState::Working,
        TaskState::Cancelled,
        TaskState::Failed(json!({"code": -32603, "message": "late"})),
    ] {
        assert!(!store.set_state("t1", later, now + 4).await.unwrap());
    }
    assert_eq!(
        store.get("t1").await.unwrap().unwrap().state,
        TaskState::Completed(result)
    );
    assert!(
        store
            .set_state("t2", TaskState::Cancelled, now + 5)
            .await
            .unwrap()
    );
    assert!(
        !store
            .set_state("t2", TaskState::Completed(json!({})), now + 6)
            .await
            .unwrap()
    );
    let error = json!({"code": -32021, "message": "missing capability"});
    store.create(task("t3", None, 60_000)).await.unwrap();
    assert!(
        store
            .set_state("t3", TaskState::Failed(error.clone()), now + 7)
            .await
            .unwrap()
    );
    assert_eq!(
        store.get("t3").await.unwrap().unwrap().state,
        TaskState::Failed(error)
    );
    assert!(
        !store
            .set_state("t-unknown", TaskState::Cancelled, now)
            .await
            .unwrap()
    );

    // A task finished longer than its ttl ago reads as absent; a running one never expires.
    let mut old = task("t4", None, 10);
    old.created_at = now - 1_000;
    old.updated_at = now - 1_000;
    store.create(old.clone()).await.unwrap();
    assert!(store.get("t4").await.unwrap().is_some(), "running: kept");
    assert!(
        store
            .set_state("t4", TaskState::Cancelled, now - 500)
            .await
            .unwrap()
    );
    assert_eq!(store.get("t4").await.unwrap(), None, "finished and expired");
}

#[tokio::test]
async fn the_memory_store_conforms() {
    conforms(&MemoryTaskStore::new()).await;
}

#[tokio::test]
async fn the_postgres_store_conforms() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    conforms(&schema.open().await.mcp_tasks()).await;
}

/// What a second instance sees: the task one instance made, its changes, and the sweep of
/// expired tasks by whichever instance creates the next one.
#[tokio::test]
async fn instances_share_their_tasks() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = tokio::join!(schema.open(), schema.open());
    let (a, b) = (a.mcp_tasks(), b.mcp_tasks());
    let now = now_ms();
    a.create(task("shared", Some("ada"), 60_000)).await.unwrap();
    assert_eq!(
        b.get("shared").await.unwrap().unwrap().owner.as_deref(),
        Some("ada")
    );
    assert!(
        b.set_state("shared", TaskState::Cancelled, now + 1)
            .await
            .unwrap()
    );
    assert_eq!(
        a.get("shared").await.unwrap().unwrap().state,
        TaskState::Cancelled
    );
    assert!(
        !a.set_state("shared", TaskState::Completed(json!({})), now + 2)
            .await
            .unwrap()
    );

    // An expired task's row goes when any instance creates a task.
    let mut old = task("old", None, 1);
    old.created_at = now - 10_000;
    old.updated_at = now - 10_000;
    a.create(old).await.unwrap();
    assert!(
        a.set_state("old", TaskState::Cancelled, now - 5_000)
            .await
            .unwrap()
    );
    b.create(task("next", None, 60_000)).await.unwrap();
    let rows = schema
        .client()
        .await
        .query("SELECT id FROM rcip_mcp_tasks ORDER BY id", &[])
        .await
        .unwrap();
    let ids: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
    assert_eq!(ids, ["next", "shared"]);
}

/// Two instances finish one running task at the same moment (one cancels, one completes),
/// many times over: exactly one change wins each time, and the task shows the winner's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_finish_wins_across_instances() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = tokio::join!(schema.open(), schema.open());
    let (a, b): (Arc<dyn TaskStore>, Arc<dyn TaskStore>) =
        (Arc::new(a.mcp_tasks()), Arc::new(b.mcp_tasks()));
    for round in 0..50 {
        let id = format!("race-{round}");
        a.create(task(&id, None, 60_000)).await.unwrap();
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let finish = |store: Arc<dyn TaskStore>, state: TaskState| {
            let (barrier, id) = (Arc::clone(&barrier), id.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                store.set_state(&id, state, now_ms()).await.unwrap()
            })
        };
        let completed = TaskState::Completed(json!({"round": round}));
        let cancel = finish(Arc::clone(&a), TaskState::Cancelled);
        let complete = finish(Arc::clone(&b), completed.clone());
        let (cancelled, done) = (cancel.await.unwrap(), complete.await.unwrap());
        assert!(cancelled != done, "round {round}: exactly one finish wins");
        let state = b.get(&id).await.unwrap().unwrap().state;
        assert_eq!(
            state,
            if cancelled {
                TaskState::Cancelled
            } else {
                completed
            }
        );
    }
}

#[tokio::test]
async fn sessions_are_shared_by_instances() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = tokio::join!(schema.open(), schema.open());
    let (a, b) = (a.mcp_sessions(), b.mcp_sessions());
    let ada = SessionOwner::of(Some(&Principal::new("ada").with_scope("records:read")));
    let initialize = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "1"}});
    assert_eq!(b.owner("s1").await.unwrap(), None);
    assert_eq!(b.initialize("s1").await.unwrap(), None);
    // rmcp stores the initialize, the guard the owner: either may come first.
    a.set_initialize("s1", initialize.clone()).await.unwrap();
    assert_eq!(b.owner("s1").await.unwrap(), None, "no owner recorded yet");
    a.set_owner("s1", ada.clone()).await.unwrap();
    assert_eq!(b.owner("s1").await.unwrap(), Some(ada.clone()));
    assert_eq!(b.initialize("s1").await.unwrap(), Some(initialize.clone()));
    b.set_owner("s2", SessionOwner::Anonymous).await.unwrap();
    assert_eq!(a.owner("s2").await.unwrap(), Some(SessionOwner::Anonymous));
    assert_eq!(a.initialize("s2").await.unwrap(), None);
    b.set_initialize("s2", initialize.clone()).await.unwrap();
    assert_eq!(a.initialize("s2").await.unwrap(), Some(initialize));

    // Ended through either instance: gone for both.
    b.forget("s1").await.unwrap();
    assert_eq!(a.owner("s1").await.unwrap(), None);
    assert_eq!(a.initialize("s1").await.unwrap(), None);
    assert_eq!(a.owner("s2").await.unwrap(), Some(SessionOwner::Anonymous));

    // A session opened more than a day ago reads as unknown, and the next one opened
    // sweeps it away.
    let client = schema.client().await;
    client
        .execute(
            "UPDATE rcip_mcp_sessions SET created_at = 0 WHERE id = 's2'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(a.owner("s2").await.unwrap(), None);
    a.set_owner("s3", ada).await.unwrap();
    let rows = client
        .query("SELECT id FROM rcip_mcp_sessions ORDER BY id", &[])
        .await
        .unwrap();
    let ids: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
    assert_eq!(ids, ["s3"]);
}

fn priming() -> ServerSseMessage {
    ServerSseMessage::retry(std::time::Duration::from_millis(3000))
}

fn notice() -> ServerSseMessage {
    ServerSseMessage::from_message(ServerJsonRpcMessage::notification(
        ServerNotification::ToolListChangedNotification(ToolListChangedNotification::default()),
    ))
}

fn answer(id: i64) -> ServerSseMessage {
    let mut result = CallToolResult::success(vec![ContentBlock::text("done")]);
    result.structured_content = Some(json!({"votes": 3, "open": true}));
    ServerSseMessage::from_message(ServerJsonRpcMessage::response(
        ServerResult::CallToolResult(result),
        NumberOrString::Number(id),
    ))
}

fn refusal() -> ServerSseMessage {
    ServerSseMessage::from_message(ServerJsonRpcMessage::error(
        ErrorData::invalid_params("no such tool", Some(json!({"name": "x"}))),
        Some(NumberOrString::Number(9)),
    ))
}

/// What a client receives of an event: its id, its message as JSON, its retry hint.
fn wire(event: &ServerSseMessage) -> (Option<String>, Value, Option<std::time::Duration>) {
    let message = serde_json::to_value(&event.message).unwrap();
    (event.event_id.clone(), message, event.retry)
}

#[tokio::test]
async fn stream_events_are_replayed_by_any_instance_exactly_as_sent() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = tokio::join!(schema.open(), schema.open());
    let (a, b) = (a.mcp_events(), b.mcp_events());
    let sent = [priming(), notice(), answer(7)];
    let mut ids = Vec::new();
    for event in &sent {
        ids.push(a.store_event("request-1", event).await.unwrap());
    }
    // Another stream's events interleave, and an error answer closes its own stream.
    let other = a.store_event("request-2", &refusal()).await.unwrap();
    let replayed: Vec<ServerSseMessage> = b
        .replay_events_after(&ids[0])
        .await
        .unwrap()
        .collect()
        .await;
    let expected: Vec<_> = sent[1..]
        .iter()
        .zip(&ids[1..])
        .map(|(event, id)| {
            let mut event = event.clone();
            event.event_id = Some(id.clone());
            wire(&event)
        })
        .collect();
    assert_eq!(replayed.iter().map(wire).collect::<Vec<_>>(), expected);
    // The priming event's retry hint survives too.
    let from_start: Vec<ServerSseMessage> =
        b.replay_events_after(&other).await.unwrap().collect().await;
    assert!(from_start.is_empty(), "nothing after a stream's answer");

    // Ids name their stream only with its secret.
    let (secret, seq) = ids[0].rsplit_once('-').unwrap();
    for guessed in [
        format!("{}-{seq}", "0".repeat(secret.len())),
        seq.to_owned(),
        format!("{secret}-999999999"),
        "not-an-id".to_owned(),
        // Numbers past the column's (BIGINT) and past u64: unknown, not a database error.
        format!("{secret}-{}", i64::MAX.unsigned_abs() + 1),
        format!("{secret}-{}", u64::MAX),
        format!("{secret}-{}0", u64::MAX),
    ] {
        let Err(error) = b.replay_events_after(&guessed).await else {
            panic!("{guessed} replayed");
        };
        assert_eq!(
            error.to_string(),
            rcip_mcp::unknown_event().to_string(),
            "{guessed}"
        );
    }
    let (other_secret, _) = other.rsplit_once('-').unwrap();
    assert_ne!(other_secret, secret, "a secret per stream");
}

/// A client reconnects to another instance while its call still runs: the replay follows
/// the stream as the first instance writes it, and ends with the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_follows_an_open_stream_written_by_another_instance() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = tokio::join!(schema.open(), schema.open());
    let (a, b) = (Arc::new(a.mcp_events()), b.mcp_events());
    let first = a.store_event("running", &priming()).await.unwrap();
    let mut replay = b.replay_events_after(&first).await.unwrap();
    let writer = Arc::clone(&a);
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(120)).await;
        writer.store_event("running", &notice()).await.unwrap();
        writer.store_event("running", &answer(1)).await.unwrap();
    });
    let next = tokio::time::timeout(std::time::Duration::from_secs(10), replay.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wire(&next).1, wire(&notice()).1);
    let last = replay.next().await.unwrap();
    assert_eq!(wire(&last).1, wire(&answer(1)).1);
    assert!(replay.next().await.is_none(), "the answer ends the replay");
}

/// A stream keeps its last 256 events (trimmed every 64 past that): a replay after a kept
/// event gets the rest, one naming an event that went is refused.
#[tokio::test]
async fn a_stream_keeps_its_latest_events() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let events = schema.open().await.mcp_events();
    let mut ids = Vec::new();
    for _ in 0..400 {
        ids.push(events.store_event("chatty", &notice()).await.unwrap());
    }
    let kept: i64 = schema
        .client()
        .await
        .query_one("SELECT count(*) FROM rcip_mcp_events", &[])
        .await
        .unwrap()
        .get(0);
    // Trimmed to 256 at the 384th event, then 16 more.
    assert_eq!(kept, 272);
    let replayed: Vec<ServerSseMessage> = events
        .replay_events_after(&ids[299])
        .await
        .unwrap()
        .take(100)
        .collect()
        .await;
    let replayed_ids: Vec<_> = replayed.iter().filter_map(|e| e.event_id.clone()).collect();
    assert_eq!(replayed_ids, ids[300..400]);
    assert!(
        events.replay_events_after(&ids[0]).await.is_err(),
        "gone with the oldest"
    );
}

/// A stream idle beyond the limit goes, with its events, when an instance next sweeps.
#[tokio::test]
async fn idle_streams_are_forgotten_with_their_events() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    let events = store.mcp_events();
    // The store's first event sweeps: store one, age it, and let a new store's first sweep.
    let old = events.store_event("old", &notice()).await.unwrap();
    schema
        .client()
        .await
        .execute("UPDATE rcip_mcp_streams SET touched_at = 0", &[])
        .await
        .unwrap();
    let fresh = store.mcp_events();
    fresh.store_event("new", &priming()).await.unwrap();
    assert!(fresh.replay_events_after(&old).await.is_err());
    let client = schema.client().await;
    let count = |table: &'static str| {
        let client = &client;
        async move {
            client
                .query_one(&format!("SELECT count(*) FROM {table}"), &[])
                .await
                .unwrap()
                .get::<_, i64>(0)
        }
    };
    assert_eq!(
        (
            count("rcip_mcp_streams").await,
            count("rcip_mcp_events").await
        ),
        (1, 1)
    );
}

/// An instance that stops renewing its task's lease (killed) leaves the task failed for
/// every other instance once the lease ran out; one that runs renews it for as long as the
/// task runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_stopped_fails_after_its_lease() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b, c) = tokio::join!(schema.open(), schema.open(), schema.open());
    let lease = std::time::Duration::from_millis(150);
    let alive = a.mcp_tasks().with_lease(lease);
    let doomed = c.mcp_tasks().with_lease(lease);
    let reader = b.mcp_tasks();
    alive.create(task("kept", None, 60_000)).await.unwrap();
    doomed.create(task("orphan", None, 60_000)).await.unwrap();
    drop(doomed);
    drop(c);
    tokio::time::sleep(lease * 3).await;
    assert_eq!(
        reader.get("kept").await.unwrap().unwrap().state,
        TaskState::Working
    );
    let failed = reader.get("orphan").await.unwrap().unwrap();
    let TaskState::Failed(error) = failed.state else {
        panic!("{failed:?}")
    };
    assert_eq!(error["code"], -32603);
    assert!(
        error["message"].as_str().unwrap().contains("stopped"),
        "{error}"
    );
    // Failed for good: nobody's late result changes it.
    assert!(
        !reader
            .set_state("orphan", TaskState::Completed(json!({})), now_ms())
            .await
            .unwrap()
    );
    assert!(matches!(
        reader.get("orphan").await.unwrap().unwrap().state,
        TaskState::Failed(_)
    ));
}

/// A `tasks/cancel` that reached another instance reaches the one running the task: its
/// store tells the bridge's watcher, which stops the handler; the instance's own endings
/// are not told.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_through_another_instance_is_told_where_the_task_runs() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = tokio::join!(schema.open(), schema.open());
    let running_here = a
        .mcp_tasks()
        .with_lease(std::time::Duration::from_millis(90));
    let told = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&told);
    running_here.watch(Arc::new(move |id: &str| {
        sink.lock().unwrap().push(id.to_owned())
    }));
    running_here
        .create(task("cancelled-elsewhere", None, 60_000))
        .await
        .unwrap();
    running_here
        .create(task("finished-here", None, 60_000))
        .await
        .unwrap();
    assert!(
        running_here
            .set_state("finished-here", TaskState::Completed(json!({})), now_ms())
            .await
            .unwrap()
    );
    let elsewhere = b.mcp_tasks();
    assert!(
        elsewhere
            .set_state("cancelled-elsewhere", TaskState::Cancelled, now_ms())
            .await
            .unwrap()
    );
    for _ in 0..100 {
        if !told.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(*told.lock().unwrap(), ["cancelled-elsewhere"]);
}

/// A task whose instance died and that nobody read since goes once its lease and its ttl
/// have passed, swept by whichever instance creates the next task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphaned_task_nobody_reads_is_swept() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = tokio::join!(schema.open(), schema.open());
    let doomed = a
        .mcp_tasks()
        .with_lease(std::time::Duration::from_millis(60));
    doomed.create(task("orphan", None, 10)).await.unwrap();
    drop(doomed);
    drop(a);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    b.mcp_tasks()
        .create(task("next", None, 60_000))
        .await
        .unwrap();
    let rows = schema
        .client()
        .await
        .query("SELECT id FROM rcip_mcp_tasks ORDER BY id", &[])
        .await
        .unwrap();
    let ids: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
    assert_eq!(ids, ["next"]);
}
