//! Robustness beyond the conformance suites: races, re-entrant host code, runtimes without
//! timers, and host code that reaches back into the runtime from its destructors. Each test
//! here failed (or hung) on an earlier version of the runtime.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use common::{
    EventRecorder, ManualClock, allow_all, confirm_writes, definition, echo_binding, note,
};
use rcip_runtime::*;
use serde_json::{Value, json};

/// Runs `f` on its own thread and fails the test if it does not finish in time, so that a
/// deadlock is a failure rather than a hung test run.
fn finishes_in_time(f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(10))
        .expect("deadlock: the operation did not finish");
}

/// An approved confirmation keeps its invocation id reserved into the re-run: another
/// invocation racing for the same id gets `INVOCATION_ALREADY_ACTIVE`, never the approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn approval_keeps_its_id_against_a_racing_invoke() {
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default().policy(confirm_writes()),
    )
    .unwrap();
    let calls = Arc::new(AtomicU64::new(0));
    runtime
        .host()
        .bind("notes.create", echo_binding(calls.clone()))
        .unwrap()
        .keep();
    let client = runtime.client();
    for round in 0..200 {
        let id = format!("race-{round}");
        let first = client
            .invoke(InvocationRequest::new("notes.create", note("a")).with_id(id.as_str()))
            .await;
        let ticket = first.confirmation().unwrap().id.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let started = Arc::new(AtomicU64::new(0));
        // Two racers spin on worker threads, asking for the id as fast as they can.
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let (client, id) = (client.clone(), id.clone());
                let (stop, started) = (stop.clone(), started.clone());
                tokio::spawn(async move {
                    started.fetch_add(1, Ordering::SeqCst);
                    let mut outcomes = Vec::new();
                    while !stop.load(Ordering::SeqCst) {
                        let request =
                            InvocationRequest::new("notes.create", note("b")).with_id(id.as_str());
                        outcomes.push(client.invoke(request).await);
                    }
                    outcomes
                })
            })
            .collect();
        while started.load(Ordering::SeqCst) < 2 {
            tokio::task::yield_now().await;
        }
        let approved = runtime.host().resolve_confirmation(&ticket, true).await;
        stop.store(true, Ordering::SeqCst);
        for racer in racers {
            // A racer is refused while the id is held, and once it is free it can only open a
            // ticket of its own: it never runs the handler.
            for outcome in racer.await.unwrap() {
                assert!(
                    outcome.error_code() == Some(ErrorCode::InvocationAlreadyActive)
                        || outcome.status() == OutcomeStatus::ConfirmationRequired,
                    "round {round}: {outcome:?}"
                );
            }
        }
        assert_eq!(
            approved.status(),
            OutcomeStatus::Succeeded,
            "round {round}: {approved:?}"
        );
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        200,
        "one handler run per approval"
    );
}

/// `confirmation_requested` is always the first event after `requested`, even when the
/// ticket ends at once (a zero lifetime) while a slow observer is still running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmation_requested_precedes_the_tickets_end() {
    let events = EventRecorder::default();
    let record = events.observer();
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default()
            .policy(confirm_writes())
            .confirmation_ttl(Duration::ZERO)
            .on_event(move |event| {
                if event.phase == EventPhase::ConfirmationRequested {
                    std::thread::sleep(Duration::from_millis(5));
                }
                record(event);
            }),
    )
    .unwrap();
    runtime
        .host()
        .bind("notes.create", echo_binding(Arc::default()))
        .unwrap()
        .keep();
    for round in 0..10 {
        let id = format!("zero-{round}");
        let outcome = runtime
            .client()
            .invoke(InvocationRequest::new("notes.create", note("a")).with_id(id.as_str()))
            .await;
        assert_eq!(outcome.status(), OutcomeStatus::ConfirmationRequired);
        for _ in 0..500 {
            if events.phases(Some(&id)).len() == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert_eq!(
            events.phases(Some(&id)),
            vec![
                (EventPhase::Requested, None),
                (EventPhase::ConfirmationRequested, None),
                (EventPhase::Failed, Some(ErrorCode::ConfirmationExpired)),
            ]
        );
    }
}

