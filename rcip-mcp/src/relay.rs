//! What one instance of a deployment tells the others about 2025-11-25 sessions, so that a
//! balancer without affinity can send any request anywhere:
//!
//! - a client's answer to a request another instance sent it (an elicitation, a sampling
//!   request, a roots listing), and a cancellation of a call another instance runs: the
//!   instance holding the waiting request or the running call gets the message;
//! - a session's `logging/setLevel`: every instance sends that session's messages at its
//!   level;
//! - a session ended with `DELETE`: every instance drops it;
//! - `tasks/update` answers for a task another instance runs reach that instance;
//! - the listed tools changed: every instance looks at its own listing again (after the
//!   application's [`HttpOptions::on_remote_change`](crate::HttpOptions::on_remote_change)
//!   hook, which brings the application's own state up to date), and its clients hear of it
//!   if that changed too.
//!
//! The endpoint handles each such message here as it always does (rmcp drops an answer to a
//! request it did not send), then publishes it; each other instance delivers it to the
//! session if it holds one.

// 2025-11-25's `logging/setLevel` is deprecated in rmcp (SEP-2577), and still served.
#![allow(deprecated)]

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rcip_runtime::BoxFuture;
use rmcp::model::{ClientJsonRpcMessage, LoggingLevel};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};

use crate::request_ids::{InstanceIds, Owner};
use crate::sessions::SessionStoreError;

/// The largest request body the relay reads to look at: rmcp's own limit, which answers a
/// larger one 413 as this does.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// How long a request waits for what the other instances published before it (a database
/// that is slow to answer delays requests no more than this).
const SETTLE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(1);

/// The member of a notice saying the listed tools changed on the instance that published it.
pub(crate) const LIST_CHANGED: &str = "listChanged";

/// The members of a notice carrying `tasks/update` answers to the instance running the task.
const TASK: &str = "task";
const TASK_ANSWERS: &str = "inputResponses";

/// Relays `tasks/update` answers for task `id`, which another instance runs.
pub(crate) async fn publish_task_answers(
    relay: &dyn Relay,
    id: &str,
    responses: &rmcp::model::InputResponses,
) {
    let notice = json!({ TASK: id, TASK_ANSWERS: responses });
    if let Err(error) = relay.publish(notice).await {
        tracing::warn!(target: "rcip::mcp", %error, "answers to a task were not relayed");
    }
}

/// What the application does when another instance's listing changed (see
/// [`HttpOptions::on_remote_change`](crate::HttpOptions::on_remote_change)).
pub(crate) type RemoteChange = Arc<dyn Fn() -> BoxFuture<()> + Send + Sync>;

/// The header naming a 2025-11-25 session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Carries notices between the instances of one deployment (`rcip-database`'s
/// `PostgresRelay` is one, over `LISTEN`/`NOTIFY`). A notice is JSON the endpoint makes and
/// reads; the relay carries it as it is, to every instance but the one that published it,
/// in the order published, at most a few seconds late; one that cannot be carried (the
/// database down) is lost, as a message on a broken connection is.
pub trait Relay: Send + Sync + 'static {
    /// Sends `notice` to the other instances.
    fn publish(&self, notice: Value) -> BoxFuture<Result<(), SessionStoreError>>;
    /// Calls `hear` with each notice another instance publishes from now on (from a task
    /// of the relay's own; `hear` must not block). Called once per endpoint.
    fn subscribe(&self, hear: Arc<dyn Fn(Value) + Send + Sync>);
    /// Hands over now every notice published before this call that has not been heard yet,
    /// so that a request the client sends after another instance answered it sees what
    /// that instance published (a log level set there). The endpoint calls it before each
    /// request; the default does nothing (notices then arrive when they arrive).
    fn settle(&self) -> BoxFuture<()> {
        Box::pin(std::future::ready(()))
    }

    /// Waits (at most `hold`) until this instance may have requests outstanding to the
    /// client of 2025-11-25 session `session`, and holds that turn for at most `hold`, until
    /// [`leave_turn`](Self::leave_turn). rmcp numbers a session's server-to-client requests
    /// (elicitation, sampling, roots) from 0 on each instance that serves it, so two
    /// instances asking at once would send the same ids, and one answer would resolve both;
    /// with turns, only one instance at a time has any outstanding (its own have distinct
    /// ids). Several requests of one instance share its turn. The default grants it at once.
    fn take_turn(&self, session: &str, hold: std::time::Duration) -> BoxFuture<()> {
        let _ = (session, hold);
        Box::pin(std::future::ready(()))
    }

    /// Gives back one request's share of this instance's turn on `session`.
    fn leave_turn(&self, session: &str) -> BoxFuture<()> {
        let _ = session;
        Box::pin(std::future::ready(()))
    }
}

