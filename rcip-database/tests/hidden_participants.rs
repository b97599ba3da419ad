//! A participant the caller cannot read stays invisible, on memory, SQLite and PostgreSQL
//! (skipped with one line without `RCIP_TEST_POSTGRES_URL`): it cannot be detached or
//! replaced, no answer tells it from an id that names nothing (every refusal compared whole,
//! the two ids written as `ID`), and a change that leaves it alone is not refused for it.
//!
//! Before this was fixed, an agent that sees `{"restricted": true}` in a role could remove
//! the hidden id and add its own (200), re-adding the hidden id succeeded where a random one
//! was refused, and any update by that agent was refused naming the hidden id.
#![cfg(all(feature = "sqlite", feature = "postgres"))]
#![allow(clippy::unwrap_used, clippy::panic)]

mod postgres_support;
mod store_support;

use std::sync::Arc;

use postgres_support::TestSchema;
use rcip_database::SqliteStore;
use rcip_platform::{DirectoryStore, MemoryDirectory, Platform, PlatformError};
use rcip_records::{Actor, Caller, DelegatedScope, Engine, RecordStore};
use serde_json::{Value, json};

fn ada() -> Caller {
    Caller::human(Actor::new("ada"))
}

fn bot() -> Caller {
    Caller::agent(Actor::new("bot"), DelegatedScope::ALL)
}

fn package() -> Value {
    json!({
        "protocol": "relationship/v1", "namespace": "notes", "version": 1,
        "types": {
            "note": {"kind": "entity",
                "schema": {"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"], "additionalProperties": false}},
            "link": {"kind": "relationship",
                "schema": {"type": "object", "properties": {"label": {"type": "string"}},
                           "required": [], "additionalProperties": false},
                "roles": {"target": {"min": 1, "max": 1, "types": ["notes/note"]}}}
        }
    })
}

async fn ok<S: RecordStore>(
    platform: &Platform<S>,
    caller: &Caller,
    name: &str,
    args: Value,
) -> Value {
    match platform.call(caller, name, args).await {
        Ok(value) => value,
        Err(error) => panic!("{name} failed: {error}"),
    }
}

/// The whole refusal of a call (status, code, message, issues) with `id` written as `ID`.
async fn refusal<S: RecordStore>(
    platform: &Platform<S>,
    caller: &Caller,
    name: &str,
    args: Value,
    id: &str,
) -> String {
    match platform.call(caller, name, args).await {
        Ok(value) => format!("succeeded: {value}"),
        Err(error) => described(&error, id),
    }
}

/// A refusal whole, with `id` written as `ID`.
fn described(error: &PlatformError, id: &str) -> String {
    json!({
        "status": error.status.as_u16(), "code": error.code, "message": error.message,
        "issues": serde_json::to_value(&error.issues).unwrap(),
    })
    .to_string()
    .replace(id, "ID")
}

