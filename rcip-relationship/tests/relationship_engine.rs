//! The relationship engine, as a store conformance suite: every test is generic over the
//! store and runs against each implementation (`MemoryStore` here; the SQLite store joins
//! with its feature).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::sync::Arc;

use rcip_relationship::{
    Actor, Authority, ChangeEvent, ChangesFeed, Engine, EventKind, GetRecord, ListCommands,
    MAX_IDEMPOTENCY_KEY, Operation, Page, ParticipantRef, Record, RecordError, RecordHistory,
    RecordStore, RecordView, SearchRecords, UpdateRecord,
};
use rcip_relationship::{Package, parse_package};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
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

fn ada() -> Actor {
    Actor::new("ada")
}

fn key() -> String {
    fresh_uuid().to_string()
}

fn create_poll<S: RecordStore>(engine: &Engine<S>, question: &str, votes: u64) -> RecordView {
    engine
        .create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": "poll",
                "data": {"question": question, "options": ["a", "b"], "vote_count": votes},
                "idempotency_key": key(),
            })),
        )
        .unwrap()
}

fn create_person<S: RecordStore>(engine: &Engine<S>, name: &str) -> RecordView {
    engine
        .create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "people", "type": "person",
                "data": {"name": name}, "idempotency_key": key(),
            })),
        )
        .unwrap()
}

fn execute<S: RecordStore>(
    engine: &Engine<S>,
    record: Uuid,
    command: &str,
    revision: u64,
    input: Value,
) -> Result<rcip_relationship::CommandResult, RecordError> {
    engine.execute(
        &ada(),
        args(json!({
            "workspace_id": W, "record_id": record, "command": command,
            "expected_revision": revision, "idempotency_key": key(), "input": input,
        })),
    )
}

/// `actor`'s `record.get` of `id` in workspace `W`.
fn get<S: RecordStore>(
    engine: &Engine<S>,
    actor: &Actor,
    id: Uuid,
) -> Result<RecordView, RecordError> {
    engine.get(
        actor,
        GetRecord {
            workspace_id: W.into(),
            record_id: id,
        },
    )
}

/// `actor`'s change feed of workspace `W` (every namespace) from `cursor`.
fn changes<S: RecordStore>(
    engine: &Engine<S>,
    actor: &Actor,
    cursor: Option<String>,
    limit: Option<u32>,
) -> Result<Page<ChangeEvent>, RecordError> {
    engine.feed(
        actor,
        ChangesFeed {
            workspace_id: W.into(),
            cursor,
            limit,
            namespace: None,
        },
    )
}

fn code<T: std::fmt::Debug>(result: Result<T, RecordError>) -> (&'static str, u16) {
    let error = result.unwrap_err();
    (error.code(), error.status())
}

fn create_creates_at_revision_one_in_the_initial_state<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Lunch?", 0);
    assert_eq!(
        (poll.revision, poll.state.as_deref(), poll.kind.as_str()),
        (1, Some("open"), "entity")
    );
    assert!(poll.created_at.ends_with('Z'));
    let read = get(&engine, &ada(), poll.id).unwrap();
    assert_eq!(read, poll);
    // Another workspace does not see it.
    assert_eq!(
        code(engine.get(
            &ada(),
            GetRecord {
                workspace_id: "other".into(),
                record_id: poll.id
            }
        )),
        ("RECORD_NOT_FOUND", 404)
    );
}

fn idempotency_keys_are_counted_in_characters_like_the_schema<S: RecordStore>(store: S) {
    let engine = engine(store);
    let create = |key: String| {
        engine.create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "people", "type": "person",
                "data": {"name": "Ada"}, "idempotency_key": key,
            })),
        )
    };
    // 200 two-byte characters: 400 bytes, within the capabilities' `maxLength: 200`.
    assert_eq!(MAX_IDEMPOTENCY_KEY, 200);
    assert!(create("é".repeat(MAX_IDEMPOTENCY_KEY)).is_ok());
    assert_eq!(
        code(create("é".repeat(MAX_IDEMPOTENCY_KEY + 1))),
        ("INVALID_ARGUMENTS", 400)
    );
    assert_eq!(code(create(String::new())), ("INVALID_ARGUMENTS", 400));
}

