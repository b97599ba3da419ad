//! Data asked of the human from inside a capability: [`McpElicitor`], in the invocation's
//! extensions of every `tools/call`.
//!
//! 2025-11-25 waits for the answer (`elicitation/create` on the call's session). 2026-07-28
//! is stateless and cannot wait: an unanswered question ends the run, the bridge answers
//! `input_required` with a sealed `requestState` carrying the answers gathered so far, and
//! the retry runs the handler again, which now finds its answers.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_runtime::{FromInvocation, HandlerError, InvocationContext};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, SealOptions,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::bridge::{Inner, lock};
use crate::server::now_ms;
use crate::server::{Call, is_modern};

/// Domain separation for the sealed state's associated data (a confirmation's state never
/// opens as an elicitation's, nor the reverse).
const BINDING_LABEL: &str = "rcip-mcp/elicitation/v1";
/// How long the human has to answer: the 2025-11-25 request's timeout, the 2026-07-28
/// state's lifetime.
const ANSWER_TIME: Duration = Duration::from_secs(600);

/// The public code of [`ElicitError::InputRequired`] (seen only when a handler turns it into
/// a failure somewhere the bridge cannot act on it).
pub const INPUT_REQUIRED: &str = "MCP_INPUT_REQUIRED";
/// The public code of [`ElicitError::MissingClientCapability`].
pub const CLIENT_CAPABILITY_MISSING: &str = "MCP_CLIENT_CAPABILITY_MISSING";
/// The public code of [`ElicitError::Failed`] and [`ElicitError::InvalidSchema`].
pub const ELICITATION_FAILED: &str = "MCP_ELICITATION_FAILED";
/// The public code when a capability that takes an [`McpElicitor`] is invoked without one
/// (not through the MCP bridge).
pub const ELICITOR_UNAVAILABLE: &str = "MCP_ELICITOR_UNAVAILABLE";

/// What the human answered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitAnswer {
    /// Submitted: the form's content (an object matching the requested schema, as the
    /// client vouches; validate it like any input).
    Accept(Value),
    /// Explicitly declined.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

impl ElicitAnswer {
    /// The submitted content, when accepted.
    #[must_use]
    pub fn content(&self) -> Option<&Value> {
        match self {
            ElicitAnswer::Accept(content) => Some(content),
            _ => None,
        }
    }

    /// `"accept"`, `"decline"` or `"cancel"`.
    #[must_use]
    pub fn action(&self) -> &'static str {
        match self {
            ElicitAnswer::Accept(_) => "accept",
            ElicitAnswer::Decline => "decline",
            ElicitAnswer::Cancel => "cancel",
        }
    }

    fn from_result(result: ElicitResult) -> Self {
        match result.action {
            ElicitationAction::Accept => {
                ElicitAnswer::Accept(result.content.unwrap_or_else(|| json!({})))
            }
            ElicitationAction::Decline => ElicitAnswer::Decline,
            _ => ElicitAnswer::Cancel,
        }
    }
}

/// Why a question got no answer. Propagate it (`?` turns it into a [`HandlerError`]): the
/// bridge then answers the MCP request itself (`input_required`, or `-32021`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ElicitError {
    /// 2026-07-28: the answer to `key` is not in this request yet. The bridge returns
    /// `input_required` and the retry runs the handler again.
    #[error("the answer to {0:?} is needed from the client")]
    InputRequired(String),
    /// The client did not declare the capability (`"elicitation"`, or the one
    /// [`McpElicitor::require_client_capability`] named): the bridge answers `-32021`.
    #[error("the client did not declare the {0:?} capability")]
    MissingClientCapability(String),
    /// The requested schema is not an MCP elicitation schema (a flat object of primitive,
    /// enum and string-array properties).
    #[error("the requested schema is not an MCP elicitation schema")]
    InvalidSchema,
    /// 2025-11-25: the request to the client failed or timed out, or the call was cancelled.
    #[error("the client did not answer the elicitation")]
    Failed,
}

impl From<ElicitError> for HandlerError {
    fn from(error: ElicitError) -> Self {
        let code = match &error {
            ElicitError::InputRequired(_) => INPUT_REQUIRED,
            ElicitError::MissingClientCapability(_) => CLIENT_CAPABILITY_MISSING,
            ElicitError::InvalidSchema | ElicitError::Failed => ELICITATION_FAILED,
        };
        HandlerError::public(code, &error, Vec::new())
    }
}

