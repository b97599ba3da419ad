//! Concurrency (reference 4.4, 4.6): unlimited concurrent invocations with distinct ids, and
//! strict exclusion per invocation id, on a multi-thread runtime.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use rcip_runtime::*;
use serde_json::{Value, json};
use tokio::sync::Barrier;

fn runtime() -> Runtime {
    Runtime::new(definition(), RuntimeOptions::default().policy(allow_all())).unwrap()
}

/// 2.2 / 4.6: 1,000 concurrent invocations with distinct ids all succeed, each handler runs
/// once, and the revision ends at exactly start + 1000 (one notification each).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thousand_distinct_ids_all_succeed() {
    let runtime = runtime();
    let calls = Arc::new(AtomicU64::new(0));
    let counted = calls.clone();
    let _g = runtime
        .host()
        .bind(
            "app.ping",
            Binding::new(move |_input: Value, _ctx: InvocationContext| {
                counted.fetch_add(1, Ordering::SeqCst);
                async {
                    tokio::task::yield_now().await;
                    Ok::<_, HandlerError>(json!("pong"))
                }
            }),
        )
        .unwrap();
    let client = runtime.client();
    let notified = Arc::new(AtomicU64::new(0));
    let seen = notified.clone();
    let _sub = client.subscribe(move || {
        seen.fetch_add(1, Ordering::SeqCst);
    });
    let start = client.get_snapshot().revision;

    let handles: Vec<_> =
        (0..1000)
            .map(|i| {
                tokio::spawn(client.invoke(
                    InvocationRequest::new("app.ping", json!({})).with_id(format!("inv-{i}")),
                ))
            })
            .collect();
    for (i, handle) in handles.into_iter().enumerate() {
        let outcome = handle.await.unwrap();
        assert_eq!(
            serde_json::to_value(&outcome).unwrap(),
            json!({
                "status": "succeeded",
                "invocationId": format!("inv-{i}"),
                "capabilityId": "app.ping",
                "output": "pong"
            })
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1000);
    assert_eq!(client.get_snapshot().revision, start + 1000);
    assert_eq!(notified.load(Ordering::SeqCst), 1000);
}

/// Tracks how many handler bodies run at once.
#[derive(Debug, Default)]
struct Probe {
    running: AtomicUsize,
    max: AtomicUsize,
    runs: AtomicUsize,
}

/// 4.4: concurrent invocations sharing one id never run the handler concurrently: each
/// outcome is `succeeded` or `INVOCATION_ALREADY_ACTIVE`, at least one runs per round, the
/// handler runs once per success, and at most one handler body is ever in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_shared_id_runs_one_at_a_time() {
    const ROUNDS: usize = 20;
    const TASKS: usize = 50;
    let runtime = runtime();
    let probe = Arc::new(Probe::default());
    let handler_probe = probe.clone();
    let _g = runtime
        .host()
        .bind(
            "app.ping",
            Binding::new(move |_input: Value, _ctx: InvocationContext| {
                let probe = handler_probe.clone();
                async move {
                    let now = probe.running.fetch_add(1, Ordering::SeqCst) + 1;
                    probe.max.fetch_max(now, Ordering::SeqCst);
                    for _ in 0..8 {
                        tokio::task::yield_now().await;
                    }
                    probe.running.fetch_sub(1, Ordering::SeqCst);
                    probe.runs.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(json!("pong"))
                }
            }),
        )
        .unwrap();
    let client = runtime.client();
    let start = client.get_snapshot().revision;
    let mut succeeded_total = 0;

    for round in 0..ROUNDS {
        let barrier = Arc::new(Barrier::new(TASKS));
        let handles: Vec<_> = (0..TASKS)
            .map(|_| {
                let client = client.clone();
                let barrier = barrier.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    client
                        .invoke(InvocationRequest::new("app.ping", json!({})).with_id("shared"))
                        .await
                })
            })
            .collect();
        let mut succeeded = 0;
        for handle in handles {
            let outcome = handle.await.unwrap();
            match outcome.status() {
                OutcomeStatus::Succeeded => {
                    assert_eq!(outcome.output(), Some(&json!("pong")));
                    succeeded += 1;
                }
                _ => assert_eq!(
                    serde_json::to_value(&outcome).unwrap(),
                    json!({
                        "status": "failed",
                        "invocationId": "shared",
                        "capabilityId": "app.ping",
                        "error": {
                            "code": "INVOCATION_ALREADY_ACTIVE",
                            "message": "An invocation with this id is already active."
                        }
                    }),
                    "round {round}"
                ),
            }
        }
        assert!(succeeded >= 1, "round {round}: the first reservation runs");
        succeeded_total += succeeded;
    }
    assert_eq!(probe.max.load(Ordering::SeqCst), 1);
    assert!(
        succeeded_total < ROUNDS * TASKS,
        "same-id invocations are rejected, not queued"
    );
    assert_eq!(probe.running.load(Ordering::SeqCst), 0);
    assert_eq!(probe.runs.load(Ordering::SeqCst), succeeded_total);
    assert_eq!(
        client.get_snapshot().revision,
        start + u64::try_from(succeeded_total).unwrap()
    );
}

/// 4.6: invocations of the same capability with distinct ids really overlap: two handlers
/// meet at a barrier (a runtime that serialized them would never get past it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distinct_ids_overlap() {
    let runtime = runtime();
    let barrier = Arc::new(Barrier::new(2));
    let _g = runtime
        .host()
        .bind(
            "app.ping",
            Binding::new(move |_input: Value, _ctx: InvocationContext| {
                let barrier = barrier.clone();
                async move {
                    barrier.wait().await;
                    Ok::<_, HandlerError>(json!("pong"))
                }
            }),
        )
        .unwrap();
    let client = runtime.client();
    let a = tokio::spawn(client.invoke(InvocationRequest::new("app.ping", json!({})).with_id("a")));
    let b = tokio::spawn(client.invoke(InvocationRequest::new("app.ping", json!({})).with_id("b")));
    let (a, b) = tokio::time::timeout(Duration::from_secs(5), async {
        (a.await.unwrap(), b.await.unwrap())
    })
    .await
    .expect("both handlers ran at the same time");
    assert_eq!(a.status(), OutcomeStatus::Succeeded);
    assert_eq!(b.status(), OutcomeStatus::Succeeded);
}