fn invalid_arguments_and_schema_failures_have_their_classes<S: RecordStore>(store: S) {
    let engine = engine(store);
    let create = |data: Value, type_name: &str| {
        engine.create(
            &ada(),
            args(json!({
                "workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": type_name,
                "data": data, "idempotency_key": key(),
            })),
        )
    };
    assert_eq!(
        code(create(json!({}), "survey")),
        ("INVALID_ARGUMENTS", 400)
    );
    let error = create(
        json!({"question": "", "options": ["a"], "vote_count": -1}),
        "poll",
    )
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
        )),
        ("SCHEMA_VIOLATION", 422)
    );
    // date-time is enforced.
    assert_eq!(
        code(create(
            json!({"question": "q", "options": ["a", "b"], "vote_count": 0, "closes_at": "tomorrow"}),
            "poll"
        )),
        ("SCHEMA_VIOLATION", 422)
    );
    assert_eq!(
        code(engine.create(
            &ada(),
            args(
                json!({"workspace_id": W, "collection_id": "c", "namespace": "polls",
            "type": "poll", "data": {}, "idempotency_key": ""})
            )
        )),
        ("INVALID_ARGUMENTS", 400)
    );
}

fn idempotent_replay_and_conflicting_reuse<S: RecordStore>(store: S) {
    let engine = engine(store);
    let call = json!({
        "workspace_id": W, "collection_id": "c1", "namespace": "polls", "type": "poll",
        "data": {"question": "Q", "options": ["a", "b"], "vote_count": 1}, "idempotency_key": "k-1",
    });
    let first = engine.create(&ada(), args(call.clone())).unwrap();
    let replay = engine.create(&ada(), args(call.clone())).unwrap();
    assert_eq!(first, replay);
    let mut other = call.clone();
    other["data"]["question"] = json!("Other");
    assert_eq!(
        code(engine.create(&ada(), args(other))),
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
        .unwrap();
    assert_eq!(all.items.len(), 1, "a replay has no second effect");

    // Commands too: the replay returns the first result, with one set of events.
    let run = json!({"workspace_id": W, "record_id": first.id, "command": "close",
        "expected_revision": 1, "idempotency_key": "k-2", "input": {}});
    let closed = engine.execute(&ada(), args(run.clone())).unwrap();
    assert_eq!(engine.execute(&ada(), args(run)).unwrap(), closed);
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

fn stale_revisions_are_refused<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 1);
    let update = |revision: u64, question: &str| {
        engine.update(
            &ada(),
            args(json!({"workspace_id": W, "record_id": poll.id,
            "expected_revision": revision, "idempotency_key": key(),
            "patch": {"set": {"question": question}}})),
        )
    };
    assert_eq!(update(1, "Q2").unwrap().revision, 2);
    assert_eq!(code(update(1, "Q3")), ("STALE_REVISION", 409));
    assert_eq!(
        code(execute(&engine, poll.id, "close", 1, json!({}))),
        ("STALE_REVISION", 409)
    );
}

fn update_never_changes_the_lifecycle_state<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 1);
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