/// The deployment's relay, as a request's extensions carry it to the bridge, with the
/// sessions whose standalone stream (`GET`) this instance holds.
#[derive(Clone)]
pub(crate) struct RelayHandle {
    pub(crate) relay: Arc<dyn Relay>,
    pub(crate) streams: Arc<Streams>,
}

/// The member of a notice carrying a notification for a session's standalone stream.
const NOTIFY: &str = "notify";

/// One standalone stream's way in for relayed notifications (with its registration's id).
type Writer = (u64, tokio::sync::mpsc::UnboundedSender<String>);

/// The 2025-11-25 standalone streams (`GET`) this instance holds, by session: rmcp sends a
/// session's notifications that belong to no request (log messages) on that stream, which
/// may be held by another instance than the one whose call logs. Those are relayed, and
/// written into the stream here.
#[derive(Default)]
pub(crate) struct Streams {
    by_session: std::sync::Mutex<std::collections::HashMap<String, Vec<Writer>>>,
    next: std::sync::atomic::AtomicU64,
}

impl Streams {
    /// Whether this instance holds a standalone stream of `session`.
    pub(crate) fn holds(&self, session: &str) -> bool {
        crate::context::lock(&self.by_session).contains_key(session)
    }

    /// Writes `message` (a JSON-RPC notification) into `session`'s standalone streams here.
    fn write(&self, session: &str, message: &Value) {
        let text = message.to_string();
        if let Some(streams) = crate::context::lock(&self.by_session).get(session) {
            for (_, stream) in streams {
                let _ = stream.send(text.clone());
            }
        }
    }

    fn open(
        self: &Arc<Self>,
        session: &str,
    ) -> (u64, tokio::sync::mpsc::UnboundedReceiver<String>) {
        let (to, from) = tokio::sync::mpsc::unbounded_channel();
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::context::lock(&self.by_session)
            .entry(session.to_owned())
            .or_default()
            .push((id, to));
        (id, from)
    }

    fn close(&self, session: &str, id: u64) {
        let mut by_session = crate::context::lock(&self.by_session);
        if let Some(streams) = by_session.get_mut(session) {
            streams.retain(|(other, _)| *other != id);
            if streams.is_empty() {
                by_session.remove(session);
            }
        }
    }
}

/// Relays a notification for `session`'s standalone stream, which another instance holds.
pub(crate) async fn publish_notification(relay: &dyn Relay, session: &str, message: Value) {
    let notice = json!({ "session": session, NOTIFY: message });
    if let Err(error) = relay.publish(notice).await {
        tracing::warn!(target: "rcip::mcp", %error, "a notification was not relayed");
    }
}

/// A request's session, as the relay reaches the other instances serving it: to take this
/// instance's turn to ask the session's client something (see [`Relay::take_turn`]), and to
/// relay the log messages rmcp sends on the session's standalone stream when another instance
/// holds it.
#[derive(Clone)]
pub(crate) struct SessionLink {
    relay: Arc<dyn Relay>,
    streams: Arc<Streams>,
    session: String,
}

