//! The platform through its one entry, `Platform::call`, on memory: every operation once
//! (each answer checked against its operation's output schema), every authorization rule
//! with its status and code, idempotency of directory mutations, paging, programs at run
//! time, and replays that obey current access.
#![allow(clippy::unwrap_used, clippy::panic)] // Tests: a failure is the report.

use std::collections::BTreeSet;
use std::sync::Arc;

use rcip_platform::{MemoryDirectory, Platform, PlatformError, operation, operations};
use rcip_records::{Actor, Caller, DelegatedScope, Engine};
use rcip_runtime::__private::shared::SchemaValidator;
use serde_json::{Value, json};

fn notes(version: u64) -> Value {
    let mut properties = json!({"text": {"type": "string", "minLength": 1, "maxLength": 200}});
    if version > 1 {
        properties["tag"] = json!({"type": "string", "maxLength": 20});
    }
    json!({
        "protocol": "relationship/v1", "namespace": "notes", "version": version,
        "types": {
            "note": {
                "kind": "entity",
                "schema": {"type": "object", "properties": properties, "required": ["text"],
                           "additionalProperties": false},
                "lifecycle": {"initial": "open", "states": ["open", "closed"]},
                "commands": {"close": {
                    "input": {"type": "object", "properties": {}, "required": [],
                              "additionalProperties": false},
                    "from": ["open"], "to": "closed"}}
            },
            "link": {
                "kind": "relationship",
                "schema": {"type": "object", "properties": {}, "required": [],
                           "additionalProperties": false},
                "roles": {"target": {"min": 1, "max": 1, "types": ["notes/note"]}}
            }
        }
    })
}

fn ada() -> Caller {
    Caller::human(Actor::new("ada"))
}
fn bob() -> Caller {
    Caller::human(Actor::new("bob"))
}
fn eve() -> Caller {
    Caller::human(Actor::new("eve"))
}
/// The agent's credential delegates everything; its membership decides.
fn bot() -> Caller {
    Caller::agent(Actor::new("bot"), DelegatedScope::ALL)
}

struct World {
    platform: Platform,
    /// Operations answered so far (for the every-operation test).
    seen: std::sync::Mutex<BTreeSet<&'static str>>,
}

impl World {
    /// `acme`: ada owns it, bob is a member, bot an agent with records:read and
    /// records:write; collections `open` (workspace) and `secret` (restricted, bob may read);
    /// `notes` v1 active. `other`: eve's workspace.
    async fn new() -> Self {
        let platform = Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
            .await
            .unwrap();
        let world = Self {
            platform,
            seen: std::sync::Mutex::default(),
        };
        world
            .ok(
                &ada(),
                "workspace.create",
                json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
            )
            .await;
        world
            .ok(
                &eve(),
                "workspace.create",
                json!({"workspace_id": "other", "name": "Other", "idempotency_key": "w1"}),
            )
            .await;
        world
            .ok(&ada(), "member.add", json!({"workspace_id": "acme", "principal_id": "bob", "kind": "human", "idempotency_key": "m1"}))
            .await;
        world
            .ok(
                &ada(),
                "member.add",
                json!({"workspace_id": "acme", "principal_id": "bot", "kind": "agent",
                "scopes": ["records:read", "records:write"], "idempotency_key": "m2"}),
            )
            .await;
        world
            .ok(&ada(), "collection.create", json!({"workspace_id": "acme", "collection_id": "open", "name": "Open", "idempotency_key": "c1"}))
            .await;
        world
            .ok(
                &ada(),
                "collection.create",
                json!({"workspace_id": "acme", "collection_id": "secret", "name": "Secret",
                "visibility": "restricted", "idempotency_key": "c2"}),
            )
            .await;
        world
            .ok(
                &ada(),
                "collection.grant",
                json!({"workspace_id": "acme", "collection_id": "secret", "principal_id": "bob",
                "access": "read", "idempotency_key": "g1"}),
            )
            .await;
        world
            .ok(
                &ada(),
                "program.activate",
                json!({"workspace_id": "acme", "package": notes(1), "idempotency_key": "p1"}),
            )
            .await;
        world
    }