fn roles_are_checked_on_create_and_update<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 0);
    let other_poll = create_poll(&engine, "R", 0);
    let voter = create_person(&engine, "Grace");
    let ballot = |roles: Value| {
        engine.create(
            &ada(),
            args(json!({"workspace_id": W, "collection_id": "c1",
            "namespace": "polls", "type": "ballot", "data": {"choice": 1}, "roles": roles,
            "idempotency_key": key()})),
        )
    };
    let created = ballot(json!({"poll": [poll.id], "voter": [voter.id]})).unwrap();
    // A redacted projection is never accepted as input: roles take record ids only.
    let redacted = json!({"workspace_id": W, "collection_id": "c1", "namespace": "polls",
        "type": "ballot", "data": {"choice": 1}, "idempotency_key": key(),
        "roles": {"poll": [{"restricted": true}], "voter": [{"id": voter.id}]}});
    assert!(serde_json::from_value::<rcip_relationship::CreateRecord>(redacted).is_err());
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
        issues(ballot(json!({"poll": [poll.id]}))),
        [("/roles/voter".to_owned(), "cardinality".to_owned())]
    );
    // max
    assert_eq!(
        issues(ballot(
            json!({"poll": [poll.id, other_poll.id], "voter": [voter.id]})
        )),
        [("/roles/poll".to_owned(), "cardinality".to_owned())]
    );
    // allowed types
    assert_eq!(
        issues(ballot(json!({"poll": [voter.id], "voter": [poll.id]}))),
        [
            ("/roles/poll/0".to_owned(), "participant".to_owned()),
            ("/roles/voter/0".to_owned(), "participant".to_owned())
        ]
    );
    // existence and unknown roles
    assert_eq!(
        issues(ballot(
            json!({"poll": [fresh_uuid()], "voter": [voter.id], "judge": []})
        )),
        [
            ("/roles/judge".to_owned(), "roles".to_owned()),
            ("/roles/poll/0".to_owned(), "participant".to_owned())
        ]
    );
    // An entity has none.
    let entity = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c1",
        "namespace": "people", "type": "person", "data": {"name": "X"}, "roles": {"friend": [voter.id]},
        "idempotency_key": key()})));
    assert_eq!(code(entity), ("SCHEMA_VIOLATION", 422));
    let empty_role = engine.create(
        &ada(),
        args(json!({"workspace_id": W, "collection_id": "c1",
        "namespace": "people", "type": "person", "data": {"name": "X"}, "roles": {"friend": []},
        "idempotency_key": key()})),
    );
    assert_eq!(
        code(empty_role),
        ("SCHEMA_VIOLATION", 422),
        "an entity takes no role key at all"
    );
    // One participant twice does not satisfy a role's minimum.
    assert_eq!(
        issues(ballot(
            json!({"poll": [poll.id], "voter": [voter.id, voter.id]})
        )),
        [
            ("/roles/voter".to_owned(), "cardinality".to_owned()),
            ("/roles/voter/1".to_owned(), "participant".to_owned())
        ]
    );
    // Update: adding a second poll breaks max; removing the voter breaks min.
    let update = |roles: Value| {
        engine.update(
            &ada(),
            args(json!({"workspace_id": W, "record_id": created.id,
            "expected_revision": 1, "idempotency_key": key(), "roles": roles})),
        )
    };
    assert_eq!(
        issues(update(json!({"add": {"poll": [other_poll.id]}}))),
        [("/roles/poll".to_owned(), "cardinality".to_owned())]
    );
    assert_eq!(
        issues(update(json!({"remove": {"voter": [voter.id]}}))),
        [("/roles/voter".to_owned(), "cardinality".to_owned())]
    );
    let moved =
        update(json!({"add": {"poll": [other_poll.id]}, "remove": {"poll": [poll.id]}})).unwrap();
    assert_eq!(
        moved.participants["poll"],
        [ParticipantRef::Visible { id: other_poll.id }]
    );
}

fn commands_check_input_state_and_guard_then_transition<S: RecordStore>(store: S) {
    let engine = engine(store);
    let empty = create_poll(&engine, "Nobody voted", 0);
    // guard: vote_count > 0
    assert_eq!(
        code(execute(&engine, empty.id, "close", 1, json!({}))),
        ("GUARD_FAILED", 409)
    );
    let poll = create_poll(&engine, "Lunch?", 3);
    assert_eq!(
        code(execute(&engine, poll.id, "close", 1, json!({"reason": 5}))),
        ("SCHEMA_VIOLATION", 422)
    );
    assert_eq!(
        code(execute(&engine, poll.id, "delete", 1, json!({}))),
        ("INVALID_ARGUMENTS", 400)
    );
    // from: reopen runs only from closed.
    assert_eq!(
        code(execute(&engine, poll.id, "reopen", 1, json!({}))),
        ("STATE_NOT_ALLOWED", 409)
    );
    let closed = execute(&engine, poll.id, "close", 1, json!({"reason": "done"})).unwrap();
    assert_eq!(
        (
            closed.revision,
            closed.state.as_deref(),
            closed.work_requested.as_slice()
        ),
        (2, Some("closed"), &["notify_voters".to_owned()][..])
    );
    let read = get(&engine, &ada(), poll.id).unwrap();
    assert_eq!(
        read.data["closed_reason"],
        json!("done"),
        "set_data applied"
    );
    assert_eq!(
        code(execute(&engine, poll.id, "close", 2, json!({}))),
        ("STATE_NOT_ALLOWED", 409)
    );
    let reopened = execute(&engine, poll.id, "reopen", 2, json!({})).unwrap();
    assert_eq!(reopened.state.as_deref(), Some("open"));
}

