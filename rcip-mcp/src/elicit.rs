//! Data asked of the human from inside a capability: [`McpElicitor`], in the invocation's
//! extensions of every `tools/call`.
//!
//! 2025-11-25 waits for the answer (`elicitation/create` on the call's session). 2026-07-28
//! is stateless and cannot wait: an unanswered question ends the run, the bridge answers
//! `input_required` with a sealed `requestState` carrying the answers gathered so far, and
//! the retry runs the handler again, which now finds its answers.

// rmcp marks sampling and roots deprecated (SEP-2577 drops them from a future revision);
// both revisions served here have them, and the conformance suite scores them.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_runtime::{BoxFuture, FromInvocation, HandlerError, InvocationContext};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientResult,
    CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, ListRootsRequest, ListRootsResult, RequestStateCodec,
    Root, SealOptions, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext, RoleServer, ServiceError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::context::lock;
use crate::context::now_ms;
use crate::context::{Call, is_modern};

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
    #[error("the client did not answer the request")]
    Failed,
    /// No MCP client called: the capability was invoked in process (or over another
    /// door), so there is nobody to ask. Match on it to do without, or propagate it
    /// ([`ELICITOR_UNAVAILABLE`]).
    #[error("no MCP client called this capability")]
    NoClient,
}

impl From<ElicitError> for HandlerError {
    fn from(error: ElicitError) -> Self {
        let code = match &error {
            ElicitError::InputRequired(_) => INPUT_REQUIRED,
            ElicitError::MissingClientCapability(_) => CLIENT_CAPABILITY_MISSING,
            ElicitError::InvalidSchema | ElicitError::Failed => ELICITATION_FAILED,
            ElicitError::NoClient => ELICITOR_UNAVAILABLE,
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

/// Asks the calling MCP client on a capability's behalf: the human for data
/// ([`ask`](Self::ask), `elicitation/create` in form mode), the client's model for a message
/// ([`create_message`](Self::create_message), `sampling/createMessage`), and the client's
/// roots ([`list_roots`](Self::list_roots), `roots/list`).
///
/// The bridge puts one into the extensions of every `tools/call` invocation; a
/// `#[capability]` function takes it as a parameter (it is an extractor), other handlers
/// read it with [`McpElicitor::from_context`]. Invoked other than through the bridge (in
/// process, over REST), the extractor gives a detached elicitor whose requests all fail with
/// [`ElicitError::NoClient`], so a handler can do without; tests answer for the client with
/// [`McpElicitor::scripted`].
///
/// - **2025-11-25**: each request goes to the client on the call's session and is awaited
///   (up to ten minutes, or the call's cancellation).
/// - **2026-07-28**: nothing can wait, so a handler must be **re-runnable until it has its
///   answers: ask every question first, act after.** When this request does not carry the
///   answer, the request returns [`ElicitError::InputRequired`]; propagate it. The bridge
///   answers `input_required` with every question asked so far, each under its `key`, and a
///   `requestState` sealed like a confirmation's (HMAC, bound to the tool, a digest of the
///   arguments, the principal and a ten-minute expiry) that carries the answers of earlier
///   rounds. The retry runs the handler again, and each request returns its answer from the
///   state or from `inputResponses`. A missing or unreadable answer asks again; answers to
///   keys never asked are ignored. States are not single-use: a replayed last round runs the
///   handler again, with the same answers. To ask several things in one round, make every
///   request before propagating the first error (below).
///
/// Each request needs the client to have declared its capability (`elicitation` with form
/// mode, `sampling`, `roots`); otherwise it fails with
/// [`ElicitError::MissingClientCapability`] and the bridge answers `-32021` with
/// `requiredCapabilities`. [`client_supports`](Self::client_supports) tells beforehand.
/// None of these requests can approve a confirmation: approval is only ever asked of the
/// human, through the bridge's own form, never through the model.
///
/// ```
/// use rcip_mcp::{ElicitAnswer, ElicitError, McpElicitor};
/// use rcip_mcp::rmcp::model::{CreateMessageRequestParams, SamplingMessage};
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
///
/// /// Summarise.
/// ///
/// /// Asks the client's model for a summary and reads the client's roots, in one round.
/// #[capability(effect = "read", id = "summarise")]
/// async fn summarise(elicitor: McpElicitor) -> Result<String, HandlerError> {
///     let prompt = CreateMessageRequestParams::new(
///         vec![SamplingMessage::user_text("Summarise the project in one line.")],
///         100,
///     );
///     // Both requests are made before either error is propagated: on 2026-07-28 the
///     // client gets both questions at once.
///     let (summary, roots) = (
///         elicitor.create_message("summary", prompt).await,
///         elicitor.list_roots("roots").await,
///     );
///     let roots = match roots {
///         Ok(roots) => roots.len(),
///         // Called in process: there is no client to ask.
///         Err(ElicitError::NoClient) => 0,
///         Err(other) => return Err(other.into()),
///     };
///     let summary = summary?;
///     let text = summary.message.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone());
///     Ok(format!("{} ({roots} roots)", text.unwrap_or_default()))
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
        /// The turn to take before asking, when instances share the session.
        turn: Option<crate::relay::SessionLink>,
    },
    Modern {
        /// Answers of earlier rounds (from the opened state).
        earlier: BTreeMap<String, Value>,
        /// This request's `inputResponses`.
        responses: BTreeMap<String, Value>,
        /// Whether the request carried a state this module sealed.
        has_state: bool,
    },
    /// A test's stand-in for the client ([`McpElicitor::scripted`]).
    Scripted(Arc<ScriptedAnswers>),
    /// No MCP client: every request fails with [`ElicitError::NoClient`].
    Detached,
}

#[derive(Default)]
struct Record {
    /// The questions without an answer yet (2026-07-28).
    questions: Vec<(String, InputRequest)>,
    /// The answers taken from `inputResponses`, to carry into the next state.
    used: BTreeMap<String, Value>,
    /// A client capability the handler needed and the client did not declare.
    missing: Option<String>,
    /// Every request made, in order (kept for [`McpElicitor::scripted`] only).
    asked: Vec<(String, InputRequest)>,
    /// The task the call became (2026-07-28, a long-running capability): questions from
    /// then on wait in the task for `tasks/update`.
    task: Option<Arc<dyn TaskQuestions>>,
}

/// Where the questions of a call that became a task wait, until `tasks/update` answers
/// them (the bridge's task registry); `None` when the task ended or was cancelled first.
pub(crate) trait TaskQuestions: Send + Sync {
    /// Asks `request` under `key` and waits for the answer.
    fn ask(&self, key: String, request: InputRequest) -> BoxFuture<Option<Value>>;
}

impl fmt::Debug for McpElicitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let era = match self.inner.era {
            Era::Legacy { .. } => "2025-11-25",
            Era::Modern { .. } => "2026-07-28",
            Era::Scripted(_) => "scripted",
            Era::Detached => "detached",
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

/// Which client capability a request needs.
fn capability_of(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicitation(_) => "elicitation",
        InputRequest::CreateMessage(_) => "sampling",
        InputRequest::ListRoots(_) => "roots",
        // A kind this bridge never makes.
        _ => "unknown",
    }
}

impl McpElicitor {
    /// The elicitor of an invocation's context, when the bridge (or a test) put one there.
    #[must_use]
    pub fn from_context(context: &InvocationContext) -> Option<McpElicitor> {
        context.extensions().get::<McpElicitor>().cloned()
    }

