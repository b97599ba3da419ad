//! A package's command capabilities, bound to the engine, driven through the client.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rcip_records::{Actor, Caller, CreateRecord, Engine, GetRecord, MemoryStore};
use rcip_relationship::{package_capabilities, parse_package};
use rcip_runtime::{
    ApplicationDefinition, ErrorCode, InvocationRequest, OutcomeStatus, PolicyDecision, Runtime,
    RuntimeOptions, ScopeDefinition, policy_fn,
};
use serde_json::{Value, json};

const W: &str = "w1";

fn setup() -> (
    Runtime,
    Arc<Engine<MemoryStore>>,
    Vec<rcip_runtime::BindingGuard>,
) {
    let package = parse_package(include_str!("../../examples/programs/polls.json")).unwrap();
    let mut definition = ApplicationDefinition::new("app", "App", "Polls with commands.")
        .scope(ScopeDefinition::new("polls", "Polls", "Every poll."));
    definition
        .capabilities
        .extend(package_capabilities(&package));
    // The reference's default policy denies unconfirmed writes; this host allows them.
    let options = RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow));
    let runtime = Runtime::new(definition, options).unwrap();
    let engine = Arc::new(Engine::in_memory().with_program(package).unwrap());
    let guards = engine
        .bind_package(
            &runtime.host(),
            "polls",
            None,
            W,
            &Caller::human(Actor::new("agent").via("tool")),
        )
        .unwrap();
    (runtime, engine, guards)
}

/// A fresh random UUID (uuid's `v4` feature is off in this workspace: see the engine's ids).
fn fresh_uuid() -> uuid::Uuid {
    uuid::Builder::from_random_bytes(rcip_runtime::__private::shared::random_128()).into_uuid()
}

async fn poll(engine: &Engine<MemoryStore>, votes: u64) -> uuid::Uuid {
    let args: CreateRecord = serde_json::from_value(json!({
        "workspace_id": W, "collection_id": "c", "namespace": "polls", "type": "poll",
        "data": {"question": "Lunch?", "options": ["a", "b"], "vote_count": votes},
        "idempotency_key": fresh_uuid().to_string(),
    }))
    .unwrap();
    engine
        .create(&Caller::human(Actor::new("host")), args)
        .await
        .unwrap()
        .id
}

async fn invoke(runtime: &Runtime, id: &str, input: Value) -> rcip_runtime::InvocationOutcome {
    runtime
        .client()
        .invoke(InvocationRequest::new(id, input))
        .await
}

#[tokio::test]
async fn a_command_runs_through_its_capability() {
    let (runtime, engine, guards) = setup();
    assert_eq!(
        guards.len(),
        17,
        "3 commands, 2 types x 6 operations, 1 view, the feed"
    );
    let id = poll(&engine, 2).await;
    let close = json!({
        "record_id": id.to_string(), "expected_revision": 1, "idempotency_key": "k1",
        "input": {"reason": "enough"}
    });
    let outcome = invoke(&runtime, "polls.poll.close", close.clone()).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
    assert_eq!(
        outcome.output(),
        Some(
            &json!({"record_id": id.to_string(), "revision": 2, "state": "closed",
            "work_requested": ["notify_voters"]})
        )
    );
    let record = engine
        .get(
            &Caller::human(Actor::new("host")),
            GetRecord {
                workspace_id: W.into(),
                record_id: id,
            },
        )
        .await
        .unwrap();
    assert_eq!(record.data["closed_reason"], json!("enough"));
    // The same call again (same key, same arguments) returns the first result.
    let replay = invoke(&runtime, "polls.poll.close", close).await;
    assert_eq!(replay.output(), outcome.output());
}

#[tokio::test]
async fn failures_carry_the_operations_code() {
    let (runtime, engine, _guards) = setup();
    let empty = poll(&engine, 0).await;
    let failure = |outcome: rcip_runtime::InvocationOutcome| {
        assert_eq!(outcome.status(), OutcomeStatus::Failed, "{outcome:?}");
        let error = outcome.error().unwrap().clone();
        assert_eq!(error.code, ErrorCode::ExecutionFailed);
        error
    };
    let guard = failure(invoke(&runtime, "polls.poll.close", json!({
        "record_id": empty.to_string(), "expected_revision": 1, "idempotency_key": "a", "input": {}
    })).await);
    assert_eq!(
        guard.message,
        "GUARD_FAILED: the guard of command \"close\" did not pass"
    );
    let stale = failure(invoke(&runtime, "polls.poll.close", json!({
        "record_id": empty.to_string(), "expected_revision": 7, "idempotency_key": "b", "input": {}
    })).await);
    assert_eq!(
        stale.message,
        "STALE_REVISION: stale revision: expected 7, the record is at 1"
    );
    let missing = failure(invoke(&runtime, "polls.poll.reopen", json!({
        "record_id": fresh_uuid().to_string(), "expected_revision": 1, "idempotency_key": "c", "input": {}
    })).await);
    assert_eq!(missing.message, "RECORD_NOT_FOUND: record not found");
    let not_an_id = failure(
        invoke(
            &runtime,
            "polls.poll.reopen",
            json!({
                "record_id": "poll-1", "expected_revision": 1, "idempotency_key": "d", "input": {}
            }),
        )
        .await,
    );
    assert!(
        not_an_id.message.starts_with("INVALID_ARGUMENTS: "),
        "{}",
        not_an_id.message
    );
    // The capability's own schema refuses bad input before the engine sees it.
    let invalid = invoke(&runtime, "polls.poll.close", json!({
        "record_id": empty.to_string(), "expected_revision": 1, "idempotency_key": "e", "input": {"reason": 5}
    }))
    .await;
    assert_eq!(invalid.error().unwrap().code, ErrorCode::InputInvalid);
    assert_eq!(
        invalid.error().unwrap().validation_issues.as_ref().unwrap()[0].instance_path,
        "/input/reason"
    );
}