fn guards_fail_closed_on_missing_numbers<S: RecordStore>(store: S) {
    let engine = engine(store);
    let candidate = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c",
        "namespace": "hiring", "type": "candidate", "data": {"name": "Lin"}, "idempotency_key": key()}))).unwrap();
    let opening = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c",
        "namespace": "hiring", "type": "opening", "data": {"title": "Engineer"}, "idempotency_key": key()}))).unwrap();
    let application = engine.create(&ada(), args(json!({"workspace_id": W, "collection_id": "c",
        "namespace": "hiring", "type": "application", "data": {},
        "roles": {"candidate": [candidate.id], "opening": [opening.id]}, "idempotency_key": key()}))).unwrap();
    assert_eq!(application.state.as_deref(), Some("applied"));
    execute(
        &engine,
        application.id,
        "schedule_interview",
        1,
        json!({"interviewers": ["Ada"]}),
    )
    .unwrap();
    let offer = json!({"salary": 100, "budget": 120, "decided_at": "2026-11-29T10:00:00Z"});
    // No score yet: `gte` on an absent value fails closed.
    assert_eq!(
        code(execute(
            &engine,
            application.id,
            "make_offer",
            2,
            offer.clone()
        )),
        ("GUARD_FAILED", 409)
    );
    engine
        .update(
            &ada(),
            args(json!({"workspace_id": W, "record_id": application.id,
        "expected_revision": 2, "idempotency_key": key(), "patch": {"set": {"score": 8}}})),
        )
        .unwrap();
    let over = json!({"salary": 130, "budget": 120, "decided_at": "2026-11-29T10:00:00Z"});
    assert_eq!(
        code(execute(&engine, application.id, "make_offer", 3, over)),
        ("GUARD_FAILED", 409)
    );
    let offered = execute(&engine, application.id, "make_offer", 3, offer).unwrap();
    assert_eq!(
        offered.work_requested,
        ["send_offer_letter", "notify_recruiter"]
    );
    let read = get(&engine, &ada(), application.id).unwrap();
    assert_eq!(read.data["offer_salary"], json!(100));
}

fn command_list_reports_each_requirement<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Q", 0);
    let list = engine
        .list_commands(
            &ada(),
            ListCommands {
                workspace_id: W.into(),
                record_id: poll.id,
                input: None,
            },
        )
        .unwrap();
    let close = list.iter().find(|c| c.command == "close").unwrap();
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
    let reopen = list.iter().find(|c| c.command == "reopen").unwrap();
    assert_eq!(reopen.requirements[0].passed, Some(false));
    let with_input = engine
        .list_commands(
            &ada(),
            args(json!({"workspace_id": W, "record_id": poll.id, "input": {"reason": 1}})),
        )
        .unwrap();
    let close = with_input.iter().find(|c| c.command == "close").unwrap();
    assert_eq!(close.requirements[1].passed, Some(false));
}

