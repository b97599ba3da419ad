//! Programs at run time: activation per workspace, content identity of versions, records of
//! older versions after a newer one, and other instances' activations through a source.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcip_records::{
    Activation, Actor, Caller, CreateRecord, Engine, ExecuteCommand, GetRecord, MemoryStore,
    ProgramSource, RecordError, RecordView, StoreError, StoreFuture,
};
use rcip_relationship::{Package, parse_package};
use serde_json::{Value, json};

/// `notes` at `version`: a note with `text` (and, from v2 on, an optional `tag`), closable.
fn notes(version: u64, description: &str) -> Package {
    let mut properties = json!({"text": {"type": "string"}});
    if version >= 2 {
        properties["tag"] = json!({"type": "string"});
    }
    parse_package(
        &json!({
            "protocol": "relationship/v1", "namespace": "notes", "version": version,
            "description": description,
            "types": {"note": {"kind": "entity",
                "schema": {"type": "object", "properties": properties, "required": ["text"],
                    "additionalProperties": false},
                "lifecycle": {"initial": "open", "states": ["open", "closed"]},
                "commands": {"close": {"input": {"type": "object", "properties": {},
                    "required": [], "additionalProperties": false},
                    "from": ["open"], "to": "closed"}}}}
        })
        .to_string(),
    )
    .unwrap()
}

fn ada() -> Caller {
    Caller::human(Actor::new("ada"))
}

fn create(workspace: &str, version: Option<u64>, data: Value, key: &str) -> CreateRecord {
    let mut args: CreateRecord = serde_json::from_value(json!({
        "workspace_id": workspace, "collection_id": "c", "namespace": "notes", "type": "note",
        "data": data, "idempotency_key": key,
    }))
    .unwrap();
    args.version = version;
    args
}

fn code<T: std::fmt::Debug>(result: Result<T, RecordError>) -> (&'static str, u16) {
    let error = result.unwrap_err();
    (error.code(), error.status())
}

#[tokio::test]
async fn an_activated_program_serves_its_workspace_only() {
    let engine = Engine::in_memory();
    let activation = engine.activate("w1", notes(1, "first")).unwrap();
    assert_eq!(activation, Activation::New);
    assert_eq!(
        engine
            .workspace_package("w1", "notes", Some(1))
            .unwrap()
            .digest(),
        notes(1, "first").digest()
    );
    let note = engine
        .create(&ada(), create("w1", None, json!({"text": "hi"}), "k1"))
        .await
        .unwrap();
    assert_eq!(note.version, 1);
    assert_eq!(
        code(
            engine
                .create(&ada(), create("w2", None, json!({"text": "hi"}), "k1"))
                .await
        ),
        ("INVALID_ARGUMENTS", 400)
    );
    assert!(engine.workspace_package("w1", "notes", None).is_some());
    assert!(engine.workspace_package("w2", "notes", None).is_none());
    assert!(engine.package("notes", None).is_none(), "not installed");
}

#[tokio::test]
async fn a_version_pins_its_content() {
    let engine = Engine::in_memory()
        .with_program(notes(1, "installed"))
        .unwrap();
    // Installed: the same content again is a no-op, other content a conflict.
    let engine = engine.with_program(notes(1, "installed")).unwrap();
    let conflict = engine.with_program(notes(1, "other")).unwrap_err();
    assert_eq!(
        (conflict.code(), conflict.status()),
        ("VERSION_CONFLICT", 409)
    );
    let engine = Engine::in_memory()
        .with_program(notes(1, "installed"))
        .unwrap();
    // Activating an installed version: the same content is a no-op, other content refused.
    let again = engine.activate("w", notes(1, "installed")).unwrap();
    assert_eq!(again, Activation::AlreadyActive);
    assert_eq!(
        code(engine.activate("w", notes(1, "other"))),
        ("VERSION_CONFLICT", 409)
    );
    // In a workspace: the same, per workspace.
    assert_eq!(
        engine.activate("w", notes(2, "second")).unwrap(),
        Activation::New
    );
    assert_eq!(
        engine.activate("w", notes(2, "second")).unwrap(),
        Activation::AlreadyActive
    );
    assert_eq!(
        code(engine.activate("w", notes(2, "changed"))),
        ("VERSION_CONFLICT", 409)
    );
    // Another workspace pins its own v2.
    assert_eq!(
        engine.activate("v", notes(2, "changed")).unwrap(),
        Activation::New
    );
    assert_eq!(
        engine
            .workspace_package("v", "notes", Some(2))
            .unwrap()
            .description
            .as_deref(),
        Some("changed")
    );
}

