//! Hostile inputs whose issue lists used to grow with the input (a 2 MB array of wrong items
//! gave a 73 MB outcome): the list stops at `MAX_VALIDATION_ISSUES` and says so.
#![allow(clippy::unwrap_used)]

use rcip_runtime::*;
use serde_json::{Value, json};

fn runtime(items: Value) -> Runtime {
    let schema = json!({
        "type": "object",
        "properties": {"a": items},
        "required": ["a"],
        "additionalProperties": false
    });
    let definition = ApplicationDefinition::new("hostile", "Hostile", "Hostile inputs.")
        .capability(
            CapabilityDefinition::new("h.take", Effect::Read, "Take", "Takes a list.")
                .input_schema(schema)
                .output_schema(json!({})),
        );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    runtime
        .host()
        .bind(
            "h.take",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!(null))
            }),
        )
        .unwrap()
        .keep();
    runtime
}

async fn assert_truncated(runtime: &Runtime, text: String, first_keyword: &str) {
    assert!(text.len() < DEFAULT_MAX_INPUT_BYTES);
    let outcome = runtime
        .client()
        .invoke(InvocationRequest::new("h.take", Input::text(text)))
        .await;
    let json = serde_json::to_string(&outcome).unwrap();
    assert!(json.len() < 64 * 1024, "outcome is {} bytes", json.len());
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::InputInvalid);
    let issues = error.validation_issues.as_ref().unwrap();
    assert_eq!(issues.len(), MAX_VALIDATION_ISSUES + 1);
    assert_eq!(issues[0].keyword, first_keyword);
    let last = issues.last().unwrap();
    assert_eq!(last.keyword, TRUNCATED_KEYWORD);
    assert_eq!(last.instance_path, "");
    assert_eq!(
        last.message,
        "more issues not reported (at most 100 are listed)"
    );
    assert_eq!(last.param("limit"), Some(&json!(MAX_VALIDATION_ISSUES)));
    assert!(
        issues[..MAX_VALIDATION_ISSUES]
            .iter()
            .all(|i| i.keyword != TRUNCATED_KEYWORD)
    );
}

fn numbers(count: usize) -> String {
    let mut text = String::from("{\"a\":[");
    for i in 0..count {
        if i > 0 {
            text.push(',');
        }
        text.push('1');
    }
    text.push_str("]}");
    text
}

/// The campaign's exact case: 1,000,000 numbers where strings are wanted (2,000,007 bytes).
#[tokio::test]
async fn a_million_wrong_items_give_a_bounded_outcome() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}}));
    let text = numbers(1_000_000);
    assert_eq!(text.len(), 2_000_007);
    assert_truncated(&runtime, text, "type").await;
}

/// `maxItems` does not stop the item errors (the validator reports both).
#[tokio::test]
async fn max_items_does_not_unbound_the_list() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}, "maxItems": 10}));
    assert_truncated(&runtime, numbers(1_000_000), "maxItems").await;
}

/// 200,000 unknown keys are one validator error naming them all: cut too.
#[tokio::test]
async fn unknown_keys_give_a_bounded_outcome() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}}));
    let mut text = String::from("{\"a\":[]");
    for i in 0..200_000 {
        text.push_str(&format!(",\"k{i}\":0"));
    }
    text.push('}');
    assert_truncated(&runtime, text, "additionalProperties").await;
}

/// Exactly the limit is not truncated; one more is.
#[tokio::test]
async fn the_marker_appears_only_past_the_limit() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}}));
    let outcome = runtime
        .client()
        .invoke(InvocationRequest::new(
            "h.take",
            Input::text(numbers(MAX_VALIDATION_ISSUES)),
        ))
        .await;
    let issues = outcome.error().unwrap().validation_issues.clone().unwrap();
    assert_eq!(issues.len(), MAX_VALIDATION_ISSUES);
    assert!(issues.iter().all(|i| i.keyword == "type"));
    assert_truncated(&runtime, numbers(MAX_VALIDATION_ISSUES + 1), "type").await;
}
