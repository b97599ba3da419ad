//! Conformance of `client.invoke` with the reference digest: every error code of section 4.3
//! that an invocation can produce (with its status and exact message), the event sequences
//! of section 3.8, the revision rules of section 2.2, the host errors of sections 3.2/3.3 and
//! the handler context of section 4.1 step 10.
//!
//! Panic containment lives in `panic_containment.rs`, concurrency in `concurrency.rs`.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use rcip_runtime::*;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

// ----- fixtures ---------------------------------------------------------------------------

type Ev = (EventPhase, Option<ErrorCode>);
const REQUESTED: Ev = (EventPhase::Requested, None);
const STARTED: Ev = (EventPhase::Started, None);
const SUCCEEDED: Ev = (EventPhase::Succeeded, None);
const CONFIRMATION_REQUESTED: Ev = (EventPhase::ConfirmationRequested, None);

fn failed(code: ErrorCode) -> Ev {
    (EventPhase::Failed, Some(code))
}

fn denied(code: ErrorCode) -> Ev {
    (EventPhase::Denied, Some(code))
}

/// Fails the test instead of hanging it when something never finishes.
async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(5), future)
        .await
        .expect("did not finish in time")
}

/// A runtime over the shared catalog, with an event recorder and a manual clock at 1000 ms.
struct Harness {
    host: Host,
    client: Arc<dyn RcipClient>,
    events: EventRecorder,
    clock: Arc<ManualClock>,
}

impl Harness {
    fn new(policy: Arc<dyn Policy>) -> Self {
        Self::with_options(RuntimeOptions::default().policy(policy))
    }

    fn with_options(options: RuntimeOptions) -> Self {
        let events = EventRecorder::default();
        let clock = ManualClock::at(1_000);
        let runtime = Runtime::new(
            definition(),
            options.on_event(events.observer()).clock(clock.clone()),
        )
        .unwrap();
        Harness {
            host: runtime.host(),
            client: runtime.client(),
            events,
            clock,
        }
    }

    fn revision(&self) -> u64 {
        self.client.get_snapshot().revision
    }

    async fn invoke(
        &self,
        id: &str,
        capability: &str,
        input: impl Into<Input>,
    ) -> InvocationOutcome {
        self.client
            .invoke(InvocationRequest::new(capability, input).with_id(id))
            .await
    }

    fn spawn(&self, request: InvocationRequest) -> JoinHandle<InvocationOutcome> {
        tokio::spawn(self.client.invoke(request))
    }
}

fn request(id: &str, capability: &str, input: impl Into<Input>) -> InvocationRequest {
    InvocationRequest::new(capability, input).with_id(id)
}

/// Lets a test hold host code (an async policy or a handler) at a known point.
#[derive(Debug, Default)]
struct Gate {
    entered: Notify,
    release: Notify,
    open: AtomicBool,
}

impl Gate {
    fn closed() -> Arc<Self> {
        Arc::new(Gate::default())
    }

    async fn pass(&self) {
        self.entered.notify_one();
        if !self.open.load(Ordering::SeqCst) {
            self.release.notified().await;
        }
    }

    async fn wait_entered(&self) {
        within(self.entered.notified()).await;
    }

    fn release(&self) {
        self.release.notify_one();
    }

    fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

/// An async policy that waits at the gate, then answers `decision`.
fn gated_policy(gate: Arc<Gate>, decision: PolicyDecision) -> Arc<dyn Policy> {
    async_policy_fn(move |_ctx| {
        let gate = gate.clone();
        let decision = decision.clone();
        async move {
            gate.pass().await;
            Ok::<_, PolicyError>(decision)
        }
    })
}

/// An echo handler that waits at the gate before answering.
fn gated_binding(gate: Arc<Gate>, calls: Arc<AtomicU64>) -> Binding {
    Binding::new(move |input: Value, _ctx: InvocationContext| {
        calls.fetch_add(1, Ordering::SeqCst);
        let gate = gate.clone();
        async move {
            gate.pass().await;
            Ok::<_, HandlerError>(json!({"id": "n1", "title": input["title"]}))
        }
    })
}

fn counter() -> Arc<AtomicU64> {
    Arc::new(AtomicU64::new(0))
}

fn count(calls: &AtomicU64) -> u64 {
    calls.load(Ordering::SeqCst)
}

/// Asserts the exact wire JSON of a failed/denied outcome without validation issues.
#[track_caller]
fn assert_error(
    outcome: &InvocationOutcome,
    invocation_id: &str,
    capability_id: &str,
    status: &str,
    code: &str,
    message: &str,
) {
    assert_eq!(
        serde_json::to_value(outcome).unwrap(),
        json!({
            "status": status,
            "invocationId": invocation_id,
            "capabilityId": capability_id,
            "error": {"code": code, "message": message}
        }),
        "{outcome:?}"
    );
}

/// Asserts a failed outcome with validation issues (compared as a set of
/// `(instancePath, keyword, message)`).
#[track_caller]
fn assert_issues(
    outcome: &InvocationOutcome,
    invocation_id: &str,
    capability_id: &str,
    code: ErrorCode,
    message: &str,
    expected: &[(&str, &str, &str)],
) {
    assert_eq!(outcome.status(), OutcomeStatus::Failed, "{outcome:?}");
    assert_eq!(outcome.invocation_id(), invocation_id);
    assert_eq!(outcome.capability_id(), capability_id);
    let error = outcome.error().unwrap();
    assert_eq!(error.code, code);
    assert_eq!(error.message, message);
    let mut actual: Vec<(String, String, String)> = error
        .validation_issues
        .as_ref()
        .expect("validationIssues present")
        .iter()
        .map(|i| {
            (
                i.instance_path.clone(),
                i.keyword.clone(),
                i.message.clone(),
            )
        })
        .collect();
    let mut expected: Vec<(String, String, String)> = expected
        .iter()
        .map(|(p, k, m)| ((*p).to_owned(), (*k).to_owned(), (*m).to_owned()))
        .collect();
    actual.sort();
    expected.sort();
    assert_eq!(actual, expected);
    // On the wire the issues use the reference's field names.
    let wire = serde_json::to_value(outcome).unwrap();
    let first = &wire["error"]["validationIssues"][0];
    assert!(first["instancePath"].is_string() && first["keyword"].is_string());
}

// ----- 4.3 CAPABILITY_NOT_FOUND ------------------------------------------------------------

/// 4.1 step 6a / 4.3: an id outside the catalog is `failed / CAPABILITY_NOT_FOUND`;
/// events `requested, failed(CAPABILITY_NOT_FOUND)` (3.8).
#[tokio::test]
async fn not_found_for_unknown_capability() {
    let h = Harness::new(allow_all());
    let outcome = h.invoke("inv-1", "notes.missing", json!({})).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.missing",
        "failed",
        "CAPABILITY_NOT_FOUND",
        "The requested capability is not part of this application.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::CapabilityNotFound)]
    );
}

// ----- 4.3 CAPABILITY_UNBOUND ---------------------------------------------------------------

