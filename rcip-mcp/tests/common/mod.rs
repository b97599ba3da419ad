//! The notes app the bridge tests run on, and an rmcp client whose "human" answers
//! elicitations as told.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
};
use rcip_mcp::rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rcip_mcp::rmcp::{ClientHandler, ErrorData};
use rcip_mcp::{HostBroker, McpBridge};
use rcip_runtime::*;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// The secret a failing handler's error carries; it must never reach a result.
pub const SECRET: &str = "db password hunter2";

pub struct App {
    pub runtime: Runtime,
    pub bridge: McpBridge,
    pub guards: Mutex<HashMap<&'static str, BindingGuard>>,
    pub notes: Arc<Mutex<Vec<String>>>,
    /// Notified when the slow handler saw its cancellation.
    pub slow_cancelled: Arc<Notify>,
    /// The principal the last `notes.add` run saw.
    pub last_principal: Arc<Mutex<Option<String>>>,
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

pub fn definition() -> ApplicationDefinition {
    ApplicationDefinition::new("notes", "Notes", "A notebook for tests.")
        .scope(ScopeDefinition::new("notes", "Notes", "The notes."))
        .capability(
            CapabilityDefinition::new(
                "notes.list",
                Effect::Read,
                "List notes",
                "Lists every note.",
            )
            .scope("notes")
            .output_schema(object(
                json!({"notes": {"type": "array", "items": {"type": "string"}}}),
                &["notes"],
            )),
        )
        .capability(
            CapabilityDefinition::new("notes.add", Effect::Write, "Add a note", "Adds a note.")
                .scope("notes")
                .input_schema(object(
                    json!({"text": {"type": "string", "minLength": 1, "maxLength": 40}}),
                    &["text"],
                ))
                .output_schema(object(json!({"added": {"type": "string"}}), &["added"])),
        )
        .capability(
            CapabilityDefinition::new(
                "notes.delete",
                Effect::Destructive,
                "Delete a note",
                "Deletes a note for good.",
            )
            .scope("notes")
            .input_schema(object(json!({"text": {"type": "string"}}), &["text"]))
            .output_schema(object(json!({"deleted": {"type": "string"}}), &["deleted"])),
        )
        .capability(
            CapabilityDefinition::new("notes.count", Effect::Read, "Count notes", "Counts notes.")
                .scope("notes")
                .output_schema(json!({"type": "integer", "minimum": 0})),
        )
        .capability(
            CapabilityDefinition::new("notes.slow", Effect::Read, "Slow", "Waits until cancelled.")
                .scope("notes"),
        )
        .capability(
            CapabilityDefinition::new("notes.fail", Effect::Read, "Fail", "Always fails.")
                .scope("notes"),
        )
        .capability(
            CapabilityDefinition::new("notes.archive", Effect::Write, "Archive", "Never bound.")
                .scope("notes"),
        )
}

/// Reads run; everything else asks for confirmation first.
pub fn policy() -> Arc<dyn Policy> {
    policy_fn(|ctx| match ctx.capability().effect {
        Effect::Read => PolicyDecision::Allow,
        _ if ctx.confirmed() => PolicyDecision::Allow,
        _ => PolicyDecision::Confirm { reason: None },
    })
}

impl App {
    pub fn new() -> Arc<App> {
        Self::with(Duration::from_secs(60), true, |b| b)
    }

    pub fn with(
        ttl: Duration,
        broker: bool,
        configure: impl FnOnce(rcip_mcp::McpBridgeBuilder) -> rcip_mcp::McpBridgeBuilder,
    ) -> Arc<App> {
        let runtime = Runtime::new(
            definition(),
            RuntimeOptions::default()
                .policy(policy())
                .confirmation_ttl(ttl),
        )
        .unwrap();
        let host = runtime.host();
        let notes = Arc::new(Mutex::new(vec!["first".to_owned()]));
        let slow_cancelled = Arc::new(Notify::new());
        let last_principal = Arc::new(Mutex::new(None));
        let mut guards = HashMap::new();
        let n = notes.clone();
        guards.insert(
            "notes.list",
            host.bind(
                "notes.list",
                Binding::new(move |_input: Value, _ctx: InvocationContext| {
                    let notes = n.lock().unwrap().clone();
                    async move { Ok::<_, HandlerError>(json!({"notes": notes})) }
                }),
            )
            .unwrap(),
        );
        let n = notes.clone();
        let seen = last_principal.clone();
        guards.insert(
            "notes.add",
            host.bind(
                "notes.add",
                Binding::new(move |input: Value, ctx: InvocationContext| {
                    let text = input["text"].as_str().unwrap_or_default().to_owned();
                    n.lock().unwrap().push(text.clone());
                    *seen.lock().unwrap() = ctx.principal().map(|p| p.id().to_owned());
                    async move { Ok::<_, HandlerError>(json!({"added": text})) }
                }),
            )
            .unwrap(),
        );
        let n = notes.clone();
        guards.insert(
            "notes.delete",
            host.bind(
                "notes.delete",
                Binding::new(move |input: Value, _ctx: InvocationContext| {
                    let text = input["text"].as_str().unwrap_or_default().to_owned();
                    n.lock().unwrap().retain(|t| *t != text);
                    async move { Ok::<_, HandlerError>(json!({"deleted": text})) }
                }),
            )
            .unwrap(),
        );
        let n = notes.clone();
        guards.insert(
            "notes.count",
            host.bind(
                "notes.count",
                Binding::new(move |_input: Value, _ctx: InvocationContext| {
                    let count = n.lock().unwrap().len();
                    async move { Ok::<_, HandlerError>(json!(count)) }
                }),
            )
            .unwrap(),
        );
        let signal = slow_cancelled.clone();
        guards.insert(
            "notes.slow",
            host.bind(
                "notes.slow",
                Binding::new(move |_input: Value, ctx: InvocationContext| {
                    let signal = signal.clone();
                    let cancellation = ctx.cancellation().clone();
                    async move {
                        tokio::select! {
                            () = cancellation.cancelled() => {
                                signal.notify_one();
                                Err(HandlerError::aborted())
                            }
                            () = tokio::time::sleep(Duration::from_secs(20)) => Ok(Value::Null),
                        }
                    }
                }),
            )
            .unwrap(),
        );
        guards.insert(
            "notes.fail",
            host.bind(
                "notes.fail",
                Binding::new(|_input: Value, _ctx: InvocationContext| async {
                    Err::<Value, _>(HandlerError::failed(SECRET))
                }),
            )
            .unwrap(),
        );
        let mut builder = McpBridge::builder(runtime.client()).server_info("notes-test", "0.0.1");
        if broker {
            builder = builder.confirmations(Arc::new(HostBroker::new(host)));
        }
        let bridge = configure(builder).build().unwrap();
        Arc::new(App {
            runtime,
            bridge,
            guards: Mutex::new(guards),
            notes,
            slow_cancelled,
            last_principal,
        })
    }