impl SessionLink {
    /// For a request served through an endpoint with a relay, in a session; `None` otherwise.
    pub(crate) fn of(
        ctx: &rmcp::service::RequestContext<rmcp::service::RoleServer>,
    ) -> Option<Self> {
        let parts = ctx.extensions.get::<axum::http::request::Parts>()?;
        let handle = parts.extensions.get::<RelayHandle>()?;
        let session = parts.headers.get(SESSION_HEADER)?.to_str().ok()?;
        Some(Self {
            relay: Arc::clone(&handle.relay),
            streams: Arc::clone(&handle.streams),
            session: session.to_owned(),
        })
    }

    /// Publishes the JSON-RPC notification `message()` makes, for the instance holding the
    /// session's standalone stream, unless this one holds it (rmcp sends it there itself):
    /// the message is made only when it is published.
    pub(crate) async fn notify(&self, message: impl FnOnce() -> Value) {
        if !self.streams.holds(&self.session) {
            publish_notification(&*self.relay, &self.session, message()).await;
        }
    }

    /// Waits for the turn (at most `hold`); it is held until the returned value is dropped.
    pub(crate) async fn take(self, hold: std::time::Duration) -> HeldTurn {
        self.relay.take_turn(&self.session, hold).await;
        HeldTurn(Some(self))
    }
}

/// The turn of `link`'s session (none to take without a link), waiting at most `hold`;
/// `None` when `cancelled` fires first (the turn, if taken meanwhile, lapses by its lease).
pub(crate) async fn turn_unless(
    link: Option<SessionLink>,
    hold: std::time::Duration,
    cancelled: &tokio_util::sync::CancellationToken,
) -> Option<Option<HeldTurn>> {
    let Some(link) = link else {
        return Some(None);
    };
    tokio::select! {
        held = link.take(hold) => Some(Some(held)),
        () = cancelled.cancelled() => None,
    }
}

/// A share of this instance's turn, given back when dropped.
pub(crate) struct HeldTurn(Option<SessionLink>);

impl Drop for HeldTurn {
    fn drop(&mut self) {
        if let Some(turn) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { turn.relay.leave_turn(&turn.session).await });
        }
    }
}

/// What a bridge does with what another instance published.
pub(crate) trait Heard: Send + Sync + 'static {
    /// A session set its log level.
    fn set_level(&self, session: &str, level: LoggingLevel);
    /// The listed tools changed elsewhere: look at this bridge's listing again.
    fn listing_changed(&self);
    /// Answers to the questions of a task, which runs here if anywhere (in a task of its
    /// own: this must not block).
    fn answer_task(&self, id: String, answers: rmcp::model::InputResponses);
}

/// What the endpoint does with what another instance heard.
pub(crate) struct Delivery {
    pub(crate) manager: Arc<LocalSessionManager>,
    /// The bridge the endpoint serves.
    pub(crate) bridge: Arc<dyn Heard>,
    /// The application's hook for another instance's listing change.
    pub(crate) on_remote_change: Option<RemoteChange>,
    /// The standalone streams this instance holds.
    pub(crate) streams: Arc<Streams>,
    /// This instance's tag on the requests it sends clients.
    pub(crate) ids: InstanceIds,
}