/// 4.1 step 6b: a declared capability without a live binding is `CAPABILITY_UNBOUND`.
#[tokio::test]
async fn unbound_without_binding() {
    let h = Harness::new(allow_all());
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNBOUND",
        "The requested capability has no live application binding.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::CapabilityUnbound)]
    );
}

/// 4.1 step 6h: the binding dropped while an async policy is pending is
/// `CAPABILITY_UNBOUND` "The capability binding changed during policy evaluation."; the
/// handler never runs.
#[tokio::test]
async fn unbound_when_binding_dropped_during_async_policy() {
    let gate = Gate::closed();
    let h = Harness::new(gated_policy(gate.clone(), PolicyDecision::Allow));
    let calls = counter();
    let guard = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let pending = h.spawn(request("inv-1", "notes.read", note("a")));
    gate.wait_entered().await;
    drop(guard);
    gate.release();
    let outcome = within(pending).await.unwrap();
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNBOUND",
        "The capability binding changed during policy evaluation.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::CapabilityUnbound)]
    );
    assert_eq!(count(&calls), 0);
}

/// 3.2 / 4.1 step 6h: a re-bind during an async policy is a new binding identity: the
/// pending invocation fails with "The capability binding changed during policy evaluation."
/// and neither handler runs.
#[tokio::test]
async fn unbound_when_binding_replaced_during_async_policy() {
    let gate = Gate::closed();
    let h = Harness::new(gated_policy(gate.clone(), PolicyDecision::Allow));
    let old_calls = counter();
    let new_calls = counter();
    let guard = h
        .host
        .bind("notes.read", echo_binding(old_calls.clone()))
        .unwrap();
    let pending = h.spawn(request("inv-1", "notes.read", note("a")));
    gate.wait_entered().await;
    assert!(guard.unbind());
    let _new = h
        .host
        .bind("notes.read", echo_binding(new_calls.clone()))
        .unwrap();
    gate.release();
    let outcome = within(pending).await.unwrap();
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNBOUND",
        "The capability binding changed during policy evaluation.",
    );
    assert_eq!((count(&old_calls), count(&new_calls)), (0, 0));

    // The new binding serves the next invocation.
    gate.open();
    let next = h.invoke("inv-2", "notes.read", note("b")).await;
    assert_eq!(next.status(), OutcomeStatus::Succeeded);
    assert_eq!(count(&new_calls), 1);
}

// ----- 4.3 CAPABILITY_UNAVAILABLE -------------------------------------------------------------

/// 4.1 step 6c: the host's availability `reason` is passed through verbatim.
#[tokio::test]
async fn unavailable_passes_host_reason_through() {
    let h = Harness::new(allow_all());
    let calls = counter();
    let _g = h
        .host
        .bind(
            "notes.share",
            echo_binding(calls.clone()).with_availability(|| {
                Availability::unavailable(
                    "NO_CREDENTIALS",
                    "Notification provider credentials are not configured.",
                )
            }),
        )
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.share", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.share",
        "failed",
        "CAPABILITY_UNAVAILABLE",
        "Notification provider credentials are not configured.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::CapabilityUnavailable)]
    );
    assert_eq!(count(&calls), 0);
}

/// 4.1 step 6c: without a reason the message is "The requested capability is not available."
#[tokio::test]
async fn unavailable_default_message_without_reason() {
    let h = Harness::new(allow_all());
    let _g = h
        .host
        .bind(
            "notes.read",
            echo_binding(counter()).with_availability(|| Availability {
                available: false,
                reason_code: Some("PAUSED".into()),
                reason: None,
            }),
        )
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNAVAILABLE",
        "The requested capability is not available.",
    );
}

/// 4.1 step 6h: availability turning false while an async policy is pending is
/// "The capability is no longer available." (the generic text, not the host reason).
#[tokio::test]
async fn unavailable_when_availability_flips_during_async_policy() {
    let gate = Gate::closed();
    let h = Harness::new(gated_policy(gate.clone(), PolicyDecision::Allow));
    let available = Arc::new(AtomicBool::new(true));
    let flag = available.clone();
    let calls = counter();
    let _g = h
        .host
        .bind(
            "notes.read",
            echo_binding(calls.clone()).with_availability(move || {
                if flag.load(Ordering::SeqCst) {
                    Availability::available()
                } else {
                    Availability::unavailable("GONE", "Host reason that is not used here.")
                }
            }),
        )
        .unwrap();
    let pending = h.spawn(request("inv-1", "notes.read", note("a")));
    gate.wait_entered().await;
    available.store(false, Ordering::SeqCst);
    gate.release();
    let outcome = within(pending).await.unwrap();
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNAVAILABLE",
        "The capability is no longer available.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::CapabilityUnavailable)]
    );
    assert_eq!(count(&calls), 0);
}

/// 2.1 / 4.1 step 6c: a panicking availability check reads as
/// `AVAILABILITY_CHECK_FAILED`, so the invocation fails with
/// "The application could not determine current availability."
#[tokio::test]
async fn unavailable_when_availability_check_panics() {
    let h = Harness::new(allow_all());
    let calls = counter();
    let _g = h
        .host
        .bind(
            "notes.read",
            echo_binding(calls.clone()).with_availability(|| panic!("availability check exploded")),
        )
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNAVAILABLE",
        "The application could not determine current availability.",
    );
    assert_eq!(count(&calls), 0);
    let snapshot = h.client.get_snapshot();
    let entry = snapshot
        .capabilities
        .iter()
        .find(|c| &*c.id == "notes.read")
        .unwrap();
    assert_eq!(entry.availability, Some(Availability::check_failed()));
    assert_eq!(
        entry.availability.as_ref().unwrap().reason_code.as_deref(),
        Some("AVAILABILITY_CHECK_FAILED")
    );
    assert!(entry.bound && !entry.available);
}

// ----- 4.3 INPUT_INVALID ---------------------------------------------------------------------

/// 4.1 step 6d / 1.7.8: schema failures carry every issue, with Ajv's instancePath, keyword
/// and message; events `requested, failed(INPUT_INVALID)`; no handler call.
#[tokio::test]
async fn input_invalid_schema_lists_validation_issues() {
    let h = Harness::new(allow_all());
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let message = "The capability input does not match its declared schema.";

    let outcome = h
        .invoke("inv-1", "notes.read", json!({"count": 1, "color": "red"}))
        .await;
    assert_issues(
        &outcome,
        "inv-1",
        "notes.read",
        ErrorCode::InputInvalid,
        message,
        &[
            ("", "required", "must have required property 'title'"),
            (
                "",
                "additionalProperties",
                "must NOT have additional properties",
            ),
        ],
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::InputInvalid)]
    );

    let nested = h
        .invoke("inv-2", "notes.read", json!({"title": 5, "tags": ["a", 3]}))
        .await;
    assert_issues(
        &nested,
        "inv-2",
        "notes.read",
        ErrorCode::InputInvalid,
        message,
        &[
            ("/title", "type", "must be string"),
            ("/tags/1", "type", "must be string"),
        ],
    );
    assert_eq!(count(&calls), 0);
}

