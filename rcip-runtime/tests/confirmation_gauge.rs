//! The `rcip_pending_confirmations` gauge counts the tickets waiting for the host: up when
//! one is raised, down when it is resolved (before the confirmed run) or declined. The
//! recorder is the process's (this file is its own test binary).
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::{confirm_writes, definition, echo_binding, note};
use metrics_exporter_prometheus::PrometheusBuilder;
use rcip_runtime::*;
use rcip_test_support::prometheus_sample;

#[tokio::test]
async fn pending_tickets_are_counted_until_they_end() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).unwrap();
    let pending = || prometheus_sample(&handle.render(), "rcip_pending_confirmations");

    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default().policy(confirm_writes()),
    )
    .unwrap();
    let _binding = runtime
        .host()
        .bind("notes.create", echo_binding(Arc::default()))
        .unwrap();
    let mut tickets = Vec::new();
    for title in ["a", "b"] {
        let outcome = runtime
            .client()
            .invoke(InvocationRequest::new("notes.create", note(title)))
            .await;
        let InvocationOutcome::ConfirmationRequired { confirmation, .. } = outcome else {
            panic!("no ticket: {outcome:?}")
        };
        tickets.push(confirmation.id);
    }
    assert_eq!(pending(), Some(2.0));
    let approved = runtime.host().resolve_confirmation(&tickets[0], true).await;
    assert!(
        matches!(approved, InvocationOutcome::Succeeded { .. }),
        "{approved:?}"
    );
    assert_eq!(pending(), Some(1.0));
    runtime
        .host()
        .resolve_confirmation(&tickets[1], false)
        .await;
    assert_eq!(pending(), Some(0.0));
}