/// Dropping a binding whose handler owns another binding's guard (whose unbinding runs a
/// listener that reads the snapshot) must not deadlock: the binding is dropped after the
/// runtime's lock is released.
#[test]
fn dropping_a_binding_that_owns_host_state_does_not_deadlock() {
    finishes_in_time(|| {
        let runtime = Runtime::new(definition(), RuntimeOptions::default()).unwrap();
        let host = runtime.host();
        let client = runtime.client();
        let reader = client.clone();
        let _subscription = client.subscribe(move || {
            let _ = reader.get_snapshot();
        });
        let inner_guard = host
            .bind("notes.read", echo_binding(Arc::default()))
            .unwrap();
        let owned = Mutex::new(Some(inner_guard));
        let outer_guard = host
            .bind(
                "app.ping",
                Binding::new(move |_input: Value, _ctx: InvocationContext| {
                    let _keep = &owned;
                    async { Ok::<_, HandlerError>(json!("pong")) }
                }),
            )
            .unwrap();
        assert!(outer_guard.unbind());
        let snapshot = client.get_snapshot();
        assert!(snapshot.capabilities.iter().all(|c| !c.bound));
    });
}

/// Dropping a subscription whose listener owns a binding guard (whose unbinding notifies
/// the other listeners) must not deadlock.
#[test]
fn dropping_a_listener_that_owns_host_state_does_not_deadlock() {
    finishes_in_time(|| {
        let runtime = Runtime::new(definition(), RuntimeOptions::default()).unwrap();
        let host = runtime.host();
        let client = runtime.client();
        let notified = Arc::new(AtomicU64::new(0));
        let seen = notified.clone();
        let _other = client.subscribe(move || {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        let guard = host
            .bind("notes.read", echo_binding(Arc::default()))
            .unwrap();
        let owned = Mutex::new(Some(guard));
        let subscription = client.subscribe(move || {
            let _keep = &owned;
        });
        let before = notified.load(Ordering::SeqCst);
        subscription.unsubscribe();
        // The unbinding refreshed, and the remaining listener heard it.
        assert_eq!(notified.load(Ordering::SeqCst), before + 1);
        assert!(!client.get_snapshot().capabilities[0].bound);
    });
}

/// On a tokio runtime without timers no ticket watcher can sleep; a ticket whose caller
/// cancelled, or whose lifetime passed, still frees its invocation id when the id is asked
/// for again (and leaves its receipt), instead of holding it forever.
#[test]
fn tickets_free_their_id_without_timers() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let clock = ManualClock::at(1_000);
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default()
            .policy(confirm_writes())
            .clock(clock.clone())
            .confirmation_ttl(Duration::from_secs(60)),
    )
    .unwrap();
    runtime
        .host()
        .bind("notes.create", echo_binding(Arc::default()))
        .unwrap()
        .keep();
    let client = runtime.client();
    rt.block_on(async {
        // Cancelled while pending.
        let token = CancellationToken::new();
        let first = client
            .invoke(
                InvocationRequest::new("notes.create", note("a"))
                    .with_id("no-timer")
                    .with_cancellation(token.clone()),
            )
            .await;
        let ticket = first.confirmation().unwrap().id.clone();
        token.cancel();
        let again = client
            .invoke(InvocationRequest::new("notes.create", note("a")).with_id("no-timer"))
            .await;
        assert_eq!(again.status(), OutcomeStatus::ConfirmationRequired);
        let receipt = runtime.host().resolve_confirmation(&ticket, true).await;
        assert_eq!(receipt.error_code(), Some(ErrorCode::ExecutionAborted));

        // Expired by the clock.
        clock.advance(60_001);
        let third = client
            .invoke(InvocationRequest::new("notes.create", note("a")).with_id("no-timer"))
            .await;
        assert_eq!(third.status(), OutcomeStatus::ConfirmationRequired);
        let expired = runtime
            .host()
            .resolve_confirmation(&again.confirmation().unwrap().id, true)
            .await;
        assert_eq!(expired.error_code(), Some(ErrorCode::ConfirmationExpired));
    });
}

/// A typed handler whose output cannot be JSON is `OUTPUT_INVALID` even when the caller
/// cancelled meanwhile: like the reference, output is judged after the handler returned, and
/// only a handler that *fails* after a cancellation is `EXECUTION_ABORTED`.
#[tokio::test]
async fn invalid_output_after_cancel_is_output_invalid() {
    let runtime =
        Runtime::new(definition(), RuntimeOptions::default().policy(allow_all())).unwrap();
    let token = CancellationToken::new();
    let caller = token.clone();
    runtime
        .host()
        .bind(
            "notes.read",
            Binding::typed(move |_input: Value, _ctx: InvocationContext| {
                caller.cancel();
                // A map with non-string keys has no JSON form.
                let output: std::collections::HashMap<(u8, u8), u8> = [((1, 2), 3)].into();
                async move { Ok::<_, HandlerError>(output) }
            }),
        )
        .unwrap()
        .keep();
    let outcome = runtime
        .client()
        .invoke(InvocationRequest::new("notes.read", note("a")).with_cancellation(token))
        .await;
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::OutputInvalid);
    assert_eq!(error.message, "The capability output must be a JSON value.");
}
