//! Sampling and roots from a handler (`McpElicitor::create_message`, `::list_roots`), with
//! rmcp's client in both eras: 2025-11-25 answers server-to-client requests; 2026-07-28
//! answers the `input_required` rounds through the same `ClientHandler`. In process, the
//! requests fail with `NoClient`, and a scripted client answers them.
#![allow(clippy::unwrap_used, clippy::panic, deprecated)]

mod duplex;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use duplex::connect;
use rcip_mcp::rmcp::ClientHandler;
use rcip_mcp::rmcp::ErrorData;
use rcip_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, Implementation, InputRequest, ListRootsResult, ProtocolVersion,
    Role, Root, SamplingMessage, SamplingMessageContentBlock,
};
use rcip_mcp::rmcp::service::{RequestContext, RoleClient, ServiceError};
use rcip_mcp::{ElicitError, McpBridge, McpElicitor, ScriptedAnswers};
use rcip_runtime::*;
use serde_json::{Value, json};

const ERAS: [bool; 2] = [false, true];

/// The client: its model answers every prompt, its user has one root and a name.
#[derive(Clone)]
struct Agent {
    sampling: bool,
    roots: bool,
    elicitation: bool,
    prompts: Arc<Mutex<Vec<String>>>,
    requests: Arc<AtomicUsize>,
}

impl Agent {
    fn new() -> Self {
        Self {
            sampling: true,
            roots: true,
            elicitation: true,
            prompts: Arc::default(),
            requests: Arc::default(),
        }
    }
}

impl ClientHandler for Agent {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.sampling {
            capabilities = ClientCapabilities::builder().enable_sampling().build();
        }
        if self.roots {
            capabilities.roots = ClientCapabilities::builder().enable_roots().build().roots;
        }
        if self.elicitation {
            capabilities.elicitation = ClientCapabilities::builder()
                .enable_elicitation()
                .build()
                .elicitation;
        }
        ClientConfig::new(capabilities, Implementation::new("agent", "0.0.1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        let prompt = params
            .messages
            .first()
            .and_then(|m| m.content.first())
            .and_then(SamplingMessageContentBlock::as_text)
            .map(|t| t.text.clone())
            .unwrap_or_default();
        self.prompts.lock().unwrap().push(prompt.clone());
        Ok(CreateMessageResult::new(
            SamplingMessage::new(
                Role::Assistant,
                SamplingMessageContentBlock::text(format!("an answer to: {prompt}")),
            ),
            "test-model".to_owned(),
        ))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        Ok(ListRootsResult::new(vec![Root::new("file:///work/notes")]))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.requests.fetch_add(1, Ordering::SeqCst);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})))
    }
}

fn text_of(result: &CreateMessageResult) -> String {
    result
        .message
        .content
        .first()
        .and_then(SamplingMessageContentBlock::as_text)
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

/// `notes.summarise` asks the model and reads the roots, in one round; `notes.classify`
/// asks the model only; `notes.everything` asks the user, the model and the roots at once.
fn runtime() -> Runtime {
    let definition = ApplicationDefinition::new("notes", "Notes", "Keeps notes.")
        .capability(
            CapabilityDefinition::new("notes.summarise", Effect::Read, "Summarise", "Summarises.")
                .output_schema(json!({"type": "string"})),
        )
        .capability(
            CapabilityDefinition::new("notes.classify", Effect::Read, "Classify", "Classifies.")
                .output_schema(json!({"type": "string"})),
        )
        .capability(
            CapabilityDefinition::new("notes.everything", Effect::Read, "All", "Asks all.")
                .output_schema(json!({"type": "string"})),
        );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    let host = runtime.host();
    host.bind(
        "notes.summarise",
        Binding::new(|_input: Value, ctx: InvocationContext| async move {
            let elicitor = McpElicitor::from_context(&ctx).unwrap_or_else(McpElicitor::detached);
            let prompt = CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("Summarise the notes.")],
                50,
            );
            let (summary, roots) = (
                elicitor.create_message("summary", prompt).await,
                elicitor.list_roots("roots").await,
            );
            let (summary, roots) = (summary?, roots?);
            let uris: Vec<String> = roots.into_iter().map(|r| r.uri).collect();
            Ok::<_, HandlerError>(json!(format!(
                "{} | roots: {}",
                text_of(&summary),
                uris.join(",")
            )))
        }),
    )
    .unwrap()
    .keep();
    host.bind(
        "notes.classify",
        Binding::new(|_input: Value, ctx: InvocationContext| async move {
            let elicitor = McpElicitor::from_context(&ctx).unwrap_or_else(McpElicitor::detached);
            let prompt = CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("Classify the note.")],
                10,
            );
            match elicitor.create_message("class", prompt).await {
                Ok(result) => Ok::<_, HandlerError>(json!(text_of(&result))),
                // In process: a handler can do without.
                Err(ElicitError::NoClient) => Ok(json!("unclassified")),
                Err(other) => Err(other.into()),
            }
        }),
    )
    .unwrap()
    .keep();
    host.bind(
        "notes.everything",
        Binding::new(|_input: Value, ctx: InvocationContext| async move {
            let elicitor = McpElicitor::from_context(&ctx).unwrap_or_else(McpElicitor::detached);
            let form = json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let prompt =
                CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Hello?")], 10);
            let (name, greeting, roots) = (
                elicitor.ask("user_name", "Your name?", form).await,
                elicitor.create_message("greeting", prompt).await,
                elicitor.list_roots("client_roots").await,
            );
            let (name, greeting, roots) = (name?, greeting?, roots?);
            Ok::<_, HandlerError>(json!(format!(
                "{} {} {}",
                name.content().unwrap()["name"].as_str().unwrap(),
                text_of(&greeting),
                roots.len()
            )))
        }),
    )
    .unwrap()
    .keep();
    runtime
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
}

