//! The conformance fixture: an rcip application with the tools the official MCP conformance
//! suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12) calls by name, for `rcip-mcp`
//! to serve over streamable HTTP (`tests/interop/mcp.sh`).
//!
//! Only what a plain capability can answer is here: text outputs, a handler failure, tools
//! that must run without side channels, the tool-list switch, and three writes whose
//! confirmation goes to the client (the bridge's own elicitation path, which is all the
//! scenarios that call them check). Each scenario of both required sets, the tool it needs
//! and whether a plain capability can serve it are listed in `docs/mcp-conformance.md`; the
//! content tools answer MCP content blocks ([`CONTENT_TOOLS`], served with the bridge's
//! content mapping), the progress tool reports through `rcip_mcp::McpProgress`, the data
//! elicitation tools ask through `rcip_mcp::McpElicitor`, and the logging tool, at the end,
//! logs through `rcip_mcp::McpLog`; the rest (the other MRTR fixtures) needs a bridge feature.
//!
//! The fixture's policy asks for confirmation of [`CONFIRMED`] and allows everything else.
//! Serve it with a confirmation broker over [`ConformanceFixture::host`]: the suite answers
//! every elicitation with content of its own (`{"username", "email"}`, `{"ok": true}`), not
//! with the bridge's approval, so these calls end declined (`CONFIRMATION_DECLINED`, a
//! complete `isError` result), which is what the scenarios accept.

// rmcp marks the sampling types deprecated (SEP-2577 drops sampling from a future revision);
// both revisions served here have it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rcip_mcp::rmcp::model::{CreateMessageRequestParams, CreateMessageResult, SamplingMessage};
use rcip_mcp::{
    BridgeError, ElicitAnswer, HostBroker, McpBridge, McpElicitor, McpLog, McpLogLevel,
    McpProgress, content_field,
};
use rcip_runtime::{
    BindingGuard, BindingGuards, BoxFuture, Capability, Error, HandlerError, Host,
    InvocationContext, NoInput, PolicyDecision, RcipClient, Runtime, RuntimeOptions, capability,
    catalog, policy_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `test_simple_text`'s output, the suite's exact text (scenario `tools-call-simple-text`).
pub const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// `test_error_handling`'s public failure message (scenario `tools-call-error`; the suite
/// checks `isError: true` and a non-empty first text block).
pub const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";

/// `test_error_handling`'s public failure code.
pub const ERROR_CODE: &str = "TEST_ERROR";

/// The capability `test_trigger_tool_change` binds and unbinds.
pub const TOGGLED_TOOL: &str = "test_toggled_tool";

/// The capability the fixture's policy confirms: its confirmation is the `input_required`
/// result (2026-07-28) whose state the scenario tampers with.
pub const CONFIRMED: [&str; 1] = ["test_input_required_result_tampered_state"];

/// What the suite sends `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElicitationInput {
    /// The message to show the user.
    pub message: String,
}

/// Simple text.
///
/// Returns the conformance suite's simple text response (scenario tools-call-simple-text).
#[capability(effect = "read", id = "test_simple_text")]
fn test_simple_text() -> String {
    SIMPLE_TEXT.to_owned()
}

/// Error handling.
///
/// Always fails with a public failure (scenario tools-call-error).
#[capability(effect = "read", id = "test_error_handling")]
fn test_error_handling() -> Result<String, HandlerError> {
    Err(HandlerError::public(ERROR_CODE, ERROR_TEXT, Vec::new()))
}

/// Logging tool.
///
/// Returns text and never logs: the request set no log level (scenario server-stateless,
/// check sep-2575-server-no-log-without-loglevel).
#[capability(effect = "read", id = "test_logging_tool")]
fn test_logging_tool() -> String {
    "Logging tool completed without log messages.".to_owned()
}