/// 4.1 step 4: raw text that is not JSON is "The capability input must be a JSON value.",
/// with no `validationIssues` and no events at all (3.8).
#[tokio::test]
async fn input_invalid_non_json_text_has_no_issues_and_no_events() {
    let h = Harness::new(allow_all());
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let revision = h.revision();
    let outcome = h.invoke("inv-1", "notes.read", Input::text("{bad")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "INPUT_INVALID",
        "The capability input must be a JSON value.",
    );
    assert!(
        !serde_json::to_string(&outcome)
            .unwrap()
            .contains("validationIssues")
    );
    assert!(h.events.phases(None).is_empty());
    assert_eq!(count(&calls), 0);
    assert_eq!(h.revision(), revision);

    // The id was released: valid text with the same id runs.
    let ok = h
        .invoke("inv-1", "notes.read", Input::text(r#"{"title": "ok"}"#))
        .await;
    assert_eq!(ok.output(), Some(&json!({"id": "n1", "title": "ok"})));
}

fn nested_arrays(depth: usize) -> Value {
    let mut value = json!([]);
    for _ in 1..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// 1.6 / 4.1 step 4: input nested deeper than `MAX_INPUT_DEPTH` (as a value or as text)
/// or larger than `max_input_bytes` is "The capability input must be a JSON value.", no
/// events; input exactly `MAX_INPUT_DEPTH` deep is JSON and reaches the schema check.
#[tokio::test]
async fn input_invalid_too_deep_or_too_large() {
    let h = Harness::with_options(
        RuntimeOptions::default()
            .policy(allow_all())
            .max_input_bytes(4096),
    );
    let _g = h.host.bind("app.ping", echo_binding(counter())).unwrap();
    let not_json = "The capability input must be a JSON value.";

    let deep = nested_arrays(MAX_INPUT_DEPTH + 1);
    let outcome = h.invoke("deep-value", "app.ping", deep.clone()).await;
    assert_error(
        &outcome,
        "deep-value",
        "app.ping",
        "failed",
        "INPUT_INVALID",
        not_json,
    );

    let deep_text = deep.to_string();
    let outcome = h
        .invoke("deep-text", "app.ping", Input::text(deep_text))
        .await;
    assert_error(
        &outcome,
        "deep-text",
        "app.ping",
        "failed",
        "INPUT_INVALID",
        not_json,
    );

    let large = Input::text(format!("\"{}\"", "x".repeat(5000)));
    let outcome = h.invoke("large", "app.ping", large).await;
    assert_error(
        &outcome,
        "large",
        "app.ping",
        "failed",
        "INPUT_INVALID",
        not_json,
    );
    assert!(h.events.phases(None).is_empty());

    // At the limit it is a JSON value, so the schema (an object) rejects it instead.
    let at_limit = h
        .invoke("at-limit", "app.ping", nested_arrays(MAX_INPUT_DEPTH))
        .await;
    assert_issues(
        &at_limit,
        "at-limit",
        "app.ping",
        ErrorCode::InputInvalid,
        "The capability input does not match its declared schema.",
        &[("", "type", "must be object")],
    );
}

/// 4.1 step 4: the JSON check runs before the lookup, so non-JSON input to an unknown
/// capability is `INPUT_INVALID`, not `CAPABILITY_NOT_FOUND` (and emits nothing).
#[tokio::test]
async fn input_invalid_precedes_not_found() {
    let h = Harness::new(allow_all());
    let outcome = h.invoke("inv-1", "nothing.here", Input::text("{bad")).await;
    assert_error(
        &outcome,
        "inv-1",
        "nothing.here",
        "failed",
        "INPUT_INVALID",
        "The capability input must be a JSON value.",
    );
    assert!(h.events.phases(None).is_empty());
}

// ----- 4.3 POLICY_DENIED ---------------------------------------------------------------------

/// 3.5: `deny` with a reason shows the reason; without one, "The host application denied
/// this operation."; status `denied`, events `requested, denied(POLICY_DENIED)`.
#[tokio::test]
async fn policy_denied_with_and_without_reason() {
    let h = Harness::new(policy_fn(|ctx| {
        if ctx.input()["title"] == "reasoned" {
            PolicyDecision::deny("Only the owner may read this note.")
        } else {
            PolicyDecision::Deny { reason: None }
        }
    }));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();

    let with_reason = h.invoke("inv-1", "notes.read", note("reasoned")).await;
    assert_error(
        &with_reason,
        "inv-1",
        "notes.read",
        "denied",
        "POLICY_DENIED",
        "Only the owner may read this note.",
    );
    let without = h.invoke("inv-2", "notes.read", note("plain")).await;
    assert_error(
        &without,
        "inv-2",
        "notes.read",
        "denied",
        "POLICY_DENIED",
        "The host application denied this operation.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, denied(ErrorCode::PolicyDenied)]
    );
    assert_eq!(
        h.events.phases(Some("inv-2")),
        vec![REQUESTED, denied(ErrorCode::PolicyDenied)]
    );
    assert_eq!(count(&calls), 0);
}

/// 3.5: the default policy denies writes and external operations without a reason.
#[tokio::test]
async fn default_policy_denies_write_and_external() {
    let h = Harness::with_options(RuntimeOptions::default());
    let _a = h
        .host
        .bind("notes.create", echo_binding(counter()))
        .unwrap();
    let _b = h.host.bind("notes.share", echo_binding(counter())).unwrap();
    for (id, capability) in [("w", "notes.create"), ("x", "notes.share")] {
        let outcome = h.invoke(id, capability, note("a")).await;
        assert_error(
            &outcome,
            id,
            capability,
            "denied",
            "POLICY_DENIED",
            "The host application denied this operation.",
        );
    }
}

/// 4.1 step 6h / 3.3: a context change while an async policy is pending is
/// `denied / POLICY_DENIED` "Application context changed. Request the operation again."
#[tokio::test]
async fn policy_denied_when_context_changes_during_async_policy() {
    let gate = Gate::closed();
    let h = Harness::new(gated_policy(gate.clone(), PolicyDecision::Allow));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let pending = h.spawn(request("inv-1", "notes.read", note("a")));
    gate.wait_entered().await;
    h.host
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    gate.release();
    let outcome = within(pending).await.unwrap();
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "denied",
        "POLICY_DENIED",
        "Application context changed. Request the operation again.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, denied(ErrorCode::PolicyDenied)]
    );
    assert_eq!(count(&calls), 0);
}

/// 3.3: context equality is by value; setting an identical context during the policy does
/// not invalidate the invocation (though it bumps the revision).
#[tokio::test]
async fn identical_context_during_async_policy_does_not_invalidate() {
    let gate = Gate::closed();
    let h = Harness::new(gated_policy(gate.clone(), PolicyDecision::Allow));
    let _g = h.host.bind("notes.read", echo_binding(counter())).unwrap();
    let context = SemanticContext::active(["notes", "archive"]).primary("notes");
    h.host.set_context(context.clone()).unwrap();
    let pending = h.spawn(request("inv-1", "notes.read", note("a")));
    gate.wait_entered().await;
    let revision = h.revision();
    h.host.set_context(context).unwrap();
    assert_eq!(
        h.revision(),
        revision + 1,
        "an identical context still bumps the revision"
    );
    gate.release();
    let outcome = within(pending).await.unwrap();
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
}

/// 3.5 / 4.1 step 8: a policy that answers `confirm` again on the confirmed re-run is
/// `denied / POLICY_DENIED` "The host policy did not allow the confirmed operation.";
/// events: `requested, confirmation_requested`, then `requested, denied`.
#[tokio::test]
async fn policy_denied_when_confirmed_rerun_confirms_again() {
    let h = Harness::new(policy_fn(|_| PolicyDecision::Confirm { reason: None }));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.create", echo_binding(calls.clone()))
        .unwrap();
    let revision = h.revision();

    let first = h.invoke("inv-1", "notes.create", note("a")).await;
    assert_eq!(first.status(), OutcomeStatus::ConfirmationRequired);
    let ticket = first.confirmation().unwrap().id.clone();
    let outcome = h.host.resolve_confirmation(&ticket, true).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.create",
        "denied",
        "POLICY_DENIED",
        "The host policy did not allow the confirmed operation.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![
            REQUESTED,
            CONFIRMATION_REQUESTED,
            REQUESTED,
            denied(ErrorCode::PolicyDenied)
        ]
    );
    assert_eq!(count(&calls), 0);
    assert_eq!(h.revision(), revision);
}

