//! Data elicitation inside a capability (`McpElicitor`), with rmcp's client in both eras:
//! 2025-11-25 answers `elicitation/create` requests; 2026-07-28 drives the `input_required`
//! rounds through the same `ClientHandler`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod duplex;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use duplex::connect;
use rcip_mcp::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ErrorCode, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, JsonObject, Prompt, PromptMessage, ProtocolVersion, Role,
};
use rcip_mcp::rmcp::service::{RequestContext, RoleClient, ServiceError};
use rcip_mcp::rmcp::{ClientHandler, ErrorData};
use rcip_mcp::{ElicitAnswer, McpBridge, McpElicitor, PromptProvider, ProviderContext};
use rcip_runtime::*;
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Era {
    Legacy,
    Modern,
}

/// The human at the client: answers each form by its message.
#[derive(Clone, Default)]
struct Human {
    elicitation: bool,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicitation {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("elicit-test", "0.0.1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = &request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        self.asked.lock().unwrap().push(message.clone());
        Ok(if message.contains("name") {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
        } else if message.contains("color") {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"color": "teal"}))
        } else {
            ElicitResult::new(ElicitationAction::Decline)
        })
    }
}

struct App {
    _runtime: Runtime,
    bridge: McpBridge,
    _guards: Vec<BindingGuard>,
    /// How often `greet` ran, and how often it reached its side effect.
    runs: Arc<AtomicUsize>,
    effects: Arc<AtomicUsize>,
}

fn form(field: &str) -> Value {
    json!({"type": "object", "properties": {field: {"type": "string"}}, "required": [field]})
}

fn field(answer: &ElicitAnswer, name: &str) -> String {
    answer
        .content()
        .and_then(|c| c[name].as_str())
        .unwrap_or("?")
        .to_owned()
}

fn app() -> App {
    let definition = ApplicationDefinition::new("greeter", "Greeter", "Greets people.")
        .capability(
            CapabilityDefinition::new(
                "greet",
                Effect::Read,
                "Greet",
                "Asks a name and a color, then greets.",
            )
            .output_schema(json!({"type": "object"})),
        )
        .capability(
            CapabilityDefinition::new(
                "sample",
                Effect::Read,
                "Sample",
                "Needs the client's sampling capability.",
            )
            .output_schema(json!({"type": "object"})),
        );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    let host = runtime.host();
    let runs = Arc::new(AtomicUsize::new(0));
    let effects = Arc::new(AtomicUsize::new(0));
    let (r, e) = (runs.clone(), effects.clone());
    let greet = host
        .bind(
            "greet",
            Binding::new(move |_input: Value, ctx: InvocationContext| {
                let (runs, effects) = (r.clone(), e.clone());
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    let elicitor = McpElicitor::from_context(&ctx).unwrap();
                    let name = elicitor
                        .ask("name", "What is your name?", form("name"))
                        .await?;
                    let color = elicitor
                        .ask("color", "Your favorite color?", form("color"))
                        .await?;
                    effects.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(json!({
                        "greeting": format!("Hello {}, {}!", field(&name, "name"), field(&color, "color"))
                    }))
                }
            }),
        )
        .unwrap();
    let sample = host
        .bind(
            "sample",
            Binding::new(|_input: Value, ctx: InvocationContext| async move {
                let elicitor = McpElicitor::from_context(&ctx).unwrap();
                elicitor.require_client_capability("sampling")?;
                Ok::<_, HandlerError>(json!({}))
            }),
        )
        .unwrap();
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    App {
        _runtime: runtime,
        bridge,
        _guards: vec![greet, sample],
        runs,
        effects,
    }
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(serde_json::Map::new())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capability_asks_the_human_for_data_over_several_rounds() {
    for era in [Era::Legacy, Era::Modern] {
        let app = app();
        let human = Human {
            elicitation: true,
            ..Human::default()
        };
        let client = connect(&app.bridge, human.clone(), era == Era::Modern).await;
        let result = client.call_tool(call("greet")).await.unwrap();
        assert_eq!(result.is_error, Some(false), "{era:?}: {result:?}");
        assert_eq!(
            result.structured_content,
            Some(json!({"greeting": "Hello Ada, teal!"})),
            "{era:?}"
        );
        assert_eq!(
            *human.asked.lock().unwrap(),
            ["What is your name?", "Your favorite color?"],
            "{era:?}"
        );
        // 2026-07-28 runs the handler once per round; the side effect, after the
        // questions, happens once in both eras.
        let expected_runs = if era == Era::Legacy { 1 } else { 3 };
        assert_eq!(app.runs.load(Ordering::SeqCst), expected_runs, "{era:?}");
        assert_eq!(app.effects.load(Ordering::SeqCst), 1, "{era:?}");
        client.cancel().await.unwrap();
    }
}

