//! The relationship engine, as a store conformance suite: every test is generic over the
//! store and runs against each implementation (`MemoryStore` here; the SQLite store joins
//! with its feature).
#![allow(clippy::unwrap_used)]

#[cfg(feature = "postgres")]
mod postgres_support;
mod store_support;

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rcip_records::{
    Actor, Authority, Caller, ChangeEvent, ChangesFeed, Engine, EventKind, GetRecord, ListCommands,
    MAX_IDEMPOTENCY_KEY, MemoryStore, NewRecord, Operation, Page, ParticipantRef, RecordError,
    RecordHistory, RecordStore, RecordView, SearchRecords, Target, UpdateRecord,
};
use rcip_relationship::{Package, parse_package};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use store_support::{Step, Tap, Tapped};
use uuid::Uuid;

const W: &str = "workspace-1";

fn program(name: &str) -> Package {
    let path = format!(
        "{}/../examples/programs/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    parse_package(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn people() -> Package {
    parse_package(
        r#"{"protocol": "relationship/v1", "namespace": "people", "version": 1,
            "types": {"person": {"kind": "entity", "schema": {"type": "object",
              "properties": {"name": {"type": "string"}}, "required": ["name"],
              "additionalProperties": false}}}}"#,
    )
    .unwrap()
}

fn engine<S: RecordStore>(store: S) -> Engine<S> {
    Engine::new(store)
        .with_program(program("polls"))
        .unwrap()
        .with_program(program("hiring"))
        .unwrap()
        .with_program(people())
        .unwrap()
}

fn args<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

/// A fresh random UUID (uuid's `v4` feature is off in this workspace: see the engine's ids).
fn fresh_uuid() -> Uuid {
    uuid::Builder::from_random_bytes(rcip_runtime::__private::shared::random_128()).into_uuid()
}

fn ada() -> Caller {
    Caller::human(Actor::new("ada"))
}

fn key() -> String {
    fresh_uuid().to_string()
}

async fn create_poll<S: RecordStore>(engine: &Engine<S>, question: &str, votes: u64) -> RecordView {
    engine
        .create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": "poll",
                "data": {"question": question, "options": ["a", "b"], "vote_count": votes},
                "idempotency_key": key(),
            })),
        )
        .await
        .unwrap()
}

async fn create_person<S: RecordStore>(engine: &Engine<S>, name: &str) -> RecordView {
    engine
        .create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "people", "type": "person",
                "data": {"name": name}, "idempotency_key": key(),
            })),
        )
        .await
        .unwrap()
}

async fn execute<S: RecordStore>(
    engine: &Engine<S>,
    record: Uuid,
    command: &str,
    revision: u64,
    input: Value,
) -> Result<rcip_records::CommandResult, RecordError> {
    engine
        .execute(
            &ada(),
            args(json!({
                "workspace_id": W, "record_id": record, "command": command,
                "expected_revision": revision, "idempotency_key": key(), "input": input,
            })),
        )
        .await
}

/// `actor`'s `record.get` of `id` in workspace `W`.
async fn get<S: RecordStore>(
    engine: &Engine<S>,
    actor: &Caller,
    id: Uuid,
) -> Result<RecordView, RecordError> {
    engine
        .get(
            actor,
            GetRecord {
                workspace_id: W.into(),
                record_id: id,
            },
        )
        .await
}

/// `actor`'s change feed of workspace `W` (every namespace) from `cursor`.
async fn changes<S: RecordStore>(
    engine: &Engine<S>,
    actor: &Caller,
    cursor: Option<String>,
    limit: Option<u32>,
) -> Result<Page<ChangeEvent>, RecordError> {
    engine
        .feed(
            actor,
            ChangesFeed {
                workspace_id: W.into(),
                cursor,
                limit,
                namespace: None,
            },
        )
        .await
}

fn code<T: std::fmt::Debug>(result: Result<T, RecordError>) -> (&'static str, u16) {
    let error = result.unwrap_err();
    (error.code(), error.status())
}

async fn create_creates_at_revision_one_in_the_initial_state<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Lunch?", 0).await;
    assert_eq!(
        (poll.revision, poll.state.as_deref(), poll.kind.as_str()),
        (1, Some("open"), "entity")
    );
    assert!(poll.created_at.ends_with('Z'));
    let read = get(&engine, &ada(), poll.id).await.unwrap();
    assert_eq!(read, poll);
    // Another workspace does not see it.
    assert_eq!(
        code(
            engine
                .get(
                    &ada(),
                    GetRecord {
                        workspace_id: "other".into(),
                        record_id: poll.id
                    }
                )
                .await
        ),
        ("RECORD_NOT_FOUND", 404)
    );
}

async fn idempotency_keys_are_counted_in_characters_like_the_schema<S: RecordStore>(store: S) {
    let engine = engine(store);
    let create = async |key: String| {
        engine.create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "people", "type": "person",
                "data": {"name": "Ada"}, "idempotency_key": key,
            })),
        ).await
    };
    // 200 two-byte characters: 400 bytes, within the capabilities' `maxLength: 200`.
    assert_eq!(MAX_IDEMPOTENCY_KEY, 200);
    assert!(create("é".repeat(MAX_IDEMPOTENCY_KEY)).await.is_ok());
    assert_eq!(
        code(create("é".repeat(MAX_IDEMPOTENCY_KEY + 1)).await),
        ("INVALID_ARGUMENTS", 400)
    );
    assert_eq!(
        code(create(String::new()).await),
        ("INVALID_ARGUMENTS", 400)
    );
}

async fn invalid_arguments_and_schema_failures_have_their_classes<S: RecordStore>(store: S) {
    let engine = engine(store);
    let create = async |data: Value, type_name: &str| {
        engine.create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": type_name,
                "data": data, "idempotency_key": key(),
            })),
        ).await
    };
    assert_eq!(
        code(create(json!({}), "survey").await),
        ("INVALID_ARGUMENTS", 400)
    );
    let error = create(
        json!({"question": "", "options": ["a"], "vote_count": -1}),
        "poll",
    )
    .await
    .unwrap_err();
    assert_eq!((error.code(), error.status()), ("SCHEMA_VIOLATION", 422));
    let RecordError::SchemaViolation { issues, .. } = error else {
        unreachable!()
    };
    let paths: BTreeSet<&str> = issues.iter().map(|i| i.instance_path.as_str()).collect();
    assert_eq!(
        paths,
        BTreeSet::from(["/question", "/options", "/vote_count"])
    );
    // The subset's defaults hold: 4,000 characters at most for an unbounded string.
    let long = "x".repeat(4_001);
    assert_eq!(
        code(create(
            json!({"question": "q", "options": ["a", "b"], "vote_count": 0, "closed_reason": long}),
            "poll"
        ).await),
        ("SCHEMA_VIOLATION", 422)
    );
    // date-time is enforced.
    assert_eq!(
        code(create(
            json!({"question": "q", "options": ["a", "b"], "vote_count": 0, "closes_at": "tomorrow"}),
            "poll"
        ).await),
        ("SCHEMA_VIOLATION", 422)
    );
    assert_eq!(
        code(
            engine
                .create(
                    &ada(),
                    args(
                        json!({"workspace_id": W, "collection_id": "c", "namespace": "polls",
            "type": "poll", "data": {}, "idempotency_key": ""})
                    )
                )
                .await
        ),
        ("INVALID_ARGUMENTS", 400)
    );
}