/// Streaming elicitation.
///
/// Returns text with nothing else on the response stream (scenario server-stateless, check
/// sep-2575-http-server-no-independent-requests-on-stream).
#[capability(effect = "read", id = "test_streaming_elicitation")]
fn test_streaming_elicitation() -> String {
    "Streaming elicitation completed.".to_owned()
}

/// Toggled tool.
///
/// Listed only while bound: test_trigger_tool_change binds and unbinds it. A contract
/// without a handler (`#[derive(Capability)]`), so `bind_all` leaves it to the switch.
#[derive(Debug, Deserialize, JsonSchema, Capability)]
#[rcip(id = "test_toggled_tool", effect = "read", output = String, idempotent)]
#[serde(deny_unknown_fields)]
pub struct ToggledTool {}

/// Trigger a tool change.
///
/// Binds test_toggled_tool when it is unbound and unbinds it when it is bound, so the tool
/// list changes (scenario server-stateless, check
/// sep-2575-server-sends-tools-list-changed-on-subscription).
#[capability(effect = "write", id = "test_trigger_tool_change")]
async fn test_trigger_tool_change(
    switch: ToolSwitch,
    _input: NoInput,
) -> Result<String, HandlerError> {
    switch.toggle().await
}

/// Elicitation.
///
/// Asks the user for a username and an email address with the message it is given, and
/// answers what they entered (scenario tools-call-elicitation, 2025-11-25).
#[capability(effect = "read", id = "test_elicitation")]
async fn test_elicitation(
    input: ElicitationInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let answer = elicitor.ask("user_info", input.message, schema).await?;
    Ok(format!(
        "User response: action={}, username={}, email={}",
        answer.action(),
        answered(&answer, "username"),
        answered(&answer, "email")
    ))
}

/// Input required: request state.
///
/// Asks the user to confirm under the key confirm; in 2026-07-28 the question comes with an
/// integrity-protected requestState and the retry carries the answer (scenario
/// input-required-result-request-state).
#[capability(effect = "read", id = "test_input_required_result_request_state")]
async fn test_input_required_result_request_state(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let schema = json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"]
    });
    let answer = elicitor.ask("confirm", "Please confirm", schema).await?;
    let ok = answer.content().and_then(|c| c.get("ok")).cloned();
    Ok(format!("state-ok: ok={}", ok.unwrap_or(Value::Null)))
}

/// Input required: tampered state.
///
/// A write confirmed through the client; a retry whose requestState was altered is refused
/// with a JSON-RPC error (scenario input-required-result-tampered-state).
#[capability(effect = "write", id = "test_input_required_result_tampered_state")]
fn test_input_required_result_tampered_state() -> String {
    "state-ok: confirmed".to_owned()
}

/// The tools whose output is MCP content blocks (`{"content": [...]}`): serve the fixture
/// with `rcip_mcp::content_field` as the content mapping for these.
pub const CONTENT_TOOLS: [&str; 4] = [
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
];

/// A 1x1 red pixel, PNG, base64.
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// Eight silent samples, 16-bit mono 8 kHz WAV, base64.
pub const SILENT_WAV: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

/// A content tool's output: MCP content blocks in their wire form, which the bridge's
/// content mapping (`rcip_mcp::content_field`) turns into the call's content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ContentBlocks {
    /// The blocks.
    pub content: Vec<Block>,
}

/// One MCP content block, as the wire spells it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Block {
    /// A text block.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64.
    Image {
        /// The bytes, base64.
        data: String,
        /// The image's media type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A sound, base64.
    Audio {
        /// The bytes, base64.
        data: String,
        /// The sound's media type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded text resource.
    Resource {
        /// The resource.
        resource: TextResource,
    },
}

/// An embedded resource's text contents.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TextResource {
    /// The resource's URI.
    pub uri: String,
    /// Its media type.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
    /// Its text.
    pub text: String,
}

fn image_block() -> Block {
    Block::Image {
        data: RED_PIXEL_PNG.to_owned(),
        mime_type: "image/png".to_owned(),
    }
}