// ----- 4.3 POLICY_EVALUATION_FAILED -----------------------------------------------------------

const POLICY_SECRET: &str = "policy-internal-secret-7f3a";

struct FailingPolicy;

impl Policy for FailingPolicy {
    fn evaluate(&self, _context: PolicyContext) -> PolicyVerdict {
        PolicyVerdict::Ready(Err(POLICY_SECRET.into()))
    }
}

/// 3.5 / 4.1 step 6g: a synchronous policy error is `failed / POLICY_EVALUATION_FAILED`
/// "The host application could not evaluate this operation safely."; its text stays out.
#[tokio::test]
async fn policy_evaluation_failed_sync_error() {
    let h = Harness::new(Arc::new(FailingPolicy));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "POLICY_EVALUATION_FAILED",
        "The host application could not evaluate this operation safely.",
    );
    assert!(
        !serde_json::to_string(&outcome)
            .unwrap()
            .contains(POLICY_SECRET)
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::PolicyEvaluationFailed)]
    );
    assert_eq!(count(&calls), 0);
}

/// 3.5: an async policy whose future resolves to an error is `POLICY_EVALUATION_FAILED`.
#[tokio::test]
async fn policy_evaluation_failed_async_error() {
    let h = Harness::new(async_policy_fn(|_ctx| async {
        tokio::task::yield_now().await;
        Err::<PolicyDecision, PolicyError>(POLICY_SECRET.into())
    }));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "POLICY_EVALUATION_FAILED",
        "The host application could not evaluate this operation safely.",
    );
    assert!(
        !serde_json::to_string(&outcome)
            .unwrap()
            .contains(POLICY_SECRET)
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::PolicyEvaluationFailed)]
    );
    assert_eq!(count(&calls), 0);
}

// ----- 4.3 EXECUTION_ABORTED ------------------------------------------------------------------

/// 4.5: a pre-cancelled token is `failed / EXECUTION_ABORTED` after the schema check (the
/// policy and handler never run); earlier checks win over it.
#[tokio::test]
async fn execution_aborted_for_pre_cancelled_token() {
    let policy_calls = counter();
    let seen = policy_calls.clone();
    let h = Harness::new(policy_fn(move |_| {
        seen.fetch_add(1, Ordering::SeqCst);
        PolicyDecision::Allow
    }));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let token = CancellationToken::new();
    token.cancel();

    let outcome = h
        .client
        .invoke(request("inv-1", "notes.read", note("a")).with_cancellation(token.clone()))
        .await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "EXECUTION_ABORTED",
        "The capability invocation was cancelled.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::ExecutionAborted)]
    );
    assert_eq!((count(&calls), count(&policy_calls)), (0, 0));

    // Schema failures are reported in preference to the abort.
    let invalid = h
        .client
        .invoke(request("inv-2", "notes.read", json!({})).with_cancellation(token))
        .await;
    assert_eq!(invalid.error_code(), Some(ErrorCode::InputInvalid));
}

/// 3.5 / 4.4 / 4.5: cancelling during a pending async policy returns at once (without the
/// policy settling), releases the id for an immediate re-invoke, and the late policy result
/// never runs the handler.
#[tokio::test(start_paused = true)]
async fn execution_aborted_during_async_policy_releases_id() {
    let gate = Gate::closed();
    let h = Harness::new(gated_policy(gate.clone(), PolicyDecision::Allow));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let token = CancellationToken::new();
    let pending =
        h.spawn(request("inv-1", "notes.read", note("a")).with_cancellation(token.clone()));
    gate.wait_entered().await;
    token.cancel();
    // The gate is still closed: the outcome comes from the cancellation alone.
    let outcome = within(pending).await.unwrap();
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "EXECUTION_ABORTED",
        "The capability invocation was cancelled.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, failed(ErrorCode::ExecutionAborted)]
    );

    gate.open();
    gate.release();
    let again = h.invoke("inv-1", "notes.read", note("b")).await;
    assert_eq!(again.output(), Some(&json!({"id": "n1", "title": "b"})));
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(count(&calls), 1);
}

/// 4.1 step 11: a handler returning `HandlerError::aborted()` (like a JS `AbortError`) is
/// `EXECUTION_ABORTED`, after `started`.
#[tokio::test]
async fn execution_aborted_when_handler_reports_abort() {
    let h = Harness::new(allow_all());
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Err::<Value, _>(HandlerError::aborted())
            }),
        )
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "EXECUTION_ABORTED",
        "The capability invocation was cancelled.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::ExecutionAborted)]
    );
}

/// 4.1 step 11 / 4.5: a handler that fails after its token was cancelled is
/// `EXECUTION_ABORTED`; one that still succeeds after the cancel is `succeeded`.
#[tokio::test]
async fn execution_aborted_when_handler_fails_after_cancel() {
    let h = Harness::new(allow_all());
    // The caller's token of the current invocation; the handler sees only its read side,
    // so it cancels through this (as the caller would, mid-run).
    let current = Arc::new(std::sync::Mutex::new(CancellationToken::new()));
    let caller = current.clone();
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::new(move |input: Value, ctx: InvocationContext| {
                let caller = caller.clone();
                async move {
                    caller.lock().unwrap().cancel();
                    assert!(ctx.cancellation().is_cancelled());
                    if input["title"] == "fail" {
                        Err(HandlerError::failed("gave up after cancel"))
                    } else {
                        Ok(json!({"id": "n1", "title": input["title"]}))
                    }
                }
            }),
        )
        .unwrap();
    let token = current.lock().unwrap().clone();
    let outcome = h
        .client
        .invoke(request("inv-1", "notes.read", note("fail")).with_cancellation(token.clone()))
        .await;
    assert!(
        token.is_cancelled(),
        "the handler ran and the caller cancelled"
    );
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "EXECUTION_ABORTED",
        "The capability invocation was cancelled.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::ExecutionAborted)]
    );

    let fresh = CancellationToken::new();
    *current.lock().unwrap() = fresh.clone();
    let completed = h
        .client
        .invoke(request("inv-2", "notes.read", note("done")).with_cancellation(fresh.clone()))
        .await;
    assert!(fresh.is_cancelled());
    assert_eq!(
        completed.output(),
        Some(&json!({"id": "n1", "title": "done"}))
    );
}