async fn idempotent_replay_and_conflicting_reuse<S: RecordStore>(store: S) {
    let engine = engine(store);
    let call = json!({
        "workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": "poll",
        "data": {"question": "Q", "options": ["a", "b"], "vote_count": 1}, "idempotency_key": "k-1",
    });
    let first = engine.create(&ada(), args(call.clone())).await.unwrap();
    let replay = engine.create(&ada(), args(call.clone())).await.unwrap();
    assert_eq!(first, replay);
    let mut other = call.clone();
    other["data"]["question"] = json!("Other");
    assert_eq!(
        code(engine.create(&ada(), args(other)).await),
        ("IDEMPOTENCY_CONFLICT", 409)
    );
    let all = engine
        .search(
            &ada(),
            SearchRecords {
                workspace_id: W.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(all.items.len(), 1, "a replay has no second effect");

    // Commands too: the replay returns the first result, with one set of events.
    let run = json!({"workspace_id": W, "record_id": first.id, "command": "close",
        "expected_revision": 1, "idempotency_key": "k-2", "input": {}});
    let closed = engine.execute(&ada(), args(run.clone())).await.unwrap();
    assert_eq!(engine.execute(&ada(), args(run)).await.unwrap(), closed);
    let history = engine
        .history(
            &ada(),
            RecordHistory {
                workspace_id: W.into(),
                record_id: first.id,
                limit: None,
                cursor: None,
            },
        )
        .await
        .unwrap();
    let kinds: Vec<EventKind> = history.items.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::RecordCreated,
            EventKind::CommandExecuted,
            EventKind::WorkRequested
        ]
    );
}

async fn stale_revisions_are_refused<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 1).await;
    let update = async |revision: u64, question: &str| {
        engine
            .update(
                &ada(),
                args(json!({"workspace_id": W, "record_id": poll.id,
            "expected_revision": revision, "idempotency_key": key(),
            "patch": {"set": {"question": question}}})),
            )
            .await
    };
    assert_eq!(update(1, "Q2").await.unwrap().revision, 2);
    assert_eq!(code(update(1, "Q3").await), ("STALE_REVISION", 409));
    assert_eq!(
        code(execute(&engine, poll.id, "close", 1, json!({})).await),
        ("STALE_REVISION", 409)
    );
}

async fn update_never_changes_the_lifecycle_state<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 1).await;
    let with_state = json!({"workspace_id": W, "record_id": poll.id, "expected_revision": 1,
        "idempotency_key": key(), "state": "closed"});
    assert!(
        serde_json::from_value::<UpdateRecord>(with_state).is_err(),
        "`state` is not an argument"
    );
    // A data field called `state`, where the schema allows one, is data, never the state.
    let doors = parse_package(
        r#"{"protocol": "relationship/v1", "namespace": "doors", "version": 1,
            "types": {"door": {"kind": "entity",
              "lifecycle": {"initial": "shut", "states": ["shut", "ajar"]},
              "schema": {"type": "object", "properties": {"state": {"type": "string"}},
                "required": [], "additionalProperties": false}}}}"#,
    )
    .unwrap();
    let engine = engine.with_program(doors).unwrap();
    let door = engine
        .create(
            &ada(),
            args(
                json!({"workspace_id": W, "collection_id": "c1", "namespace": "doors",
                "type": "door", "data": {"state": "ajar"}, "idempotency_key": key()}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(door.state.as_deref(), Some("shut"));
    let updated = engine
        .update(
            &ada(),
            args(
                json!({"workspace_id": W, "record_id": door.id, "expected_revision": 1,
                "idempotency_key": key(), "patch": {"set": {"state": "ajar"}}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        (
            updated.state.as_deref(),
            updated.revision,
            &updated.data["state"]
        ),
        (Some("shut"), 2, &json!("ajar"))
    );
}

async fn roles_are_checked_on_create_and_update<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 0).await;
    let other_poll = create_poll(&engine, "R", 0).await;
    let voter = create_person(&engine, "Grace").await;
    let ballot = async |roles: Value| {
        engine
            .create(
                &ada(),
                args(json!({"workspace_id": W, "collection_id": "c1",
            "namespace": "polls", "type": "ballot", "data": {"choice": 1}, "roles": roles,
            "idempotency_key": key()})),
            )
            .await
    };
    let created = ballot(json!({"poll": [poll.id], "voter": [voter.id]}))
        .await
        .unwrap();
    // A redacted projection is never accepted as input: roles take record ids only.
    let redacted = json!({"workspace_id": W, "collection_id": "c1", "namespace": "polls",
        "type": "ballot", "data": {"choice": 1}, "idempotency_key": key(),
        "roles": {"poll": [{"restricted": true}], "voter": [{"id": voter.id}]}});
    assert!(serde_json::from_value::<rcip_records::CreateRecord>(redacted).is_err());
    assert_eq!(
        created.participants["voter"],
        [ParticipantRef::Visible { id: voter.id }]
    );
    let issues = |result: Result<RecordView, RecordError>| match result.unwrap_err() {
        RecordError::SchemaViolation { issues, .. } => issues
            .into_iter()
            .map(|i| (i.instance_path, i.keyword))
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    // min
    assert_eq!(
        issues(ballot(json!({"poll": [poll.id]})).await),
        [("/roles/voter".to_owned(), "cardinality".to_owned())]
    );
    // max
    assert_eq!(
        issues(ballot(json!({"poll": [poll.id, other_poll.id], "voter": [voter.id]})).await),
        [("/roles/poll".to_owned(), "cardinality".to_owned())]
    );
    // allowed types
    assert_eq!(
        issues(ballot(json!({"poll": [voter.id], "voter": [poll.id]})).await),
        [
            ("/roles/poll/0".to_owned(), "participant".to_owned()),
            ("/roles/voter/0".to_owned(), "participant".to_owned())
        ]
    );
    // existence and unknown roles
    assert_eq!(
        issues(ballot(json!({"poll": [fresh_uuid()], "voter": [voter.id], "judge": []})).await),
        [
            ("/roles/judge".to_owned(), "roles".to_owned()),
            ("/roles/poll/0".to_owned(), "participant".to_owned())
        ]
    );
    // An entity has none.
    let entity = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c1",
        "namespace": "people", "type": "person", "data": {"name": "X"}, "roles": {"friend": [voter.id]},
        "idempotency_key": key()}))).await;
    assert_eq!(code(entity), ("SCHEMA_VIOLATION", 422));
    let empty_role = engine
        .create(
            &ada(),
            args(json!({"workspace_id": W, "collection_id": "c1",
        "namespace": "people", "type": "person", "data": {"name": "X"}, "roles": {"friend": []},
        "idempotency_key": key()})),
        )
        .await;
    assert_eq!(
        code(empty_role),
        ("SCHEMA_VIOLATION", 422),
        "an entity takes no role key at all"
    );
    // One participant twice does not satisfy a role's minimum.
    assert_eq!(
        issues(ballot(json!({"poll": [poll.id], "voter": [voter.id, voter.id]})).await),
        [
            ("/roles/voter".to_owned(), "cardinality".to_owned()),
            ("/roles/voter/1".to_owned(), "participant".to_owned())
        ]
    );
    // Update: adding a second poll breaks max; removing the voter breaks min.
    let update = async |roles: Value| {
        engine
            .update(
                &ada(),
                args(json!({"workspace_id": W, "record_id": created.id,
            "expected_revision": 1, "idempotency_key": key(), "roles": roles})),
            )
            .await
    };
    assert_eq!(
        issues(update(json!({"add": {"poll": [other_poll.id]}})).await),
        [("/roles/poll".to_owned(), "cardinality".to_owned())]
    );
    assert_eq!(
        issues(update(json!({"remove": {"voter": [voter.id]}})).await),
        [("/roles/voter".to_owned(), "cardinality".to_owned())]
    );
    let moved = update(json!({"add": {"poll": [other_poll.id]}, "remove": {"poll": [poll.id]}}))
        .await
        .unwrap();
    assert_eq!(
        moved.participants["poll"],
        [ParticipantRef::Visible { id: other_poll.id }]
    );
}