fn views_project_their_fields<S: RecordStore>(store: S) {
    let engine = engine(store);
    let open = create_poll(&engine, "Open one", 2);
    let closed = create_poll(&engine, "Closed one", 2);
    execute(&engine, closed.id, "close", 1, json!({})).unwrap();
    let page = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W,
        "view": {"namespace": "polls", "view": "open_polls"}})),
        )
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
        .unwrap();
    assert!(hidden.items.is_empty());
    let shown = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W, "query": "open one",
                "view": {"namespace": "polls", "view": "open_polls"}})),
        )
        .unwrap();
    assert_eq!(shown.items.len(), 1);
    assert_eq!(fields, ["options", "question"]);
    assert_eq!(
        code(engine.search(
            &ada(),
            args(json!({"workspace_id": W,
        "view": {"namespace": "polls", "view": "nope"}}))
        )),
        ("INVALID_ARGUMENTS", 400)
    );
    // Filters and query.
    let found = engine
        .search(
            &ada(),
            args(json!({"workspace_id": W, "namespace": "polls",
        "type": "poll", "state": "closed"})),
        )
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
        .unwrap();
    assert_eq!(
        found.items.iter().map(|r| r.id).collect::<Vec<_>>(),
        [open.id]
    );
}

fn cursor_paging_sees_every_record_once<S: RecordStore>(store: S) {
    let engine = engine(store);
    let mut created = BTreeSet::new();
    for i in 0..250 {
        created.insert(create_poll(&engine, &format!("Poll {i}"), 0).id);
    }
    create_person(&engine, "not a poll");
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
        .unwrap();
    let foreign = SearchRecords {
        workspace_id: W.into(),
        namespace: Some("people".into()),
        cursor: first.next_cursor.clone(),
        ..Default::default()
    };
    assert_eq!(
        code(engine.search(&ada(), foreign)),
        ("INVALID_CURSOR", 400)
    );
    let edited = SearchRecords {
        workspace_id: W.into(),
        cursor: Some("c1zz".into()),
        ..Default::default()
    };
    assert_eq!(code(engine.search(&ada(), edited)), ("INVALID_CURSOR", 400));
    // A multi-byte character where the digits split is refused, not a panic.
    let odd = SearchRecords {
        workspace_id: W.into(),
        cursor: Some(format!("c1{}\u{e9}{}", "0".repeat(15), "0".repeat(15))),
        ..Default::default()
    };
    assert_eq!(code(engine.search(&ada(), odd)), ("INVALID_CURSOR", 400));
    for limit in [0, 101] {
        let bad = SearchRecords {
            workspace_id: W.into(),
            limit: Some(limit),
            ..Default::default()
        };
        assert_eq!(code(engine.search(&ada(), bad)), ("INVALID_ARGUMENTS", 400));
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
            .unwrap()
            .items
            .len(),
        20
    );
}

fn the_change_feed_resumes_from_a_checkpoint<S: RecordStore>(store: S) {
    let engine = engine(store);
    let feed = |cursor: Option<String>| changes(&engine, &ada(), cursor, Some(100)).unwrap();
    let a = create_poll(&engine, "A", 1);
    create_poll(&engine, "B", 1);
    let first = feed(None);
    assert_eq!(first.items.len(), 2);
    assert!(first.next_cursor.is_none());
    let checkpoint = first.checkpoint.clone().unwrap();
    // Nothing new: an empty page, the same checkpoint.
    let idle = feed(Some(checkpoint.clone()));
    assert!(idle.items.is_empty());
    assert_eq!(idle.checkpoint.as_deref(), Some(checkpoint.as_str()));
    execute(&engine, a.id, "close", 1, json!({})).unwrap();
    let later = feed(Some(checkpoint));
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
    assert_eq!(later.items[0].actor, ada());
    assert_eq!(later.items[0].revision, 2);
    // Paging within the feed.
    let small = changes(&engine, &ada(), None, Some(3)).unwrap();
    assert_eq!(small.items.len(), 3);
    let rest = feed(small.next_cursor);
    assert_eq!(rest.items.len(), 1);
}

fn concurrent_executes_on_one_revision_have_one_winner<S: RecordStore + 'static>(store: S) {
    let engine = Arc::new(engine(store));
    let poll = create_poll(&engine, "Race", 1);
    let results: Vec<Result<_, RecordError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let engine = Arc::clone(&engine);
                scope.spawn(move || execute(&engine, poll.id, "close", 1, json!({})))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    for result in results.into_iter().filter(Result::is_err) {
        let error = result.unwrap_err();
        assert!(
            matches!(error.code(), "STALE_REVISION" | "STATE_NOT_ALLOWED"),
            "{error:?}"
        );
        assert_eq!(error.status(), 409);
    }
    let read = get(&engine, &ada(), poll.id).unwrap();
    assert_eq!(read.revision, 2);
}

