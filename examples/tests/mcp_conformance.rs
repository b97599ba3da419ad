//! The MCP conformance fixture (`rcip_examples::mcp_conformance`): the exact names and
//! outputs the suite expects, the tool-list switch, and the facts docs/mcp-conformance.md
//! states about the fixtures a plain capability cannot serve.
#![allow(clippy::unwrap_used, clippy::panic, deprecated)]

use rcip_examples::mcp_conformance::{
    CONFIRMED, ConformanceFixture, ERROR_CODE, ERROR_TEXT, SIMPLE_TEXT, TOGGLED_TOOL,
};
use rcip_examples::mcp_conformance_schemas::{
    CUSTOM_HEADER_TOOL, JSON_SCHEMA_CAPABILITY, JSON_SCHEMA_TOOL,
};
use rcip_mcp::rmcp::model::{
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Role, Root,
    SamplingMessage, SamplingMessageContentBlock, Tool,
};
use rcip_mcp::{McpElicitor, ScriptedAnswers};
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
            "test_sampling",
            "test_input_required_result_sampling",
            "test_input_required_result_list_roots",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_capabilities",
            "test_reconnection",
            "greet",
            "slow_compute",
            "failing_job",
            "protocol_error_job",
            "confirm_delete",
            "multi_input",
            "test_tool_with_task",
            "json_schema_tool",
            "test_custom_header",
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
async fn the_confirmed_tool_waits_for_the_host() {
    let fixture = ConformanceFixture::new().unwrap();
    let client = fixture.client();
    for id in CONFIRMED {
        let outcome = client.invoke(InvocationRequest::new(id, json!({}))).await;
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

/// A client that answers as the suite does: the user accepts with the content it is asked
/// for, the model answers, the roots are one test root.
fn suite_client() -> McpElicitor {
    McpElicitor::scripted(
        ScriptedAnswers::new()
            .elicitation(|params| {
                let ElicitRequestParams::FormElicitationParams { message, .. } = params else {
                    panic!("{params:?}")
                };
                let content = match message.as_str() {
                    "Please provide your information" => {
                        json!({"username": "testuser", "email": "test@example.com"})
                    }
                    "Please confirm" => json!({"ok": true}),
                    _ => json!({"name": "Alice"}),
                };
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            })
            .sampling(|params| {
                let prompt = params.messages[0]
                    .content
                    .first()
                    .unwrap()
                    .as_text()
                    .unwrap();
                let answer = match prompt.text.as_str() {
                    "What is the capital of France?" => "The capital of France is Paris.",
                    _ => "Hello there!",
                };
                CreateMessageResult::new(
                    SamplingMessage::new(
                        Role::Assistant,
                        SamplingMessageContentBlock::text(answer),
                    ),
                    "test-model".to_owned(),
                )
            })
            .roots(vec![Root::new("file:///test/root")]),
    )
}

/// The tools that ask the client, answered by an approving client: their outcome is what
/// the client answered, not a declined confirmation.
#[tokio::test]
async fn the_tools_that_ask_the_client_answer_with_what_it_said() {
    let fixture = ConformanceFixture::new().unwrap();
    let client = fixture.client();
    let cases = [
        (
            "test_elicitation",
            json!({"message": "Please provide your information"}),
            "User response: action=accept, username=testuser, email=test@example.com",
        ),
        (
            "test_input_required_result_request_state",
            json!({}),
            "state-ok: ok=true",
        ),
        (
            "test_sampling",
            json!({"prompt": "What is the capital of France?"}),
            "LLM response: The capital of France is Paris.",
        ),
        (
            "test_input_required_result_sampling",
            json!({}),
            "The model answered: The capital of France is Paris.",
        ),
        (
            "test_input_required_result_list_roots",
            json!({}),
            "The client's roots: file:///test/root",
        ),
        (
            "test_input_required_result_multiple_inputs",
            json!({}),
            "Hello there!, Alice! (1 roots)",
        ),
        (
            "test_input_required_result_capabilities",
            json!({}),
            "Answers: The capital of France is Paris.; Alice; 1 roots",
        ),
    ];
    for (id, input, expected) in cases {
        let outcome = client
            .invoke(InvocationRequest::new(id, input).with_extension(suite_client()))
            .await;
        assert_eq!(
            outcome.output(),
            Some(&json!(expected)),
            "{id}: {outcome:?}"
        );
    }
    // A client that declared only sampling is asked only that.
    let sampling_only = McpElicitor::scripted(ScriptedAnswers::new().sampling(|_| {
        CreateMessageResult::new(
            SamplingMessage::new(Role::Assistant, SamplingMessageContentBlock::text("Paris")),
            "m".to_owned(),
        )
    }));
    let outcome = client
        .invoke(
            InvocationRequest::new("test_input_required_result_capabilities", json!({}))
                .with_extension(sampling_only.clone()),
        )
        .await;
    assert_eq!(outcome.output(), Some(&json!("Answers: Paris")));
    assert_eq!(sampling_only.asked().len(), 1);
}

#[test]
fn dropping_the_fixture_releases_its_runtime() {
    let fixture = ConformanceFixture::new().unwrap();
    let client = fixture.client();
    drop(fixture);
    // The switch let go of the host: nothing but this client keeps the runtime.
    assert_eq!(std::sync::Arc::strong_count(&client), 1);
}

/// `json_schema_2020_12_tool` is not an RCIP identifier (a `_` must be followed by a
/// lowercase letter), so the capability `json_schema_tool` is listed under that name.
#[test]
fn the_json_schema_tool_is_listed_under_the_suites_name_with_its_schema() {
    assert!(!rcip_core::is_valid_identifier(JSON_SCHEMA_TOOL));
    let fixture = ConformanceFixture::new().unwrap();
    let bridge = fixture.bridge().unwrap();
    let tool = bridge_tool(&bridge, JSON_SCHEMA_TOOL);
    assert_eq!(
        Value::Object((*tool.input_schema).clone()),
        suite_json_schema()
    );
    let header = bridge_tool(&bridge, CUSTOM_HEADER_TOOL);
    assert_eq!(
        header.input_schema["properties"]["value"]["x-mcp-header"],
        json!("Value")
    );
    // The capability's own id is no tool.
    assert!(bridge_tool_opt(&bridge, JSON_SCHEMA_CAPABILITY).is_none());
}

fn bridge_tool_opt(bridge: &rcip_mcp::McpBridge, name: &str) -> Option<Tool> {
    use rcip_mcp::rmcp::ServerHandler;
    bridge.get_tool(name)
}

fn bridge_tool(bridge: &rcip_mcp::McpBridge, name: &str) -> Tool {
    bridge_tool_opt(bridge, name).unwrap()
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

/// The tasks fixtures are long-running as the suite needs them: `greet` never, the ones a
/// client without the extension must be refused `required`, the others `optional`.
#[test]
fn the_task_tools_declare_how_they_run() {
    use rcip_runtime::LongRunning;
    let fixture = ConformanceFixture::new().unwrap();
    let snapshot = fixture.client().get_snapshot();
    let long_running = |id: &str| {
        snapshot
            .capabilities
            .iter()
            .find(|c| c.id == id)
            .unwrap()
            .long_running
    };
    assert_eq!(long_running("greet"), None);
    assert_eq!(long_running("test_simple_text"), None);
    for id in ["slow_compute", "protocol_error_job"] {
        assert_eq!(long_running(id), Some(LongRunning::Optional), "{id}");
    }
    for id in [
        "failing_job",
        "confirm_delete",
        "multi_input",
        "test_tool_with_task",
    ] {
        assert_eq!(long_running(id), Some(LongRunning::Required), "{id}");
    }
}