#[tokio::test]
async fn records_of_an_older_version_keep_working() {
    let engine = Engine::in_memory();
    engine.activate("w", notes(1, "first")).unwrap();
    let old = engine
        .create(&ada(), create("w", None, json!({"text": "old"}), "k1"))
        .await
        .unwrap();
    assert_eq!(old.version, 1);
    engine.activate("w", notes(2, "second")).unwrap();
    // Without a version: the highest; with one: that one.
    let new = engine
        .create(
            &ada(),
            create("w", None, json!({"text": "new", "tag": "t"}), "k2"),
        )
        .await
        .unwrap();
    assert_eq!(new.version, 2);
    let pinned = engine
        .create(&ada(), create("w", Some(1), json!({"text": "v1"}), "k3"))
        .await
        .unwrap();
    assert_eq!(pinned.version, 1);
    // v1's schema still judges v1 records: no `tag` there.
    assert_eq!(
        code(
            engine
                .create(
                    &ada(),
                    create("w", Some(1), json!({"text": "v1", "tag": "t"}), "k4")
                )
                .await
        ),
        ("SCHEMA_VIOLATION", 422)
    );
    // The old record's command runs under v1.
    let closed = engine
        .execute(
            &ada(),
            serde_json::from_value::<ExecuteCommand>(json!({"workspace_id": "w",
                "record_id": old.id, "command": "close", "expected_revision": 1,
                "idempotency_key": "k5", "input": {}}))
            .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(closed.state.as_deref(), Some("closed"));
    let read: RecordView = engine
        .get(
            &ada(),
            GetRecord {
                workspace_id: "w".into(),
                record_id: old.id,
            },
        )
        .await
        .unwrap();
    assert_eq!((read.version, read.revision), (1, 2));
}

/// What a shared database would hold: the programs activated per workspace.
#[derive(Debug, Default)]
struct Shared {
    programs: Mutex<HashMap<(String, String), Vec<Package>>>,
    asked: Mutex<usize>,
}

impl Shared {
    fn activate(&self, workspace: &str, package: Package) {
        let key = (workspace.to_owned(), package.namespace.to_string());
        self.programs
            .lock()
            .unwrap()
            .entry(key)
            .or_default()
            .push(package);
    }
}

impl ProgramSource for Shared {
    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: Option<u64>,
    ) -> StoreFuture<'a, Result<Option<Package>, StoreError>> {
        *self.asked.lock().unwrap() += 1;
        let programs = self.programs.lock().unwrap();
        let versions = programs.get(&(workspace_id.to_owned(), namespace.to_owned()));
        let found = versions.and_then(|versions| {
            versions
                .iter()
                .filter(|p| version.is_none_or(|v| p.version == v))
                .max_by_key(|p| p.version)
                .cloned()
        });
        Box::pin(std::future::ready(Ok(found)))
    }
}

#[tokio::test]
async fn another_instances_activation_is_seen_through_the_source() {
    let shared = Arc::new(Shared::default());
    let store = Arc::new(MemoryStore::new());
    let first = Engine::new(Arc::clone(&store)).with_program_source(shared.clone());
    let second = Engine::new(Arc::clone(&store)).with_program_source(shared.clone());
    // The first instance activates (and records the activation where both look).
    first.activate("w", notes(1, "first")).unwrap();
    shared.activate("w", notes(1, "first"));
    let note = second
        .create(&ada(), create("w", None, json!({"text": "hi"}), "k1"))
        .await
        .unwrap();
    assert_eq!(note.version, 1);
    // A newer version activated elsewhere is the highest at the next call.
    shared.activate("w", notes(2, "second"));
    let newer = second
        .create(
            &ada(),
            create("w", None, json!({"text": "hi", "tag": "t"}), "k2"),
        )
        .await
        .unwrap();
    assert_eq!(newer.version, 2);
    // A version asked for by number is looked up once, then served from the cache.
    let asked = *shared.asked.lock().unwrap();
    second
        .create(&ada(), create("w", Some(2), json!({"text": "x"}), "k3"))
        .await
        .unwrap();
    assert_eq!(*shared.asked.lock().unwrap(), asked);
    // Unknown anywhere: refused.
    assert_eq!(
        code(
            second
                .create(
                    &ada(),
                    create("elsewhere", None, json!({"text": "x"}), "k4")
                )
                .await
        ),
        ("INVALID_ARGUMENTS", 400)
    );
}