/// Readers other than `ada` may not see records whose question says "secret"; only `ada`
/// may change anything.
#[derive(Debug)]
struct SecretPolls;

impl Authority for SecretPolls {
    fn allows(&self, actor: &Actor, operation: Operation, record: &Record) -> bool {
        if actor.id == "ada" {
            return true;
        }
        let secret = record
            .data
            .get("question")
            .and_then(Value::as_str)
            .is_some_and(|q| q.contains("secret"));
        operation == Operation::RecordRead && !secret
    }
}

fn authority_restricts_reads_and_changes<S: RecordStore>(store: S) {
    let engine = engine(store).with_authority(SecretPolls);
    let secret = create_poll(&engine, "secret poll", 1);
    let public = create_poll(&engine, "public poll", 1);
    let voter = create_person(&engine, "Grace");
    let ballot = engine
        .create(
            &ada(),
            args(json!({"workspace_id": W, "collection_id": "c1",
        "namespace": "polls", "type": "ballot", "data": {"choice": 0},
        "roles": {"poll": [secret.id], "voter": [voter.id]}, "idempotency_key": key()})),
        )
        .unwrap();
    let bob = Actor::new("bob").via("agent-7");
    assert_eq!(
        code(get(&engine, &bob, secret.id)),
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
        .unwrap();
    assert_eq!(
        history.items[0].payload["participants"]["poll"],
        json!([{"restricted": true}])
    );
    assert_eq!(
        history.items[0].payload["participants"]["voter"],
        json!([{"id": voter.id}])
    );
    let seen = get(&engine, &bob, ballot.id).unwrap();
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
    let update = engine.update(
        &bob,
        args(json!({"workspace_id": W, "record_id": public.id,
        "expected_revision": 1, "idempotency_key": key(), "patch": {"set": {"question": "mine"}}})),
    );
    assert_eq!(code(update), ("FORBIDDEN", 403));
    let created = engine.create(
        &bob,
        args(
            json!({"workspace_id": W, "collection_id": "c1", "namespace": "people",
        "type": "person", "data": {"name": "B"}, "idempotency_key": key()}),
        ),
    );
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
        .unwrap();
    assert_eq!(
        found.items.iter().map(|r| r.id).collect::<Vec<_>>(),
        [public.id]
    );
    let feed = changes(&engine, &bob, None, None).unwrap();
    assert!(feed.items.iter().all(|e| e.record_id != secret.id));
    assert_eq!(feed.items.len(), 3, "public poll, person, ballot");
}

/// May list commands but not execute them.
#[derive(Debug)]
struct ListOnly;

impl Authority for ListOnly {
    fn allows(&self, actor: &Actor, operation: Operation, _: &Record) -> bool {
        actor.id == "ada" || operation != Operation::CommandExecute
    }
}

fn runnable_needs_the_right_to_execute<S: RecordStore>(store: S) {
    let engine = engine(store).with_authority(ListOnly);
    let poll = create_poll(&engine, "Q", 1);
    let list = |actor: &Actor| {
        engine
            .list_commands(
                actor,
                ListCommands {
                    workspace_id: W.into(),
                    record_id: poll.id,
                    input: None,
                },
            )
            .unwrap()
            .into_iter()
            .find(|c| c.command == "close")
            .unwrap()
            .runnable
    };
    assert!(list(&ada()));
    assert!(!list(&Actor::new("viewer")));
}

fn archived_records_take_no_changes<S: RecordStore>(store: S) {
    let engine = engine(store);
    let poll = create_poll(&engine, "Old", 1);
    let archived = engine
        .archive(
            &ada(),
            args(json!({"workspace_id": W, "record_id": poll.id,
        "expected_revision": 1, "idempotency_key": key()})),
        )
        .unwrap();
    assert!(archived.archived);
    assert_eq!(
        code(execute(&engine, poll.id, "close", 2, json!({}))),
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
        .unwrap();
    assert!(
        default_search.items.is_empty(),
        "archived records are not searched"
    );
    assert!(get(&engine, &ada(), poll.id).unwrap().archived);
}

macro_rules! conformance {
    ($store:ident, $make:expr) => {
        mod $store {
            #[test]
            fn create_creates_at_revision_one_in_the_initial_state() {
                super::create_creates_at_revision_one_in_the_initial_state($make);
            }
            #[test]
            fn idempotency_keys_are_counted_in_characters_like_the_schema() {
                super::idempotency_keys_are_counted_in_characters_like_the_schema($make);
            }
            #[test]
            fn invalid_arguments_and_schema_failures_have_their_classes() {
                super::invalid_arguments_and_schema_failures_have_their_classes($make);
            }
            #[test]
            fn idempotent_replay_and_conflicting_reuse() {
                super::idempotent_replay_and_conflicting_reuse($make);
            }
            #[test]
            fn stale_revisions_are_refused() {
                super::stale_revisions_are_refused($make);
            }
            #[test]
            fn update_never_changes_the_lifecycle_state() {
                super::update_never_changes_the_lifecycle_state($make);
            }
            #[test]
            fn roles_are_checked_on_create_and_update() {
                super::roles_are_checked_on_create_and_update($make);
            }
            #[test]
            fn commands_check_input_state_and_guard_then_transition() {
                super::commands_check_input_state_and_guard_then_transition($make);
            }
            #[test]
            fn guards_fail_closed_on_missing_numbers() {
                super::guards_fail_closed_on_missing_numbers($make);
            }
            #[test]
            fn command_list_reports_each_requirement() {
                super::command_list_reports_each_requirement($make);
            }
            #[test]
            fn views_project_their_fields() {
                super::views_project_their_fields($make);
            }
            #[test]
            fn cursor_paging_sees_every_record_once() {
                super::cursor_paging_sees_every_record_once($make);
            }
            #[test]
            fn the_change_feed_resumes_from_a_checkpoint() {
                super::the_change_feed_resumes_from_a_checkpoint($make);
            }
            #[test]
            fn concurrent_executes_on_one_revision_have_one_winner() {
                super::concurrent_executes_on_one_revision_have_one_winner($make);
            }
            #[test]
            fn authority_restricts_reads_and_changes() {
                super::authority_restricts_reads_and_changes($make);
            }
            #[test]
            fn runnable_needs_the_right_to_execute() {
                super::runnable_needs_the_right_to_execute($make);
            }
            #[test]
            fn archived_records_take_no_changes() {
                super::archived_records_take_no_changes($make);
            }
        }
    };
}

conformance!(memory, rcip_relationship::MemoryStore::new());
conformance!(sqlite, rcip_relationship::SqliteStore::in_memory().unwrap());

#[test]
fn sqlite_data_survives_a_reopen() {
    use rcip_relationship::SqliteStore;
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reopen-{}", fresh_uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.db");
    let (poll, events) = {
        let engine = engine(SqliteStore::open(&path).unwrap());
        let poll = create_poll(&engine, "Persisted?", 2);
        execute(&engine, poll.id, "close", 1, json!({"reason": "kept"})).unwrap();
        let events = changes(&engine, &ada(), None, None).unwrap();
        (poll, events.items)
    };
    let engine = engine(SqliteStore::open(&path).unwrap());
    let read = get(&engine, &ada(), poll.id).unwrap();
    assert_eq!((read.revision, read.state.as_deref()), (2, Some("closed")));
    assert_eq!(read.data["closed_reason"], json!("kept"));
    let reopened = changes(&engine, &ada(), None, None).unwrap();
    assert_eq!(reopened.items, events, "events, ids and all");
    // New events continue the order.
    let reopened_poll = execute(&engine, poll.id, "reopen", 2, json!({})).unwrap();
    assert_eq!(reopened_poll.revision, 3);
    let last = changes(&engine, &ada(), reopened.checkpoint, None).unwrap();
    assert_eq!(last.items.len(), 1);
    assert!(last.items[0].id > events.last().unwrap().id);
    std::fs::remove_dir_all(dir).unwrap();
}