fn resource_block(uri: &str, mime_type: &str, text: &str) -> Block {
    Block::Resource {
        resource: TextResource {
            uri: uri.to_owned(),
            mime_type: mime_type.to_owned(),
            text: text.to_owned(),
        },
    }
}

/// Image content.
///
/// Returns one image block, a 1x1 red PNG (scenario tools-call-image).
#[capability(effect = "read", id = "test_image_content")]
fn test_image_content() -> ContentBlocks {
    ContentBlocks {
        content: vec![image_block()],
    }
}

/// Audio content.
///
/// Returns one audio block, a short silent WAV (scenario tools-call-audio).
#[capability(effect = "read", id = "test_audio_content")]
fn test_audio_content() -> ContentBlocks {
    ContentBlocks {
        content: vec![Block::Audio {
            data: SILENT_WAV.to_owned(),
            mime_type: "audio/wav".to_owned(),
        }],
    }
}

/// Embedded resource.
///
/// Returns one embedded text resource (scenario tools-call-embedded-resource).
#[capability(effect = "read", id = "test_embedded_resource")]
fn test_embedded_resource() -> ContentBlocks {
    ContentBlocks {
        content: vec![resource_block(
            "test://embedded-resource",
            "text/plain",
            "This is an embedded resource content.",
        )],
    }
}

/// Multiple content types.
///
/// Returns a text, an image and an embedded JSON resource (scenario tools-call-mixed-content).
#[capability(effect = "read", id = "test_multiple_content_types")]
fn test_multiple_content_types() -> ContentBlocks {
    ContentBlocks {
        content: vec![
            Block::Text {
                text: "Multiple content types test:".to_owned(),
            },
            image_block(),
            resource_block(
                "test://mixed-content-resource",
                "application/json",
                r#"{"test":"data","value":123}"#,
            ),
        ],
    }
}

/// Tool with progress.
///
/// Reports progress 0, 50 and 100 of 100, about 50 ms apart, when the call carries a
/// progress token (scenario tools-call-with-progress).
#[capability(effect = "read", id = "test_tool_with_progress")]
async fn test_tool_with_progress(context: InvocationContext) -> String {
    let progress = context.extensions().get::<McpProgress>();
    for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        if let Some(progress) = progress {
            progress.report(done, Some(100.0), None).await;
        }
    }
    "Progress tool completed.".to_owned()
}

/// The answer's action and content, as the SEP-1034/SEP-1330 scenarios print them.
fn completed(answer: &ElicitAnswer) -> String {
    let content = answer.content().cloned().unwrap_or(Value::Null);
    format!(
        "Elicitation completed: action={}, content={content}",
        answer.action()
    )
}

/// Elicitation with defaults.
///
/// Asks the user for a form whose fields all have defaults (scenario
/// elicitation-sep1034-defaults, SEP-1034).
#[capability(effect = "read", id = "test_elicitation_sep1034_defaults")]
async fn test_elicitation_sep1034_defaults(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    });
    let answer = elicitor
        .ask(
            "defaults",
            "Please review and update the form fields with defaults",
            schema,
        )
        .await?;
    Ok(completed(&answer))
}

/// Elicitation with enums.
///
/// Asks the user for a form with the five enum forms of SEP-1330 (scenario
/// elicitation-sep1330-enums).
#[capability(effect = "read", id = "test_elicitation_sep1330_enums")]
async fn test_elicitation_sep1330_enums(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        }
    });
    let answer = elicitor
        .ask(
            "enums",
            "Please select options from the enum fields",
            schema,
        )
        .await?;
    Ok(completed(&answer))
}

/// A one-string form.
fn string_form(field: &str) -> Value {
    json!({
        "type": "object",
        "properties": {field: {"type": "string"}},
        "required": [field]
    })
}

/// The string field `field` of an accepted answer.
fn answered(answer: &ElicitAnswer, field: &str) -> String {
    answer
        .content()
        .and_then(|c| c.get(field))
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned()
}