    /// Calls, and checks a success against the operation's output schema.
    async fn call(
        &self,
        caller: &Caller,
        name: &str,
        arguments: Value,
    ) -> Result<Value, PlatformError> {
        let answer = self.platform.call(caller, name, arguments).await;
        if let Ok(value) = &answer {
            let spec = operation(name).expect("a registry operation");
            let validator = SchemaValidator::compile(&spec.output).unwrap();
            if let Err(issues) = validator.check(value) {
                panic!("{name} answered outside its output schema: {issues:?}\n{value:#}");
            }
            self.seen.lock().unwrap().insert(spec.name);
        }
        answer
    }

    async fn ok(&self, caller: &Caller, name: &str, arguments: Value) -> Value {
        match self.call(caller, name, arguments).await {
            Ok(value) => value,
            Err(error) => panic!("{name} failed: {error}"),
        }
    }

    async fn refused(&self, caller: &Caller, name: &str, arguments: Value) -> (u16, &'static str) {
        match self.call(caller, name, arguments).await {
            Ok(value) => panic!("{name} succeeded: {value}"),
            Err(error) => (error.status.as_u16(), error.code),
        }
    }

    async fn note(&self, caller: &Caller, collection: &str, key: &str) -> Value {
        self.ok(caller, "record.create", json!({"workspace_id": "acme", "collection_id": collection,
            "namespace": "notes", "version": 1, "type": "note", "data": {"text": "hello"}, "idempotency_key": key}))
            .await
    }
}

fn id(record: &Value) -> &str {
    record["id"].as_str().unwrap()
}