/// For a [`PromptProvider`](crate::PromptProvider) that asks through
/// [`ProviderContext::elicitor`](crate::ProviderContext::elicitor): `?` ends `get`, and the
/// bridge answers from the elicitor's record (`input_required`, or `-32021`) whatever error
/// this became; only [`ElicitError::InvalidSchema`] and [`ElicitError::Failed`] reach the
/// client as this internal error.
impl From<ElicitError> for McpError {
    fn from(error: ElicitError) -> Self {
        McpError::internal_error(format!("{ELICITATION_FAILED}: {error}"), None)
    }
}

/// Asks the human, through the MCP client, for data a capability needs (a name, a choice,
/// a form): `elicitation/create` in form mode.
///
/// The bridge puts one into the extensions of every `tools/call` invocation; a
/// `#[capability]` function takes it as a parameter (it is an extractor), other handlers
/// read it with [`McpElicitor::from_context`].
///
/// - **2025-11-25**: [`ask`](Self::ask) sends `elicitation/create` on the call's session
///   and waits (up to ten minutes, or the call's cancellation).
/// - **2026-07-28**: nothing can wait, so a handler must be **re-runnable until it has its
///   answers: ask every question first, act after.** When this request does not carry the
///   answer, `ask` returns [`ElicitError::InputRequired`]; propagate it. The bridge answers
///   `input_required` with the question under its `key` and a `requestState` sealed like a
///   confirmation's (HMAC, bound to the tool, a digest of the arguments, the principal and
///   a ten-minute expiry) that carries the answers of earlier rounds. The retry runs the
///   handler again, and `ask` returns the answers from the state and from
///   `inputResponses`. A missing or unreadable answer asks again; answers to keys never
///   asked are ignored. States are not single-use: a replayed last round runs the handler
///   again, with the same answers.
///
/// Either way, a client that did not declare `elicitation` gets `-32021` with
/// `requiredCapabilities: {"elicitation": {}}`.
///
/// ```
/// use rcip_mcp::{ElicitAnswer, McpElicitor};
/// use rcip_runtime::{HandlerError, capability};
/// use serde_json::json;
///
/// /// Greet.
/// ///
/// /// Asks the user's name, then greets them.
/// #[capability(effect = "read", id = "greet")]
/// async fn greet(elicitor: McpElicitor) -> Result<String, HandlerError> {
///     let schema = json!({
///         "type": "object",
///         "properties": {"name": {"type": "string"}},
///         "required": ["name"]
///     });
///     let answer = elicitor.ask("user_name", "What is your name?", schema).await?;
///     // Side effects go here, after every question.
///     Ok(match answer.content().and_then(|c| c["name"].as_str()) {
///         Some(name) => format!("Hello, {name}!"),
///         None => "Hello, stranger.".to_owned(),
///     })
/// }
/// ```
#[derive(Clone)]
pub struct McpElicitor {
    inner: Arc<ElicitorInner>,
}

struct ElicitorInner {
    /// The client's declared capabilities, as JSON.
    capabilities: Value,
    era: Era,
    record: Mutex<Record>,
}

enum Era {
    Legacy {
        peer: Peer<RoleServer>,
        cancelled: CancellationToken,
    },
    Modern {
        /// Answers of earlier rounds (from the opened state).
        earlier: BTreeMap<String, Value>,
        /// This request's `inputResponses`.
        responses: BTreeMap<String, Value>,
        /// Whether the request carried a state this module sealed.
        has_state: bool,
    },
}

#[derive(Default)]
struct Record {
    /// The questions without an answer yet (2026-07-28).
    questions: Vec<(String, ElicitRequestParams)>,
    /// The answers taken from `inputResponses`, to carry into the next state.
    used: BTreeMap<String, Value>,
    /// A client capability the handler needed and the client did not declare.
    missing: Option<String>,
}

impl fmt::Debug for McpElicitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let era = match self.inner.era {
            Era::Legacy { .. } => "2025-11-25",
            Era::Modern { .. } => "2026-07-28",
        };
        f.debug_struct("McpElicitor")
            .field("era", &era)
            .finish_non_exhaustive()
    }
}