async fn commands_check_input_state_and_guard_then_transition<S: RecordStore>(store: S) {
    let engine = engine(store);
    let empty = create_poll(&engine, "Nobody voted", 0).await;
    // guard: vote_count > 0
    assert_eq!(
        code(execute(&engine, empty.id, "close", 1, json!({})).await),
        ("GUARD_FAILED", 409)
    );
    let poll = create_poll(&engine, "Lunch?", 3).await;
    assert_eq!(
        code(execute(&engine, poll.id, "close", 1, json!({"reason": 5})).await),
        ("SCHEMA_VIOLATION", 422)
    );
    assert_eq!(
        code(execute(&engine, poll.id, "delete", 1, json!({})).await),
        ("INVALID_ARGUMENTS", 400)
    );
    // from: reopen runs only from closed.
    assert_eq!(
        code(execute(&engine, poll.id, "reopen", 1, json!({})).await),
        ("STATE_NOT_ALLOWED", 409)
    );
    let closed = execute(&engine, poll.id, "close", 1, json!({"reason": "done"}))
        .await
        .unwrap();
    assert_eq!(
        (
            closed.revision,
            closed.state.as_deref(),
            closed.work_requested.as_slice()
        ),
        (2, Some("closed"), &["notify_voters".to_owned()][..])
    );
    let read = get(&engine, &ada(), poll.id).await.unwrap();
    assert_eq!(
        read.data["closed_reason"],
        json!("done"),
        "set_data applied"
    );
    assert_eq!(
        code(execute(&engine, poll.id, "close", 2, json!({})).await),
        ("STATE_NOT_ALLOWED", 409)
    );
    let reopened = execute(&engine, poll.id, "reopen", 2, json!({}))
        .await
        .unwrap();
    assert_eq!(reopened.state.as_deref(), Some("open"));
}

async fn guards_fail_closed_on_missing_numbers<S: RecordStore>(store: S) {
    let engine = engine(store);
    let candidate = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c",
        "namespace": "hiring", "type": "candidate", "data": {"name": "Lin"}, "idempotency_key": key()}))).await.unwrap();
    let opening = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c",
        "namespace": "hiring", "type": "opening", "data": {"title": "Engineer"}, "idempotency_key": key()}))).await.unwrap();
    let application = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c",
        "namespace": "hiring", "type": "application", "data": {},
        "roles": {"candidate": [candidate.id], "opening": [opening.id]}, "idempotency_key": key()}))).await.unwrap();
    assert_eq!(application.state.as_deref(), Some("applied"));
    execute(
        &engine,
        application.id,
        "schedule_interview",
        1,
        json!({"interviewers": ["Ada"]}),
    )
    .await
    .unwrap();
    let offer = json!({"salary": 100, "budget": 120, "decided_at": "2026-11-29T10:00:00Z"});
    // No score yet: `gte` on an absent value fails closed.
    assert_eq!(
        code(execute(&engine, application.id, "make_offer", 2, offer.clone()).await),
        ("GUARD_FAILED", 409)
    );
    engine
        .update(
            &ada(),
            args(json!({"workspace_id": W, "record_id": application.id,
        "expected_revision": 2, "idempotency_key": key(), "patch": {"set": {"score": 8}}})),
        )
        .await
        .unwrap();
    let over = json!({"salary": 130, "budget": 120, "decided_at": "2026-11-29T10:00:00Z"});
    assert_eq!(
        code(execute(&engine, application.id, "make_offer", 3, over).await),
        ("GUARD_FAILED", 409)
    );
    let offered = execute(&engine, application.id, "make_offer", 3, offer)
        .await
        .unwrap();
    assert_eq!(
        offered.work_requested,
        ["send_offer_letter", "notify_recruiter"]
    );
    let read = get(&engine, &ada(), application.id).await.unwrap();
    assert_eq!(read.data["offer_salary"], json!(100));
}

async fn command_list_reports_each_requirement<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 0).await;
    let list = engine
        .list_commands(
            &ada(),
            ListCommands {
                workspace_id: W.into(),
                record_id: poll.id,
                input: None,
            },
        )
        .await
        .unwrap();
    // An object, as every operation answers: `{"commands": [...]}`.
    let wire = serde_json::to_value(&list).unwrap();
    assert_eq!(wire.as_object().unwrap().len(), 1);
    assert_eq!(
        wire["commands"].as_array().unwrap().len(),
        list.commands.len()
    );
    let close = list.commands.iter().find(|c| c.command == "close").unwrap();
    assert_eq!(close.capability_id, "polls.poll.close");
    let passed: Vec<(&str, Option<bool>)> = close
        .requirements
        .iter()
        .map(|r| (r.kind.as_str(), r.passed))
        .collect();
    assert_eq!(
        passed,
        [
            ("state", Some(true)),
            ("input", None),
            ("guard", Some(false))
        ]
    );
    assert!(!close.runnable);
    let reopen = list
        .commands
        .iter()
        .find(|c| c.command == "reopen")
        .unwrap();
    assert_eq!(reopen.requirements[0].passed, Some(false));
    let with_input = engine
        .list_commands(
            &ada(),
            args(json!({"workspace_id": W, "record_id": poll.id, "input": {"reason": 1}})),
        )
        .await
        .unwrap();
    let close = with_input
        .commands
        .iter()
        .find(|c| c.command == "close")
        .unwrap();
    assert_eq!(close.requirements[1].passed, Some(false));
}

