//! The whole issues of an `OUTPUT_INVALID` stay on the host's side, in the `rcip::handler`
//! debug log. One test in its binary: the subscriber is this thread's, and another test's
//! thread reaching the log's callsite first could settle tracing's cached interest.
#![allow(clippy::unwrap_used)]

mod output_support;

use std::sync::{Arc, Mutex};

use output_support::{invoke, issues, runtime};
use serde_json::json;

/// A subscriber that keeps the `rcip::handler` events' fields, as text.
#[derive(Clone, Default)]
struct HostLog(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl tracing::Subscriber for HostLog {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == "rcip::handler"
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(String::new());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn the_host_log_keeps_the_whole_issues() {
    let log = HostLog::default();
    let outcome = tracing::subscriber::with_default(log.clone(), || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let runtime = self::runtime(json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            }));
            invoke(&runtime, json!({"internal_db_row_id": 7})).await
        })
    });
    issues(&outcome);
    let lines = log.0.lock().unwrap();
    assert!(
        lines
            .iter()
            .any(|line| line.contains("out.get") && line.contains("internal_db_row_id")),
        "{lines:?}"
    );
}