/// Input required: elicitation.
///
/// Asks the user's name under the key user_name, then greets them (scenarios
/// input-required-result-basic-elicitation, -missing-input-response, -ignore-extra-params,
/// -result-type, -validate-input).
#[capability(effect = "read", id = "test_input_required_result_elicitation")]
async fn test_input_required_result_elicitation(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let answer = elicitor
        .ask("user_name", "What is your name?", string_form("name"))
        .await?;
    Ok(format!("Hello, {}!", answered(&answer, "name")))
}

/// Input required: multi round.
///
/// Asks the user's name, then their favorite color, in two rounds (scenario
/// input-required-result-multi-round).
#[capability(effect = "read", id = "test_input_required_result_multi_round")]
async fn test_input_required_result_multi_round(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let name = elicitor
        .ask("step1", "Step 1: What is your name?", string_form("name"))
        .await?;
    let color = elicitor
        .ask(
            "step2",
            "Step 2: What is your favorite color?",
            string_form("color"),
        )
        .await?;
    Ok(format!(
        "Hello, {}! Your favorite color is {}.",
        answered(&name, "name"),
        answered(&color, "color")
    ))
}

/// Missing capability.
///
/// Needs the client's sampling capability: a client that did not declare it gets -32021
/// (scenario server-stateless, check sep-2575-server-rejects-undeclared-capability).
#[capability(effect = "read", id = "test_missing_capability")]
fn test_missing_capability(_input: NoInput, elicitor: McpElicitor) -> Result<String, HandlerError> {
    elicitor.require_client_capability("sampling")?;
    Ok("The client declared sampling.".to_owned())
}

/// Tool with logging.
///
/// Sends three info log messages, about 50 ms apart: "Tool execution started", "Tool
/// processing data", "Tool execution completed" (scenario tools-call-with-logging).
#[capability(effect = "read", id = "test_tool_with_logging")]
async fn test_tool_with_logging(context: InvocationContext) -> String {
    let log = context.extensions().get::<McpLog>();
    let messages = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (step, message) in messages.into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        if let Some(log) = log {
            log.emit(McpLogLevel::Info, None, Value::from(message))
                .await;
        }
    }
    "Logging tool completed.".to_owned()
}

/// The first text block of a sampled message.
fn sampled_text(result: &CreateMessageResult) -> String {
    result
        .message
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

/// A user message asking the client's model `text`.
fn question(text: &str, max_tokens: u32) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], max_tokens)
}

/// What the suite sends `test_sampling`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SamplingInput {
    /// The prompt for the client's model.
    pub prompt: String,
}

/// Sampling.
///
/// Asks the client's model the prompt it is given and answers with the model's text
/// (scenario tools-call-sampling, 2025-11-25).
#[capability(effect = "read", id = "test_sampling")]
async fn test_sampling(
    input: SamplingInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let result = elicitor
        .create_message("sampling", question(&input.prompt, 100))
        .await?;
    Ok(format!("LLM response: {}", sampled_text(&result)))
}

/// Input required: sampling.
///
/// Asks the client's model the capital of France under the key capital_question (scenario
/// input-required-result-basic-sampling).
#[capability(effect = "read", id = "test_input_required_result_sampling")]
async fn test_input_required_result_sampling(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let result = elicitor
        .create_message(
            "capital_question",
            question("What is the capital of France?", 100),
        )
        .await?;
    Ok(format!("The model answered: {}", sampled_text(&result)))
}

/// Input required: roots.
///
/// Reads the client's roots under the key client_roots (scenario
/// input-required-result-basic-list-roots).
#[capability(effect = "read", id = "test_input_required_result_list_roots")]
async fn test_input_required_result_list_roots(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let roots = elicitor.list_roots("client_roots").await?;
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("The client's roots: {}", uris.join(", ")))
}