/// What a sealed elicitation state carries (readable, not secret: the client sent it all).
#[derive(Serialize, Deserialize)]
struct State {
    /// Expiry (epoch ms).
    x: u64,
    /// The answers so far, by key.
    a: BTreeMap<String, Value>,
}

fn binding(call: &Call) -> Option<Vec<u8>> {
    call.binding(BINDING_LABEL)
}

impl McpElicitor {
    /// The elicitor of an invocation's context, when the bridge put one there.
    #[must_use]
    pub fn from_context(context: &InvocationContext) -> Option<McpElicitor> {
        context.extensions().get::<McpElicitor>().cloned()
    }

    /// Asks the human for the data `requested_schema` describes (an object schema of
    /// primitive, enum and string-array properties, defaults and titled enums included),
    /// under `key` (the 2026-07-28 input request's key; unique per question of one call).
    ///
    /// # Errors
    ///
    /// [`ElicitError::InputRequired`] (2026-07-28, not answered yet: propagate it),
    /// [`ElicitError::MissingClientCapability`], [`ElicitError::InvalidSchema`],
    /// [`ElicitError::Failed`] (2025-11-25).
    pub async fn ask(
        &self,
        key: &str,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Result<ElicitAnswer, ElicitError> {
        if let Era::Modern {
            earlier, responses, ..
        } = &self.inner.era
        {
            if let Some(answer) = earlier.get(key).and_then(parse_answer) {
                return Ok(answer);
            }
            if let Some((raw, answer)) = responses
                .get(key)
                .and_then(|raw| parse_answer(raw).map(|a| (raw, a)))
            {
                lock(&self.inner.record)
                    .used
                    .insert(key.to_owned(), raw.clone());
                return Ok(answer);
            }
        }
        if !self.can_elicit_form() {
            return Err(self.missing("elicitation"));
        }
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": message.into(),
            "requestedSchema": requested_schema,
        }))
        .map_err(|_| ElicitError::InvalidSchema)?;
        match &self.inner.era {
            Era::Modern { .. } => {
                let mut record = lock(&self.inner.record);
                if !record.questions.iter().any(|(k, _)| k == key) {
                    record.questions.push((key.to_owned(), params));
                }
                Err(ElicitError::InputRequired(key.to_owned()))
            }
            Era::Legacy { peer, cancelled } => {
                let asked = peer.create_elicitation_with_timeout(params, Some(ANSWER_TIME));
                tokio::select! {
                    answer = asked => answer
                        .map(ElicitAnswer::from_result)
                        .map_err(|_| ElicitError::Failed),
                    () = cancelled.cancelled() => Err(ElicitError::Failed),
                }
            }
        }
    }

    /// Fails unless the client declared the capability `name` (`"sampling"`, `"roots"`,
    /// `"elicitation"`, ...) in this request (2026-07-28) or session (2025-11-25). Call it
    /// first in a capability that cannot work without it: the bridge answers `-32021` with
    /// `requiredCapabilities: {name: {}}`.
    ///
    /// # Errors
    ///
    /// [`ElicitError::MissingClientCapability`].
    pub fn require_client_capability(&self, name: &str) -> Result<(), ElicitError> {
        if self
            .inner
            .capabilities
            .get(name)
            .is_some_and(Value::is_object)
        {
            Ok(())
        } else {
            Err(self.missing(name))
        }
    }

    /// Whether the request speaks 2026-07-28 (questions end the run until answered).
    #[must_use]
    pub fn is_stateless(&self) -> bool {
        matches!(self.inner.era, Era::Modern { .. })
    }

    fn missing(&self, name: &str) -> ElicitError {
        lock(&self.inner.record)
            .missing
            .get_or_insert_with(|| name.to_owned());
        ElicitError::MissingClientCapability(name.to_owned())
    }

    fn can_elicit_form(&self) -> bool {
        self.inner
            .capabilities
            .get("elicitation")
            .and_then(Value::as_object)
            .is_some_and(|e| e.contains_key("form") || !e.contains_key("url"))
    }

    /// Whether the request carried a state this module sealed (else a `requestState` is a
    /// confirmation's).
    pub(crate) fn has_state(&self) -> bool {
        matches!(
            self.inner.era,
            Era::Modern {
                has_state: true,
                ..
            }
        )
    }
}

fn parse_answer(raw: &Value) -> Option<ElicitAnswer> {
    serde_json::from_value::<ElicitResult>(raw.clone())
        .ok()
        .map(ElicitAnswer::from_result)
}

