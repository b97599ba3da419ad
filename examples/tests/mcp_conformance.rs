//! The MCP conformance fixture (`rcip_examples::mcp_conformance`): the exact names and
//! outputs the suite expects, the tool-list switch, and the facts docs/mcp-conformance.md
//! states about the fixtures a plain capability cannot serve.
#![allow(clippy::unwrap_used)]

use rcip_examples::mcp_conformance::{
    CONFIRMED, ConformanceFixture, ERROR_CODE, ERROR_TEXT, SIMPLE_TEXT, TOGGLED_TOOL,
};
use rcip_runtime::{CapabilityFilter, ErrorCode, InvocationRequest, OutcomeStatus};
use serde_json::{Value, json};

fn bound_ids(fixture: &ConformanceFixture) -> Vec<String> {
    fixture
        .client()
        .list_capabilities(&CapabilityFilter::default())
        .iter()
        .filter(|c| c.bound)
        .map(|c| c.id.clone())
        .collect()
}

#[test]
fn every_tool_the_suite_calls_is_bound_under_its_name() {
    let fixture = ConformanceFixture::new().unwrap();
    assert_eq!(
        bound_ids(&fixture),
        [
            "test_simple_text",
            "test_error_handling",
            "test_logging_tool",
            "test_streaming_elicitation",
            "test_toggled_tool",
            "test_trigger_tool_change",
            "test_elicitation",
            "test_input_required_result_request_state",
            "test_input_required_result_tampered_state",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_tool_with_progress",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "test_input_required_result_elicitation",
            "test_input_required_result_multi_round",
            "test_missing_capability",
            "test_tool_with_logging",
        ]
    );
    // tools-list: a description on every tool; names within the suite's 1-64 rule.
    for c in fixture
        .client()
        .list_capabilities(&CapabilityFilter::default())
    {
        assert!(!c.description.is_empty(), "{}", c.id);
        assert!(c.id.len() <= 64, "{}", c.id);
    }
}

#[tokio::test]
async fn simple_text_and_error_handling() {
    let fixture = ConformanceFixture::new().unwrap();
    let client = fixture.client();
    // The suite sends no `arguments` for test_simple_text; the bridge passes `{}`.
    let text = client
        .invoke(InvocationRequest::new("test_simple_text", json!({})))
        .await;
    assert_eq!(text.output(), Some(&Value::from(SIMPLE_TEXT)));
    let error = client
        .invoke(InvocationRequest::new("test_error_handling", json!({})))
        .await;
    assert_eq!(error.status(), OutcomeStatus::Failed);
    assert_eq!(error.error_code(), Some(ErrorCode::ExecutionFailed));
    assert_eq!(
        error.error().unwrap().message,
        format!("{ERROR_CODE}: {ERROR_TEXT}")
    );
}

#[tokio::test]
async fn the_trigger_unbinds_and_binds_the_toggled_tool() {
    let fixture = ConformanceFixture::new().unwrap();
    let client = fixture.client();
    let revision = client.get_snapshot().revision;
    let first = client
        .invoke(InvocationRequest::new(
            "test_trigger_tool_change",
            json!({}),
        ))
        .await;
    assert_eq!(
        first.output(),
        Some(&json!(format!("{TOGGLED_TOOL} unbound")))
    );
    assert!(!bound_ids(&fixture).contains(&TOGGLED_TOOL.to_owned()));
    assert!(client.get_snapshot().revision > revision);
    let unbound = client
        .invoke(InvocationRequest::new(TOGGLED_TOOL, json!({})))
        .await;
    assert_eq!(unbound.error_code(), Some(ErrorCode::CapabilityUnbound));
    let second = client
        .invoke(InvocationRequest::new(
            "test_trigger_tool_change",
            json!({}),
        ))
        .await;
    assert_eq!(
        second.output(),
        Some(&json!(format!("{TOGGLED_TOOL} bound")))
    );
    assert!(bound_ids(&fixture).contains(&TOGGLED_TOOL.to_owned()));
}

#[tokio::test]
async fn the_confirmed_tools_wait_for_the_host() {
    let fixture = ConformanceFixture::new().unwrap();
    let client = fixture.client();
    for id in CONFIRMED {
        let input = if id == "test_elicitation" {
            json!({"message": "Please provide your information"})
        } else {
            json!({})
        };
        let outcome = client.invoke(InvocationRequest::new(id, input)).await;
        assert_eq!(
            outcome.status(),
            OutcomeStatus::ConfirmationRequired,
            "{id}"
        );
    }
    // Everything else runs at once.
    let text = client
        .invoke(InvocationRequest::new("test_logging_tool", json!({})))
        .await;
    assert_eq!(text.status(), OutcomeStatus::Succeeded);
}

#[test]
fn dropping_the_fixture_releases_its_runtime() {
    let fixture = ConformanceFixture::new().unwrap();
    let client = fixture.client();
    drop(fixture);
    // The switch let go of the host: nothing but this client keeps the runtime.
    assert_eq!(std::sync::Arc::strong_count(&client), 1);
}

/// docs/mcp-conformance.md: `json_schema_2020_12_tool` is not an RCIP identifier (a `_`
/// must be followed by a lowercase letter), so no capability can carry that name.
#[test]
fn the_json_schema_tool_name_is_not_an_rcip_id() {
    assert!(!rcip_core::is_valid_identifier("json_schema_2020_12_tool"));
    assert!(rcip_core::is_valid_identifier(
        "test_input_required_result_elicitation"
    ));
}

/// The suite's `json_schema_2020_12_tool` input schema, as the suite declares it.
fn suite_json_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// docs/mcp-conformance.md: rcip's strict-schema checker takes that schema as it is, so a
/// hand-written definition could carry it; only the name stands in the way.
#[test]
fn the_json_schema_tool_schema_passes_the_strict_checker() {
    assert_eq!(
        rcip_core::schema::check_strict(&suite_json_schema()),
        Ok(())
    );
}
