//! Who is calling: extensions set on a request reach the policy and the handler (also on a
//! confirmed re-run and in preflight), a policy can deny on the principal, and nothing a
//! consumer or an observer sees ever carries them.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{EventRecorder, definition, note};
use rcip_runtime::testing::{assert_confirmation, assert_error, assert_succeeded};
use rcip_runtime::*;
use serde_json::{Value, json};

/// A principal id no other text in the fixture contains.
const SECRET_ID: &str = "principal-5ec4e7-id";

#[derive(Debug, Clone, PartialEq)]
struct Tenant(&'static str);

/// Every principal id (or `None`) the policy and the handlers saw, in order.
#[derive(Debug, Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn push(&self, place: &str, principal: Option<&Principal>) {
        let who = principal.map_or("nobody", Principal::id);
        self.0.lock().unwrap().push(format!("{place}:{who}"));
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

struct Fixture {
    runtime: Runtime,
    events: EventRecorder,
    seen: Seen,
    _guards: Vec<BindingGuard>,
}

/// Writes need the `notes:write` scope; destructive capabilities are confirmed first.
fn fixture() -> Fixture {
    let seen = Seen::default();
    let policy_seen = seen.clone();
    let events = EventRecorder::default();
    let policy = policy_fn(move |ctx| {
        policy_seen.push(
            if ctx.confirmed() {
                "policy(confirmed)"
            } else {
                "policy"
            },
            ctx.principal(),
        );
        match ctx.capability().effect {
            Effect::Read => PolicyDecision::Allow,
            _ if !ctx.principal().is_some_and(|p| p.has_scope("notes:write")) => {
                PolicyDecision::deny("Sign in with the notes:write scope.")
            }
            Effect::Destructive if !ctx.confirmed() => PolicyDecision::Confirm { reason: None },
            _ => PolicyDecision::Allow,
        }
    });
    let options = RuntimeOptions::new()
        .policy(policy)
        .on_event(events.observer());
    let runtime = Runtime::new(definition(), options).unwrap();
    let host = runtime.host();
    let mut guards = Vec::new();
    for id in ["notes.read", "notes.create", "notes.purge"] {
        let seen = seen.clone();
        let binding = Binding::new(move |input: Value, ctx: InvocationContext| {
            seen.push("handler", ctx.principal());
            let tenant = ctx.extensions().get::<Tenant>().map_or("none", |t| t.0);
            async move { Ok::<_, HandlerError>(json!({"id": tenant, "title": input["title"]})) }
        });
        guards.push(host.bind(id, binding).unwrap());
    }
    Fixture {
        runtime,
        events,
        seen,
        _guards: guards,
    }
}

fn writer() -> Principal {
    Principal::new(SECRET_ID)
        .with_name("Writer")
        .with_scope("notes:write")
}

#[tokio::test]
async fn the_principal_and_other_extensions_reach_policy_and_handler() {
    let fx = fixture();
    let request = InvocationRequest::new("notes.create", note("a"))
        .with_extension(writer())
        .with_extension(Tenant("acme"));
    let outcome = fx.runtime.client().invoke(request).await;
    assert_eq!(
        assert_succeeded(&outcome),
        &json!({"id": "acme", "title": "a"})
    );
    assert_eq!(
        fx.seen.take(),
        [
            format!("policy:{SECRET_ID}"),
            format!("handler:{SECRET_ID}")
        ]
    );
}

#[tokio::test]
async fn a_policy_denies_on_the_principal() {
    let fx = fixture();
    let client = fx.runtime.client();

    let anonymous = client
        .invoke(InvocationRequest::new("notes.create", note("a")))
        .await;
    let error = assert_error(&anonymous, ErrorCode::PolicyDenied);
    assert_eq!(error.message, "Sign in with the notes:write scope.");

    let reader = client
        .invoke(
            InvocationRequest::new("notes.create", note("a"))
                .with_extension(Principal::new("reader").with_scope("notes:read")),
        )
        .await;
    assert_error(&reader, ErrorCode::PolicyDenied);

    // Reads need no principal; the handler sees that there is none.
    let read = client
        .invoke(InvocationRequest::new("notes.read", note("a")))
        .await;
    assert_succeeded(&read);
    assert_eq!(
        fx.seen.take(),
        [
            "policy:nobody",
            "policy:reader",
            "policy:nobody",
            "handler:nobody"
        ]
    );
}

#[tokio::test]
async fn a_confirmed_rerun_keeps_the_original_requests_extensions() {
    let fx = fixture();
    let request = InvocationRequest::new("notes.purge", note("a"))
        .with_extension(writer())
        .with_extension(Tenant("acme"));
    let pending = fx.runtime.client().invoke(request).await;
    let ticket = assert_confirmation(&pending).id.clone();
    let approved = fx.runtime.host().resolve_confirmation(&ticket, true).await;
    assert_eq!(assert_succeeded(&approved)["id"], "acme");
    assert_eq!(
        fx.seen.take(),
        [
            format!("policy:{SECRET_ID}"),
            format!("policy(confirmed):{SECRET_ID}"),
            format!("handler:{SECRET_ID}"),
        ]
    );
}

#[tokio::test]
async fn preflight_policies_see_the_batch_extensions() {
    let fx = fixture();
    let client = fx.runtime.client();
    let proposals = || vec![PreflightProposal::new("notes.create", note("a"))];

    let anonymous = client
        .preflight(PreflightBatch::new(proposals()))
        .await
        .unwrap();
    assert_eq!(
        anonymous.outcomes[0].error().map(|e| e.code),
        Some(ErrorCode::PolicyDenied)
    );
    let signed_in = client
        .preflight(PreflightBatch::new(proposals()).with_extension(writer()))
        .await
        .unwrap();
    assert!(signed_in.outcomes[0].error().is_none(), "{signed_in:?}");
    assert_eq!(
        fx.seen.take(),
        ["policy:nobody".to_owned(), format!("policy:{SECRET_ID}")]
    );
}

#[tokio::test]
async fn extensions_never_reach_snapshots_outcomes_or_events() {
    let fx = fixture();
    let client = fx.runtime.client();
    let tagged = |id: &str| {
        InvocationRequest::new(id, note("a"))
            .with_extension(writer())
            .with_extension(RequestMetadata::new("mcp").with_request_id(SECRET_ID))
    };
    let mut seen_by_consumer = Vec::new();
    for id in ["notes.read", "notes.create", "notes.purge", "notes.missing"] {
        seen_by_consumer.push(serde_json::to_string(&client.invoke(tagged(id)).await).unwrap());
    }
    seen_by_consumer.push(serde_json::to_string(&*client.get_snapshot()).unwrap());
    seen_by_consumer.push(serde_json::to_string(&fx.events.events()).unwrap());
    seen_by_consumer.push(format!("{:?}", fx.events.events()));
    assert!(
        fx.events.events().len() >= 8,
        "the invocations were observed"
    );
    for text in seen_by_consumer {
        assert!(!text.contains(SECRET_ID), "leaked: {text}");
    }
}

#[test]
fn requests_carry_one_value_per_type() {
    let mut request = InvocationRequest::new("notes.read", json!({}))
        .with_extension(Principal::new("first"))
        .with_extension(Principal::new("second"));
    assert_eq!(request.extensions().len(), 1);
    assert_eq!(
        request.extensions().principal().map(Principal::id),
        Some("second")
    );
    let removed = request.extensions_mut().remove::<Principal>();
    assert_eq!(removed.as_ref().map(Principal::id), Some("second"));
    assert!(request.extensions().is_empty());
    assert_eq!(
        format!("{:?}", request.extensions()),
        "Extensions { len: 0 }"
    );
}