fn text(response: &rcip_mcp::rmcp::model::CallToolResult) -> String {
    response.content[0].as_text().unwrap().text.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_and_roots_answered_by_the_client_reach_the_handler() {
    let runtime = runtime();
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    for modern in ERAS {
        let agent = Agent::new();
        let client = connect(&bridge, agent.clone(), modern).await;
        let result = client.call_tool(call("notes.summarise")).await.unwrap();
        assert_eq!(result.is_error, Some(false), "{result:?}");
        let expected = "an answer to: Summarise the notes. | roots: file:///work/notes";
        assert!(text(&result).contains(expected), "{result:?}");
        assert_eq!(*agent.prompts.lock().unwrap(), ["Summarise the notes."]);
        assert_eq!(agent.requests.load(Ordering::SeqCst), 2);
        let result = client.call_tool(call("notes.everything")).await.unwrap();
        assert!(
            text(&result).contains("Ada an answer to: Hello? 1"),
            "{result:?}"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_2026_07_28_several_requests_come_in_one_round() {
    let runtime = runtime();
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    let client = connect(&bridge, Agent::new(), true).await;
    let response = client
        .call_tool_once(call("notes.everything"))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(round) = response else {
        panic!("{response:?}")
    };
    let requests = round.input_requests.unwrap();
    let kinds: Vec<(&str, &str)> = requests
        .iter()
        .map(|(key, request)| {
            let kind = match request {
                InputRequest::Elicitation(_) => "elicitation",
                InputRequest::CreateMessage(_) => "sampling",
                InputRequest::ListRoots(_) => "roots",
                _ => "other",
            };
            (key.as_str(), kind)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("client_roots", "roots"),
            ("greeting", "sampling"),
            ("user_name", "elicitation")
        ]
    );
    assert!(round.request_state.is_some());
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_sampling_gets_the_missing_capability_error() {
    let runtime = runtime();
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    for modern in ERAS {
        let agent = Agent {
            sampling: false,
            ..Agent::new()
        };
        let client = connect(&bridge, agent.clone(), modern).await;
        let error = client.call_tool(call("notes.summarise")).await.unwrap_err();
        let ServiceError::McpError(error) = error else {
            panic!("{error:?}")
        };
        assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            error.data,
            Some(json!({"requiredCapabilities": {"sampling": {}}}))
        );
        assert!(
            agent.prompts.lock().unwrap().is_empty(),
            "the model was never asked"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn in_process_the_handler_sees_no_client_and_a_scripted_client_answers() {
    let runtime = runtime();
    let client = runtime.client();
    // No MCP client: a handler that can do without does.
    let outcome = client
        .invoke(InvocationRequest::new("notes.classify", json!({})))
        .await;
    assert_eq!(outcome.output(), Some(&json!("unclassified")));
    // One that cannot fails with the stable code.
    let outcome = client
        .invoke(InvocationRequest::new("notes.summarise", json!({})))
        .await;
    assert_eq!(
        outcome.error().unwrap().message,
        "MCP_ELICITOR_UNAVAILABLE: no MCP client called this capability"
    );
    // The test kit answers for the client.
    let scripted = McpElicitor::scripted(
        ScriptedAnswers::new()
            .sampling(|params| {
                assert_eq!(params.max_tokens, 50);
                CreateMessageResult::new(
                    SamplingMessage::new(
                        Role::Assistant,
                        SamplingMessageContentBlock::text("short"),
                    ),
                    "scripted".to_owned(),
                )
            })
            .roots(vec![Root::new("file:///a"), Root::new("file:///b")]),
    );
    let outcome = client
        .invoke(
            InvocationRequest::new("notes.summarise", json!({})).with_extension(scripted.clone()),
        )
        .await;
    assert_eq!(
        outcome.output(),
        Some(&json!("short | roots: file:///a,file:///b"))
    );
    let keys: Vec<String> = scripted.asked().into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["summary", "roots"]);
    // A kind the scripted client has no answer for is a capability it did not declare.
    let outcome = client
        .invoke(
            InvocationRequest::new("notes.everything", json!({}))
                .with_extension(McpElicitor::scripted(ScriptedAnswers::new())),
        )
        .await;
    assert!(
        outcome
            .error()
            .unwrap()
            .message
            .starts_with("MCP_CLIENT_CAPABILITY_MISSING"),
        "{outcome:?}"
    );
}