fn missing_capability(error: ServiceError) -> Value {
    let ServiceError::McpError(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
    error.data.unwrap()["requiredCapabilities"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_the_capability_gets_32021() {
    for era in [Era::Legacy, Era::Modern] {
        let app = app();
        let client = connect(&app.bridge, Human::default(), era == Era::Modern).await;
        let error = client.call_tool(call("greet")).await.unwrap_err();
        assert_eq!(
            missing_capability(error),
            json!({"elicitation": {}}),
            "{era:?}"
        );
        assert_eq!(app.effects.load(Ordering::SeqCst), 0);
        let error = client.call_tool(call("sample")).await.unwrap_err();
        assert_eq!(
            missing_capability(error),
            json!({"sampling": {}}),
            "{era:?}"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_elicitation_state_is_refused() {
    let app = app();
    let human = Human {
        elicitation: true,
        ..Human::default()
    };
    let client = connect(&app.bridge, human, true).await;
    let mut request = call("greet");
    request.request_state = Some("forged.state".to_owned());
    let error = client.call_tool(request).await.unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(app.runs.load(Ordering::SeqCst), 0);
    client.cancel().await.unwrap();
}

/// A prompt that asks the human's name before it renders, through its `ProviderContext`.
#[derive(Debug)]
struct Welcome;

impl PromptProvider for Welcome {
    fn list(&self, _cx: ProviderContext) -> BoxFuture<Result<Vec<Prompt>, ErrorData>> {
        Box::pin(async {
            Ok(vec![Prompt::new(
                "welcome",
                Some("Welcome the user."),
                None,
            )])
        })
    }

    fn get(
        &self,
        _name: String,
        arguments: JsonObject,
        cx: ProviderContext,
    ) -> BoxFuture<Result<Option<GetPromptResult>, ErrorData>> {
        Box::pin(async move {
            let elicitor = cx.elicitor().expect("prompts/get has an elicitor").clone();
            let answer = elicitor
                .ask("user_name", "What is your name?", form("name"))
                .await?;
            let tone = arguments
                .get("tone")
                .and_then(Value::as_str)
                .unwrap_or("warm");
            let text = format!("Give {} a {tone} welcome.", field(&answer, "name"));
            Ok(Some(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                text,
            )])))
        })
    }
}

fn welcome_bridge() -> (Runtime, McpBridge) {
    let definition = ApplicationDefinition::new("welcome", "Welcome", "Nothing but a prompt.");
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    let bridge = McpBridge::builder(runtime.client())
        .prompts(Arc::new(Welcome))
        .build()
        .unwrap();
    (runtime, bridge)
}

fn prompt_text(result: &GetPromptResult) -> String {
    serde_json::to_value(&result.messages).unwrap()[0]["content"]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_asks_the_human_before_it_renders() {
    for era in [Era::Legacy, Era::Modern] {
        let (_runtime, bridge) = welcome_bridge();
        let human = Human {
            elicitation: true,
            ..Human::default()
        };
        let client = connect(&bridge, human.clone(), era == Era::Modern).await;
        let got = client
            .get_prompt(GetPromptRequestParams::new("welcome"))
            .await
            .unwrap();
        assert_eq!(prompt_text(&got), "Give Ada a warm welcome.", "{era:?}");
        assert_eq!(
            *human.asked.lock().unwrap(),
            ["What is your name?"],
            "{era:?}"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompts_request_state_is_bound_to_its_arguments() {
    let (_runtime, bridge) = welcome_bridge();
    let human = Human {
        elicitation: true,
        ..Human::default()
    };
    let client = connect(&bridge, human, true).await;
    let warm = GetPromptRequestParams::new("welcome")
        .with_arguments(json!({"tone": "warm"}).as_object().unwrap().clone());
    let GetPromptResponse::InputRequired(round) =
        client.get_prompt_once(warm.clone()).await.unwrap()
    else {
        panic!("the first round asks")
    };
    let requests = serde_json::to_value(&round.input_requests).unwrap();
    assert_eq!(
        requests["user_name"]["method"], "elicitation/create",
        "{requests}"
    );
    let state = round.request_state.unwrap();
    // The same state with the answer, on the same arguments: complete.
    let mut answered = warm.clone();
    answered.request_state = Some(state.clone());
    answered.input_responses = Some(
        [(
            "user_name".to_owned(),
            json!({"action": "accept", "content": {"name": "Lin"}}),
        )]
        .into(),
    );
    let GetPromptResponse::Complete(done) = client.get_prompt_once(answered.clone()).await.unwrap()
    else {
        panic!("the answer completes it")
    };
    assert_eq!(prompt_text(&done), "Give Lin a warm welcome.");
    // Sealed for other arguments, or altered: refused, nothing rendered.
    for (tone, sealed) in [
        ("cold", state.clone()),
        ("warm", format!("{state}-TAMPERED")),
    ] {
        let mut other = answered.clone();
        other.arguments = Some(json!({"tone": tone}).as_object().unwrap().clone());
        other.request_state = Some(sealed);
        let ServiceError::McpError(error) = client.get_prompt_once(other).await.unwrap_err() else {
            panic!("a JSON-RPC error")
        };
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{tone}");
    }
    client.cancel().await.unwrap();
}