// ----- 4.3 EXECUTION_FAILED -------------------------------------------------------------------

/// Beyond the reference: a handler may fail *publicly*; the code stays `EXECUTION_FAILED`,
/// the message and issues are the handler's.
#[tokio::test]
async fn a_public_handler_failure_keeps_its_message_and_issues() {
    let h = Harness::new(allow_all());
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Err::<Value, _>(HandlerError::public(
                    "SCHEMA_VIOLATION",
                    "the data does not match",
                    vec![rcip_runtime::rcip_core::ValidationIssue::new(
                        "/title",
                        "maxLength",
                        "must NOT have more than 10 characters",
                    )],
                ))
            }),
        )
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["status"], "failed");
    assert_eq!(json["error"]["code"], "EXECUTION_FAILED");
    assert_eq!(
        json["error"]["message"],
        "SCHEMA_VIOLATION: the data does not match"
    );
    assert_eq!(
        json["error"]["validationIssues"][0]["instancePath"],
        "/title"
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::ExecutionFailed)]
    );
}

/// 4.1 step 11 / 4.7: a failing handler is `EXECUTION_FAILED` "The application could not
/// complete the capability."; its error text appears nowhere in the outcome or events.
#[tokio::test]
async fn execution_failed_masks_handler_error() {
    const SECRET: &str = "db-password=hunter2-at-10.0.0.5";
    let h = Harness::new(allow_all());
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Err::<Value, _>(HandlerError::failed(SECRET))
            }),
        )
        .unwrap();
    let revision = h.revision();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "EXECUTION_FAILED",
        "The application could not complete the capability.",
    );
    assert!(!serde_json::to_string(&outcome).unwrap().contains(SECRET));
    assert!(!format!("{outcome:?}").contains(SECRET));
    let events = serde_json::to_string(&h.events.events()).unwrap();
    assert!(!events.contains(SECRET));
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::ExecutionFailed)]
    );
    assert_eq!(h.revision(), revision);
}

/// 4.1 step 10: a typed handler whose input type disagrees with the schema is a host
/// defect reported as `EXECUTION_FAILED`, never a crash.
#[tokio::test]
async fn execution_failed_when_typed_input_does_not_deserialize() {
    #[derive(serde::Deserialize)]
    struct NeedsOther {
        #[allow(dead_code)]
        other: String,
    }
    let h = Harness::new(allow_all());
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::typed(|_input: NeedsOther, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!({"id": "n1", "title": "t"}))
            }),
        )
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "EXECUTION_FAILED",
        "The application could not complete the capability.",
    );
}

// ----- 4.3 OUTPUT_INVALID ---------------------------------------------------------------------

/// 4.1 step 12: output failing its schema is `OUTPUT_INVALID` with validation issues,
/// after `started`; no refresh.
#[tokio::test]
async fn output_invalid_schema_lists_validation_issues() {
    let h = Harness::new(allow_all());
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!({"id": 1}))
            }),
        )
        .unwrap();
    let revision = h.revision();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_issues(
        &outcome,
        "inv-1",
        "notes.read",
        ErrorCode::OutputInvalid,
        "The capability output does not match its declared schema.",
        &[
            ("/id", "type", "must be string"),
            ("", "required", "must have required property 'title'"),
        ],
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::OutputInvalid)]
    );
    assert_eq!(h.revision(), revision);
}

/// 4.1 step 12: a typed output that cannot serialize to JSON (a map with tuple keys) is
/// `OUTPUT_INVALID` "The capability output must be a JSON value.", without issues.
#[tokio::test]
async fn output_invalid_when_typed_output_is_not_json() {
    let h = Harness::new(allow_all());
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::typed(|_input: Value, _ctx: InvocationContext| async {
                let mut map: HashMap<(u8, u8), u8> = HashMap::new();
                map.insert((1, 2), 3);
                Ok::<_, HandlerError>(map)
            }),
        )
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "OUTPUT_INVALID",
        "The capability output must be a JSON value.",
    );
    assert_eq!(
        h.events.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::OutputInvalid)]
    );
}

// ----- 4.3 INVOCATION_ALREADY_ACTIVE ----------------------------------------------------------

/// 4.4: an id reserved by an invocation waiting for its async policy is
/// `INVOCATION_ALREADY_ACTIVE` for any other request (no events for it); the first proceeds
/// and its handler runs exactly once.
#[tokio::test]
async fn already_active_while_policy_pending() {
    let gate = Gate::closed();
    let h = Harness::new(gated_policy(gate.clone(), PolicyDecision::Allow));
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let first = h.spawn(request("dup", "notes.read", note("first")));
    gate.wait_entered().await;
    let before = h.events.phases(None);

    let second = within(h.invoke("dup", "app.ping", json!({}))).await;
    assert_error(
        &second,
        "dup",
        "app.ping",
        "failed",
        "INVOCATION_ALREADY_ACTIVE",
        "An invocation with this id is already active.",
    );
    assert_eq!(
        h.events.phases(None),
        before,
        "no events for the rejected one"
    );

    gate.release();
    let first = within(first).await.unwrap();
    assert_eq!(first.output(), Some(&json!({"id": "n1", "title": "first"})));
    assert_eq!(count(&calls), 1);
    assert_eq!(
        h.events.phases(Some("dup")),
        vec![REQUESTED, STARTED, SUCCEEDED]
    );
}

/// 4.4: an id reserved by a running handler is `INVOCATION_ALREADY_ACTIVE`; the handler
/// runs once; after completion the id is free again (not an idempotency key).
#[tokio::test]
async fn already_active_while_handler_running() {
    let gate = Gate::closed();
    let h = Harness::new(allow_all());
    let calls = counter();
    let _g = h
        .host
        .bind("notes.read", gated_binding(gate.clone(), calls.clone()))
        .unwrap();
    let first = h.spawn(request("dup", "notes.read", note("first")));
    gate.wait_entered().await;
    let before = h.events.phases(None);

    let second = within(h.invoke("dup", "notes.read", note("second"))).await;
    assert_error(
        &second,
        "dup",
        "notes.read",
        "failed",
        "INVOCATION_ALREADY_ACTIVE",
        "An invocation with this id is already active.",
    );
    assert_eq!(h.events.phases(None), before);

    gate.release();
    let first = within(first).await.unwrap();
    assert_eq!(first.output(), Some(&json!({"id": "n1", "title": "first"})));
    assert_eq!(count(&calls), 1);

    gate.open();
    let reused = h.invoke("dup", "notes.read", note("again")).await;
    assert_eq!(reused.status(), OutcomeStatus::Succeeded);
    assert_eq!(count(&calls), 2);
}

// ----- 3.8 event sequences ----------------------------------------------------------------------