/// Input required: several inputs.
///
/// Asks the user's name, the client's model for a greeting and the client's roots in one
/// round (scenario input-required-result-multiple-input-requests).
#[capability(effect = "read", id = "test_input_required_result_multiple_inputs")]
async fn test_input_required_result_multiple_inputs(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    // Every request first, then the errors: one round asks all three.
    let (name, greeting, roots) = (
        elicitor
            .ask("user_name", "What is your name?", string_form("name"))
            .await,
        elicitor
            .create_message("greeting", question("Say hello.", 50))
            .await,
        elicitor.list_roots("client_roots").await,
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{}, {}! ({} roots)",
        sampled_text(&greeting),
        answered(&name, "name"),
        roots.len()
    ))
}

/// Input required: client capabilities.
///
/// Asks only what the client declared it can answer: its model, the user, its roots
/// (scenario input-required-result-capability-check).
#[capability(effect = "read", id = "test_input_required_result_capabilities")]
async fn test_input_required_result_capabilities(
    _input: NoInput,
    elicitor: McpElicitor,
) -> Result<String, HandlerError> {
    let mut answers = Vec::new();
    if elicitor.client_supports("sampling") {
        let result = elicitor
            .create_message(
                "capital_question",
                question("What is the capital of France?", 100),
            )
            .await;
        answers.push(result.map(|r| sampled_text(&r)));
    }
    if elicitor.client_supports("elicitation") {
        let result = elicitor
            .ask("user_name", "What is your name?", string_form("name"))
            .await;
        answers.push(result.map(|a| answered(&a, "name")));
    }
    if elicitor.client_supports("roots") {
        let result = elicitor.list_roots("client_roots").await;
        answers.push(result.map(|roots| format!("{} roots", roots.len())));
    }
    let answers = answers.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(format!("Answers: {}", answers.join("; ")))
}

/// Reconnection.
///
/// Answers after a short pause, on the call's event stream (scenario server-sse-polling,
/// 2025-11-25).
#[capability(effect = "read", id = "test_reconnection")]
async fn test_reconnection() -> String {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    "Reconnection test completed.".to_owned()
}

catalog! {
    /// The conformance fixture's catalog.
    pub struct ConformanceApp {
        id = "mcp-conformance",
        name = "MCP conformance fixture",
        description = "The tools the official MCP conformance suite calls by name.",
        version = "1.0.0",
        capabilities = [
            test_simple_text,
            test_error_handling,
            test_logging_tool,
            test_streaming_elicitation,
            ToggledTool,
            test_trigger_tool_change,
            test_elicitation,
            test_input_required_result_request_state,
            test_input_required_result_tampered_state,
            test_image_content,
            test_audio_content,
            test_embedded_resource,
            test_multiple_content_types,
            test_tool_with_progress,
            test_elicitation_sep1034_defaults,
            test_elicitation_sep1330_enums,
            test_input_required_result_elicitation,
            test_input_required_result_multi_round,
            test_missing_capability,
            test_tool_with_logging,
            test_sampling,
            test_input_required_result_sampling,
            test_input_required_result_list_roots,
            test_input_required_result_multiple_inputs,
            test_input_required_result_capabilities,
            test_reconnection,
        ],
    }
}

/// Where the instances of a deployment of the fixture share whether the toggled tool is
/// bound, so that a change made through one is every instance's (the fixture server keeps it
/// in its PostgreSQL database with `--database`).
pub trait SwitchStore: Send + Sync + 'static {
    /// Flips the shared state; whether the tool is now bound.
    fn flip(&self) -> BoxFuture<Result<bool, String>>;
    /// Whether the tool is bound.
    fn read(&self) -> BoxFuture<Result<bool, String>>;
}

/// What `test_trigger_tool_change` holds: the host (trusted code: the fixture's own), the
/// toggled tool's binding while it is bound, and where the state is shared, if it is.
#[derive(Clone, Default)]
pub struct ToolSwitch(Arc<Mutex<SwitchState>>);

#[derive(Default)]
struct SwitchState {
    host: Option<Host>,
    guard: Option<BindingGuard>,
    store: Option<Arc<dyn SwitchStore>>,
}