async fn views_project_their_fields<S: RecordStore>(store: S) {
    let engine = engine(store);
    let open = create_poll(&engine, "Open one", 2).await;
    let closed = create_poll(&engine, "Closed one", 2).await;
    execute(&engine, closed.id, "close", 1, json!({}))
        .await
        .unwrap();
    let page = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W,
        "view": {"namespace": "polls", "view": "open_polls"}})),
        )
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].id, open.id);
    let fields: Vec<&String> = page.items[0].data.keys().collect();
    // The text query sees only what the view shows: `vote_count` (2) is not projected.
    let hidden = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W, "query": "2",
                "view": {"namespace": "polls", "view": "open_polls"}})),
        )
        .await
        .unwrap();
    assert!(hidden.items.is_empty());
    let shown = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W, "query": "open one",
                "view": {"namespace": "polls", "view": "open_polls"}})),
        )
        .await
        .unwrap();
    assert_eq!(shown.items.len(), 1);
    assert_eq!(fields, ["options", "question"]);
    assert_eq!(
        code(
            engine
                .search(
                    &ada(),
                    args(json!({"workspace_id": W,
        "view": {"namespace": "polls", "view": "nope"}}))
                )
                .await
        ),
        ("INVALID_ARGUMENTS", 400)
    );
    // Filters and query.
    let found = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W, "namespace": "polls",
        "type": "poll", "state": "closed"})),
        )
        .await
        .unwrap();
    assert_eq!(
        found.items.iter().map(|r| r.id).collect::<Vec<_>>(),
        [closed.id]
    );
    let found = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W, "query": "OPEN ONE"})),
        )
        .await
        .unwrap();
    assert_eq!(
        found.items.iter().map(|r| r.id).collect::<Vec<_>>(),
        [open.id]
    );
}

async fn cursor_paging_sees_every_record_once<S: RecordStore>(store: S) {
    let engine = engine(store);
    let mut created = BTreeSet::new();
    for i in 0..250 {
        created.insert(create_poll(&engine, &format!("Poll {i}"), 0).await.id);
    }
    create_person(&engine, "not a poll").await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = engine
            .search(
                &ada(),
                SearchRecords {
                    workspace_id: W.into(),
                    namespace: Some("polls".into()),
                    type_name: Some("poll".into()),
                    limit: Some(100),
                    cursor: cursor.clone(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        pages += 1;
        seen.extend(page.items.iter().map(|r| r.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
        assert!(pages < 10);
    }
    assert_eq!(seen.len(), 250, "no record seen twice");
    assert_eq!(
        seen.iter().copied().collect::<BTreeSet<_>>(),
        created,
        "none missed"
    );
    assert_eq!(pages, 3);
    // A cursor belongs to its query.
    let first = engine
        .search(
            &ada(),
            SearchRecords {
                workspace_id: W.into(),
                namespace: Some("polls".into()),
                limit: Some(10),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let foreign = SearchRecords {
        workspace_id: W.into(),
        namespace: Some("people".into()),
        cursor: first.next_cursor.clone(),
        ..Default::default()
    };
    assert_eq!(
        code(engine.search(&ada(), foreign).await),
        ("INVALID_CURSOR", 400)
    );
    let same = |cursor: String| SearchRecords {
        workspace_id: W.into(),
        namespace: Some("polls".into()),
        limit: Some(10),
        cursor: Some(cursor),
        ..Default::default()
    };
    let valid = first.next_cursor.clone().unwrap();
    assert_eq!(
        engine
            .search(&ada(), same(valid.clone()))
            .await
            .unwrap()
            .items
            .len(),
        10,
        "the cursor itself is accepted"
    );
    // The position edited (back to the start, or anywhere): refused, not the first page.
    for position in ["0000000000000000", "0000000000000001", "00000000000000ff"] {
        let edited = format!("c2{position}{}", &valid[18..]);
        assert_ne!(edited, valid);
        assert_eq!(
            code(engine.search(&ada(), same(edited)).await),
            ("INVALID_CURSOR", 400)
        );
    }
    // The tag edited, the old format, garbage: refused.
    let mut tag_edited = valid.clone();
    let last = if tag_edited.ends_with('0') { "1" } else { "0" };
    tag_edited.replace_range(valid.len() - 1.., last);
    for bad in [tag_edited, format!("c1{}", &valid[2..]), "c2zz".to_owned()] {
        assert_eq!(
            code(engine.search(&ada(), same(bad)).await),
            ("INVALID_CURSOR", 400)
        );
    }
    // Another principal's cursor, the same query otherwise.
    let bob = Caller::human(Actor::new("bob"));
    assert_eq!(
        code(engine.search(&bob, same(valid.clone())).await),
        ("INVALID_CURSOR", 400)
    );
    // Another workspace's cursor.
    let elsewhere = SearchRecords {
        workspace_id: "workspace-2".into(),
        ..same(valid.clone())
    };
    assert_eq!(
        code(engine.search(&ada(), elsewhere).await),
        ("INVALID_CURSOR", 400)
    );
    // Another engine (another key) refuses it.
    let other_engine = self::engine(MemoryStore::new());
    assert_eq!(
        code(other_engine.search(&ada(), same(valid.clone())).await),
        ("INVALID_CURSOR", 400)
    );
    // A multi-byte character where the digits split is refused, not a panic.
    let odd = format!("c2{}\u{e9}{}", "0".repeat(15), "0".repeat(31));
    assert_eq!(
        code(engine.search(&ada(), same(odd)).await),
        ("INVALID_CURSOR", 400)
    );
    for limit in [0, 101] {
        let bad = SearchRecords {
            workspace_id: W.into(),
            limit: Some(limit),
            ..Default::default()
        };
        assert_eq!(
            code(engine.search(&ada(), bad).await),
            ("INVALID_ARGUMENTS", 400)
        );
    }
    assert_eq!(
        engine
            .search(
                &ada(),
                SearchRecords {
                    workspace_id: W.into(),
                    ..Default::default()
                }
            )
            .await
            .unwrap()
            .items
            .len(),
        20
    );
}

async fn the_change_feed_resumes_from_a_checkpoint<S: RecordStore>(store: S) {
    let engine = engine(store);
    let feed =
        async |cursor: Option<String>| changes(&engine, &ada(), cursor, Some(100)).await.unwrap();
    let a = create_poll(&engine, "A", 1).await;
    create_poll(&engine, "B", 1).await;
    let first = feed(None).await;
    assert_eq!(first.items.len(), 2);
    assert!(first.next_cursor.is_none());
    let checkpoint = first.checkpoint.clone().unwrap();
    // Nothing new: an empty page, the same checkpoint.
    let idle = feed(Some(checkpoint.clone())).await;
    assert!(idle.items.is_empty());
    assert_eq!(idle.checkpoint.as_deref(), Some(checkpoint.as_str()));
    execute(&engine, a.id, "close", 1, json!({})).await.unwrap();
    // A checkpoint is its principal's.
    assert_eq!(
        code(
            changes(
                &engine,
                &Caller::human(Actor::new("bob")),
                Some(checkpoint.clone()),
                None
            )
            .await
        ),
        ("INVALID_CURSOR", 400)
    );
    let later = feed(Some(checkpoint)).await;
    let kinds: Vec<EventKind> = later.items.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [EventKind::CommandExecuted, EventKind::WorkRequested]
    );
    assert_eq!(later.items[1].payload["task"], json!("notify_voters"));
    assert!(later.items[0].id > first.items[1].id);
    let ids: BTreeSet<Uuid> = first
        .items
        .iter()
        .chain(&later.items)
        .map(|e| e.event_id)
        .collect();
    assert_eq!(ids.len(), 4, "event ids are unique");
    assert_eq!(
        later.items[0].actor,
        ada().actor,
        "events record the caller's actor"
    );
    assert_eq!(later.items[0].revision, 2);
    // Paging within the feed.
    let small = changes(&engine, &ada(), None, Some(3)).await.unwrap();
    assert_eq!(small.items.len(), 3);
    let rest = feed(small.next_cursor).await;
    assert_eq!(rest.items.len(), 1);
}

async fn concurrent_executes_on_one_revision_have_one_winner<S: RecordStore + 'static>(store: S) {
    let engine = Arc::new(engine(store));
    let poll = create_poll(&engine, "Race", 1).await;
    // Tasks on a multi-threaded runtime: the executes really run at once.
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let engine = Arc::clone(&engine);
            tokio::spawn(async move { execute(&engine, poll.id, "close", 1, json!({})).await })
        })
        .collect();
    let mut results: Vec<Result<_, RecordError>> = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap());
    }
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    for result in results.into_iter().filter(Result::is_err) {
        let error = result.unwrap_err();
        assert!(
            matches!(error.code(), "STALE_REVISION" | "STATE_NOT_ALLOWED"),
            "{error:?}"
        );
        assert_eq!(error.status(), 409);
    }
    let read = get(&engine, &ada(), poll.id).await.unwrap();
    assert_eq!(read.revision, 2);
}