/// 3.8: success is `requested, started, succeeded` with the invocation and capability ids,
/// clock timestamps and no error code.
#[tokio::test]
async fn events_for_success() {
    let h = Harness::new(allow_all());
    let _g = h.host.bind("notes.read", echo_binding(counter())).unwrap();
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_eq!(
        serde_json::to_value(&outcome).unwrap(),
        json!({
            "status": "succeeded",
            "invocationId": "inv-1",
            "capabilityId": "notes.read",
            "output": {"id": "n1", "title": "a"}
        })
    );
    let events = h.events.events();
    let expected: Vec<Value> = ["requested", "started", "succeeded"]
        .iter()
        .map(|phase| {
            json!({
                "timestamp": 1000,
                "invocationId": "inv-1",
                "capabilityId": "notes.read",
                "phase": phase
            })
        })
        .collect();
    assert_eq!(serde_json::to_value(&events).unwrap(), json!(expected));
}

/// 3.8: a confirmation is `requested, confirmation_requested`, nothing else.
#[tokio::test]
async fn events_for_confirmation() {
    let h = Harness::new(confirm_writes());
    let calls = counter();
    let _g = h
        .host
        .bind("notes.create", echo_binding(calls.clone()))
        .unwrap();
    let outcome = h.invoke("inv-1", "notes.create", note("a")).await;
    assert_eq!(outcome.status(), OutcomeStatus::ConfirmationRequired);
    assert_eq!(
        h.events.phases(None),
        vec![REQUESTED, CONFIRMATION_REQUESTED]
    );
    assert_eq!(count(&calls), 0);
}

/// 2.6 / 3.8: on success the `succeeded` event reaches the observer before the refresh
/// notifies subscribers (who already see the new revision).
#[tokio::test]
async fn succeeded_event_precedes_subscriber_notification() {
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let observed = log.clone();
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default()
            .policy(allow_all())
            .on_event(move |e| {
                observed
                    .lock()
                    .unwrap()
                    .push(format!("event:{}", e.phase.as_str()));
            }),
    )
    .unwrap();
    let host = runtime.host();
    let client = runtime.client();
    let handled = log.clone();
    let _g = host
        .bind(
            "notes.read",
            Binding::new(move |input: Value, _ctx: InvocationContext| {
                handled.lock().unwrap().push("handler".into());
                async move { Ok::<_, HandlerError>(json!({"id": "n1", "title": input["title"]})) }
            }),
        )
        .unwrap();
    let listened = log.clone();
    let reader = client.clone();
    let _sub = client.subscribe(move || {
        let revision = reader.get_snapshot().revision;
        listened
            .lock()
            .unwrap()
            .push(format!("listener:{revision}"));
    });
    let outcome = client
        .invoke(request("inv-1", "notes.read", note("a")))
        .await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded);
    assert_eq!(
        *log.lock().unwrap(),
        vec![
            "event:requested",
            "event:started",
            "handler",
            "event:succeeded",
            "listener:2",
        ]
    );
}

/// A runtime whose observer runs `on_started` synchronously at every `started` event.
fn runtime_with_started_hook(
    recorder: &EventRecorder,
    on_started: impl Fn() + Send + Sync + 'static,
) -> Runtime {
    let record = recorder.observer();
    Runtime::new(
        definition(),
        RuntimeOptions::default()
            .policy(allow_all())
            .on_event(move |e| {
                record(e);
                if e.phase == EventPhase::Started {
                    on_started();
                }
            }),
    )
    .unwrap()
}

/// 3.8 / 4.1 step 9: an observer that drops the binding at `started` makes the invocation
/// fail with `CAPABILITY_UNBOUND` (binding changed); events `requested, started, failed`.
#[tokio::test]
async fn observer_unbinding_at_started_fails_invocation() {
    let recorder = EventRecorder::default();
    let slot: Arc<Mutex<Option<BindingGuard>>> = Arc::default();
    let taken = slot.clone();
    let runtime = runtime_with_started_hook(&recorder, move || {
        let guard = taken.lock().unwrap().take();
        drop(guard);
    });
    let calls = counter();
    *slot.lock().unwrap() = Some(
        runtime
            .host()
            .bind("notes.read", echo_binding(calls.clone()))
            .unwrap(),
    );
    let outcome = runtime
        .client()
        .invoke(request("inv-1", "notes.read", note("a")))
        .await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNBOUND",
        "The capability binding changed during policy evaluation.",
    );
    assert_eq!(
        recorder.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::CapabilityUnbound)]
    );
    assert_eq!(count(&calls), 0);
}

/// 3.8 / 4.1 step 9: an observer that sets the context at `started` makes the invocation
/// `denied / POLICY_DENIED` (context changed); events `requested, started, denied`.
#[tokio::test]
async fn observer_setting_context_at_started_denies_invocation() {
    let recorder = EventRecorder::default();
    let host_slot: Arc<Mutex<Option<Host>>> = Arc::default();
    let hook = host_slot.clone();
    let runtime = runtime_with_started_hook(&recorder, move || {
        let host = hook.lock().unwrap().clone();
        if let Some(host) = host {
            host.set_context(SemanticContext::active(["archive"]))
                .unwrap();
        }
    });
    *host_slot.lock().unwrap() = Some(runtime.host());
    let calls = counter();
    let _g = runtime
        .host()
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let outcome = runtime
        .client()
        .invoke(request("inv-1", "notes.read", note("a")))
        .await;
    // Break the host <-> observer cycle.
    host_slot.lock().unwrap().take();
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "denied",
        "POLICY_DENIED",
        "Application context changed. Request the operation again.",
    );
    assert_eq!(
        recorder.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, denied(ErrorCode::PolicyDenied)]
    );
    assert_eq!(count(&calls), 0);
}

/// 3.8 / 4.1 step 9: an observer that makes the capability unavailable at `started` fails
/// the invocation with "The capability is no longer available."
#[tokio::test]
async fn observer_changing_availability_at_started_fails_invocation() {
    let recorder = EventRecorder::default();
    let available = Arc::new(AtomicBool::new(true));
    let flip = available.clone();
    let runtime = runtime_with_started_hook(&recorder, move || {
        flip.store(false, Ordering::SeqCst);
    });
    let calls = counter();
    let flag = available.clone();
    let _g = runtime
        .host()
        .bind(
            "notes.read",
            echo_binding(calls.clone()).with_availability(move || {
                if flag.load(Ordering::SeqCst) {
                    Availability::available()
                } else {
                    Availability::unavailable("OFF", "Switched off.")
                }
            }),
        )
        .unwrap();
    let outcome = runtime
        .client()
        .invoke(request("inv-1", "notes.read", note("a")))
        .await;
    assert_error(
        &outcome,
        "inv-1",
        "notes.read",
        "failed",
        "CAPABILITY_UNAVAILABLE",
        "The capability is no longer available.",
    );
    assert_eq!(
        recorder.phases(Some("inv-1")),
        vec![REQUESTED, STARTED, failed(ErrorCode::CapabilityUnavailable)]
    );
    assert_eq!(count(&calls), 0);
}

// ----- 2.2 revision sequence --------------------------------------------------------------------