    /// An elicitor with no client behind it: every request fails with
    /// [`ElicitError::NoClient`]. What the extractor gives outside the bridge.
    #[must_use]
    pub fn detached() -> McpElicitor {
        Self::with_era(json!({}), Era::Detached)
    }

    /// A stand-in for the client, for tests: requests are answered by `answers` (and
    /// recorded, see [`asked`](Self::asked)); a request whose kind `answers` has no answer
    /// for fails with [`ElicitError::MissingClientCapability`], as from a client that did not
    /// declare it. Put it into the invocation's extensions:
    ///
    /// ```
    /// use rcip_mcp::{McpElicitor, ScriptedAnswers};
    /// use rcip_mcp::rmcp::model::{ElicitResult, ElicitationAction, Root};
    /// use rcip_runtime::InvocationRequest;
    /// use serde_json::json;
    ///
    /// let client = McpElicitor::scripted(
    ///     ScriptedAnswers::new()
    ///         .elicitation(|_params| {
    ///             ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
    ///         })
    ///         .roots(vec![Root::new("file:///work")]),
    /// );
    /// let request = InvocationRequest::new("greet", json!({})).with_extension(client.clone());
    /// // ... invoke, then look at what the capability asked:
    /// assert!(client.asked().is_empty());
    /// # let _ = request;
    /// ```
    #[must_use]
    pub fn scripted(answers: ScriptedAnswers) -> McpElicitor {
        let mut capabilities = serde_json::Map::new();
        if answers.elicitation.is_some() {
            capabilities.insert("elicitation".to_owned(), json!({"form": {}}));
        }
        if answers.sampling.is_some() {
            capabilities.insert("sampling".to_owned(), json!({}));
        }
        if answers.roots.is_some() {
            capabilities.insert("roots".to_owned(), json!({}));
        }
        Self::with_era(
            Value::Object(capabilities),
            Era::Scripted(Arc::new(answers)),
        )
    }

