//! Reference 3.8 as `tracing` events: every lifecycle event the observer sees is also a
//! `tracing` event (target `rcip::event`) with the same invocation id, capability id, phase
//! and error code, and no inputs, outputs or messages.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use common::{EventRecorder, allow_all, definition, echo_binding, note};
use rcip_runtime::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Collects the fields of every `rcip::event` event.
#[derive(Debug, Clone, Default)]
struct Collector(Arc<Mutex<Vec<BTreeMap<String, String>>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Collector {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "rcip::event"
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(fields);
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

#[test]
fn lifecycle_events_are_tracing_events_too() {
    let collector = Collector::default();
    let events = EventRecorder::default();
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default()
            .policy(allow_all())
            .on_event(events.observer()),
    )
    .unwrap();
    runtime
        .host()
        .bind("notes.read", echo_binding(Arc::default()))
        .unwrap()
        .keep();
    let client = runtime.client();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    tracing::subscriber::with_default(collector.clone(), || {
        rt.block_on(async {
            let ok = client
                .invoke(InvocationRequest::new("notes.read", note("secret-title")).with_id("t-1"))
                .await;
            assert_eq!(ok.status(), OutcomeStatus::Succeeded);
            let bad = client
                .invoke(InvocationRequest::new("notes.nope", note("x")).with_id("t-2"))
                .await;
            assert_eq!(bad.error_code(), Some(ErrorCode::CapabilityNotFound));
        });
    });

    let traced = collector.0.lock().unwrap().clone();
    let as_tuple = |f: &BTreeMap<String, String>| {
        (
            f["invocation_id"].clone(),
            f["capability_id"].clone(),
            f["phase"].clone(),
            f["error_code"].clone(),
        )
    };
    let expected: Vec<_> = events
        .events()
        .iter()
        .map(|e| {
            (
                e.invocation_id.clone(),
                e.capability_id.clone(),
                e.phase.as_str().to_owned(),
                e.error_code.map_or("", ErrorCode::as_str).to_owned(),
            )
        })
        .collect();
    assert_eq!(traced.iter().map(as_tuple).collect::<Vec<_>>(), expected);
    assert_eq!(
        expected.iter().map(|e| e.2.as_str()).collect::<Vec<_>>(),
        ["requested", "started", "succeeded", "requested", "failed"]
    );
    // Redacted: nothing of the input reaches the trace.
    assert!(!format!("{traced:?}").contains("secret-title"));
    assert!(!format!("{traced:?}").contains("not part of this application"));
}
