//! Hostile inputs whose issue lists used to grow with the input (a 2 MB array of wrong items
//! gave a 73 MB outcome): the list stops at `MAX_VALIDATION_ISSUES` and says so; an input too
//! large for a full report gives its first error's issues and says so; long names are clipped.
#![allow(clippy::unwrap_used)]

use rcip_runtime::*;
use serde_json::{Value, json};

/// A capability taking `{"a": <items>}` and nothing else.
fn runtime(items: Value) -> Runtime {
    runtime_for(json!({
        "type": "object",
        "properties": {"a": items},
        "required": ["a"],
        "additionalProperties": false
    }))
}

fn runtime_for(schema: Value) -> Runtime {
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

/// Invokes with `text`; asserts an `INPUT_INVALID` outcome under 64 KiB, returns its issues.
async fn small_issues(runtime: &Runtime, text: String) -> Vec<ValidationIssue> {
    assert!(text.len() < DEFAULT_MAX_INPUT_BYTES);
    let outcome = runtime
        .client()
        .invoke(InvocationRequest::new("h.take", Input::text(text)))
        .await;
    let json = serde_json::to_string(&outcome).unwrap();
    assert!(json.len() < 64 * 1024, "outcome is {} bytes", json.len());
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::InputInvalid);
    error.validation_issues.clone().unwrap()
}

/// As [`small_issues`], and the issues end with one truncation marker.
async fn bounded_issues(runtime: &Runtime, text: String) -> Vec<ValidationIssue> {
    let issues = small_issues(runtime, text).await;
    assert!(issues.len() <= MAX_VALIDATION_ISSUES + 1);
    let (last, rest) = issues.split_last().unwrap();
    assert_eq!(last.keyword, TRUNCATED_KEYWORD);
    assert_eq!(last.instance_path, "");
    assert!(rest.iter().all(|i| i.keyword != TRUNCATED_KEYWORD));
    issues
}

/// A full report cut at the limit: 100 issues, the first with `first_keyword`, then the marker.
async fn assert_truncated(runtime: &Runtime, text: String, first_keyword: &str) {
    let issues = bounded_issues(runtime, text).await;
    assert_eq!(issues.len(), MAX_VALIDATION_ISSUES + 1);
    assert_eq!(issues[0].keyword, first_keyword);
    let last = issues.last().unwrap();
    assert_eq!(
        last.message,
        "more issues not reported (at most 100 are listed)"
    );
    assert_eq!(last.param("limit"), Some(&json!(MAX_VALIDATION_ISSUES)));
}

/// A report of the first error only, for an input past `FULL_REPORT_VALUES` or
/// `FULL_REPORT_WEIGHT`: the first error's issues, then the marker naming the limit.
async fn assert_partial(runtime: &Runtime, text: String) -> Vec<ValidationIssue> {
    let issues = bounded_issues(runtime, text).await;
    let last = issues.last().unwrap();
    assert_eq!(
        last.message,
        "more issues not looked for (an input of more than 16384 values reports its first error only)"
    );
    assert_eq!(last.param("maxValues"), Some(&json!(FULL_REPORT_VALUES)));
    issues
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
/// Past `FULL_REPORT_VALUES`, so the validator stops at the first wrong item.
#[tokio::test]
async fn a_million_wrong_items_give_a_bounded_outcome() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}}));
    let text = numbers(1_000_000);
    assert_eq!(text.len(), 2_000_007);
    let issues = assert_partial(&runtime, text).await;
    assert_eq!(issues.len(), 2);
    assert_eq!(issues[0].keyword, "type");
    assert_eq!(issues[0].instance_path, "/a/0");
}

/// Under `FULL_REPORT_VALUES`, the full report stops at the limit.
#[tokio::test]
async fn many_wrong_items_are_cut_at_the_limit() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}}));
    assert_truncated(&runtime, numbers(10_000), "type").await;
}

/// `maxItems` does not stop the item errors (the validator reports both).
#[tokio::test]
async fn max_items_does_not_unbound_the_list() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}, "maxItems": 10}));
    assert_truncated(&runtime, numbers(10_000), "maxItems").await;
    let issues = assert_partial(&runtime, numbers(1_000_000)).await;
    assert_eq!(issues.len(), 2);
}

fn unknown_keys(count: usize, name: impl Fn(usize) -> String) -> String {
    let mut text = String::from("{\"a\":[]");
    for i in 0..count {
        text.push_str(&format!(",\"{}\":0", name(i)));
    }
    text.push('}');
    text
}

/// 200,000 unknown keys are one validator error naming them all: cut too.
#[tokio::test]
async fn unknown_keys_give_a_bounded_outcome() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}}));
    let issues = assert_partial(&runtime, unknown_keys(200_000, |i| format!("k{i}"))).await;
    assert_eq!(issues.len(), 2);
    assert_eq!(issues[0].keyword, "additionalProperties");
    let text = unknown_keys(5_000, |i| format!("k{i}"));
    assert_truncated(&runtime, text, "additionalProperties").await;
}

/// 60 unknown keys of 10,000 bytes each: every name in the issues is clipped, so the outcome
/// stays small (unclipped it was 600 KB).
#[tokio::test]
async fn long_names_are_clipped() {
    let runtime = runtime(json!({"type": "array", "items": {"type": "string"}}));
    let text = unknown_keys(60, |i| format!("{i:05}{}", "x".repeat(10_000)));
    let issues = small_issues(&runtime, text).await;
    assert_eq!(issues.len(), 60);
    for issue in &issues {
        let Some(Value::String(name)) = issue.param("additionalProperty") else {
            panic!("an additionalProperty param: {issue:?}");
        };
        assert_eq!(name.len(), MAX_ISSUE_TEXT_BYTES);
        assert!(name.ends_with('…'));
    }
}

/// 2,000 wrong items under one 100,000-byte key: few values, but every error would copy the
/// key into its path (200 MB). Past `FULL_REPORT_WEIGHT`, so the first error only, its path
/// clipped.
#[tokio::test]
async fn a_long_key_over_many_errors_is_bounded() {
    let runtime = runtime_for(json!({
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "string"}}
    }));
    let key = "k".repeat(100_000);
    let text = format!("{{\"{key}\":[{}]}}", vec!["1"; 2_000].join(","));
    let issues = assert_partial(&runtime, text).await;
    assert_eq!(issues.len(), 2);
    assert_eq!(issues[0].keyword, "type");
    assert_eq!(issues[0].instance_path.len(), MAX_ISSUE_TEXT_BYTES);
    assert!(issues[0].instance_path.starts_with("/kkk"));
    assert!(issues[0].instance_path.ends_with('…'));
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