#[tokio::test]
async fn record_operations_run_through_their_capabilities() {
    let (runtime, _engine, _guards) = setup();
    let ok = |outcome: rcip_runtime::InvocationOutcome| {
        assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
        outcome.output().unwrap().clone()
    };
    let created = ok(invoke(
        &runtime,
        "polls.poll.create",
        json!({
            "collection_id": "c", "idempotency_key": "create-1",
            "data": {"question": "Tea or coffee?", "options": ["tea", "coffee"], "vote_count": 1}
        }),
    )
    .await);
    assert_eq!(
        (created["state"].as_str(), created["revision"].as_u64()),
        (Some("open"), Some(1))
    );
    assert_eq!(created["workspace_id"], json!(W));
    let id = created["id"].as_str().unwrap().to_owned();
    let read = ok(invoke(&runtime, "polls.poll.get", json!({"record_id": id})).await);
    assert_eq!(read, created);
    let updated = ok(invoke(
        &runtime,
        "polls.poll.update",
        json!({
            "record_id": id, "expected_revision": 1, "idempotency_key": "update-1",
            "patch": {"set": {"question": "Tea, coffee or water?"}}
        }),
    )
    .await);
    assert_eq!(updated["revision"], json!(2));
    let stale = invoke(
        &runtime,
        "polls.poll.update",
        json!({
            "record_id": id, "expected_revision": 1, "idempotency_key": "update-2",
            "patch": {"remove": ["closed_reason"]}
        }),
    )
    .await;
    assert!(
        stale
            .error()
            .unwrap()
            .message
            .starts_with("STALE_REVISION: ")
    );
    let commands = ok(invoke(&runtime, "polls.poll.commands", json!({"record_id": id})).await);
    assert_eq!(
        commands["commands"][0]["capability_id"],
        json!("polls.poll.close")
    );
    assert_eq!(commands["commands"][0]["runnable"], json!(true));
    let page = ok(invoke(&runtime, "polls.poll.search", json!({"query": "water"})).await);
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    let view = ok(invoke(&runtime, "polls.openPolls", json!({"limit": 5})).await);
    assert_eq!(
        view["items"][0]["data"],
        json!({"question": "Tea, coffee or water?", "options": ["tea", "coffee"]})
    );
    let archived = ok(invoke(
        &runtime,
        "polls.poll.archive",
        json!({
            "record_id": id, "expected_revision": 2, "idempotency_key": "archive-1"
        }),
    )
    .await);
    assert_eq!(archived["archived"], json!(true));
    // The change feed: events without payloads, a checkpoint to poll from.
    let feed = ok(invoke(&runtime, "polls.changes", json!({"limit": 100})).await);
    let kinds: Vec<&str> = feed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["record.created", "record.updated", "record.archived"]
    );
    assert_eq!(
        feed["items"][0]["actor"],
        json!({"id": "agent", "client": "tool"})
    );
    let later = ok(invoke(
        &runtime,
        "polls.changes",
        json!({"cursor": feed["checkpoint"]}),
    )
    .await);
    assert_eq!(later["items"], json!([]));
    // A relationship: roles are record ids, bounded by the role.
    let person_less = invoke(
        &runtime,
        "polls.ballot.create",
        json!({
            "collection_id": "c", "idempotency_key": "ballot-1", "data": {"choice": 0},
            "roles": {"poll": [id], "voter": [fresh_uuid().to_string()]}
        }),
    )
    .await;
    let error = person_less.error().unwrap();
    assert!(
        error.message.starts_with("SCHEMA_VIOLATION: "),
        "{}",
        error.message
    );
    assert_eq!(
        error.validation_issues.as_ref().unwrap()[0].instance_path,
        "/roles/voter/0"
    );
    // A capability of one type never reaches a record of another.
    let voter = ok(invoke(
        &runtime,
        "polls.poll.create",
        json!({
            "collection_id": "c", "idempotency_key": "create-2",
            "data": {"question": "Other?", "options": ["a", "b"], "vote_count": 0}
        }),
    )
    .await);
    let wrong_type = invoke(
        &runtime,
        "polls.ballot.get",
        json!({"record_id": voter["id"]}),
    )
    .await;
    assert_eq!(
        wrong_type.error().unwrap().message,
        "RECORD_NOT_FOUND: record not found"
    );
    let wrong_archive = invoke(
        &runtime,
        "polls.ballot.archive",
        json!({
            "record_id": voter["id"], "expected_revision": 1, "idempotency_key": "sneaky"
        }),
    )
    .await;
    assert_eq!(
        wrong_archive.error().unwrap().message,
        "RECORD_NOT_FOUND: record not found"
    );
}
