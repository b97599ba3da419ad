//! `Input::Shared`: a value the caller keeps a share of behaves exactly as `Input::Value`
//! (outcomes, issues, events, what the policy and the handler see, the depth limit), the
//! caller's value is never changed, and a preflight shows the policy the caller's own value
//! rather than a copy.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use common::{EventRecorder, definition, echo_binding};
use rcip_runtime::*;
use serde_json::{Value, json};

/// A runtime over the common catalog, `notes.read` and `notes.purge` bound, whose policy
/// records the inputs it is shown (and confirms destructive operations).
struct Fixture {
    client: Arc<dyn RcipClient>,
    events: EventRecorder,
    seen: Arc<Mutex<Vec<Arc<Value>>>>,
    _runtime: Runtime,
}

fn fixture() -> Fixture {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let events = EventRecorder::default();
    let options = RuntimeOptions::new()
        .policy(policy_fn(move |ctx| {
            record.lock().unwrap().push(ctx.input().clone());
            match ctx.capability().effect {
                Effect::Destructive => PolicyDecision::Confirm { reason: None },
                _ => PolicyDecision::Allow,
            }
        }))
        .on_event(events.observer());
    let runtime = Runtime::new(definition(), options).unwrap();
    for id in ["notes.read", "notes.purge"] {
        let binding = echo_binding(Arc::new(AtomicU64::new(0)));
        runtime.host().bind(id, binding).unwrap().keep();
    }
    Fixture {
        client: runtime.client(),
        events,
        seen,
        _runtime: runtime,
    }
}

fn inputs() -> Vec<Value> {
    vec![
        json!({"title": "Lunch?", "count": 3, "tags": ["a", "b"]}),
        json!({"title": ""}),
        json!({"title": "x", "count": 1000}),
        json!({"title": 7, "extra": true}),
        json!([1, 2, 3]),
        Value::Null,
    ]
}

fn deep(depth: usize) -> Value {
    let mut value = json!([]);
    for _ in 1..depth {
        value = json!([value]);
    }
    value
}

#[tokio::test]
async fn a_shared_input_invokes_as_a_value_does() {
    let mut values = inputs();
    values.push(deep(MAX_INPUT_DEPTH));
    values.push(deep(MAX_INPUT_DEPTH + 1));
    for value in values {
        for id in ["notes.read", "notes.purge", "app.ping", "nope.none"] {
            let (by_value, shared) = (fixture(), fixture());
            let request = |input: Input| InvocationRequest::new(id, input).with_id("inv-1");
            let expected = by_value
                .client
                .invoke(request(Input::Value(value.clone())))
                .await;
            let caller = Arc::new(value.clone());
            let outcome = shared
                .client
                .invoke(request(Input::Shared(caller.clone())))
                .await;
            // Confirmation ids are random: compare the rest.
            let strip = |outcome: &InvocationOutcome| {
                let mut json = serde_json::to_value(outcome).unwrap();
                if let Some(confirmation) = json.get_mut("confirmation") {
                    confirmation["id"] = Value::Null;
                    confirmation["expiresAt"] = Value::Null;
                }
                json
            };
            assert_eq!(strip(&outcome), strip(&expected), "{id} {value}");
            assert_eq!(*caller, value, "the caller's value is unchanged");
            assert_eq!(
                shared.events.phases(None),
                by_value.events.phases(None),
                "{id} {value}"
            );
            let seen = |f: &Fixture| {
                f.seen
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|v| Value::clone(v))
                    .collect::<Vec<_>>()
            };
            assert_eq!(seen(&shared), seen(&by_value), "{id} {value}");
        }
    }
}

#[tokio::test]
async fn a_shared_preflight_shows_the_policy_the_callers_value() {
    let f = fixture();
    let caller = Arc::new(json!({"title": "Lunch?"}));
    let ids = ["notes.read", "notes.purge", "notes.read", "app.ping"];
    let batch = PreflightBatch::new(
        ids.iter()
            .map(|id| PreflightProposal::new(*id, caller.clone()))
            .collect(),
    );
    let report = f.client.preflight(batch).await.unwrap();

    let copies = fixture();
    let batch = PreflightBatch::new(
        ids.iter()
            .map(|id| PreflightProposal::new(*id, Value::clone(&caller)))
            .collect(),
    );
    let expected = copies.client.preflight(batch).await.unwrap();
    let outcomes = |r: &PreflightReport| serde_json::to_value(&r.outcomes).unwrap();
    assert_eq!(outcomes(&report), outcomes(&expected));
    assert!(matches!(
        report.outcomes[1],
        PreflightOutcome::ConfirmationRequired { .. }
    ));

    // `app.ping` refuses the input at its schema, before the policy: three policy calls.
    let seen = f.seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert!(
        seen.iter().all(|input| Arc::ptr_eq(input, &caller)),
        "the policy sees the caller's value, not a copy"
    );
}

#[tokio::test]
async fn a_shared_input_deeper_than_the_limit_is_not_json() {
    let f = fixture();
    let batch = PreflightBatch::new(vec![PreflightProposal::new(
        "notes.read",
        Arc::new(deep(MAX_INPUT_DEPTH + 1)),
    )]);
    let report = f.client.preflight(batch).await.unwrap();
    match &report.outcomes[0] {
        PreflightOutcome::Blocked { error, .. } => {
            assert_eq!(error.code, ErrorCode::InputInvalid);
        }
        other => panic!("{other:?}"),
    }
    assert!(f.seen.lock().unwrap().is_empty());
}