#[tokio::test]
async fn every_operation_answers_within_its_output_schema() {
    let w = World::new().await;
    let (a, acme) = (ada(), json!({"workspace_id": "acme"}));
    w.ok(&a, "capabilities.list", acme.clone()).await;
    w.ok(&a, "workspace.list", json!({})).await;
    w.ok(&a, "workspace.get", acme.clone()).await;
    w.ok(&a, "member.list", acme.clone()).await;
    w.ok(&a, "collection.list", acme.clone()).await;
    w.ok(&a, "program.versions", acme.clone()).await;
    w.ok(
        &a,
        "program.get",
        json!({"workspace_id": "acme", "namespace": "notes", "version": 1}),
    )
    .await;
    w.ok(&a, "examples.list", json!({})).await;
    let draft = w
        .ok(
            &a,
            "program.draft",
            json!({"workspace_id": "acme", "package": notes(2), "idempotency_key": "d1"}),
        )
        .await;
    assert_eq!(
        (draft["namespace"].as_str(), draft["version"].as_u64()),
        (Some("notes"), Some(2))
    );
    let note = w.note(&a, "open", "r1").await;
    let link = w
        .ok(&a, "record.create", json!({"workspace_id": "acme", "collection_id": "open", "namespace": "notes",
            "version": 1, "type": "link", "data": {}, "roles": {"target": [id(&note)]}, "idempotency_key": "r2"}))
        .await;
    assert_eq!(link["participants"]["target"][0]["id"], note["id"]);
    let record = json!({"workspace_id": "acme", "record_id": id(&note)});
    w.ok(&a, "record.get", record.clone()).await;
    w.ok(
        &a,
        "record.search",
        json!({"workspace_id": "acme", "namespace": "notes"}),
    )
    .await;
    w.ok(
        &a,
        "record.update",
        json!({"workspace_id": "acme", "record_id": id(&note), "expected_revision": 1,
        "patch": {"set": {"text": "changed"}}, "idempotency_key": "r3"}),
    )
    .await;
    let commands = w.ok(&a, "command.list", record.clone()).await;
    assert_eq!(commands["commands"][0]["command"], "close");
    let executed = w
        .ok(
            &a,
            "command.execute",
            json!({"workspace_id": "acme", "record_id": id(&note), "command": "close",
            "expected_revision": 2, "idempotency_key": "r4"}),
        )
        .await;
    assert_eq!(executed["state"], "closed");
    w.ok(
        &a,
        "record.archive",
        json!({"workspace_id": "acme", "record_id": id(&note), "expected_revision": 3,
        "idempotency_key": "r5"}),
    )
    .await;
    let history = w.ok(&a, "record.history", record).await;
    assert_eq!(history["items"].as_array().unwrap().len(), 4);
    let feed = w.ok(&a, "changes.feed", acme.clone()).await;
    assert!(feed["checkpoint"].is_string());
    w.ok(
        &a,
        "collection.revoke",
        json!({"workspace_id": "acme", "collection_id": "secret",
        "principal_id": "bob", "idempotency_key": "g2"}),
    )
    .await;
    w.ok(
        &a,
        "member.remove",
        json!({"workspace_id": "acme", "principal_id": "bot", "idempotency_key": "m3"}),
    )
    .await;
    let seen = w.seen.lock().unwrap().clone();
    let all: BTreeSet<&str> = operations().iter().map(|s| s.name).collect();
    assert_eq!(
        seen,
        all,
        "operations never answered: {:?}",
        all.difference(&seen).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn every_refusal_has_its_status_and_code() {
    let w = World::new().await;
    let note = w.note(&ada(), "open", "r1").await;
    let secret = w.note(&ada(), "secret", "r2").await;
    let get = |workspace: &str, record: &Value| json!({"workspace_id": workspace, "record_id": id(record)});

    // 400: unknown operation, unknown argument.
    assert_eq!(
        w.refused(&ada(), "record.delete", json!({})).await,
        (400, "UNKNOWN_OPERATION")
    );
    let mut extra = get("acme", &note);
    extra["colour"] = json!("red");
    assert_eq!(
        w.refused(&ada(), "record.get", extra).await,
        (400, "INVALID_ARGUMENTS")
    );
    // 403 CONSOLE_ONLY, whatever the agent's scopes.
    assert_eq!(
        w.refused(
            &bot(),
            "workspace.create",
            json!({"workspace_id": "botland", "name": "B", "idempotency_key": "k"})
        )
        .await,
        (403, "CONSOLE_ONLY")
    );
    assert_eq!(
        w.refused(&bot(), "member.add", json!({"workspace_id": "acme", "principal_id": "zed", "kind": "human", "idempotency_key": "k"})).await,
        (403, "CONSOLE_ONLY")
    );
    // 404 for a stranger, exactly as for a workspace that does not exist.
    assert_eq!(
        w.refused(&eve(), "record.get", get("acme", &note)).await,
        (404, "WORKSPACE_NOT_FOUND")
    );
    assert_eq!(
        w.refused(&eve(), "workspace.get", json!({"workspace_id": "acme"}))
            .await,
        (404, "WORKSPACE_NOT_FOUND")
    );
    assert_eq!(
        w.refused(&eve(), "workspace.get", json!({"workspace_id": "nowhere"}))
            .await,
        (404, "WORKSPACE_NOT_FOUND")
    );
    // Cross-workspace: eve's own workspace does not hold acme's record.
    assert_eq!(
        w.refused(&eve(), "record.get", get("other", &note)).await,
        (404, "RECORD_NOT_FOUND")
    );
    // 403 INSUFFICIENT_SCOPE: bot's membership delegates no commands:execute.
    let close = json!({"workspace_id": "acme", "record_id": id(&note), "command": "close", "expected_revision": 1, "idempotency_key": "x1"});
    assert_eq!(
        w.refused(&bot(), "command.execute", close.clone()).await,
        (403, "INSUFFICIENT_SCOPE")
    );
    // ...and command.list tells it so.
    let commands = w.ok(&bot(), "command.list", get("acme", &note)).await;
    assert_eq!(commands["commands"][0]["runnable"], false);
    assert_eq!(
        w.ok(&ada(), "command.list", get("acme", &note)).await["commands"][0]["runnable"],
        true
    );
    // A credential without the scope, whatever the membership.
    let narrow = Caller::agent(Actor::new("bot"), [DelegatedScope::RecordsRead]);
    assert_eq!(w.refused(&narrow, "record.create", json!({"workspace_id": "acme", "collection_id": "open",
        "namespace": "notes", "version": 1, "type": "note", "data": {"text": "x"}, "idempotency_key": "x2"})).await,
        (403, "INSUFFICIENT_SCOPE"));
    // Restricted collection: bot has no grant: the record and the collection are not found.
    assert_eq!(
        w.refused(&bot(), "record.get", get("acme", &secret)).await,
        (404, "RECORD_NOT_FOUND")
    );
    let create_secret = |key: &str| {
        json!({"workspace_id": "acme", "collection_id": "secret", "namespace": "notes",
        "version": 1, "type": "note", "data": {"text": "x"}, "idempotency_key": key})
    };
    assert_eq!(
        w.refused(&bot(), "record.create", create_secret("x3"))
            .await,
        (404, "COLLECTION_NOT_FOUND")
    );
    assert_eq!(
        w.refused(
            &bot(),
            "record.search",
            json!({"workspace_id": "acme", "collection_id": "secret"})
        )
        .await,
        (404, "COLLECTION_NOT_FOUND")
    );
    let listed = w
        .ok(&bot(), "collection.list", json!({"workspace_id": "acme"}))
        .await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    // Read-only grant: bob reads the secret record and may not change it or add one.
    w.ok(&bob(), "record.get", get("acme", &secret)).await;
    let update = json!({"workspace_id": "acme", "record_id": id(&secret), "expected_revision": 1,
        "patch": {"set": {"text": "mine"}}, "idempotency_key": "x4"});
    assert_eq!(
        w.refused(&bob(), "record.update", update).await,
        (403, "FORBIDDEN")
    );
    assert_eq!(
        w.refused(&bob(), "record.create", create_secret("x5"))
            .await,
        (403, "FORBIDDEN")
    );
    // 422: the data fails the type's schema.
    assert_eq!(w.refused(&ada(), "record.create", json!({"workspace_id": "acme", "collection_id": "open",
        "namespace": "notes", "version": 1, "type": "note", "data": {"text": 7}, "idempotency_key": "x6"})).await,
        (422, "SCHEMA_VIOLATION"));
    // 409: a stale revision.
    let stale = json!({"workspace_id": "acme", "record_id": id(&note), "expected_revision": 5,
        "patch": {"set": {"text": "late"}}, "idempotency_key": "x7"});
    assert_eq!(
        w.refused(&ada(), "record.update", stale).await,
        (409, "STALE_REVISION")
    );
    // An agent manages agents only within its own scopes.
    assert_eq!(
        w.refused(
            &bot(),
            "member.add",
            json!({"workspace_id": "acme", "principal_id": "bot2", "kind": "agent",
        "scopes": ["records:read"], "idempotency_key": "x8"})
        )
        .await,
        (403, "INSUFFICIENT_SCOPE")
    );
}

#[tokio::test]
async fn a_participant_the_reader_may_not_read_is_restricted() {
    let w = World::new().await;
    let hidden = w.note(&ada(), "secret", "r1").await;
    // ada links the secret note from the open collection.
    let link = w
        .ok(&ada(), "record.create", json!({"workspace_id": "acme", "collection_id": "open", "namespace": "notes",
            "version": 1, "type": "link", "data": {}, "roles": {"target": [id(&hidden)]}, "idempotency_key": "r2"}))
        .await;
    let read = |who: Caller| {
        let w = &w;
        let args = json!({"workspace_id": "acme", "record_id": id(&link)});
        async move { w.ok(&who, "record.get", args).await }
    };
    assert_eq!(
        read(bob()).await["participants"]["target"][0]["id"],
        hidden["id"]
    );
    assert_eq!(
        read(bot()).await["participants"]["target"][0],
        json!({"restricted": true})
    );
}

#[tokio::test]
async fn a_replay_after_access_is_revoked_is_not_found() {
    let w = World::new().await;
    w.ok(
        &ada(),
        "collection.grant",
        json!({"workspace_id": "acme", "collection_id": "secret", "principal_id": "bob",
        "access": "write", "idempotency_key": "g2"}),
    )
    .await;
    let create = json!({"workspace_id": "acme", "collection_id": "secret", "namespace": "notes", "version": 1,
        "type": "note", "data": {"text": "bob's"}, "idempotency_key": "b1"});
    let first = w.ok(&bob(), "record.create", create.clone()).await;
    // While access holds, the replay is the first answer.
    assert_eq!(w.ok(&bob(), "record.create", create.clone()).await, first);
    w.ok(
        &ada(),
        "collection.revoke",
        json!({"workspace_id": "acme", "collection_id": "secret",
        "principal_id": "bob", "idempotency_key": "g3"}),
    )
    .await;
    let error = w
        .platform
        .call(&bob(), "record.create", create)
        .await
        .unwrap_err();
    assert_eq!(error.status, 404);
    let shown = serde_json::to_string(&error).unwrap();
    assert!(
        !shown.contains(id(&first)) && !shown.contains("bob's"),
        "{shown}"
    );
    assert_eq!(
        w.refused(
            &bob(),
            "record.get",
            json!({"workspace_id": "acme", "record_id": id(&first)})
        )
        .await,
        (404, "RECORD_NOT_FOUND")
    );
}

#[tokio::test]
async fn directory_mutations_replay_for_their_principal_only() {
    let w = World::new().await;
    let create = json!({"workspace_id": "acme", "collection_id": "team", "name": "Team", "idempotency_key": "same"});
    let first = w.ok(&ada(), "collection.create", create.clone()).await;
    // A replay answers the first answer, even though the collection exists now.
    assert_eq!(
        w.ok(&ada(), "collection.create", create.clone()).await,
        first
    );
    // The default written out is the same call.
    let mut explicit = create.clone();
    explicit["visibility"] = json!("workspace");
    assert_eq!(w.ok(&ada(), "collection.create", explicit).await, first);
    // Another principal with the same key and arguments: a conflict, not ada's answer.
    assert_eq!(
        w.refused(&bob(), "collection.create", create.clone()).await,
        (409, "IDEMPOTENCY_CONFLICT")
    );
    let mut other = create;
    other["name"] = json!("Renamed");
    assert_eq!(
        w.refused(&ada(), "collection.create", other).await,
        (409, "IDEMPOTENCY_CONFLICT")
    );
    // A removal replays after the member is gone.
    let remove = json!({"workspace_id": "acme", "principal_id": "bot", "idempotency_key": "rm"});
    let removed = w.ok(&ada(), "member.remove", remove.clone()).await;
    assert_eq!(w.ok(&ada(), "member.remove", remove).await, removed);
    assert_eq!(
        w.refused(
            &ada(),
            "member.remove",
            json!({"workspace_id": "acme", "principal_id": "bot", "idempotency_key": "rm2"})
        )
        .await,
        (404, "MEMBER_NOT_FOUND")
    );
}

#[tokio::test]
async fn directory_lists_page_with_tamper_evident_cursors() {
    let w = World::new().await;
    let first = w
        .ok(
            &ada(),
            "member.list",
            json!({"workspace_id": "acme", "limit": 2}),
        )
        .await;
    let names = |page: &Value| -> Vec<String> {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["principal_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&first), ["ada", "bob"]);
    let cursor = first["next_cursor"].as_str().unwrap().to_owned();
    let second = w
        .ok(
            &ada(),
            "member.list",
            json!({"workspace_id": "acme", "limit": 2, "cursor": cursor}),
        )
        .await;
    assert_eq!(names(&second), ["bot"]);
    assert!(second.get("next_cursor").is_none());
    // Edited, or someone else's: refused.
    let mut edited = cursor.clone().into_bytes();
    edited[17] = if edited[17] == b'0' { b'1' } else { b'0' };
    let edited = String::from_utf8(edited).unwrap();
    assert_eq!(
        w.refused(
            &ada(),
            "member.list",
            json!({"workspace_id": "acme", "cursor": edited})
        )
        .await,
        (400, "INVALID_CURSOR")
    );
    assert_eq!(
        w.refused(
            &bob(),
            "member.list",
            json!({"workspace_id": "acme", "cursor": cursor.clone()})
        )
        .await,
        (400, "INVALID_CURSOR")
    );
    // A cursor of one list is no cursor of another.
    assert_eq!(
        w.refused(
            &ada(),
            "collection.list",
            json!({"workspace_id": "acme", "cursor": cursor})
        )
        .await,
        (400, "INVALID_CURSOR")
    );
}

#[tokio::test]
async fn capabilities_list_what_the_caller_may_call() {
    let w = World::new().await;
    let names = |page: &Value| -> BTreeSet<String> {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let everything = w
        .ok(
            &ada(),
            "capabilities.list",
            json!({"workspace_id": "acme", "limit": 100}),
        )
        .await;
    // An owner may call every operation, and the list is those operations, nothing of the
    // active `notes` program besides: what the operation's summary says it lists.
    let all: BTreeSet<String> = operations().iter().map(|s| s.name.to_owned()).collect();
    assert_eq!(names(&everything), all);
    let listed = &everything["items"][0];
    assert_eq!(listed["id"], "capabilities.list");
    let summary = rcip_platform::operation("capabilities.list")
        .unwrap()
        .summary;
    assert_eq!(listed["description"], summary, "{listed}");
    assert!(
        summary.contains("platform's operations") && !summary.contains("capabilities of"),
        "the summary claims more than the list holds: {summary}"
    );
    let agent = w
        .ok(
            &bot(),
            "capabilities.list",
            json!({"workspace_id": "acme", "limit": 100}),
        )
        .await;
    let agent = names(&agent);
    assert!(agent.contains("record.create") && agent.contains("record.get"));
    assert!(
        !agent.contains("workspace.create")
            && !agent.contains("command.execute")
            && !agent.contains("program.activate")
    );
    // workspace.list: each caller's own.
    let listed = w.ok(&eve(), "workspace.list", json!({})).await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    assert_eq!(listed["items"][0]["workspace_id"], "other");
    // A membership counts for a credential of its own kind only.
    let ids = |page: Value| -> Vec<String> {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["workspace_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        ids(w.ok(&bot(), "workspace.list", json!({})).await),
        ["acme"]
    );
    let human_bot = Caller::human(Actor::new("bot"));
    assert!(ids(w.ok(&human_bot, "workspace.list", json!({})).await).is_empty());
    let agent_ada = Caller::agent(Actor::new("ada"), DelegatedScope::ALL);
    assert!(ids(w.ok(&agent_ada, "workspace.list", json!({})).await).is_empty());
    assert_eq!(
        ids(w.ok(&ada(), "workspace.list", json!({})).await),
        ["acme"]
    );
}

#[tokio::test]
async fn programs_are_drafted_and_activated_once_per_content() {
    let w = World::new().await;
    let mut broken = notes(3);
    broken["version"] = json!(0);
    let error = w
        .platform
        .call(
            &ada(),
            "program.draft",
            json!({"workspace_id": "acme", "package": broken, "idempotency_key": "d1"}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (error.status.as_u16(), error.code),
        (422, "PROGRAM_INVALID")
    );
    assert!(
        error
            .issues
            .iter()
            .any(|i| i.instance_path == "/package/version"),
        "{:?}",
        error.issues
    );
    let draft = w
        .ok(
            &ada(),
            "program.draft",
            json!({"workspace_id": "acme", "package": notes(2), "idempotency_key": "d2"}),
        )
        .await;
    let active = w
        .ok(
            &ada(),
            "program.activate",
            json!({"workspace_id": "acme", "draft_id": draft["draft_id"], "idempotency_key": "a1"}),
        )
        .await;
    assert_eq!(
        (active["version"].as_u64(), active["digest"].clone()),
        (Some(2), draft["digest"].clone())
    );
    // The same content again (another key): the first activation answers.
    let again = w
        .ok(
            &ada(),
            "program.activate",
            json!({"workspace_id": "acme", "package": notes(2), "idempotency_key": "a2"}),
        )
        .await;
    assert_eq!(again, active);
    // Other content under the same version: refused.
    let mut changed = notes(2);
    changed["description"] = json!("different");
    assert_eq!(
        w.refused(
            &ada(),
            "program.activate",
            json!({"workspace_id": "acme", "package": changed, "idempotency_key": "a3"})
        )
        .await,
        (409, "VERSION_CONFLICT")
    );
    let versions = w
        .ok(
            &ada(),
            "program.versions",
            json!({"workspace_id": "acme", "namespace": "notes"}),
        )
        .await;
    let numbers: Vec<u64> = versions["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2]);
    // The agent lacks programs:* in its membership.
    assert_eq!(
        w.refused(
            &bot(),
            "program.draft",
            json!({"workspace_id": "acme", "package": notes(4), "idempotency_key": "d3"})
        )
        .await,
        (403, "INSUFFICIENT_SCOPE")
    );
    assert_eq!(
        w.refused(
            &ada(),
            "program.get",
            json!({"workspace_id": "acme", "namespace": "notes", "version": 9})
        )
        .await,
        (404, "PROGRAM_NOT_FOUND")
    );
}

#[tokio::test]
async fn installed_packages_are_seen_by_every_workspace() {
    let w = World::new().await;
    let polls: Value = serde_json::from_str(rcip_platform::EXAMPLE_PACKAGES[0].1).unwrap();
    let installed = w.platform.install(&polls).await.unwrap();
    assert!(installed.workspace_id.is_none());
    assert_eq!(w.platform.install(&polls).await.unwrap(), installed);
    for (caller, workspace) in [(ada(), "acme"), (eve(), "other")] {
        let got = w
            .ok(
                &caller,
                "program.get",
                json!({"workspace_id": workspace, "namespace": "polls", "version": 1}),
            )
            .await;
        assert_eq!(got["digest"].as_str(), Some(installed.digest.as_str()));
        assert!(got.get("workspace_id").is_none());
    }
    // A workspace cannot pin other content to an installed version.
    let mut changed = polls;
    changed["description"] = json!("another");
    assert_eq!(
        w.refused(
            &ada(),
            "program.activate",
            json!({"workspace_id": "acme", "package": changed, "idempotency_key": "a1"})
        )
        .await,
        (409, "VERSION_CONFLICT")
    );
}

#[tokio::test]
async fn records_of_an_older_version_keep_working_after_a_newer_activation() {
    let w = World::new().await;
    let old = w.note(&ada(), "open", "r1").await;
    w.ok(
        &ada(),
        "program.activate",
        json!({"workspace_id": "acme", "package": notes(2), "idempotency_key": "p2"}),
    )
    .await;
    // Without a version, a new record takes the highest active one...
    let new = w
        .ok(
            &ada(),
            "record.create",
            json!({"workspace_id": "acme", "collection_id": "open", "namespace": "notes",
            "type": "note", "data": {"text": "new", "tag": "v2"}, "idempotency_key": "r2"}),
        )
        .await;
    assert_eq!(new["version"], 2);
    // ...and the v1 record is still a v1 record: its schema (no `tag`) and its commands.
    let tagged = json!({"workspace_id": "acme", "record_id": id(&old), "expected_revision": 1,
        "patch": {"set": {"tag": "x"}}, "idempotency_key": "r3"});
    assert_eq!(
        w.refused(&ada(), "record.update", tagged).await,
        (422, "SCHEMA_VIOLATION")
    );
    let closed = w
        .ok(
            &ada(),
            "command.execute",
            json!({"workspace_id": "acme", "record_id": id(&old), "command": "close",
            "expected_revision": 1, "idempotency_key": "r4"}),
        )
        .await;
    assert_eq!(closed["state"], "closed");
    assert_eq!(
        w.ok(
            &ada(),
            "record.get",
            json!({"workspace_id": "acme", "record_id": id(&old)})
        )
        .await["version"],
        1
    );
    // v1 records can still be created when asked for.
    assert_eq!(w.note(&ada(), "open", "r5").await["version"], 1);
}

#[tokio::test]
async fn another_instance_sees_activations_installations_and_cursors() {
    let directory = Arc::new(MemoryDirectory::new());
    let records = Arc::new(rcip_records::MemoryStore::new());
    let one = Platform::open(Engine::new(Arc::clone(&records)), directory.clone())
        .await
        .unwrap();
    let two = Platform::open(Engine::new(records), directory)
        .await
        .unwrap();
    let a = ada();
    one.call(
        &a,
        "workspace.create",
        json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w"}),
    )
    .await
    .unwrap();
    one.call(
        &a,
        "collection.create",
        json!({"workspace_id": "acme", "collection_id": "open", "name": "Open",
        "idempotency_key": "c"}),
    )
    .await
    .unwrap();
    one.call(
        &a,
        "program.activate",
        json!({"workspace_id": "acme", "package": notes(1), "idempotency_key": "p"}),
    )
    .await
    .unwrap();
    let create = |key: &str, namespace: &str, r#type: &str, data: Value| {
        json!({"workspace_id": "acme",
        "collection_id": "open", "namespace": namespace, "type": r#type, "data": data, "idempotency_key": key})
    };
    // Activated through `one`, runnable on `two`.
    let note = two
        .call(
            &a,
            "record.create",
            create("r1", "notes", "note", json!({"text": "hi"})),
        )
        .await
        .unwrap();
    assert_eq!(note["version"], 1);
    // Installed through `two`, runnable on `one`.
    let polls: Value = serde_json::from_str(rcip_platform::EXAMPLE_PACKAGES[0].1).unwrap();
    two.install(&polls).await.unwrap();
    let poll = one
        .call(
            &a,
            "record.create",
            create(
                "r2",
                "polls",
                "poll",
                json!({"question": "Lunch?", "options": ["yes", "no"], "vote_count": 0}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(poll["namespace"], "polls");
    // A cursor of one instance pages on the other.
    let page = one
        .call(
            &a,
            "record.search",
            json!({"workspace_id": "acme", "limit": 1}),
        )
        .await
        .unwrap();
    let cursor = page["next_cursor"].as_str().unwrap();
    let rest = two
        .call(
            &a,
            "record.search",
            json!({"workspace_id": "acme", "limit": 1, "cursor": cursor}),
        )
        .await
        .unwrap();
    assert_ne!(rest["items"][0]["id"], page["items"][0]["id"]);
}

#[tokio::test]
async fn more_refusals_of_outside_input() {
    let w = World::new().await;
    // U+0000 in a key or an id: 400 on every store (PostgreSQL's text cannot hold it).
    assert_eq!(
        w.refused(
            &ada(),
            "collection.create",
            json!({"workspace_id": "acme",
            "collection_id": "nul", "name": "N", "idempotency_key": "k\u{0}"})
        )
        .await,
        (400, "INVALID_ARGUMENTS")
    );
    assert_eq!(
        w.refused(
            &ada(),
            "record.create",
            json!({"workspace_id": "acme", "collection_id": "open",
            "namespace": "notes", "version": 1, "type": "note", "data": {"text": "x"},
            "idempotency_key": "k\u{0}"})
        )
        .await,
        (400, "INVALID_ARGUMENTS")
    );
    // A draft that does not exist, or is another workspace's: not found.
    let unknown = "00000000-0000-4000-8000-000000000000";
    assert_eq!(
        w.refused(
            &ada(),
            "program.activate",
            json!({"workspace_id": "acme",
            "draft_id": unknown, "idempotency_key": "a1"})
        )
        .await,
        (404, "DRAFT_NOT_FOUND")
    );
    let draft = w
        .ok(
            &eve(),
            "program.draft",
            json!({"workspace_id": "other", "package": notes(2),
            "idempotency_key": "d1"}),
        )
        .await;
    assert_eq!(
        w.refused(
            &ada(),
            "program.activate",
            json!({"workspace_id": "acme",
            "draft_id": draft["draft_id"], "idempotency_key": "a2"})
        )
        .await,
        (404, "DRAFT_NOT_FOUND")
    );
    // A list cursor of one workspace is no cursor of another, for the same principal.
    w.ok(
        &eve(),
        "member.add",
        json!({"workspace_id": "other", "principal_id": "ada",
        "kind": "human", "idempotency_key": "m1"}),
    )
    .await;
    let page = w
        .ok(
            &ada(),
            "member.list",
            json!({"workspace_id": "acme", "limit": 1}),
        )
        .await;
    let cursor = page["next_cursor"].as_str().unwrap();
    assert_eq!(
        w.refused(
            &ada(),
            "member.list",
            json!({"workspace_id": "other", "cursor": cursor})
        )
        .await,
        (400, "INVALID_CURSOR")
    );
}

/// A store's own error text (a database's) never reaches the caller.
#[test]
fn a_store_failure_says_nothing_of_the_store() {
    let leaked = "relation \"records\" does not exist at 10.0.0.7";
    for error in [
        PlatformError::from(rcip_records::RecordError::Store(leaked.to_owned())),
        PlatformError::store(leaked),
    ] {
        assert_eq!((error.status.as_u16(), error.code), (500, "STORE_FAILED"));
        assert!(!error.message.contains("records"), "{}", error.message);
    }
}