impl std::fmt::Debug for ToolSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSwitch").finish_non_exhaustive()
    }
}

impl ToolSwitch {
    fn state(&self) -> Result<std::sync::MutexGuard<'_, SwitchState>, HandlerError> {
        self.0
            .lock()
            .map_err(|_| HandlerError::failed("switch lock poisoned"))
    }

    /// Binds the tool when it is unbound and unbinds it when it is bound (in the shared
    /// state first, when there is one).
    async fn toggle(&self) -> Result<String, HandlerError> {
        let store = self.state()?.store.clone();
        let bound = match store {
            Some(store) => store.flip().await.map_err(HandlerError::failed)?,
            None => self.state()?.guard.is_none(),
        };
        self.apply(bound)
    }

    /// Binds or unbinds the tool here to match `bound`.
    fn apply(&self, bound: bool) -> Result<String, HandlerError> {
        let mut state = self.state()?;
        if !bound {
            // Dropping the guard unbinds the tool and publishes a new revision.
            state.guard = None;
            return Ok(format!("{TOGGLED_TOOL} unbound"));
        }
        if state.guard.is_none() {
            let host = state
                .host
                .clone()
                .ok_or_else(|| HandlerError::failed("the fixture has shut down"))?;
            let guard = host
                .bind_typed::<ToggledTool, _, _>(|_input, _context| async {
                    Ok("The toggled tool is bound.".to_owned())
                })
                .map_err(HandlerError::failed)?;
            state.guard = Some(guard);
        }
        Ok(format!("{TOGGLED_TOOL} bound"))
    }

    /// Brings the tool here in line with the shared state (nothing without one).
    async fn resync(&self) -> Result<(), HandlerError> {
        let store = self.state()?.store.clone();
        if let Some(store) = store {
            let bound = store.read().await.map_err(HandlerError::failed)?;
            self.apply(bound)?;
        }
        Ok(())
    }

    /// Lets go of the host and the toggled binding: the switch lives in a binding of the
    /// same runtime, so holding the host would keep the runtime alive for ever.
    fn release(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.guard = None;
            state.host = None;
        }
    }
}

/// The fixture application: a runtime with every capability bound (the toggled tool
/// included, until `test_trigger_tool_change` unbinds it) and a policy that confirms
/// [`CONFIRMED`] and allows the rest. Serve [`client`](Self::client) with `rcip-mcp`, with a
/// confirmation broker over [`host`](Self::host).
#[derive(Debug)]
pub struct ConformanceFixture {
    runtime: Runtime,
    guards: Option<BindingGuards>,
    /// The bindings of the tools with hand-written schemas and of the long-running ones.
    schema_tools: Vec<BindingGuard>,
    switch: ToolSwitch,
}

impl ConformanceFixture {
    /// Builds the runtime and binds everything.
    ///
    /// # Errors
    ///
    /// What [`Runtime::new`] and binding return (neither happens with this catalog).
    pub fn new() -> Result<Self, Error> {
        Self::with_options(RuntimeOptions::default())
    }

    /// Builds the runtime on `options` (a [`ConfirmationStore`](rcip_runtime::ConfirmationStore)
    /// shared by several instances, say) with the fixture's policy, and binds everything.
    ///
    /// # Errors
    ///
    /// What [`Runtime::new`] and binding return (neither happens with this catalog).
    pub fn with_options(options: RuntimeOptions) -> Result<Self, Error> {
        let mut definition = ConformanceApp::definition()?;
        let tasks = crate::mcp_conformance_tasks::ConformanceTasks::definition()?;
        for capability in tasks
            .capabilities
            .into_iter()
            .chain(crate::mcp_conformance_schemas::definitions())
        {
            definition = definition.capability(capability);
        }
        let runtime = Runtime::new(
            definition,
            options.policy(policy_fn(|context| {
                if CONFIRMED.contains(&context.capability().id.as_str()) && !context.confirmed() {
                    PolicyDecision::Confirm { reason: None }
                } else {
                    PolicyDecision::Allow
                }
            })),
        )?;
        let host = runtime.host();
        let switch = ToolSwitch::default();
        let guards = ConformanceApp::bind_all(&host, (switch.clone(),))?;
        let mut schema_tools = crate::mcp_conformance_schemas::bind(&host)?;
        schema_tools.extend(
            crate::mcp_conformance_tasks::ConformanceTasks::bind_all(&host, ())?.into_vec(),
        );
        if let Ok(mut state) = switch.0.lock() {
            state.host = Some(host);
        }
        // The toggled tool starts bound.
        switch
            .apply(true)
            .map_err(|_| Error::Unbound(vec![TOGGLED_TOOL.to_owned()]))?;
        Ok(ConformanceFixture {
            runtime,
            guards: Some(guards),
            schema_tools,
            switch,
        })
    }