    pub fn unbind(&self, id: &str) {
        let guard = self.guards.lock().unwrap().remove(id).unwrap();
        assert!(guard.unbind());
    }

    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().unwrap().clone()
    }
}

/// How the human answers the next elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Approve,
    Decline,
    Cancel,
    Refuse,
    /// Never answers (within any test's patience).
    Ignore,
}

/// The rmcp client's handler: it stands in for the human at the client.
#[derive(Clone)]
pub struct Human {
    pub answer: Arc<Mutex<Answer>>,
    pub elicitation: bool,
    pub asked: Arc<AtomicUsize>,
    pub messages: Arc<Mutex<Vec<String>>>,
    pub list_changed: Arc<AtomicUsize>,
    pub list_changed_notify: Arc<Notify>,
}

impl Human {
    pub fn new(answer: Answer) -> Self {
        Self {
            answer: Arc::new(Mutex::new(answer)),
            elicitation: true,
            asked: Arc::new(AtomicUsize::new(0)),
            messages: Arc::new(Mutex::new(Vec::new())),
            list_changed: Arc::new(AtomicUsize::new(0)),
            list_changed_notify: Arc::new(Notify::new()),
        }
    }

    pub fn without_elicitation() -> Self {
        Self {
            elicitation: false,
            ..Self::new(Answer::Approve)
        }
    }

    pub fn set(&self, answer: Answer) {
        *self.answer.lock().unwrap() = answer;
    }

    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicitation {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("notes-test-client", "0.0.1"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.messages.lock().unwrap().push(message.clone());
        }
        let answer = *self.answer.lock().unwrap();
        if answer == Answer::Ignore {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        Ok(match answer {
            Answer::Approve => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}))
            }
            Answer::Refuse => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": false}))
            }
            Answer::Decline | Answer::Ignore => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
        self.list_changed_notify.notify_one();
    }
}

pub type Client = RunningService<RoleClient, Human>;

/// The two revisions, by the lifecycle rmcp's client uses for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Legacy,
    Modern,
}

pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// Connects `human` to the app's bridge over an in-process duplex.
pub async fn connect(app: &App, human: Human, era: Era) -> Client {
    connect_bridge(&app.bridge, human, era).await
}

/// Connects `human` to `bridge` over an in-process duplex.
pub async fn connect_bridge(bridge: &McpBridge, human: Human, era: Era) -> Client {
    crate::duplex::connect(bridge, human, era == Era::Modern).await
}

pub fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// The `code` of an `isError` result: its one text block starts `CODE: message`, and it has
/// no `structuredContent` (which would have to match the tool's output schema).
pub fn code(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(result.structured_content.is_none(), "{result:?}");
    assert_eq!(result.content.len(), 1, "{result:?}");
    let text = text(result);
    let (code, _) = text
        .split_once(": ")
        .unwrap_or_else(|| panic!("no `CODE: ` in {text:?}"));
    assert!(
        !code.is_empty() && code.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
        "{text:?}"
    );
    code.to_owned()
}

/// The issue lines (`- path: message (keyword)`) of an `isError` result's text.
pub fn issue_lines(result: &CallToolResult) -> Vec<String> {
    code(result);
    text(result)
        .lines()
        .skip(1)
        .map(|line| {
            line.strip_prefix("- ")
                .unwrap_or_else(|| panic!("not an issue line: {line:?}"))
                .to_owned()
        })
        .collect()
}

/// The result's text blocks joined.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
