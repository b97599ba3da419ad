//! The platform's operations as RCIP capabilities, through a runtime's client.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rcip_platform::{MemoryDirectory, Platform, platform_definition};
use rcip_records::{Actor, Caller, Engine};
use rcip_relationship::{package_capabilities, parse_package};
use rcip_runtime::{
    ApplicationDefinition, ErrorCode, InvocationRequest, OutcomeStatus, PolicyDecision, Principal,
    Runtime, RuntimeOptions, ScopeDefinition, policy_fn,
};
use serde_json::{Value, json};

async fn invoke(
    runtime: &Runtime,
    who: Option<&str>,
    id: &str,
    input: Value,
) -> rcip_runtime::InvocationOutcome {
    let mut request = InvocationRequest::new(id, input);
    if let Some(who) = who {
        request = request.with_extension(Principal::new(who));
    }
    runtime.client().invoke(request).await
}

#[tokio::test]
async fn the_registry_runs_through_its_capabilities() {
    let options = RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow));
    let runtime = Runtime::new(platform_definition(), options).unwrap();
    let platform = Arc::new(
        Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
            .await
            .unwrap(),
    );
    // Every principal is a human here; a real host reads the kind and scopes from the token.
    let guards = platform
        .bind(&runtime.host(), |context| {
            context
                .principal()
                .map(|p| Caller::human(Actor::new(p.id())))
        })
        .unwrap();
    assert_eq!(guards.len(), rcip_platform::operations().len());
    let created = invoke(
        &runtime,
        Some("ada"),
        "workspace.create",
        json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "k"}),
    )
    .await;
    assert_eq!(created.status(), OutcomeStatus::Succeeded, "{created:?}");
    assert_eq!(created.output().unwrap()["workspace_id"], "acme");
    let listed = invoke(&runtime, Some("ada"), "workspace.list", json!({})).await;
    assert_eq!(listed.output().unwrap()["items"][0]["workspace_id"], "acme");
    // A stranger: the platform's 404, with its code.
    let hidden = invoke(
        &runtime,
        Some("eve"),
        "workspace.get",
        json!({"workspace_id": "acme"}),
    )
    .await;
    assert_eq!(hidden.status(), OutcomeStatus::Failed);
    let error = hidden.error().unwrap();
    assert_eq!(error.code, ErrorCode::ExecutionFailed);
    assert!(
        error.message.starts_with("WORKSPACE_NOT_FOUND"),
        "{}",
        error.message
    );
    // No principal: nothing runs.
    let anonymous = invoke(&runtime, None, "workspace.list", json!({})).await;
    assert!(
        anonymous
            .error()
            .unwrap()
            .message
            .starts_with("UNAUTHENTICATED"),
        "{anonymous:?}"
    );
    // Unknown arguments are refused by the capability's own schema already.
    let extra = invoke(
        &runtime,
        Some("ada"),
        "workspace.get",
        json!({"workspace_id": "acme", "x": 1}),
    )
    .await;
    assert_eq!(extra.status(), OutcomeStatus::Failed);
}

const NOTES: &str = r#"{"protocol": "relationship/v1", "namespace": "notes", "version": 1,
  "types": {"note": {"kind": "entity",
    "schema": {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"], "additionalProperties": false},
    "lifecycle": {"initial": "open", "states": ["open", "closed"]},
    "commands": {"close": {"input": {"type": "object", "properties": {}, "required": [],
                                     "additionalProperties": false},
                           "from": ["open"], "to": "closed"}}}}}"#;

fn human(id: &str) -> Caller {
    Caller::human(Actor::new(id))
}

/// A version activated through `program.activate` is in the directory only: the engine has
/// not seen it, so the engine cannot bind it, and the platform can.
#[tokio::test]
async fn a_program_activated_in_the_directory_only_is_bound() {
    let package = parse_package(NOTES).unwrap();
    let mut definition = ApplicationDefinition::new("notes", "Notes", "Notes of a workspace.")
        .scope(ScopeDefinition::new("notes", "Notes", "Every note."));
    definition
        .capabilities
        .extend(package_capabilities(&package));
    let options = RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow));
    let runtime = Runtime::new(definition, options).unwrap();
    let platform = Arc::new(
        Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
            .await
            .unwrap(),
    );
    let ada = human("ada");
    for (operation, arguments) in [
        (
            "workspace.create",
            json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w"}),
        ),
        (
            "collection.create",
            json!({"workspace_id": "acme", "collection_id": "inbox", "name": "Inbox",
                   "idempotency_key": "c"}),
        ),
        (
            "program.activate",
            json!({"workspace_id": "acme", "package": serde_json::from_str::<Value>(NOTES).unwrap(),
                   "idempotency_key": "p"}),
        ),
    ] {
        platform.call(&ada, operation, arguments).await.unwrap();
    }
    assert!(
        platform
            .engine()
            .workspace_package("acme", "notes", None)
            .is_none(),
        "the engine has not seen the activation"
    );
    let host = runtime.host();
    let refused = platform
        .engine()
        .bind_package(&host, "notes", None, "acme", &ada)
        .unwrap_err();
    assert!(
        matches!(refused, rcip_runtime::Error::NotRegistered(_)),
        "{refused:?}"
    );
    // Unknown to the workspace: refused with the platform's code.
    let unknown = platform
        .bind_package(&host, "notes", Some(2), "acme", &ada)
        .await
        .unwrap_err();
    assert_eq!(
        (unknown.status.as_u16(), unknown.code),
        (400, "INVALID_ARGUMENTS")
    );
    let guards = platform
        .bind_package(&host, "notes", None, "acme", &ada)
        .await
        .unwrap();
    assert_eq!(
        guards.len(),
        1 + 6 + 1,
        "1 command, 6 record operations, the feed"
    );
    let created = invoke(
        &runtime,
        None,
        "notes.note.create",
        json!({"collection_id": "inbox", "data": {"text": "hello"}, "idempotency_key": "n1"}),
    )
    .await;
    assert_eq!(created.status(), OutcomeStatus::Succeeded, "{created:?}");
    let note = created.output().unwrap().clone();
    assert_eq!(
        (note["namespace"].clone(), note["version"].clone()),
        (json!("notes"), json!(1))
    );
    let closed = invoke(
        &runtime,
        None,
        "notes.note.close",
        json!({"record_id": note["id"], "expected_revision": 1, "idempotency_key": "x1",
               "input": {}}),
    )
    .await;
    assert_eq!(closed.status(), OutcomeStatus::Succeeded, "{closed:?}");
    let feed = invoke(&runtime, None, "notes.changes", json!({})).await;
    let items = feed.output().unwrap()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 2, "{feed:?}");
    assert_eq!(items[1]["command"], "close");
    assert!(
        items[1].get("payload").is_none(),
        "the feed shows summaries"
    );
    // Every invocation is the platform's decision: a binding for a stranger runs nothing.
    drop(guards);
    let _eve = platform
        .bind_package(&host, "notes", None, "acme", &human("eve"))
        .await
        .unwrap();
    let hidden = invoke(
        &runtime,
        None,
        "notes.note.get",
        json!({"record_id": note["id"]}),
    )
    .await;
    assert_eq!(hidden.status(), OutcomeStatus::Failed);
    let message = &hidden.error().unwrap().message;
    assert!(message.starts_with("WORKSPACE_NOT_FOUND"), "{message}");
}
