//! Panic containment (reference 3.5, 3.8, 4.1 steps 6c/6g/11, 4.7): a panic in any kind of
//! host code becomes the outcome the reference gives for a throw at that point, its message
//! never crosses to the client, and the runtime keeps serving.
//!
//! The panics print to stderr; that is expected.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use common::*;
use rcip_runtime::*;
use serde_json::{Value, json};

const SECRET: &str = "PANIC-SECRET-do-not-leak-91c2";

/// A one-shot trigger: `fire()` is true the first time only.
#[derive(Debug, Clone)]
struct Once(Arc<AtomicBool>);

impl Once {
    fn armed() -> Self {
        Once(Arc::new(AtomicBool::new(true)))
    }
    fn fire(&self) -> bool {
        self.0.swap(false, Ordering::SeqCst)
    }
}

struct Setup {
    runtime: Runtime,
    events: EventRecorder,
}

fn setup(options: RuntimeOptions) -> Setup {
    let events = EventRecorder::default();
    let runtime = Runtime::new(definition(), options.on_event(events.observer())).unwrap();
    Setup { runtime, events }
}

fn echo(input: &Value) -> Value {
    json!({"id": "n1", "title": input["title"]})
}

/// Asserts the outcome is the expected failure of invocation `inv-1` and that the panic text
/// is nowhere in it.
#[track_caller]
fn assert_contained(outcome: &InvocationOutcome, status: &str, code: &str, message: &str) {
    let wire = serde_json::to_value(outcome).unwrap();
    assert_eq!(
        wire,
        json!({
            "status": status,
            "invocationId": "inv-1",
            "capabilityId": "notes.read",
            "error": {"code": code, "message": message}
        })
    );
    assert_no_secret(outcome);
}

#[track_caller]
fn assert_no_secret(outcome: &InvocationOutcome) {
    assert!(!serde_json::to_string(outcome).unwrap().contains(SECRET));
    assert!(!format!("{outcome:?}").contains(SECRET));
}

/// The runtime still serves: the next invocation succeeds, bumps the revision by one, and
/// the snapshot reads with the capability bound and available.
async fn assert_still_serving(runtime: &Runtime, id: &str) {
    let client = runtime.client();
    let before = client.get_snapshot().revision;
    let outcome = client
        .invoke(InvocationRequest::new("notes.read", note("next")).with_id(id))
        .await;
    assert_eq!(
        serde_json::to_value(&outcome).unwrap(),
        json!({
            "status": "succeeded",
            "invocationId": id,
            "capabilityId": "notes.read",
            "output": {"id": "n1", "title": "next"}
        })
    );
    let snapshot = client.get_snapshot();
    assert_eq!(snapshot.revision, before + 1);
    let entry = snapshot
        .capabilities
        .iter()
        .find(|c| &*c.id == "notes.read")
        .unwrap();
    assert!(entry.bound && entry.available, "{entry:?}");
}

async fn invoke(runtime: &Runtime, id: &str) -> InvocationOutcome {
    runtime
        .client()
        .invoke(InvocationRequest::new("notes.read", note("first")).with_id(id))
        .await
}

// ----- handler ----------------------------------------------------------------------------------

/// 4.7: a panic inside the handler's future is `EXECUTION_FAILED` (as a throw), after
/// `started`; no revision bump; then the runtime serves normally.
#[tokio::test]
async fn handler_panic_in_async_body() {
    let s = setup(RuntimeOptions::default().policy(allow_all()));
    let once = Once::armed();
    let _g = s
        .runtime
        .host()
        .bind(
            "notes.read",
            Binding::new(move |input: Value, _ctx: InvocationContext| {
                let once = once.clone();
                async move {
                    tokio::task::yield_now().await;
                    if once.fire() {
                        panic!("{SECRET}");
                    }
                    Ok::<_, HandlerError>(echo(&input))
                }
            }),
        )
        .unwrap();
    let revision = s.runtime.client().get_snapshot().revision;
    let outcome = invoke(&s.runtime, "inv-1").await;
    assert_contained(
        &outcome,
        "failed",
        "EXECUTION_FAILED",
        "The application could not complete the capability.",
    );
    assert_eq!(
        s.events.phases(Some("inv-1")),
        vec![
            (EventPhase::Requested, None),
            (EventPhase::Started, None),
            (EventPhase::Failed, Some(ErrorCode::ExecutionFailed))
        ]
    );
    assert_eq!(s.runtime.client().get_snapshot().revision, revision);
    assert_still_serving(&s.runtime, "inv-2").await;
}