/// Readers other than `ada` may not see records whose question says "secret"; only `ada`
/// may change anything.
#[derive(Debug)]
struct SecretPolls;

impl Authority for SecretPolls {
    fn allows(&self, caller: &Caller, operation: Operation, target: Target<'_>) -> bool {
        if caller.id() == "ada" {
            return true;
        }
        let secret = target.record().is_some_and(|record| {
            record
                .data
                .get("question")
                .and_then(Value::as_str)
                .is_some_and(|q| q.contains("secret"))
        });
        operation == Operation::RecordRead && !secret
    }
}

async fn authority_restricts_reads_and_changes<S: RecordStore>(store: S) {
    let engine = engine(store).with_authority(SecretPolls);
    let secret = create_poll(&engine, "secret poll", 1).await;
    let public = create_poll(&engine, "public poll", 1).await;
    let voter = create_person(&engine, "Grace").await;
    let ballot = engine
        .create(
            &ada(),
            args(json!({"workspace_id": W, "collection_id": "c1",
        "namespace": "polls", "type": "ballot", "data": {"choice": 0},
        "roles": {"poll": [secret.id], "voter": [voter.id]}, "idempotency_key": key()})),
        )
        .await
        .unwrap();
    let bob = Caller::human(Actor::new("bob").via("agent-7"));
    assert_eq!(
        code(get(&engine, &bob, secret.id).await),
        ("RECORD_NOT_FOUND", 404)
    );
    // Old snapshots in events follow current access: the secret poll is restricted there too.
    let history = engine
        .history(
            &bob,
            RecordHistory {
                workspace_id: W.into(),
                record_id: ballot.id,
                limit: None,
                cursor: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        history.items[0].payload["participants"]["poll"],
        json!([{"restricted": true}])
    );
    assert_eq!(
        history.items[0].payload["participants"]["voter"],
        json!([{"id": voter.id}])
    );
    let seen = get(&engine, &bob, ballot.id).await.unwrap();
    assert_eq!(
        seen.participants["poll"],
        [ParticipantRef::Restricted { restricted: true }]
    );
    assert_eq!(
        seen.participants["voter"],
        [ParticipantRef::Visible { id: voter.id }]
    );
    assert_eq!(
        serde_json::to_value(&seen.participants["poll"]).unwrap(),
        json!([{"restricted": true}])
    );
    let update = engine
        .update(
            &bob,
            args(json!({"workspace_id": W, "record_id": public.id,
        "expected_revision": 1, "idempotency_key": key(), "patch": {"set": {"question": "mine"}}})),
        )
        .await;
    assert_eq!(code(update), ("FORBIDDEN", 403));
    let created = engine
        .create(
            &bob,
            args(
                json!({"workspace_id": W, "collection_id": "c1", "namespace": "people",
        "type": "person", "data": {"name": "B"}, "idempotency_key": key()}),
            ),
        )
        .await;
    assert_eq!(code(created), ("FORBIDDEN", 403));
    let found = engine
        .search(
            &bob,
            SearchRecords {
                workspace_id: W.into(),
                type_name: Some("poll".into()),
                namespace: Some("polls".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        found.items.iter().map(|r| r.id).collect::<Vec<_>>(),
        [public.id]
    );
    let feed = changes(&engine, &bob, None, None).await.unwrap();
    assert!(feed.items.iter().all(|e| e.record_id != secret.id));
    assert_eq!(feed.items.len(), 3, "public poll, person, ballot");
}

/// An authority the test changes as it goes: hidden records cannot be read; while
/// `read_only`, nothing but reads is allowed (creates included).
#[derive(Debug, Default)]
struct Switch {
    hidden: Mutex<HashSet<Uuid>>,
    read_only: AtomicBool,
}

impl Switch {
    fn hide(&self, id: Uuid) {
        self.hidden.lock().unwrap().insert(id);
    }
}

impl Authority for Switch {
    fn allows(&self, _: &Caller, operation: Operation, target: Target<'_>) -> bool {
        if target
            .record()
            .is_some_and(|r| self.hidden.lock().unwrap().contains(&r.id))
        {
            return false;
        }
        operation == Operation::RecordRead || !self.read_only.load(Ordering::SeqCst)
    }
}

/// A replay answers only what the caller's current access allows: the access check comes
/// before the stored result, and the result is projected like a fresh read.
async fn replays_obey_current_access<S: RecordStore>(store: S) {
    let switch = Arc::new(Switch::default());
    let engine = engine(store).with_authority(Arc::clone(&switch));
    let create_call = |question: &str, key: &str| {
        json!({"workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": "poll",
            "data": {"question": question, "options": ["a", "b"], "vote_count": 1},
            "idempotency_key": key})
    };
    let hidden = engine
        .create(&ada(), args(create_call("Hidden", "create-hidden")))
        .await
        .unwrap();
    let voter = create_person(&engine, "Grace").await;
    let ballot_call = json!({"workspace_id": W, "collection_id": "c1", "namespace": "polls",
        "type": "ballot", "data": {"choice": 0},
        "roles": {"poll": [hidden.id], "voter": [voter.id]}, "idempotency_key": "ballot"});
    let ballot = engine
        .create(&ada(), args(ballot_call.clone()))
        .await
        .unwrap();
    assert_eq!(
        ballot.participants["poll"],
        [ParticipantRef::Visible { id: hidden.id }]
    );

    switch.hide(hidden.id);
    assert_eq!(
        code(get(&engine, &ada(), hidden.id).await),
        ("RECORD_NOT_FOUND", 404)
    );
    // The replay of the hidden record's create is not found either, like a read.
    assert_eq!(
        code(
            engine
                .create(&ada(), args(create_call("Hidden", "create-hidden")))
                .await
        ),
        ("RECORD_NOT_FOUND", 404)
    );
    // The ballot's replay restricts the participant that `get` restricts now.
    let replayed: RecordView = engine
        .create(&ada(), args(ballot_call.clone()))
        .await
        .unwrap();
    assert_eq!(
        replayed.participants["poll"],
        [ParticipantRef::Restricted { restricted: true }]
    );
    assert_eq!(
        replayed.participants["voter"],
        [ParticipantRef::Visible { id: voter.id }]
    );
    assert_eq!(replayed, get(&engine, &ada(), ballot.id).await.unwrap());

    // Readable but no longer changeable: every kind of replay is forbidden.
    let open = engine
        .create(&ada(), args(create_call("Open", "create-open")))
        .await
        .unwrap();
    let update = json!({"workspace_id": W, "record_id": open.id, "expected_revision": 1,
        "idempotency_key": "update-open", "patch": {"set": {"vote_count": 2}}});
    engine.update(&ada(), args(update.clone())).await.unwrap();
    let close = json!({"workspace_id": W, "record_id": open.id, "command": "close",
        "expected_revision": 2, "idempotency_key": "close-open", "input": {}});
    let closed = engine.execute(&ada(), args(close.clone())).await.unwrap();
    switch.read_only.store(true, Ordering::SeqCst);
    assert_eq!(
        code(engine.update(&ada(), args(update.clone())).await),
        ("FORBIDDEN", 403)
    );
    assert_eq!(
        code(engine.execute(&ada(), args(close.clone())).await),
        ("FORBIDDEN", 403)
    );
    assert_eq!(
        code(
            engine
                .create(&ada(), args(create_call("Open", "create-open")))
                .await
        ),
        ("FORBIDDEN", 403)
    );
    // Hidden as well: not found comes first.
    switch.hide(open.id);
    assert_eq!(
        code(engine.execute(&ada(), args(close.clone())).await),
        ("RECORD_NOT_FOUND", 404)
    );
    // With access back, the replay is the first answer again.
    switch.hidden.lock().unwrap().clear();
    switch.read_only.store(false, Ordering::SeqCst);
    assert_eq!(engine.execute(&ada(), args(close)).await.unwrap(), closed);
    assert_eq!(
        engine.create(&ada(), args(ballot_call)).await.unwrap(),
        ballot
    );
}

/// May list commands but not execute them.
#[derive(Debug)]
struct ListOnly;

impl Authority for ListOnly {
    fn allows(&self, caller: &Caller, operation: Operation, _: Target<'_>) -> bool {
        caller.id() == "ada" || operation != Operation::CommandExecute
    }
}

async fn runnable_needs_the_right_to_execute<S: RecordStore>(store: S) {
    let engine = engine(store).with_authority(ListOnly);
    let poll = create_poll(&engine, "Q", 1).await;
    let list = async |actor: &Caller| {
        engine
            .list_commands(
                actor,
                ListCommands {
                    workspace_id: W.into(),
                    record_id: poll.id,
                    input: None,
                },
            )
            .await
            .unwrap()
            .commands
            .into_iter()
            .find(|c| c.command == "close")
            .unwrap()
            .runnable
    };
    assert!(list(&ada()).await);
    assert!(!list(&Caller::human(Actor::new("viewer"))).await);
}

async fn archived_records_take_no_changes<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Old", 1).await;
    let archived = engine
        .archive(
            &ada(),
            args(json!({"workspace_id": W, "record_id": poll.id,
        "expected_revision": 1, "idempotency_key": key()})),
        )
        .await
        .unwrap();
    assert!(archived.archived);
    assert_eq!(
        code(execute(&engine, poll.id, "close", 2, json!({})).await),
        ("RECORD_ARCHIVED", 409)
    );
    let default_search = engine
        .search(
            &ada(),
            SearchRecords {
                workspace_id: W.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(
        default_search.items.is_empty(),
        "archived records are not searched"
    );
    assert!(get(&engine, &ada(), poll.id).await.unwrap().archived);
}

/// Records what each `record.create` shows the authority: the [`Target::New`] it is asked
/// with, and that it is asked with nothing else.
#[derive(Debug, Default)]
struct Recorder(Mutex<Vec<Result<NewRecord, String>>>);

impl Authority for Recorder {
    fn allows(&self, _: &Caller, operation: Operation, target: Target<'_>) -> bool {
        if operation == Operation::RecordCreate {
            let seen = match target {
                Target::New(new) => Ok(new.clone()),
                Target::Record(record) => Err(format!("a stored record: {}", record.id)),
            };
            self.0.lock().unwrap().push(seen);
        }
        true
    }
}

async fn the_authority_sees_the_record_a_create_would_make<S: RecordStore>(store: S) {
    // Two versions of `people`: a create naming none is asked with the one it resolves to.
    let mut people_v2 = people();
    people_v2.version = 2;
    let recorder = Arc::new(Recorder::default());
    let engine = engine(store)
        .with_program(people_v2)
        .unwrap()
        .with_authority(Arc::clone(&recorder));
    let ada = ada();
    let create = |collection: &str, version: Option<u64>, key: &str| {
        let mut arguments = json!({
            "workspace_id": W, "collection_id": collection, "namespace": "people",
            "type": "person", "data": {"name": "Grace"}, "idempotency_key": key,
        });
        if let Some(version) = version {
            arguments["version"] = json!(version);
        }
        engine.create(&ada, args(arguments))
    };
    let latest = create("staff", None, "k-latest").await.unwrap();
    let first = create("alumni", Some(1), "k-first").await.unwrap();
    assert_eq!((latest.version, first.version), (2, 1));
    // The replay of a create is judged again, on the record it made.
    create("staff", None, "k-latest").await.unwrap();
    let poll = create_poll(&engine, "Lunch?", 0).await;
    let expected = [
        NewRecord::new(W, "staff", "people", 2, "person"),
        NewRecord::new(W, "alumni", "people", 1, "person"),
        NewRecord::new(W, "staff", "people", 2, "person"),
        NewRecord::new(W, "c1", "polls", poll.version, "poll"),
    ];
    let seen = recorder.0.lock().unwrap().clone();
    assert_eq!(seen, expected.map(Ok));
}

async fn history_cursors_are_tamper_evident<S: RecordStore>(store: S) {
    let engine = engine(store);
    // A vote, so that the poll may close.
    let poll = create_poll(&engine, "Lunch?", 1).await;
    let other = create_poll(&engine, "Dinner?", 1).await;
    for (command, revision, input) in [
        ("close", 1, json!({"reason": "done"})),
        ("reopen", 2, json!({})),
        ("close", 3, json!({"reason": "again"})),
    ] {
        execute(&engine, poll.id, command, revision, input)
            .await
            .unwrap();
    }
    let history = |caller: Caller, record_id: Uuid, workspace: &str, cursor: Option<String>| {
        let args = RecordHistory {
            workspace_id: workspace.into(),
            record_id,
            limit: Some(1),
            cursor,
        };
        let engine = &engine;
        async move { engine.history(&caller, args).await }
    };
    let first = history(ada(), poll.id, W, None).await.unwrap();
    let valid = first.next_cursor.clone().unwrap();
    let second = history(ada(), poll.id, W, Some(valid.clone()))
        .await
        .unwrap();
    assert_eq!(second.items.len(), 1, "the cursor itself is accepted");
    assert!(second.items[0].id > first.items[0].id);
    // The position edited (back to the start, one on, or far on): refused.
    let at = u64::from_str_radix(&valid[2..18], 16).unwrap();
    for position in [0, at + 1, at + 0xff] {
        let edited = format!("c2{position:016x}{}", &valid[18..]);
        assert_ne!(edited, valid);
        assert_eq!(
            code(history(ada(), poll.id, W, Some(edited)).await),
            ("INVALID_CURSOR", 400)
        );
    }
    // The MAC edited, cut short, or lengthened: refused.
    let mut tag_edited = valid.clone();
    let last = if valid.ends_with('0') { "1" } else { "0" };
    tag_edited.replace_range(valid.len() - 1.., last);
    for bad in [
        tag_edited,
        valid[..valid.len() - 2].to_owned(),
        format!("{valid}00"),
    ] {
        assert_eq!(
            code(history(ada(), poll.id, W, Some(bad)).await),
            ("INVALID_CURSOR", 400)
        );
    }
    // Another principal, who may read the record, reuses it: refused.
    let bob = Caller::human(Actor::new("bob"));
    assert!(history(bob.clone(), poll.id, W, None).await.is_ok());
    assert_eq!(
        code(history(bob, poll.id, W, Some(valid.clone())).await),
        ("INVALID_CURSOR", 400)
    );
    // Another record's history: refused.
    assert_eq!(
        code(history(ada(), other.id, W, Some(valid.clone())).await),
        ("INVALID_CURSOR", 400)
    );
    // In another workspace the record is not there: not found before any cursor.
    assert_eq!(
        code(history(ada(), poll.id, "workspace-2", Some(valid.clone())).await),
        ("RECORD_NOT_FOUND", 404)
    );
    // Another query: the feed and a search refuse a history cursor...
    assert_eq!(
        code(changes(&engine, &ada(), Some(valid.clone()), None).await),
        ("INVALID_CURSOR", 400)
    );
    let search = SearchRecords {
        workspace_id: W.into(),
        cursor: Some(valid),
        ..Default::default()
    };
    assert_eq!(
        code(engine.search(&ada(), search).await),
        ("INVALID_CURSOR", 400)
    );
    // ...and a history refuses the feed's.
    let feed = changes(&engine, &ada(), None, Some(1)).await.unwrap();
    assert_eq!(
        code(history(ada(), poll.id, W, feed.next_cursor).await),
        ("INVALID_CURSOR", 400)
    );
}

macro_rules! conformance {
    ($store:ident, $make:expr) => {
        mod $store {
            #[tokio::test]
            async fn create_creates_at_revision_one_in_the_initial_state() {
                super::create_creates_at_revision_one_in_the_initial_state($make).await;
            }
            #[tokio::test]
            async fn idempotency_keys_are_counted_in_characters_like_the_schema() {
                super::idempotency_keys_are_counted_in_characters_like_the_schema($make).await;
            }
            #[tokio::test]
            async fn invalid_arguments_and_schema_failures_have_their_classes() {
                super::invalid_arguments_and_schema_failures_have_their_classes($make).await;
            }
            #[tokio::test]
            async fn idempotent_replay_and_conflicting_reuse() {
                super::idempotent_replay_and_conflicting_reuse($make).await;
            }
            #[tokio::test]
            async fn stale_revisions_are_refused() {
                super::stale_revisions_are_refused($make).await;
            }
            #[tokio::test]
            async fn update_never_changes_the_lifecycle_state() {
                super::update_never_changes_the_lifecycle_state($make).await;
            }
            #[tokio::test]
            async fn roles_are_checked_on_create_and_update() {
                super::roles_are_checked_on_create_and_update($make).await;
            }
            #[tokio::test]
            async fn commands_check_input_state_and_guard_then_transition() {
                super::commands_check_input_state_and_guard_then_transition($make).await;
            }
            #[tokio::test]
            async fn guards_fail_closed_on_missing_numbers() {
                super::guards_fail_closed_on_missing_numbers($make).await;
            }
            #[tokio::test]
            async fn command_list_reports_each_requirement() {
                super::command_list_reports_each_requirement($make).await;
            }
            #[tokio::test]
            async fn views_project_their_fields() {
                super::views_project_their_fields($make).await;
            }
            #[tokio::test]
            async fn cursor_paging_sees_every_record_once() {
                super::cursor_paging_sees_every_record_once($make).await;
            }
            #[tokio::test]
            async fn the_change_feed_resumes_from_a_checkpoint() {
                super::the_change_feed_resumes_from_a_checkpoint($make).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn concurrent_executes_on_one_revision_have_one_winner() {
                super::concurrent_executes_on_one_revision_have_one_winner($make).await;
            }
            #[tokio::test]
            async fn authority_restricts_reads_and_changes() {
                super::authority_restricts_reads_and_changes($make).await;
            }
            #[tokio::test]
            async fn replays_obey_current_access() {
                super::replays_obey_current_access($make).await;
            }
            #[tokio::test]
            async fn runnable_needs_the_right_to_execute() {
                super::runnable_needs_the_right_to_execute($make).await;
            }
            #[tokio::test]
            async fn the_authority_sees_the_record_a_create_would_make() {
                super::the_authority_sees_the_record_a_create_would_make($make).await;
            }
            #[tokio::test]
            async fn history_cursors_are_tamper_evident() {
                super::history_cursors_are_tamper_evident($make).await;
            }
            #[tokio::test]
            async fn archived_records_take_no_changes() {
                super::archived_records_take_no_changes($make).await;
            }
        }
    };
}

conformance!(memory, rcip_records::MemoryStore::new());
conformance!(sqlite, rcip_database::SqliteStore::in_memory().unwrap());
// A schema per test, dropped with the store; skipped (one line) without RCIP_TEST_POSTGRES_URL.
#[cfg(feature = "postgres")]
conformance!(
    postgres,
    match crate::postgres_support::SchemaStore::create().await {
        Some(store) => store,
        None => return,
    }
);

/// Instances over one store that share a cursor key accept each other's cursors; an
/// instance with its own key does not.
#[tokio::test]
async fn a_shared_cursor_key_serves_every_instance() {
    let store = Arc::new(MemoryStore::new());
    let key = [42; 32];
    let first = engine(Arc::clone(&store)).with_cursor_key(key);
    let second = engine(Arc::clone(&store)).with_cursor_key(key);
    let alone = engine(Arc::clone(&store));
    for question in ["A", "B", "C"] {
        create_poll(&first, question, 1).await;
    }
    let page = changes(&first, &ada(), None, Some(2)).await.unwrap();
    let cursor = page.next_cursor.unwrap();
    let rest = changes(&second, &ada(), Some(cursor.clone()), None)
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    assert_eq!(
        code(changes(&alone, &ada(), Some(cursor), None).await),
        ("INVALID_CURSOR", 400)
    );
}

/// A consumer's stored checkpoint (a feed cursor) holds after the engine restarts on the same
/// SQLite file, with no key set by the host: the engine takes it from the store.
#[tokio::test]
async fn sqlite_cursors_survive_a_restart() {
    use rcip_database::SqliteStore;
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cursor-{}", fresh_uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.db");
    let checkpoint = {
        let engine = engine(SqliteStore::open(&path).unwrap());
        for question in ["A", "B", "C"] {
            create_poll(&engine, question, 1).await;
        }
        changes(&engine, &ada(), None, Some(2))
            .await
            .unwrap()
            .next_cursor
            .unwrap()
    };
    let restarted = engine(SqliteStore::open(&path).unwrap());
    let rest = changes(&restarted, &ada(), Some(checkpoint.clone()), None)
        .await
        .unwrap();
    assert_eq!(rest.items.len(), 1);
    // Another file has another secret: the checkpoint means nothing there.
    let elsewhere = engine(SqliteStore::open(dir.join("other.db")).unwrap());
    assert_eq!(
        code(changes(&elsewhere, &ada(), Some(checkpoint), None).await),
        ("INVALID_CURSOR", 400)
    );
}

/// Two instances on one PostgreSQL schema, neither given a key, accept each other's cursors.
#[cfg(feature = "postgres")]
#[tokio::test]
async fn postgres_instances_share_cursors_without_a_configured_key() {
    let Some(store) = crate::postgres_support::SchemaStore::create().await else {
        return;
    };
    let store = Arc::new(store);
    let first = engine(Arc::clone(&store));
    let second = engine(Arc::clone(&store));
    for question in ["A", "B", "C"] {
        create_poll(&first, question, 1).await;
    }
    let cursor = changes(&first, &ada(), None, Some(2))
        .await
        .unwrap()
        .next_cursor
        .unwrap();
    let rest = changes(&second, &ada(), Some(cursor), None).await.unwrap();
    assert_eq!(rest.items.len(), 1);
}

#[tokio::test]
async fn sqlite_data_survives_a_reopen() {
    use rcip_database::SqliteStore;
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reopen-{}", fresh_uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.db");
    let (poll, events) = {
        let engine = engine(SqliteStore::open(&path).unwrap());
        let poll = create_poll(&engine, "Persisted?", 2).await;
        execute(&engine, poll.id, "close", 1, json!({"reason": "kept"}))
            .await
            .unwrap();
        let events = changes(&engine, &ada(), None, None).await.unwrap();
        (poll, events.items)
    };
    let engine = engine(SqliteStore::open(&path).unwrap());
    let read = get(&engine, &ada(), poll.id).await.unwrap();
    assert_eq!((read.revision, read.state.as_deref()), (2, Some("closed")));
    assert_eq!(read.data["closed_reason"], json!("kept"));
    let reopened = changes(&engine, &ada(), None, None).await.unwrap();
    assert_eq!(reopened.items, events, "events, ids and all");
    // New events continue the order.
    let reopened_poll = execute(&engine, poll.id, "reopen", 2, json!({}))
        .await
        .unwrap();
    assert_eq!(reopened_poll.revision, 3);
    let last = changes(&engine, &ada(), reopened.checkpoint, None)
        .await
        .unwrap();
    assert_eq!(last.items.len(), 1);
    assert!(last.items[0].id > events.last().unwrap().id);
    std::fs::remove_dir_all(dir).unwrap();
}

/// The tap of a memory store that counts its record reads, per record.
#[derive(Debug, Default)]
struct CountingReads {
    reads: Mutex<std::collections::HashMap<Uuid, usize>>,
}

impl CountingReads {
    fn take(&self) -> std::collections::HashMap<Uuid, usize> {
        std::mem::take(&mut *self.reads.lock().unwrap())
    }
}

impl Tap for CountingReads {
    fn before_get(&self, _workspace_id: &str, id: Uuid) -> Option<Step<'_>> {
        *self.reads.lock().unwrap().entry(id).or_default() += 1;
        None
    }
}

/// Redaction reads each participant once per call, however many references to it a page
/// holds (events of one record, records sharing a participant).
#[tokio::test]
async fn a_page_reads_each_participant_once() {
    let store = Arc::new(Tapped::<MemoryStore, CountingReads>::default());
    let engine = engine(Arc::clone(&store));
    let poll = create_poll(&engine, "Lunch?", 1).await;
    let voter = create_person(&engine, "Grace").await;
    let mut ballots = Vec::new();
    for choice in 0..3 {
        let ballot = engine
            .create(
                &ada(),
                args(
                    json!({"workspace_id": W, "collection_id": "c1", "namespace": "polls",
                    "type": "ballot", "data": {"choice": choice},
                    "roles": {"poll": [poll.id], "voter": [voter.id]}, "idempotency_key": key()}),
                ),
            )
            .await
            .unwrap();
        ballots.push(ballot.id);
    }
    for revision in 1..4 {
        engine
            .update(
                &ada(),
                args(json!({"workspace_id": W, "record_id": ballots[0],
                    "expected_revision": revision, "idempotency_key": key(),
                    "patch": {"set": {"choice": revision}}})),
            )
            .await
            .unwrap();
    }
    store.take();
    let history = engine
        .history(
            &ada(),
            RecordHistory {
                workspace_id: W.into(),
                record_id: ballots[0],
                limit: None,
                cursor: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(history.items.len(), 4);
    let reads = store.take();
    assert_eq!(
        (reads.get(&poll.id), reads.get(&voter.id)),
        (Some(&1), Some(&1)),
        "{reads:?}"
    );
    let feed = changes(&engine, &ada(), None, None).await.unwrap();
    assert_eq!(feed.items.len(), 2 + 3 + 3);
    let reads = store.take();
    assert_eq!(
        (reads.get(&poll.id), reads.get(&voter.id)),
        (Some(&1), Some(&1)),
        "{reads:?}"
    );
    let found = engine
        .search(
            &ada(),
            SearchRecords {
                workspace_id: W.into(),
                namespace: Some("polls".into()),
                type_name: Some("ballot".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(found.items.len(), 3);
    assert!(
        found
            .items
            .iter()
            .all(|b| b.participants["poll"] == [ParticipantRef::Visible { id: poll.id }])
    );
    let reads = store.take();
    assert_eq!(
        (reads.get(&poll.id), reads.get(&voter.id)),
        (Some(&1), Some(&1)),
        "{reads:?}"
    );
}
