//! The platform's operations as RCIP capabilities, through a runtime's client.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use rcip_relationship::{Actor, Caller, Engine, MemoryDirectory, Platform, platform_definition};
use rcip_runtime::{
    ErrorCode, InvocationRequest, OutcomeStatus, PolicyDecision, Principal, Runtime,
    RuntimeOptions, policy_fn,
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
    assert_eq!(guards.len(), rcip_relationship::operations().len());
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