/// 2.2 / 2.3: the revision starts at 0 and grows by exactly one per bind, effective unbind,
/// set_context (even identical), host refresh and successful invocation; it does not change
/// on host errors, failed/denied invocations, confirmation issue/decline or preflight. The
/// snapshot is the same `Arc` until the revision changes, and every bump notifies once.
#[tokio::test]
async fn revision_sequence() {
    let h = Harness::with_options(RuntimeOptions::default()); // default policy
    let notified = counter();
    let seen = notified.clone();
    let _sub = h.client.subscribe(move || {
        seen.fetch_add(1, Ordering::SeqCst);
    });

    let mut last = h.client.get_snapshot();
    assert_eq!(last.revision, 0);
    // Checks the revision, the listener count, and snapshot identity.
    let mut step = |label: &str, expected: u64| {
        let now = h.client.get_snapshot();
        assert_eq!(now.revision, expected, "{label}");
        assert_eq!(
            count(&notified),
            expected,
            "{label}: one notification per bump"
        );
        let same = Arc::ptr_eq(&now, &last);
        assert_eq!(
            same,
            now.revision == last.revision,
            "{label}: snapshot identity"
        );
        assert!(Arc::ptr_eq(&now, &h.client.get_snapshot()), "{label}");
        last = now;
    };
    step("start", 0);

    let read_calls = counter();
    let _read = h
        .host
        .bind("notes.read", echo_binding(read_calls.clone()))
        .unwrap();
    step("bind read", 1);
    let _create = h
        .host
        .bind("notes.create", echo_binding(counter()))
        .unwrap();
    step("bind create", 2);
    let purge_calls = counter();
    let _purge = h
        .host
        .bind("notes.purge", echo_binding(purge_calls.clone()))
        .unwrap();
    step("bind purge", 3);
    let ping = h.host.bind("app.ping", echo_binding(counter())).unwrap();
    step("bind ping", 4);

    assert!(h.host.bind("notes.read", echo_binding(counter())).is_err());
    assert!(h.host.bind("nope", echo_binding(counter())).is_err());
    step("bind errors", 4);

    assert!(ping.unbind());
    step("unbind ping", 5);
    let ping = h
        .host
        .bind(
            "app.ping",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Err::<Value, _>(HandlerError::failed("ping failed"))
            }),
        )
        .unwrap();
    step("rebind ping", 6);
    drop(ping);
    step("drop ping guard", 7);
    let kept = h.host.bind("app.ping", echo_binding(counter())).unwrap();
    step("bind ping again", 8);
    kept.keep();
    step("keep guard", 8);

    h.host
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    step("set_context", 9);
    h.host
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    step("identical set_context", 10);
    assert!(
        h.host
            .set_context(SemanticContext::active(["nope"]))
            .is_err()
    );
    step("set_context error", 10);
    h.host.refresh();
    step("host refresh", 11);

    assert_eq!(
        h.invoke("ok-1", "notes.read", note("a")).await.status(),
        OutcomeStatus::Succeeded
    );
    step("successful invoke", 12);

    for (id, capability, input, code) in [
        (
            "nf",
            "nothing.here",
            json!({}),
            ErrorCode::CapabilityNotFound,
        ),
        (
            "bad",
            "notes.read",
            json!({"title": 1}),
            ErrorCode::InputInvalid,
        ),
        ("deny", "notes.create", note("a"), ErrorCode::PolicyDenied),
    ] {
        let outcome = h.invoke(id, capability, input).await;
        assert_eq!(outcome.error_code(), Some(code), "{id}: {outcome:?}");
    }
    let not_json = h.invoke("raw", "notes.read", Input::text("{")).await;
    assert_eq!(not_json.error_code(), Some(ErrorCode::InputInvalid));
    let token = CancellationToken::new();
    token.cancel();
    let aborted = h
        .client
        .invoke(request("abort", "notes.read", note("a")).with_cancellation(token))
        .await;
    assert_eq!(aborted.error_code(), Some(ErrorCode::ExecutionAborted));
    step("failed and denied invocations", 12);

    let ticket = h.invoke("purge-1", "notes.purge", note("a")).await;
    let ticket = ticket.confirmation().expect("confirmation").id.clone();
    step("confirmation issued", 12);
    let report = h
        .client
        .preflight(PreflightBatch::new(vec![
            PreflightProposal::new("notes.read", note("a")),
            PreflightProposal::new("notes.purge", note("a")),
        ]))
        .await
        .unwrap();
    assert_eq!((report.revision, report.consistent), (12, true));
    step("preflight", 12);
    let declined = h.host.resolve_confirmation(&ticket, false).await;
    assert_eq!(declined.error_code(), Some(ErrorCode::ConfirmationDeclined));
    step("confirmation declined", 12);

    let ticket = h.invoke("purge-2", "notes.purge", note("b")).await;
    let ticket = ticket.confirmation().expect("confirmation").id.clone();
    let approved = h.host.resolve_confirmation(&ticket, true).await;
    assert_eq!(approved.status(), OutcomeStatus::Succeeded);
    step("approved confirmation ran", 13);
    assert_eq!((count(&read_calls), count(&purge_calls)), (1, 1));
}

// ----- 3.2 / 3.3 host errors ----------------------------------------------------------------------

/// 1.10 / 3.2: binding an id outside the catalog is `Error::NotRegistered` with the
/// reference's message and code `CAPABILITY_NOT_REGISTERED`.
#[tokio::test]
async fn bind_unknown_id_is_not_registered() {
    let h = Harness::new(allow_all());
    let error = h.host.bind("x", echo_binding(counter())).unwrap_err();
    assert_eq!(error, Error::NotRegistered("x".into()));
    assert_eq!(
        error.to_string(),
        "Capability x is not the registered catalog definition."
    );
    assert_eq!(error.code(), "CAPABILITY_NOT_REGISTERED");
    assert_eq!(h.revision(), 0);
}

/// 3.2: binding an id that is bound is `Error::AlreadyBound`
/// ("Capability x is already bound."); the first binding stays in place.
#[tokio::test]
async fn bind_twice_is_already_bound() {
    let h = Harness::new(allow_all());
    let first = counter();
    let second = counter();
    let _g = h
        .host
        .bind("notes.read", echo_binding(first.clone()))
        .unwrap();
    let error = h
        .host
        .bind("notes.read", echo_binding(second.clone()))
        .unwrap_err();
    assert_eq!(error, Error::AlreadyBound("notes.read".into()));
    assert_eq!(error.to_string(), "Capability notes.read is already bound.");
    assert_eq!(error.code(), "CAPABILITY_ALREADY_BOUND");
    assert_eq!(h.revision(), 1);
    let outcome = h.invoke("inv-1", "notes.read", note("a")).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded);
    assert_eq!((count(&first), count(&second)), (1, 0));
}

