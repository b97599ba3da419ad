//! An `OUTPUT_INVALID` outcome carries no detail of the host's invalid output beyond what the
//! reference exposes: its issues are `{instancePath, keyword, message}` with Ajv's wording
//! and no `params` (which name the output's own property names, e.g. an unexpected property),
//! and a message is never the validator's text quoting the output's values. The whole issues
//! stay on the host's side, in the `rcip::handler` debug log.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use rcip_runtime::*;
use serde_json::{Value, json};

/// Strings of the host's output that must not reach the consumer.
const SECRETS: [&str; 3] = ["internal_db_row_id", "xsecret", "hunter2-token"];

fn runtime(output_schema: Value) -> Runtime {
    let definition = ApplicationDefinition::new("out", "Out", "Output checks.").capability(
        CapabilityDefinition::new("out.get", Effect::Read, "Get", "Gets it.")
            .output_schema(output_schema),
    );
    Runtime::new(definition, RuntimeOptions::default()).unwrap()
}

async fn invoke(runtime: &Runtime, output: Value) -> InvocationOutcome {
    let _binding = runtime
        .host()
        .bind(
            "out.get",
            Binding::new(move |_input, _ctx| {
                let output = output.clone();
                async move { Ok::<_, HandlerError>(output) }
            }),
        )
        .unwrap();
    runtime
        .client()
        .invoke(InvocationRequest::new("out.get", json!({})))
        .await
}

/// The outcome's issues as (instancePath, keyword, message), after checking that none has
/// params and that the serialized outcome names none of [`SECRETS`].
fn issues(outcome: &InvocationOutcome) -> Vec<(String, String, String)> {
    let wire = serde_json::to_string(outcome).unwrap();
    for secret in SECRETS {
        assert!(!wire.contains(secret), "{secret} crossed: {wire}");
    }
    let InvocationOutcome::Failed { error, .. } = outcome else {
        panic!("not failed: {outcome:?}")
    };
    assert_eq!(error.code, ErrorCode::OutputInvalid);
    assert_eq!(
        error.message,
        "The capability output does not match its declared schema."
    );
    error
        .validation_issues
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|issue| {
            assert!(issue.params.is_empty(), "{issue:?}");
            (
                issue.instance_path.clone(),
                issue.keyword.clone(),
                issue.message.clone(),
            )
        })
        .collect()
}

fn triple(path: &str, keyword: &str, message: &str) -> (String, String, String) {
    (path.to_owned(), keyword.to_owned(), message.to_owned())
}

#[tokio::test]
async fn an_unexpected_output_property_is_not_named() {
    let runtime = runtime(json!({
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": false
    }));
    let outcome = invoke(&runtime, json!({"title": "ok", "internal_db_row_id": 7})).await;
    assert_eq!(
        issues(&outcome),
        [triple(
            "",
            "additionalProperties",
            "must NOT have additional properties"
        )]
    );
    // The schema's own names may be quoted, as Ajv does: they are the contract's.
    let missing = invoke(&runtime, json!({})).await;
    assert_eq!(
        issues(&missing),
        [triple(
            "",
            "required",
            "must have required property 'title'"
        )]
    );
}

#[tokio::test]
async fn an_invalid_output_property_name_is_not_named() {
    let runtime = runtime(json!({
        "type": "object",
        "propertyNames": {"type": "string", "maxLength": 5}
    }));
    let outcome = invoke(&runtime, json!({"xsecret": 1})).await;
    let found = issues(&outcome);
    assert!(
        found.contains(&triple("", "propertyNames", "property name must be valid")),
        "{found:?}"
    );
}

#[tokio::test]
async fn a_validator_message_quoting_the_output_is_not_passed_on() {
    // jsonschema's own text for `unevaluatedItems` quotes the items; Ajv's never quotes data.
    let runtime = runtime(json!({
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "minItems": 1,
        "maxItems": 1,
        "unevaluatedItems": false
    }));
    let outcome = invoke(&runtime, json!(["a", "hunter2-token"])).await;
    let found = issues(&outcome);
    assert!(
        found.contains(&triple("", "unevaluatedItems", "Schema validation failed.")),
        "{found:?}"
    );
}

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