    /// The client to serve.
    #[must_use]
    pub fn client(&self) -> Arc<dyn RcipClient> {
        self.runtime.client()
    }

    /// The host: for the confirmation broker, and for tests.
    #[must_use]
    pub fn host(&self) -> Host {
        self.runtime.host()
    }

    /// The bridge the fixture server serves: confirmations through the client (a broker over
    /// [`host`](Self::host)), the content tools' blocks, the resources and prompts, and the
    /// JSON Schema tool under the name the suite looks for.
    ///
    /// # Errors
    ///
    /// What [`McpBridgeBuilder::build`](rcip_mcp::McpBridgeBuilder::build) returns (never
    /// with this catalog).
    pub fn bridge(&self) -> Result<McpBridge, BridgeError> {
        self.bridge_builder().build()
    }

    /// Shares whether the toggled tool is bound through `store` with the deployment's other
    /// instances, and takes the state it holds.
    ///
    /// # Errors
    ///
    /// The store's, when it cannot be read.
    pub async fn share_tool_switch(&self, store: Arc<dyn SwitchStore>) -> Result<(), String> {
        if let Ok(mut state) = self.switch.0.lock() {
            state.store = Some(store);
        }
        self.switch.resync().await.map_err(|e| e.to_string())
    }

    /// What the endpoint calls when another instance's listing changed
    /// ([`HttpOptions::on_remote_change`](rcip_mcp::HttpOptions::on_remote_change)): the
    /// toggled tool here follows the shared state.
    pub fn on_remote_change(&self) -> impl Fn() -> BoxFuture<()> + Send + Sync + 'static {
        let switch = self.switch.clone();
        move || {
            let switch = switch.clone();
            Box::pin(async move {
                if let Err(error) = switch.resync().await {
                    eprintln!("the toggled tool could not follow the shared state: {error}");
                }
            })
        }
    }

    /// The builder [`bridge`](Self::bridge) builds, for a host that adds to it (a shared
    /// task store and `requestState` key when several instances serve the fixture).
    #[must_use]
    pub fn bridge_builder(&self) -> rcip_mcp::McpBridgeBuilder {
        use crate::mcp_conformance_resources::{ConformancePrompts, ConformanceResources};
        use crate::mcp_conformance_schemas::{JSON_SCHEMA_CAPABILITY, JSON_SCHEMA_TOOL};
        McpBridge::builder(self.client())
            .confirmations(Arc::new(HostBroker::new(self.host())))
            .server_info("rcip-conformance", env!("CARGO_PKG_VERSION"))
            .content(|id, output| {
                CONTENT_TOOLS
                    .contains(&id)
                    .then(|| content_field(output))
                    .flatten()
            })
            .resources(Arc::new(ConformanceResources))
            .prompts(Arc::new(ConformancePrompts))
            .tool_name(JSON_SCHEMA_CAPABILITY, JSON_SCHEMA_TOOL)
    }
}

impl Drop for ConformanceFixture {
    fn drop(&mut self) {
        self.switch.release();
        self.guards = None;
        self.schema_tools.clear();
    }
}