/// 3.3: an undeclared scope is `Unknown RCIP scope id: x` (`UNKNOWN_SCOPE`); nothing
/// changes.
#[tokio::test]
async fn set_context_unknown_scope() {
    let h = Harness::new(allow_all());
    h.host
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    let error = h
        .host
        .set_context(SemanticContext::active(["notes", "x"]))
        .unwrap_err();
    assert_eq!(error, Error::UnknownScope("x".into()));
    assert_eq!(error.to_string(), "Unknown RCIP scope id: x");
    assert_eq!(error.code(), "UNKNOWN_SCOPE");
    let snapshot = h.client.get_snapshot();
    assert_eq!(snapshot.revision, 1);
    assert_eq!(*snapshot.context, SemanticContext::active(["notes"]));
}

/// 3.3: a primary scope that is not active is "The primary RCIP scope must also be
/// active." (`PRIMARY_SCOPE_NOT_ACTIVE`); an empty primary is accepted as given.
#[tokio::test]
async fn set_context_primary_not_active() {
    let h = Harness::new(allow_all());
    let error = h
        .host
        .set_context(SemanticContext::active(["notes"]).primary("archive"))
        .unwrap_err();
    assert_eq!(error, Error::PrimaryScopeNotActive);
    assert_eq!(
        error.to_string(),
        "The primary RCIP scope must also be active."
    );
    assert_eq!(error.code(), "PRIMARY_SCOPE_NOT_ACTIVE");
    assert_eq!(h.revision(), 0);

    h.host
        .set_context(SemanticContext::active(["notes"]).primary(""))
        .unwrap();
    let context = h.client.get_snapshot().context.clone();
    assert_eq!(context.primary_scope_id.as_deref(), Some(""));
}

/// 3.3: active ids are de-duplicated, first occurrence order kept.
#[tokio::test]
async fn set_context_dedupes_active_ids() {
    let h = Harness::new(allow_all());
    h.host
        .set_context(
            SemanticContext::active(["archive", "notes", "archive", "notes"]).primary("notes"),
        )
        .unwrap();
    let snapshot = h.client.get_snapshot();
    assert_eq!(
        serde_json::to_value(&*snapshot.context).unwrap(),
        json!({"activeScopeIds": ["archive", "notes"], "primaryScopeId": "notes"})
    );
}

/// The stable `code()` of every host error.
#[test]
fn host_error_codes() {
    let cases = [
        (
            Error::NotRegistered("x".into()),
            "CAPABILITY_NOT_REGISTERED",
        ),
        (Error::AlreadyBound("x".into()), "CAPABILITY_ALREADY_BOUND"),
        (Error::UnknownScope("x".into()), "UNKNOWN_SCOPE"),
        (Error::PrimaryScopeNotActive, "PRIMARY_SCOPE_NOT_ACTIVE"),
        (Error::PreflightBatchSize(0), "PREFLIGHT_BATCH_SIZE"),
        (Error::PreflightUnsupported, "PREFLIGHT_UNSUPPORTED"),
    ];
    for (error, code) in cases {
        assert_eq!(error.code(), code, "{error}");
    }
}

// ----- 4.1 step 10 handler context ----------------------------------------------------------------

/// 4.1 step 10: the handler gets the caller's invocation id, the policy-time semantic
/// context, `requested_at` read from the clock when the handler is called, and its own copy
/// of the input (mutating it leaves the policy's copy unchanged).
#[tokio::test]
async fn handler_context_and_input_copy() {
    let policy_input: Arc<Mutex<Option<Arc<Value>>>> = Arc::default();
    let policy_context: Arc<Mutex<Option<Arc<SemanticContext>>>> = Arc::default();
    let clock_slot: Arc<Mutex<Option<Arc<ManualClock>>>> = Arc::default();
    let (kept_input, kept_context, policy_clock) = (
        policy_input.clone(),
        policy_context.clone(),
        clock_slot.clone(),
    );
    let h = Harness::new(async_policy_fn(move |ctx: PolicyContext| {
        *kept_input.lock().unwrap() = Some(ctx.input().clone());
        *kept_context.lock().unwrap() = Some(ctx.semantic_context().clone());
        let clock = policy_clock.lock().unwrap().clone();
        async move {
            // Time passes while the policy decides.
            clock.unwrap().advance(4_000);
            Ok::<_, PolicyError>(PolicyDecision::Allow)
        }
    }));
    *clock_slot.lock().unwrap() = Some(h.clock.clone());
    let context = SemanticContext::active(["archive", "notes"]).primary("notes");
    h.host.set_context(context.clone()).unwrap();

    let seen: Arc<Mutex<Option<InvocationContext>>> = Arc::default();
    let record = seen.clone();
    let _g = h
        .host
        .bind(
            "notes.read",
            Binding::new(move |mut input: Value, ctx: InvocationContext| {
                *record.lock().unwrap() = Some(ctx);
                input["title"] = json!("mutated by handler");
                async move { Ok::<_, HandlerError>(json!({"id": "n1", "title": input["title"]})) }
            }),
        )
        .unwrap();

    let outcome = h
        .invoke("caller-id-42", "notes.read", note("original"))
        .await;
    assert_eq!(
        outcome.output(),
        Some(&json!({"id": "n1", "title": "mutated by handler"}))
    );
    let ctx = seen.lock().unwrap().clone().unwrap();
    assert_eq!(ctx.invocation_id(), "caller-id-42");
    assert_eq!(ctx.requested_at(), 5_000);
    assert_eq!(*ctx.semantic_context(), context);
    assert_eq!(
        *policy_context.lock().unwrap().clone().unwrap(),
        *ctx.semantic_context()
    );
    assert!(!ctx.cancellation().is_cancelled());
    let held = policy_input.lock().unwrap().clone().unwrap();
    assert_eq!(*held, note("original"));

    // Event timestamps come from the same clock: requested before the policy, the rest after.
    let stamps: Vec<u64> = h.events.events().iter().map(|e| e.timestamp).collect();
    assert_eq!(stamps, vec![1_000, 5_000, 5_000]);
}

/// 3.7: any string is a valid invocation id (rcip: 1 to 256 bytes, see `tests/bounds.rs`; the
/// reference takes `""` too); without one the runtime assigns
/// `invocation_<base36 ms>_<base36 seq>`, which the handler and the outcome share.
#[tokio::test]
async fn invocation_ids_given_or_generated() {
    let h = Harness::new(allow_all());
    h.clock.set(36);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let _g = h
        .host
        .bind(
            "app.ping",
            Binding::new(move |_input: Value, ctx: InvocationContext| {
                record.lock().unwrap().push(ctx.invocation_id().to_string());
                async { Ok::<_, HandlerError>(json!("pong")) }
            }),
        )
        .unwrap();
    let free_form = h.invoke(" any string ✓ ", "app.ping", json!({})).await;
    assert_eq!(free_form.invocation_id(), " any string ✓ ");
    let generated = h
        .client
        .invoke(InvocationRequest::new("app.ping", json!({})))
        .await;
    let id = generated.invocation_id().to_owned();
    assert!(id.starts_with("invocation_10_"), "{id}");
    let sequence = &id["invocation_10_".len()..];
    assert!(
        !sequence.is_empty()
            && sequence
                .chars()
                .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()),
        "the sequence is base 36: {id}"
    );
    assert_eq!(*seen.lock().unwrap(), vec![" any string ✓ ".to_owned(), id]);
}