impl Delivery {
    /// Acts on a notice another instance published.
    pub(crate) fn hear(&self, notice: Value) {
        if notice.get(LIST_CHANGED).and_then(Value::as_bool) == Some(true) {
            let hook = self.on_remote_change.clone();
            let bridge = self.bridge.clone();
            tokio::spawn(async move {
                if let Some(hook) = hook {
                    hook().await;
                }
                // The watcher compares the listing again, and announces only a change.
                bridge.listing_changed();
            });
            return;
        }
        if let Some(id) = notice.get(TASK).and_then(Value::as_str)
            && let Some(answers) = notice.get(TASK_ANSWERS)
            && let Ok(answers) =
                serde_json::from_value::<rmcp::model::InputResponses>(answers.clone())
        {
            self.bridge.answer_task(id.to_owned(), answers);
            return;
        }
        let Some(session) = notice.get("session").and_then(Value::as_str) else {
            return;
        };
        let session: Arc<str> = Arc::from(session);
        if notice.get("ended").and_then(Value::as_bool) == Some(true) {
            let manager = self.manager.clone();
            tokio::spawn(async move {
                if manager.has_session(&session).await.unwrap_or(false) {
                    let _ = manager.close_session(&session).await;
                }
            });
            return;
        }
        if let Some(level) = notice.get("level")
            && let Ok(level) = serde_json::from_value::<LoggingLevel>(level.clone())
        {
            self.bridge.set_level(&session, level);
            return;
        }
        if let Some(message) = notice.get(NOTIFY) {
            self.streams.write(&session, message);
            return;
        }
        let Some(message) = notice.get("message") else {
            return;
        };
        // An answer to another instance's request is that instance's alone.
        let Some(message) = self.ids.untag_response(message.clone()) else {
            return;
        };
        let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(message) else {
            return;
        };
        let manager = self.manager.clone();
        tokio::spawn(async move {
            if manager.has_session(&session).await.unwrap_or(false) {
                let _ = manager.accept_message(&session, message).await;
            }
        });
    }
}

/// What a request, once handled here, tells the other instances.
enum Told {
    /// A message the instance that waits for it (or runs the call it cancels) must get.
    Message(Value),
    /// A `logging/setLevel` with this level.
    Level(Value),
    /// The session ended.
    Ended,
}

/// Whether `message` is for whichever instance waits for it: an answer to a request the
/// server sent, or a cancellation.
fn travels(message: &Value) -> Option<Told> {
    match message.get("method").and_then(Value::as_str) {
        None if message.get("id").is_some()
            && (message.get("result").is_some() || message.get("error").is_some()) =>
        {
            Some(Told::Message(message.clone()))
        }
        Some("notifications/cancelled") => Some(Told::Message(message.clone())),
        Some("logging/setLevel") => message
            .pointer("/params/level")
            .map(|level| Told::Level(level.clone())),
        _ => None,
    }
}

