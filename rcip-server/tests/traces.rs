//! One trace for a `command.execute` through REST on SQLite, as an OpenTelemetry exporter
//! (here in memory) receives it: the request's span, the operation's under it, and the
//! store's statements under that. (The subscriber is this thread's: the file holds this
//! one test, so that no other thread's calls settle tracing's cached interest first.)
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
mod on_sqlite;

use common::notes;
use on_sqlite::{Database, call, router};
use opentelemetry::trace::{SpanId, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

/// The span whose parent is `parent`, named `name`.
fn child<'a>(spans: &'a [SpanData], parent: SpanId, name: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|span| span.parent_span_id == parent && span.name == name)
        .unwrap_or_else(|| {
            let seen: Vec<_> = spans.iter().map(|s| (&s.name, s.parent_span_id)).collect();
            panic!("no span {name} under {parent}: {seen:?}")
        })
}

#[tokio::test]
async fn a_command_execute_is_one_trace_from_the_request_to_the_store() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("rcip-test"));
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::filter::Targets::new().with_target("rcip", tracing::Level::DEBUG))
        .with(layer);
    let _default = tracing::subscriber::set_default(subscriber);

    let database = Database::new("execute");
    let router = router(&database).await;
    call(
        &router,
        "ada",
        "workspace.create",
        json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
    )
    .await;
    call(&router, "ada", "collection.create", json!({"workspace_id": "acme", "collection_id": "open", "name": "Open", "idempotency_key": "c1"})).await;
    call(
        &router,
        "ada",
        "program.activate",
        json!({"workspace_id": "acme", "package": notes(1), "idempotency_key": "p1"}),
    )
    .await;
    let note = call(&router, "ada", "record.create", json!({"workspace_id": "acme", "collection_id": "open",
        "namespace": "notes", "version": 1, "type": "note", "data": {"text": "hello"}, "idempotency_key": "r1"})).await;
    provider.force_flush().unwrap();
    exporter.reset();

    let executed = call(&router, "ada", "command.execute", json!({"workspace_id": "acme",
        "record_id": note["id"], "command": "close", "expected_revision": 1, "idempotency_key": "x1"})).await;
    assert_eq!(executed["state"], "closed");
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();

    let request = spans
        .iter()
        .find(|span| span.name == "POST /v1/operations")
        .unwrap_or_else(|| panic!("no request span: {spans:?}"));
    assert_eq!(
        request.parent_span_id,
        SpanId::INVALID,
        "the request's span is the root"
    );
    let trace = request.span_context.trace_id();
    assert!(
        spans
            .iter()
            .all(|span| span.span_context.trace_id() == trace),
        "one trace"
    );
    let operation = child(&spans, request.span_context.span_id(), "command.execute");
    let under = operation.span_context.span_id();
    // The directory's access check, the record read and the commit, each its own span.
    child(&spans, under, "directory.access");
    child(&spans, under, "records.get");
    let commit = child(&spans, under, "commit");
    assert_eq!(
        attribute(commit, "db.system.name").as_deref(),
        Some("sqlite")
    );
    assert_eq!(
        attribute(request, "http.response.status_code").as_deref(),
        Some("200")
    );
}

/// A span's attribute, as text.
fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.as_str().into_owned())
}
