//! Bounded property tests of invocation input: any text gives a well-formed outcome, and
//! every validation issue list is within its limit.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use rcip_runtime::*;
use serde_json::{Value, json};

fn runtime(tokio: &tokio::runtime::Runtime) -> Runtime {
    let schema = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "integer", "maximum": 0}}},
        "required": ["tags"],
        "additionalProperties": false
    });
    let definition = ApplicationDefinition::new("props", "Props", "Property tests.").capability(
        CapabilityDefinition::new("p.echo", Effect::Read, "Echo", "Returns its input.")
            .input_schema(schema.clone())
            .output_schema(schema),
    );
    tokio.block_on(async {
        let runtime = Runtime::new(
            definition,
            RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
        )
        .unwrap();
        runtime
            .host()
            .bind(
                "p.echo",
                Binding::new(|input: Value, _ctx: InvocationContext| async move {
                    Ok::<_, HandlerError>(input)
                }),
            )
            .unwrap()
            .keep();
        runtime
    })
}

fn tokio() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Text that is JSON, almost JSON or not JSON: the outcome names the capability and,
    /// when it carries validation issues, at least one.
    #[test]
    fn any_text_gives_a_well_formed_outcome(text in prop_oneof![
        ".{0,40}",
        prop::collection::vec(-3i64..3, 0..20).prop_map(|t| json!({"tags": t}).to_string()),
    ]) {
        let tokio = tokio();
        let runtime = runtime(&tokio);
        let outcome = tokio.block_on(
            runtime.client().invoke(InvocationRequest::new("p.echo", Input::text(text.clone()))),
        );
        prop_assert_eq!(outcome.capability_id(), "p.echo");
        if let Some(issues) = outcome.error().and_then(|e| e.validation_issues.as_ref()) {
            prop_assert!(!issues.is_empty());
        }
    }
}

/// Thousands of failing items: the issue list stays within the documented limit.
#[test]
fn issue_lists_are_within_the_limit() {
    let tokio = tokio();
    let runtime = runtime(&tokio);
    let tags: Vec<i64> = (1..=5_000).collect();
    let outcome = tokio.block_on(
        runtime
            .client()
            .invoke(InvocationRequest::new("p.echo", json!({"tags": tags}))),
    );
    let issues = outcome.error().unwrap().validation_issues.as_ref().unwrap();
    // The limit, plus the marker that says the list was cut.
    assert_eq!(
        issues.len(),
        MAX_VALIDATION_ISSUES + 1,
        "{} issues",
        issues.len()
    );
    assert_eq!(issues[MAX_VALIDATION_ISSUES].keyword, TRUNCATED_KEYWORD);
}