/// The layer: handles the request here, then publishes what the others must know.
pub(crate) async fn relay(
    relay: Arc<dyn Relay>,
    streams: Arc<Streams>,
    ids: InstanceIds,
    mut request: Request,
    next: Next,
) -> Response {
    request.extensions_mut().insert(RelayHandle {
        relay: Arc::clone(&relay),
        streams: Arc::clone(&streams),
    });
    let Some(session) = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return next.run(request).await;
    };
    // What other instances published before this request was sent (its session's log
    // level, say) applies to it.
    if request.method() == Method::POST
        && tokio::time::timeout(SETTLE_AT_MOST, relay.settle())
            .await
            .is_err()
    {
        tracing::warn!(target: "rcip::mcp", "the relay was not read in time; a notice may arrive after this request");
    }
    let (told, request) = match *request.method() {
        Method::DELETE => (Some(Told::Ended), request),
        Method::GET => {
            let response = next.run(request).await;
            return if response.status() == StatusCode::OK {
                standalone(&streams, &session, &ids, response)
            } else {
                response
            };
        }
        Method::POST => {
            let (parts, body) = request.into_parts();
            let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
                Ok(bytes) => bytes,
                Err(error) => {
                    let too_large = std::error::Error::source(&error)
                        .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
                    return if too_large {
                        StatusCode::PAYLOAD_TOO_LARGE.into_response()
                    } else {
                        StatusCode::BAD_REQUEST.into_response()
                    };
                }
            };
            let Ok(message) = serde_json::from_slice::<Value>(&bytes) else {
                // rmcp refuses it as it always does; nothing travels.
                return next
                    .run(Request::from_parts(parts, Body::from(bytes)))
                    .await;
            };
            match ids.response_owner(&message) {
                // An answer to this instance's own request: rmcp gets its own id back, and
                // no other instance needs it.
                Some(Owner::Mine(number)) => {
                    let mut own = message;
                    own["id"] = Value::from(number);
                    (None, rewritten(parts, &own))
                }
                // No instance of a relayed deployment asks with a bare id: an untagged answer
                // (a client that rewrote the id, or an instance of an older version) could
                // only decide a question it was not given. rmcp gets it with an id it
                // cannot match, and answers as it answers any answer; nothing is published.
                Some(Owner::Untagged) => {
                    let mut unmatched = message;
                    unmatched["id"] = Value::from(UNMATCHED_ID);
                    (None, rewritten(parts, &unmatched))
                }
                // Another instance's answer (rmcp here matches no string id) is published
                // for it; the client's own request or notification may travel too.
                Some(Owner::Another) | None => (
                    travels(&message),
                    Request::from_parts(parts, Body::from(bytes)),
                ),
            }
        }
        _ => (None, request),
    };
    let response = tagged(&ids, next.run(request).await);
    let Some(told) = told else {
        return response;
    };
    if !response.status().is_success() {
        return response;
    }
    let notice = match told {
        Told::Message(message) => json!({"session": session, "message": message}),
        Told::Level(level) => json!({"session": session, "level": level}),
        Told::Ended => json!({"session": session, "ended": true}),
    };
    if let Err(error) = relay.publish(notice).await {
        tracing::warn!(target: "rcip::mcp", %error, "a notice to the other instances was lost");
    }
    response
}

/// A standalone stream this instance holds: rmcp's events, and the notifications other
/// instances relay for its session written between them (each of rmcp's body chunks is one
/// whole event, so an event written between two never splits one). The session is
/// registered while the stream lasts.
fn standalone(
    streams: &Arc<Streams>,
    session: &str,
    ids: &InstanceIds,
    response: Response,
) -> Response {
    use futures_util::StreamExt;
    let (parts, body) = tagged(ids, response).into_parts();
    let (id, relayed) = streams.open(session);
    let registered = Registered {
        streams: Arc::clone(streams),
        session: session.to_owned(),
        id,
    };
    let events = body.into_data_stream();
    let merged = futures_util::stream::unfold(
        (events, relayed, registered),
        |(mut events, mut relayed, registered)| async move {
            let item = tokio::select! {
                biased;
                event = events.next() => event?,
                Some(message) = relayed.recv() => {
                    Ok(axum::body::Bytes::from(format!("data: {message}\n\n")))
                }
            };
            Some((item, (events, relayed, registered)))
        },
    );
    Response::from_parts(parts, Body::from_stream(merged))
}

/// The id an untagged answer reaches rmcp with: a string, which rmcp never gives its own
/// requests.
const UNMATCHED_ID: &str = "rcip.untagged";

/// A request with `message` as its body (its old length dropped with it).
fn rewritten(mut parts: axum::http::request::Parts, message: &Value) -> Request {
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Request::from_parts(parts, Body::from(message.to_string()))
}

/// `response` with the requests and cancellations of its event stream tagged with this
/// instance (see [`InstanceIds`]); a response that is not an event stream as it is.
fn tagged(ids: &InstanceIds, response: Response) -> Response {
    use futures_util::StreamExt;
    let events = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !events {
        return response;
    }
    let (parts, body) = response.into_parts();
    let ids = ids.clone();
    let events = body
        .into_data_stream()
        .map(move |chunk| chunk.map(|chunk| ids.tag_event(chunk)));
    Response::from_parts(parts, Body::from_stream(events))
}

/// A standalone stream's registration, ended with the stream.
struct Registered {
    streams: Arc<Streams>,
    session: String,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.streams.close(&self.session, self.id);
    }
}