/// 4.7: a panic in the handler's synchronous part (before it returns its future) is
/// `EXECUTION_FAILED` too.
#[tokio::test]
async fn handler_panic_before_future() {
    let s = setup(RuntimeOptions::default().policy(allow_all()));
    let once = Once::armed();
    let _g = s
        .runtime
        .host()
        .bind(
            "notes.read",
            Binding::new(move |input: Value, _ctx: InvocationContext| {
                if once.fire() {
                    panic!("{SECRET}");
                }
                async move { Ok::<_, HandlerError>(echo(&input)) }
            }),
        )
        .unwrap();
    let outcome = invoke(&s.runtime, "inv-1").await;
    assert_contained(
        &outcome,
        "failed",
        "EXECUTION_FAILED",
        "The application could not complete the capability.",
    );
    assert_eq!(
        s.events.phases(Some("inv-1")).last(),
        Some(&(EventPhase::Failed, Some(ErrorCode::ExecutionFailed)))
    );
    assert_still_serving(&s.runtime, "inv-2").await;
}

/// 4.1 step 11: a handler that panics after its token was cancelled is `EXECUTION_ABORTED`
/// (as a throw after abort).
#[tokio::test]
async fn handler_panic_after_cancel_is_aborted() {
    let s = setup(RuntimeOptions::default().policy(allow_all()));
    let once = Once::armed();
    // The caller's token; the handler sees only its read side, so the test cancels it.
    let token = CancellationToken::new();
    let caller = token.clone();
    let saw_cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = saw_cancel.clone();
    let _g = s
        .runtime
        .host()
        .bind(
            "notes.read",
            Binding::new(move |input: Value, ctx: InvocationContext| {
                let once = once.clone();
                let caller = caller.clone();
                let seen = seen.clone();
                async move {
                    if once.fire() {
                        caller.cancel();
                        seen.store(
                            ctx.cancellation().is_cancelled(),
                            std::sync::atomic::Ordering::SeqCst,
                        );
                        panic!("{SECRET}");
                    }
                    Ok::<_, HandlerError>(echo(&input))
                }
            }),
        )
        .unwrap();
    let outcome = s
        .runtime
        .client()
        .invoke(
            InvocationRequest::new("notes.read", note("first"))
                .with_id("inv-1")
                .with_cancellation(token.clone()),
        )
        .await;
    assert_contained(
        &outcome,
        "failed",
        "EXECUTION_ABORTED",
        "The capability invocation was cancelled.",
    );
    assert!(
        saw_cancel.load(std::sync::atomic::Ordering::SeqCst),
        "the handler saw the caller's cancellation"
    );
    assert_still_serving(&s.runtime, "inv-2").await;
}

// ----- policy -------------------------------------------------------------------------------------