/// A capability that takes an `McpElicitor` fails with [`ELICITOR_UNAVAILABLE`] when it is
/// invoked other than through the bridge.
impl FromInvocation for McpElicitor {
    fn from_invocation(context: &InvocationContext) -> Result<Self, HandlerError> {
        McpElicitor::from_context(context).ok_or_else(|| {
            HandlerError::public(
                ELICITOR_UNAVAILABLE,
                "this capability asks its user through an MCP client",
                Vec::new(),
            )
        })
    }
}

/// The elicitor of one request (`tools/call`, or `prompts/get`): on 2026-07-28, with the
/// answers of a `requestState` this module sealed under `binding` (one that does not open is
/// left to the confirmations) and of `inputResponses`.
pub(crate) fn for_request(
    inner: &Inner,
    binding: Option<&[u8]>,
    request_state: Option<&str>,
    input_responses: Option<&InputResponses>,
    ctx: &RequestContext<RoleServer>,
) -> McpElicitor {
    let capabilities = ctx
        .client_capabilities()
        .and_then(|c| serde_json::to_value(c).ok())
        .unwrap_or_else(|| json!({}));
    let era = if is_modern(ctx) {
        let opened = request_state.and_then(|sealed| {
            let state: State = inner.codec.open_json_with(sealed, binding?).ok()?;
            (state.x >= now_ms()).then_some(state)
        });
        Era::Modern {
            has_state: opened.is_some(),
            earlier: opened.map(|s| s.a).unwrap_or_default(),
            responses: input_responses.cloned().unwrap_or_default(),
        }
    } else {
        Era::Legacy {
            peer: ctx.peer.clone(),
            cancelled: ctx.ct.clone(),
        }
    };
    McpElicitor {
        inner: Arc::new(ElicitorInner {
            capabilities,
            era,
            record: Mutex::new(Record::default()),
        }),
    }
}

/// The elicitor of one `tools/call`.
pub(crate) fn for_call(
    inner: &Inner,
    call: &Call,
    request: &CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> McpElicitor {
    for_request(
        inner,
        binding(call).as_deref(),
        request.request_state.as_deref(),
        request.input_responses.as_ref(),
        ctx,
    )
}

/// After the invocation: the MCP answer the elicitor's record calls for, if any (a missing
/// client capability: `-32021`; unanswered questions: `input_required`), whatever the
/// outcome was (a handler that swallowed the error still gets its questions asked).
pub(crate) fn finish(
    inner: &Inner,
    call: &Call,
    elicitor: &McpElicitor,
) -> Option<Result<CallToolResponse, McpError>> {
    finish_request(inner, binding(call).as_deref(), elicitor).map(|answer| answer.map(Into::into))
}

/// [`finish`] for any request whose state is bound to `binding`.
pub(crate) fn finish_request(
    inner: &Inner,
    binding: Option<&[u8]>,
    elicitor: &McpElicitor,
) -> Option<Result<InputRequiredResult, McpError>> {
    let record = std::mem::take(&mut *lock(&elicitor.inner.record));
    if let Some(name) = record.missing {
        let required =
            serde_json::from_value::<ClientCapabilities>(json!({ name: {} })).unwrap_or_default();
        return Some(Err(McpError::missing_required_client_capability(required)));
    }
    if record.questions.is_empty() {
        return None;
    }
    let Era::Modern { earlier, .. } = &elicitor.inner.era else {
        return None;
    };
    let mut answers = earlier.clone();
    answers.extend(record.used);
    let state = State {
        x: now_ms().saturating_add(u64::try_from(ANSWER_TIME.as_millis()).unwrap_or(u64::MAX)),
        a: answers,
    };
    let sealed = binding.and_then(|binding| {
        inner
            .codec
            .seal_json_with(
                &state,
                &SealOptions::new().associated_data(binding).ttl(ANSWER_TIME),
            )
            .ok()
    });
    let Some(sealed) = sealed else {
        return Some(Err(McpError::internal_error(
            "The elicitation state could not be sealed.",
            None,
        )));
    };
    let mut requests = InputRequests::new();
    for (key, params) in record.questions {
        requests.insert(key, InputRequest::Elicitation(ElicitRequest::new(params)));
    }
    Some(Ok(InputRequiredResult::new(Some(requests), Some(sealed))))
}
