//! A value input whose schema bounds how deep it can nest is checked once, at step 4, and
//! the depth limit still holds where the schema alone would let a value through: a schema
//! of 64 nested arrays around an empty object accepts a value 65 containers deep, which is
//! still not an acceptable JSON value (`INPUT_INVALID`, "must be a JSON value", no event).
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};

use rcip_runtime::*;
use serde_json::{Value, json};

/// `levels` arrays around an empty object, as a schema and as a value.
fn nested(levels: usize) -> (Value, Value) {
    let schema = json!({"type": "object", "additionalProperties": false});
    let schema = (0..levels).fold(schema, |items, _| json!({"type": "array", "items": items}));
    let value = (0..levels).fold(json!({}), |inner, _| json!([inner]));
    (schema, value)
}

struct Fixture {
    client: Arc<dyn RcipClient>,
    events: Arc<Mutex<Vec<EventPhase>>>,
    seen: Arc<Mutex<Vec<Value>>>,
    _runtime: Runtime,
}

fn fixture(levels: usize) -> Fixture {
    let (schema, _) = nested(levels);
    let definition = ApplicationDefinition::new("deep", "Deep", "Nested inputs.").capability(
        CapabilityDefinition::new("deep.echo", Effect::Read, "Echo", "Echoes its input.")
            .input_schema(schema.clone())
            .output_schema(schema),
    );
    let events: Arc<Mutex<Vec<EventPhase>>> = Arc::default();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (record_event, record_input) = (events.clone(), seen.clone());
    let options = RuntimeOptions::new()
        .policy(policy_fn(move |ctx| {
            record_input.lock().unwrap().push((**ctx.input()).clone());
            PolicyDecision::Allow
        }))
        .on_event(move |event| record_event.lock().unwrap().push(event.phase));
    let runtime = Runtime::new(definition, options).unwrap();
    let echo = Binding::new(|input: Value, _ctx| async move { Ok::<_, HandlerError>(input) });
    runtime.host().bind("deep.echo", echo).unwrap().keep();
    Fixture {
        client: runtime.client(),
        events,
        seen,
        _runtime: runtime,
    }
}

fn inputs(value: &Value) -> [Input; 3] {
    [
        Input::Value(value.clone()),
        Input::Shared(Arc::new(value.clone())),
        Input::text(value.to_string()),
    ]
}

#[tokio::test]
async fn a_value_its_bounded_schema_accepts_runs_and_the_policy_sees_it() {
    // 63 arrays around an object: 64 containers, the limit.
    let f = fixture(MAX_INPUT_DEPTH - 1);
    let (_, value) = nested(MAX_INPUT_DEPTH - 1);
    for input in inputs(&value) {
        let outcome = f
            .client
            .invoke(InvocationRequest::new("deep.echo", input))
            .await;
        assert_eq!(outcome.output(), Some(&value), "{outcome:?}");
    }
    assert_eq!(*f.seen.lock().unwrap(), vec![value; 3]);
}

#[tokio::test]
async fn a_value_deeper_than_the_limit_is_not_json_even_where_the_schema_accepts_it() {
    // 64 arrays around an object: 65 containers, which the schema accepts.
    let f = fixture(MAX_INPUT_DEPTH);
    let (_, value) = nested(MAX_INPUT_DEPTH);
    for input in inputs(&value) {
        let outcome = f
            .client
            .invoke(InvocationRequest::new("deep.echo", input))
            .await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::InputInvalid);
        assert_eq!(error.message, "The capability input must be a JSON value.");
    }
    assert!(
        f.events.lock().unwrap().is_empty(),
        "refused before any event"
    );
    assert!(f.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_value_its_bounded_schema_refuses_gets_the_full_issues() {
    let f = fixture(2);
    let outcome = f
        .client
        .invoke(InvocationRequest::new("deep.echo", json!([[{"extra": 1}]])))
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::InputInvalid);
    assert_eq!(
        error.message,
        "The capability input does not match its declared schema."
    );
    assert!(
        error
            .validation_issues
            .as_ref()
            .is_some_and(|issues| !issues.is_empty()),
        "{error:?}"
    );
    assert_eq!(
        *f.events.lock().unwrap(),
        vec![EventPhase::Requested, EventPhase::Failed]
    );
}

/// A runtime over `deep.echo` (a schema of two nested arrays around an empty object) with
/// the given policy, bound or not, available or not.
fn runtime_with(policy: Arc<dyn Policy>, bound: Option<bool>) -> Runtime {
    let (schema, _) = nested(2);
    let definition = ApplicationDefinition::new("deep", "Deep", "Nested inputs.").capability(
        CapabilityDefinition::new(
            "deep.echo",
            Effect::Destructive,
            "Echo",
            "Echoes its input.",
        )
        .input_schema(schema.clone())
        .output_schema(schema),
    );
    let runtime = Runtime::new(definition, RuntimeOptions::new().policy(policy)).unwrap();
    if let Some(available) = bound {
        let echo = Binding::new(|input: Value, _ctx| async move { Ok::<_, HandlerError>(input) })
            .with_availability(move || {
                if available {
                    Availability::available()
                } else {
                    Availability::unavailable("CLOSED", "Closed.")
                }
            });
        runtime.host().bind("deep.echo", echo).unwrap().keep();
    }
    runtime
}

#[tokio::test]
async fn a_value_checked_at_step_4_still_meets_the_binding_and_availability_checks_first() {
    let allow = policy_fn(|_| PolicyDecision::Allow);
    let (_, valid) = nested(2);
    // Valid and invalid values alike: the binding and availability checks come before the
    // input's, as in the reference.
    for value in [valid, json!([[{"extra": 1}]])] {
        let unbound = runtime_with(allow.clone(), None);
        let outcome = unbound
            .client()
            .invoke(InvocationRequest::new("deep.echo", value.clone()))
            .await;
        assert_eq!(outcome.error().unwrap().code, ErrorCode::CapabilityUnbound);
        let closed = runtime_with(allow.clone(), Some(false));
        let outcome = closed
            .client()
            .invoke(InvocationRequest::new("deep.echo", value))
            .await;
        let error = outcome.error().unwrap();
        assert_eq!(error.code, ErrorCode::CapabilityUnavailable);
        assert_eq!(error.message, "Closed.");
    }
}

#[tokio::test]
async fn a_value_checked_at_step_4_is_confirmed_and_run_with_the_same_input() {
    // The default policy confirms destructive operations.
    let runtime = runtime_with(Arc::new(DefaultPolicy), Some(true));
    let (_, value) = nested(2);
    for input in inputs(&value) {
        let outcome = runtime
            .client()
            .invoke(InvocationRequest::new("deep.echo", input))
            .await;
        let confirmation = outcome.confirmation().expect("a confirmation").id.clone();
        let outcome = runtime
            .host()
            .resolve_confirmation(&confirmation, true)
            .await;
        assert_eq!(outcome.output(), Some(&value), "{outcome:?}");
    }
}