/// 3.5: a panicking synchronous policy is `POLICY_EVALUATION_FAILED` (as a throw); the
/// handler does not run.
#[tokio::test]
async fn sync_policy_panic() {
    let once = Once::armed();
    let s = setup(RuntimeOptions::default().policy(policy_fn(move |_| {
        if once.fire() {
            panic!("{SECRET}");
        }
        PolicyDecision::Allow
    })));
    let calls = Arc::new(AtomicU64::new(0));
    let _g = s
        .runtime
        .host()
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let outcome = invoke(&s.runtime, "inv-1").await;
    assert_contained(
        &outcome,
        "failed",
        "POLICY_EVALUATION_FAILED",
        "The host application could not evaluate this operation safely.",
    );
    assert_eq!(
        s.events.phases(Some("inv-1")),
        vec![
            (EventPhase::Requested, None),
            (EventPhase::Failed, Some(ErrorCode::PolicyEvaluationFailed))
        ]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_still_serving(&s.runtime, "inv-2").await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// 3.5: a panic inside an async policy's future is `POLICY_EVALUATION_FAILED` (as a
/// rejected promise).
#[tokio::test]
async fn async_policy_panic() {
    let once = Once::armed();
    let s = setup(
        RuntimeOptions::default().policy(async_policy_fn(move |_ctx| {
            let once = once.clone();
            async move {
                tokio::task::yield_now().await;
                if once.fire() {
                    panic!("{SECRET}");
                }
                Ok::<_, PolicyError>(PolicyDecision::Allow)
            }
        })),
    );
    let calls = Arc::new(AtomicU64::new(0));
    let _g = s
        .runtime
        .host()
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let outcome = invoke(&s.runtime, "inv-1").await;
    assert_contained(
        &outcome,
        "failed",
        "POLICY_EVALUATION_FAILED",
        "The host application could not evaluate this operation safely.",
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_still_serving(&s.runtime, "inv-2").await;
}

/// 3.5: a policy failure while the invocation is cancelled is `EXECUTION_ABORTED`.
#[tokio::test]
async fn policy_panic_after_cancel_is_aborted() {
    let token = CancellationToken::new();
    let cancel = token.clone();
    let once = Once::armed();
    let s = setup(RuntimeOptions::default().policy(policy_fn(move |_| {
        if once.fire() {
            cancel.cancel();
            panic!("{SECRET}");
        }
        PolicyDecision::Allow
    })));
    let _g = s
        .runtime
        .host()
        .bind("notes.read", echo_binding(Arc::new(AtomicU64::new(0))))
        .unwrap();
    let outcome = s
        .runtime
        .client()
        .invoke(
            InvocationRequest::new("notes.read", note("first"))
                .with_id("inv-1")
                .with_cancellation(token),
        )
        .await;
    assert_contained(
        &outcome,
        "failed",
        "EXECUTION_ABORTED",
        "The capability invocation was cancelled.",
    );
    assert_still_serving(&s.runtime, "inv-2").await;
}

// ----- availability ---------------------------------------------------------------------------------

/// 2.1 / 4.1 step 6c: a panicking availability check is `CAPABILITY_UNAVAILABLE` "The
/// application could not determine current availability."; the snapshot built meanwhile
/// shows `AVAILABILITY_CHECK_FAILED`; once the check recovers (and a refresh re-reads it)
/// everything is normal.
#[tokio::test]
async fn availability_check_panic() {
    let s = setup(RuntimeOptions::default().policy(allow_all()));
    let panicking = Arc::new(AtomicBool::new(true));
    let flag = panicking.clone();
    let calls = Arc::new(AtomicU64::new(0));
    let _g = s
        .runtime
        .host()
        .bind(
            "notes.read",
            echo_binding(calls.clone()).with_availability(move || {
                if flag.load(Ordering::SeqCst) {
                    panic!("{SECRET}");
                }
                Availability::available()
            }),
        )
        .unwrap();
    let outcome = invoke(&s.runtime, "inv-1").await;
    assert_contained(
        &outcome,
        "failed",
        "CAPABILITY_UNAVAILABLE",
        "The application could not determine current availability.",
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let snapshot = s.runtime.client().get_snapshot();
    let entry = snapshot
        .capabilities
        .iter()
        .find(|c| &*c.id == "notes.read")
        .unwrap();
    assert_eq!(
        serde_json::to_value(&entry.availability).unwrap(),
        json!({
            "available": false,
            "reasonCode": "AVAILABILITY_CHECK_FAILED",
            "reason": "The application could not determine current availability."
        })
    );
    assert!(!serde_json::to_string(&*snapshot).unwrap().contains(SECRET));

    panicking.store(false, Ordering::SeqCst);
    s.runtime.host().refresh();
    assert_still_serving(&s.runtime, "inv-2").await;
}

// ----- listener and observer ------------------------------------------------------------------------

/// 2.6: a panicking subscriber never breaks the invocation: it still succeeds (and the
/// revision still moves), and so does the next one.
#[tokio::test]
async fn listener_panic() {
    let s = setup(RuntimeOptions::default().policy(allow_all()));
    let _g = s
        .runtime
        .host()
        .bind("notes.read", echo_binding(Arc::new(AtomicU64::new(0))))
        .unwrap();
    let client = s.runtime.client();
    let called = Arc::new(AtomicU64::new(0));
    let seen = called.clone();
    let _sub = client.subscribe(move || {
        seen.fetch_add(1, Ordering::SeqCst);
        panic!("{SECRET}");
    });
    let before = client.get_snapshot().revision;
    let outcome = invoke(&s.runtime, "inv-1").await;
    assert_eq!(
        outcome.output(),
        Some(&json!({"id": "n1", "title": "first"}))
    );
    assert_no_secret(&outcome);
    assert_eq!(client.get_snapshot().revision, before + 1);
    assert_eq!(called.load(Ordering::SeqCst), 1);
    assert_eq!(
        s.events.phases(Some("inv-1")),
        vec![
            (EventPhase::Requested, None),
            (EventPhase::Started, None),
            (EventPhase::Succeeded, None)
        ]
    );
    // Host calls that refresh survive it too.
    s.runtime.host().refresh();
    assert_eq!(called.load(Ordering::SeqCst), 2);
    assert_still_serving(&s.runtime, "inv-2").await;
    assert_eq!(called.load(Ordering::SeqCst), 3);
}

/// 3.8: a panicking event observer never breaks the invocation (contract check
/// `observer`): both invocations succeed and it saw every event.
#[tokio::test]
async fn observer_panic() {
    let seen = Arc::new(AtomicU64::new(0));
    let count = seen.clone();
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default()
            .policy(allow_all())
            .on_event(move |_event| {
                count.fetch_add(1, Ordering::SeqCst);
                panic!("{SECRET}");
            }),
    )
    .unwrap();
    let _g = runtime
        .host()
        .bind("notes.read", echo_binding(Arc::new(AtomicU64::new(0))))
        .unwrap();
    let outcome = invoke(&runtime, "inv-1").await;
    assert_eq!(
        outcome.output(),
        Some(&json!({"id": "n1", "title": "first"}))
    );
    assert_no_secret(&outcome);
    assert_eq!(seen.load(Ordering::SeqCst), 3);
    assert_still_serving(&runtime, "inv-2").await;
    assert_eq!(seen.load(Ordering::SeqCst), 6);
}