    fn with_era(capabilities: Value, era: Era) -> McpElicitor {
        McpElicitor {
            inner: Arc::new(ElicitorInner {
                capabilities,
                era,
                record: Mutex::new(Record::default()),
            }),
        }
    }

    /// The requests made through a [`scripted`](Self::scripted) elicitor, in order, each
    /// with its key (empty for any other elicitor).
    #[must_use]
    pub fn asked(&self) -> Vec<(String, InputRequest)> {
        lock(&self.inner.record).asked.clone()
    }

    /// Asks the human for the data `requested_schema` describes (an object schema of
    /// primitive, enum and string-array properties, defaults and titled enums included),
    /// under `key` (the 2026-07-28 input request's key; unique per question of one call).
    ///
    /// # Errors
    ///
    /// [`ElicitError::InputRequired`] (2026-07-28, not answered yet: propagate it),
    /// [`ElicitError::MissingClientCapability`], [`ElicitError::InvalidSchema`],
    /// [`ElicitError::Failed`] (2025-11-25), [`ElicitError::NoClient`].
    pub async fn ask(
        &self,
        key: &str,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Result<ElicitAnswer, ElicitError> {
        let message = message.into();
        let result: ElicitResult = self
            .request(key, || {
                let params: ElicitRequestParams = serde_json::from_value(json!({
                    "mode": "form",
                    "message": message,
                    "requestedSchema": requested_schema,
                }))
                .map_err(|_| ElicitError::InvalidSchema)?;
                Ok(InputRequest::Elicitation(ElicitRequest::new(params)))
            })
            .await?;
        Ok(ElicitAnswer::from_result(result))
    }

    /// Asks the calling client's model for a message (`sampling/createMessage`), under
    /// `key`. The client (and usually its user) decides whether and how to answer; the
    /// result is the model's message as the client reports it: check it like any input.
    ///
    /// # Errors
    ///
    /// As [`ask`](Self::ask); [`ElicitError::MissingClientCapability`] names `sampling`,
    /// and a request the client refuses (or rmcp finds malformed) is
    /// [`ElicitError::Failed`].
    pub async fn create_message(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ElicitError> {
        self.request(key, || {
            Ok(InputRequest::CreateMessage(CreateMessageRequest::new(
                params,
            )))
        })
        .await
    }

    /// The client's roots (`roots/list`), under `key`: the directories or other URIs the
    /// client's user has opened to this server.
    ///
    /// # Errors
    ///
    /// As [`ask`](Self::ask); [`ElicitError::MissingClientCapability`] names `roots`.
    pub async fn list_roots(&self, key: &str) -> Result<Vec<Root>, ElicitError> {
        let result: ListRootsResult = self
            .request(key, || {
                Ok(InputRequest::ListRoots(ListRootsRequest::default()))
            })
            .await?;
        Ok(result.roots)
    }

    /// One request to the client, its answer read as `T`.
    async fn request<T: DeserializeOwned + Serialize>(
        &self,
        key: &str,
        make: impl FnOnce() -> Result<InputRequest, ElicitError>,
    ) -> Result<T, ElicitError> {
        if let Era::Modern {
            earlier, responses, ..
        } = &self.inner.era
        {
            if let Some(answer) = earlier.get(key).and_then(read::<T>) {
                return Ok(answer);
            }
            if let Some((raw, answer)) = responses
                .get(key)
                .and_then(|raw| read::<T>(raw).map(|a| (raw, a)))
            {
                lock(&self.inner.record)
                    .used
                    .insert(key.to_owned(), raw.clone());
                return Ok(answer);
            }
        }
        if matches!(self.inner.era, Era::Detached) {
            return Err(ElicitError::NoClient);
        }
        let request = make()?;
        let capability = capability_of(&request);
        if !self.client_supports(capability) {
            return Err(self.missing(capability));
        }
        match &self.inner.era {
            Era::Modern { .. } => {
                // Decided under one lock: either the call is a task (which then waits for
                // the answer, `tasks/update`), or the question joins this round's.
                let task = {
                    let mut record = lock(&self.inner.record);
                    match record.task.clone() {
                        Some(task) => Some((task, request)),
                        None => {
                            if !record.questions.iter().any(|(k, _)| k == key) {
                                record.questions.push((key.to_owned(), request));
                            }
                            None
                        }
                    }
                };
                match task {
                    Some((task, request)) => {
                        let raw = task.ask(key.to_owned(), request).await;
                        raw.and_then(|raw| read::<T>(&raw))
                            .ok_or(ElicitError::Failed)
                    }
                    None => Err(ElicitError::InputRequired(key.to_owned())),
                }
            }
            Era::Legacy {
                peer,
                cancelled,
                turn,
            } => {
                let Some(_held) =
                    crate::relay::turn_unless(turn.clone(), ANSWER_TIME, cancelled).await
                else {
                    return Err(ElicitError::Failed);
                };
                let asked = send(peer, request);
                tokio::select! {
                    answer = asked => answer.and_then(|raw| read::<T>(&raw)).ok_or(ElicitError::Failed),
                    () = cancelled.cancelled() => Err(ElicitError::Failed),
                }
            }
            Era::Scripted(answers) => {
                lock(&self.inner.record)
                    .asked
                    .push((key.to_owned(), request.clone()));
                answers
                    .answer(&request)
                    .and_then(|raw| read::<T>(&raw))
                    .ok_or(ElicitError::Failed)
            }
            Era::Detached => Err(ElicitError::NoClient),
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
        if self.declares(name) {
            Ok(())
        } else {
            Err(self.missing(name))
        }
    }

    /// Whether the client declared what a request of this kind needs: `"elicitation"` (in
    /// form mode), `"sampling"` or `"roots"` (any other name: whether it is declared at all).
    /// A handler that can do without asks only what the client can answer.
    #[must_use]
    pub fn client_supports(&self, name: &str) -> bool {
        if name == "elicitation" {
            return self
                .inner
                .capabilities
                .get("elicitation")
                .and_then(Value::as_object)
                .is_some_and(|e| e.contains_key("form") || !e.contains_key("url"));
        }
        self.declares(name)
    }

    fn declares(&self, name: &str) -> bool {
        self.inner
            .capabilities
            .get(name)
            .is_some_and(Value::is_object)
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

    /// Turns the call into `task`: from now on questions wait in the task. Refused (`false`)
    /// when the handler already asked a question of this round or needed a capability the
    /// client lacks: that call ends as an ordinary `input_required` (or `-32021`) answer.
    pub(crate) fn begin_task(&self, task: Arc<dyn TaskQuestions>) -> bool {
        let mut record = lock(&self.inner.record);
        if !record.questions.is_empty() || record.missing.is_some() {
            return false;
        }
        record.task = Some(task);
        true
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

/// An answer as `T`, or `None` when it does not read as one.
fn read<T: DeserializeOwned>(raw: &Value) -> Option<T> {
    T::deserialize(raw).ok()
}

/// Sends `elicitation/create` to a 2025-11-25 client and awaits the answer, for at most
/// `timeout`.
///
/// rmcp's own `create_elicitation_with_timeout` is behind its `elicitation` feature, which
/// also turns on `url` and with it `idna` and ICU4X (27 packages, issue 39) for URL-mode
/// elicitation, which rcip never sends. The request and result types are not behind the
/// feature, so this sends the same request through the peer's public request API.
pub(crate) async fn ask_form(
    peer: &Peer<RoleServer>,
    params: ElicitRequestParams,
    timeout: Duration,
) -> Result<ElicitResult, ServiceError> {
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    match peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await?
        .await_response()
        .await?
    {
        ClientResult::ElicitResult(result) => Ok(result),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Sends one request to a 2025-11-25 client and awaits its answer, as JSON.
async fn send(peer: &Peer<RoleServer>, request: InputRequest) -> Option<Value> {
    match request {
        InputRequest::Elicitation(request) => ask_form(peer, request.params, ANSWER_TIME)
            .await
            .ok()
            .and_then(|r| serde_json::to_value(r).ok()),
        InputRequest::CreateMessage(request) => {
            #[allow(deprecated)] // rmcp marks sampling deprecated (SEP-2577); 2025-11-25 has it
            let asked = peer.create_message(request.params);
            tokio::time::timeout(ANSWER_TIME, asked)
                .await
                .ok()?
                .ok()
                .and_then(|r| serde_json::to_value(r).ok())
        }
        InputRequest::ListRoots(_) => {
            #[allow(deprecated)] // rmcp marks roots deprecated (SEP-2577); 2025-11-25 has it
            let asked = peer.list_roots();
            tokio::time::timeout(ANSWER_TIME, asked)
                .await
                .ok()?
                .ok()
                .and_then(|r| serde_json::to_value(r).ok())
        }
        _ => None,
    }
}

/// How a [`scripted`](McpElicitor::scripted) client answers: one function per kind of
/// request; a kind without one is a capability the client did not declare.
#[derive(Default, Clone)]
#[allow(clippy::type_complexity)]
pub struct ScriptedAnswers {
    elicitation: Option<Arc<dyn Fn(&ElicitRequestParams) -> ElicitResult + Send + Sync>>,
    sampling: Option<Arc<dyn Fn(&CreateMessageRequestParams) -> CreateMessageResult + Send + Sync>>,
    roots: Option<Vec<Root>>,
}

impl fmt::Debug for ScriptedAnswers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptedAnswers")
            .field("elicitation", &self.elicitation.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots)
            .finish()
    }
}

impl ScriptedAnswers {
    /// A client that declares nothing.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `elicitation/create` (the human's form).
    #[must_use]
    pub fn elicitation(
        mut self,
        answer: impl Fn(&ElicitRequestParams) -> ElicitResult + Send + Sync + 'static,
    ) -> Self {
        self.elicitation = Some(Arc::new(answer));
        self
    }

    /// Answers `sampling/createMessage` (the client's model).
    #[must_use]
    pub fn sampling(
        mut self,
        answer: impl Fn(&CreateMessageRequestParams) -> CreateMessageResult + Send + Sync + 'static,
    ) -> Self {
        self.sampling = Some(Arc::new(answer));
        self
    }

    /// Answers `roots/list` with these roots.
    #[must_use]
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(roots);
        self
    }

    fn answer(&self, request: &InputRequest) -> Option<Value> {
        match request {
            InputRequest::Elicitation(request) => self
                .elicitation
                .as_ref()
                .and_then(|f| serde_json::to_value(f(&request.params)).ok()),
            InputRequest::CreateMessage(request) => self
                .sampling
                .as_ref()
                .and_then(|f| serde_json::to_value(f(&request.params)).ok()),
            InputRequest::ListRoots(_) => self
                .roots
                .as_ref()
                .and_then(|roots| serde_json::to_value(ListRootsResult::new(roots.clone())).ok()),
            _ => None,
        }
    }
}

/// Outside the bridge (in process, another door, a test without a stand-in) a capability
/// that takes an `McpElicitor` gets a [detached](McpElicitor::detached) one: its requests
/// fail with [`ElicitError::NoClient`] ([`ELICITOR_UNAVAILABLE`] when propagated).
impl FromInvocation for McpElicitor {
    fn from_invocation(context: &InvocationContext) -> Result<Self, HandlerError> {
        Ok(McpElicitor::from_context(context).unwrap_or_else(McpElicitor::detached))
    }
}

/// The elicitor of one request (`tools/call`, or `prompts/get`): on 2026-07-28, with the
/// answers of a `requestState` this module sealed under `binding` (one that does not open is
/// left to the confirmations) and of `inputResponses`. `binding` is only computed when the
/// request carries a state (it digests the arguments).
pub(crate) fn for_request(
    codec: &RequestStateCodec,
    binding: impl FnOnce() -> Option<Vec<u8>>,
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
            let state: State = codec.open_json_with(sealed, &binding()?).ok()?;
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
            turn: crate::relay::SessionLink::of(ctx),
        }
    };
    McpElicitor::with_era(capabilities, era)
}

/// The elicitor of one `tools/call`.
pub(crate) fn for_call(
    codec: &RequestStateCodec,
    call: &Call,
    request: &CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> McpElicitor {
    for_request(
        codec,
        || binding(call),
        request.request_state.as_deref(),
        request.input_responses.as_ref(),
        ctx,
    )
}

/// After the invocation: the MCP answer the elicitor's record calls for, if any (a missing
/// client capability: `-32021`; unanswered questions: `input_required`), whatever the
/// outcome was (a handler that swallowed the error still gets its questions asked).
pub(crate) fn finish(
    codec: &RequestStateCodec,
    call: &Call,
    elicitor: &McpElicitor,
) -> Option<Result<CallToolResponse, McpError>> {
    finish_request(codec, || binding(call), elicitor).map(|answer| answer.map(Into::into))
}

/// [`finish`] for any request whose state is bound to `binding` (computed only when there
/// are questions to seal).
pub(crate) fn finish_request(
    codec: &RequestStateCodec,
    binding: impl FnOnce() -> Option<Vec<u8>>,
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
    let sealed = binding().and_then(|binding| {
        codec
            .seal_json_with(
                &state,
                &SealOptions::new()
                    .associated_data(&binding)
                    .ttl(ANSWER_TIME),
            )
            .ok()
    });
    let Some(sealed) = sealed else {
        return Some(Err(McpError::internal_error(
            "The elicitation state could not be sealed.",
            None,
        )));
    };
    let requests: InputRequests = record.questions.into_iter().collect();
    Some(Ok(InputRequiredResult::new(Some(requests), Some(sealed))))
}