/// The rules on one platform.
async fn hidden_participants_stay_hidden<S: RecordStore>(platform: Platform<S>) {
    let p = &platform;
    ok(
        p,
        &ada(),
        "workspace.create",
        json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w"}),
    )
    .await;
    ok(
        p,
        &ada(),
        "member.add",
        json!({"workspace_id": "acme", "principal_id": "bot", "kind": "agent",
        "scopes": ["records:read", "records:write"], "idempotency_key": "m"}),
    )
    .await;
    ok(p, &ada(), "collection.create", json!({"workspace_id": "acme", "collection_id": "main", "name": "Main", "idempotency_key": "c1"})).await;
    ok(
        p,
        &ada(),
        "collection.create",
        json!({"workspace_id": "acme", "collection_id": "secret", "name": "Secret",
        "visibility": "restricted", "idempotency_key": "c2"}),
    )
    .await;
    ok(
        p,
        &ada(),
        "program.activate",
        json!({"workspace_id": "acme", "package": package(), "idempotency_key": "p"}),
    )
    .await;
    let note = |collection: &str, key: &str| {
        json!({"workspace_id": "acme", "collection_id": collection, "namespace": "notes", "version": 1,
            "type": "note", "data": {"text": key}, "idempotency_key": key})
    };
    let hidden = ok(p, &ada(), "record.create", note("secret", "n1")).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let own = ok(p, &bot(), "record.create", note("main", "n2")).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let link = ok(
        p,
        &ada(),
        "record.create",
        json!({"workspace_id": "acme", "collection_id": "main",
        "namespace": "notes", "version": 1, "type": "link", "data": {},
        "roles": {"target": [hidden]}, "idempotency_key": "l1"}),
    )
    .await;
    let link_id = link["id"].as_str().unwrap().to_owned();
    let missing = "7d1c2a4e-0b6f-4c36-9d84-3f2a1e5b6c70";
    let read = |caller: Caller| {
        let args = json!({"workspace_id": "acme", "record_id": link_id});
        async move { ok(p, &caller, "record.get", args).await }
    };
    let seen = read(bot()).await;
    assert_eq!(
        seen["participants"]["target"],
        json!([{"restricted": true}])
    );
    let revision = seen["revision"].as_u64().unwrap();

    // An update that leaves the roles alone is not refused for the hidden participant.
    ok(
        p,
        &bot(),
        "record.update",
        json!({"workspace_id": "acme", "record_id": link_id,
        "expected_revision": revision, "patch": {"set": {"label": "x"}}, "idempotency_key": "u0"}),
    )
    .await;

    // Every attempt on the hidden id is answered as the same attempt on an id of nothing:
    // both refused alike, or both accepted with the role as it was.
    for (what, roles) in [
        (
            "detach and replace",
            json!({"remove": {"target": ["X"]}, "add": {"target": [own]}}),
        ),
        ("detach", json!({"remove": {"target": ["X"]}})),
        ("add again", json!({"add": {"target": ["X"]}})),
    ] {
        let mut answers = Vec::new();
        for (id, key) in [(hidden.as_str(), "h"), (missing, "m")] {
            let revision = read(bot()).await["revision"].as_u64().unwrap();
            let roles = serde_json::from_str::<Value>(&roles.to_string().replace('X', id)).unwrap();
            let args = json!({"workspace_id": "acme", "record_id": link_id, "expected_revision": revision,
                "roles": roles, "idempotency_key": format!("{what} {key}")});
            answers.push(match p.call(&bot(), "record.update", args).await {
                Ok(view) => format!("accepted: {}", view["participants"]),
                Err(error) => described(&error, id),
            });
        }
        assert_eq!(answers[0], answers[1], "{what}");
    }

    // Creating with the hidden id, reading it, its history: as for nothing.
    let create = |id: &str, key: &str| {
        json!({"workspace_id": "acme", "collection_id": "main", "namespace": "notes", "version": 1,
            "type": "link", "data": {}, "roles": {"target": [id, id]}, "idempotency_key": key})
    };
    assert_eq!(
        refusal(p, &bot(), "record.create", create(&hidden, "l2"), &hidden).await,
        refusal(p, &bot(), "record.create", create(missing, "l3"), missing).await,
    );
    for operation in ["record.get", "record.history"] {
        let args = |id: &str| json!({"workspace_id": "acme", "record_id": id});
        assert_eq!(
            refusal(p, &bot(), operation, args(&hidden), &hidden).await,
            refusal(p, &bot(), operation, args(missing), missing).await,
            "{operation}"
        );
    }
    // The hidden participant is still there, and ada still sees it.
    assert_eq!(
        read(ada()).await["participants"]["target"],
        json!([{"id": hidden}])
    );
    // A participant the caller can read is still removed and replaced as before.
    let visible = ok(
        p,
        &ada(),
        "record.create",
        json!({"workspace_id": "acme", "collection_id": "main",
        "namespace": "notes", "version": 1, "type": "link", "data": {},
        "roles": {"target": [own]}, "idempotency_key": "l4"}),
    )
    .await;
    let other = ok(p, &bot(), "record.create", note("main", "n3")).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let replaced = ok(p, &bot(), "record.update", json!({"workspace_id": "acme", "record_id": visible["id"],
        "expected_revision": visible["revision"], "roles": {"remove": {"target": [own]}, "add": {"target": [other]}},
        "idempotency_key": "u9"})).await;
    assert_eq!(replaced["participants"]["target"], json!([{"id": other}]));
}

async fn on<S: RecordStore>(engine: Engine<S>, directory: Arc<dyn DirectoryStore>) {
    hidden_participants_stay_hidden(Platform::open(engine, directory).await.unwrap()).await;
}

#[tokio::test]
async fn on_memory() {
    on(Engine::in_memory(), Arc::new(MemoryDirectory::new())).await;
}

#[tokio::test]
async fn on_sqlite() {
    let path = std::env::temp_dir().join(format!("rcip-hidden-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    on(
        Engine::new(SqliteStore::open(&path).unwrap()),
        Arc::new(SqliteStore::open(&path).unwrap()),
    )
    .await;
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn on_postgres() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    on(
        Engine::new(schema.open().await),
        Arc::new(schema.open().await),
    )
    .await;
}
