//! Each invocation runs in an `invocation` span (target `rcip::runtime`) naming its
//! capability, and its lifecycle events (`rcip::event`: requested, succeeded...) are
//! recorded inside it: a trace shows the invocation between the transport's span and the
//! handler's store calls. One test in its binary: the subscriber is this thread's.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{allow_all, definition, echo_binding, note};
use rcip_runtime::*;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// What the layer saw: the spans made (name, capability) and each event (target, the name
/// of the span it happened in).
#[derive(Clone, Default)]
struct Seen {
    spans: Arc<Mutex<Vec<(String, String)>>>,
    events: Arc<Mutex<Vec<Event>>>,
}

/// An event's target, and the name of the span it happened in.
type Event = (String, Option<String>);

struct Capability(String);

impl Visit for Capability {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "rcip.capability" {
            self.0 = format!("{value:?}");
        }
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Seen {
    fn on_new_span(
        &self,
        attributes: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: Context<'_, S>,
    ) {
        let mut capability = Capability(String::new());
        attributes.record(&mut capability);
        let name = attributes.metadata().name().to_owned();
        self.spans.lock().unwrap().push((name, capability.0));
    }

    fn on_event(&self, event: &tracing::Event<'_>, context: Context<'_, S>) {
        let span = context.event_span(event).map(|span| span.name().to_owned());
        let target = event.metadata().target().to_owned();
        self.events.lock().unwrap().push((target, span));
    }
}

#[test]
fn an_invocation_is_a_span_holding_its_lifecycle_events() {
    let seen = Seen::default();
    let subscriber = tracing_subscriber::registry().with(seen.clone());
    tracing::subscriber::with_default(subscriber, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let runtime =
                Runtime::new(definition(), RuntimeOptions::default().policy(allow_all())).unwrap();
            let _binding = runtime
                .host()
                .bind("notes.create", echo_binding(Arc::default()))
                .unwrap();
            let outcome = runtime
                .client()
                .invoke(InvocationRequest::new("notes.create", note("a")))
                .await;
            assert!(
                matches!(outcome, InvocationOutcome::Succeeded { .. }),
                "{outcome:?}"
            );
        });
    });
    let spans = seen.spans.lock().unwrap();
    assert!(
        spans.contains(&("invocation".to_owned(), "notes.create".to_owned())),
        "{spans:?}"
    );
    let lifecycle: Vec<_> = seen
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|(target, _)| target == "rcip::event")
        .cloned()
        .collect();
    assert!(lifecycle.len() >= 2, "{lifecycle:?}");
    assert!(
        lifecycle
            .iter()
            .all(|(_, span)| span.as_deref() == Some("invocation")),
        "{lifecycle:?}"
    );
}
