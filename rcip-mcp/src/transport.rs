//! Transports: stdio, and streamable HTTP as an axum router.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use rcip_runtime::Principal;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::store::EventStore;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::bridge::{BridgeError, McpBridge};
use crate::events::MemoryEventStore;
use crate::relay::{Delivery, Relay, RemoteChange};
use crate::request_ids::{InstanceIds, TaggingEventStore};
use crate::session_owner::{self, SessionOwners};
use crate::sessions::{Restorer, SessionStore};

/// Serves the bridge on this process's stdin and stdout until the client closes them.
/// Both revisions: a 2025-11-25 client starts with `initialize`, a 2026-07-28 one with
/// `server/discover`. Log to stderr only: stdout carries the MCP messages.
///
/// # Errors
///
/// [`BridgeError::Service`] when the session cannot start or ends with an error.
pub async fn serve_stdio(bridge: McpBridge) -> Result<(), BridgeError> {
    bridge.inner.ensure_watcher();
    let running = bridge
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| BridgeError::Service(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| BridgeError::Service(e.to_string()))?;
    Ok(())
}

/// Why the bearer-token hook refused a request: answered `401 Unauthorized`.
#[derive(Debug, Clone, Default)]
pub struct AuthRejection {
    challenge: Option<String>,
}

impl AuthRejection {
    /// A plain refusal (`WWW-Authenticate: Bearer`).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The `WWW-Authenticate` value to send, e.g.
    /// `Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource/mcp"`.
    #[must_use]
    pub fn with_challenge(mut self, challenge: impl Into<String>) -> Self {
        self.challenge = Some(challenge.into());
        self
    }
}

type AuthHook = dyn Fn(&Parts) -> Result<Option<Principal>, AuthRejection> + Send + Sync;

/// Options of the streamable HTTP endpoint.
///
/// ```
/// use rcip_mcp::{AuthRejection, HttpOptions};
/// use rcip_runtime::Principal;
/// let options = HttpOptions::new().bearer_auth(|parts| {
///     match parts.headers.get("authorization").and_then(|v| v.to_str().ok()) {
///         Some("Bearer secret-token") => Ok(Some(Principal::new("ada"))),
///         _ => Err(AuthRejection::new()),
///     }
/// });
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct HttpOptions {
    path: String,
    allowed_origins: Vec<String>,
    allowed_hosts: Option<Vec<String>>,
    auth: Option<Arc<AuthHook>>,
    shutdown: CancellationToken,
    events: Option<Arc<dyn EventStore>>,
    sessions: Option<Arc<dyn SessionStore>>,
    relay: Option<Arc<dyn Relay>>,
    on_remote_change: Option<RemoteChange>,
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpOptions")
            .field("path", &self.path)
            .field("allowed_origins", &self.allowed_origins)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("auth", &self.auth.is_some())
            .field("events", &self.events.is_some())
            .field("sessions", &self.sessions.is_some())
            .field("relay", &self.relay.is_some())
            .field("on_remote_change", &self.on_remote_change.is_some())
            .finish()
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".to_owned(),
            allowed_origins: vec![
                "http://localhost:*".to_owned(),
                "http://127.0.0.1:*".to_owned(),
            ],
            allowed_hosts: None,
            auth: None,
            shutdown: CancellationToken::new(),
            events: Some(Arc::new(MemoryEventStore::new())),
            sessions: None,
            relay: None,
            on_remote_change: None,
        }
    }
}

impl HttpOptions {
    /// The defaults: path `/mcp`; browser origins `http://localhost:*` and
    /// `http://127.0.0.1:*` (a request with another `Origin` is answered 403; one without
    /// `Origin`, as non-browser clients send, passes); `Host` limited to loopback names
    /// (rmcp's check, against DNS rebinding); no authentication.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The endpoint's path inside the router (default `/mcp`).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The browser origins allowed, e.g. `https://app.example.com:443` or
    /// `http://localhost:*` (`:*` for any port). An empty list refuses every request that
    /// carries an `Origin`.
    #[must_use]
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// The `Host` names (or `host:port` authorities) accepted, for a deployment reached by
    /// a public name; the default accepts loopback names only.
    #[must_use]
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Ends the endpoint's sessions and their open streams when `token` is cancelled: a
    /// server that drains at shutdown cancels it when it stops accepting, so that a client's
    /// long-lived `GET` stream (2025-11-25) does not hold the drain until its deadline. The
    /// default token is never cancelled.
    ///
    /// ```
    /// let shutdown = rcip_mcp::CancellationToken::new();
    /// let options = rcip_mcp::HttpOptions::new().shutdown(shutdown.clone());
    /// // ... at SIGTERM:
    /// shutdown.cancel();
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    /// Where the events of 2025-11-25 event streams are kept for a client that reconnects
    /// with `Last-Event-ID` (SEP-1699): by default a [`MemoryEventStore`] in this process, so
    /// a client that lost its stream gets what it missed, the call's result included. A
    /// deployment of several instances shares one store.
    #[must_use]
    pub fn event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.events = Some(store);
        self
    }

    /// Shares the endpoint's 2025-11-25 sessions with the deployment's other instances
    /// through `store`: a request naming a session another instance opened is served here
    /// (rmcp restores it from its stored `initialize`), still only for the principal that
    /// opened it. Without one (the default), a session lives in the instance that opened it.
    /// Share the events too ([`event_store`](Self::event_store)), so a client reconnecting
    /// to another instance gets what it missed.
    #[must_use]
    pub fn session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.sessions = Some(store);
        self
    }

    /// Tells the deployment's other instances, through `relay`, what they must know of this
    /// one's 2025-11-25 sessions: a client's answer to a request another instance sent it
    /// (an elicitation, a sampling request) and a cancellation reach the instance waiting
    /// for them, a session's log level and its end reach every instance. With a
    /// [`session_store`](Self::session_store), this is what lets a balancer without affinity
    /// send each request anywhere.
    ///
    /// With a relay, the ids of requests to a 2025-11-25 client read `rcip.<instance>.<n>`
    /// on the wire, not rmcp's bare numbers: rmcp numbers them from 0 on every instance, and
    /// an answer must decide only the question it answers, wherever it is posted. An answer
    /// with a bare id decides nothing on such a deployment, so every instance must run a
    /// version that tags: a question asked across an upgrade goes unanswered and ends as an
    /// unanswered question does.
    #[must_use]
    pub fn relay(mut self, relay: Arc<dyn Relay>) -> Self {
        self.relay = Some(relay);
        self
    }

    /// With a [`relay`](Self::relay): what the application does when another instance's
    /// listed tools changed, before this instance looks at its own listing again (its
    /// clients hear of the change if the listing changed here too). An application whose
    /// listing depends on state of its own (a binding it toggles, a flag) brings that state
    /// up to date here, from wherever the instances share it; one whose availability checks
    /// read shared state needs no hook.
    #[must_use]
    pub fn on_remote_change(
        mut self,
        hook: impl Fn() -> rcip_runtime::BoxFuture<()> + Send + Sync + 'static,
    ) -> Self {
        self.on_remote_change = Some(Arc::new(hook));
        self
    }

    /// Keeps no events beyond what rmcp's session holds: a stream can then be resumed only
    /// while its call has not answered.
    #[must_use]
    pub fn without_event_store(mut self) -> Self {
        self.events = None;
        self
    }

    /// Checks every request before MCP sees it: `Ok(Some(principal))` lets it through as
    /// that caller (the principal lands in the invocation's extensions, where policies and
    /// handlers read it, and binds 2026-07-28 confirmation states), `Ok(None)` lets it
    /// through anonymously, `Err` answers `401` with the rejection's challenge.
    #[must_use]
    pub fn bearer_auth(
        mut self,
        hook: impl Fn(&Parts) -> Result<Option<Principal>, AuthRejection> + Send + Sync + 'static,
    ) -> Self {
        self.auth = Some(Arc::new(hook));
        self
    }
}

/// The streamable HTTP endpoint as an axum router, to serve as is or merge into an
/// application's router. One endpoint serves both revisions: 2025-11-25 clients get
/// sessions (`MCP-Session-Id`), 2026-07-28 requests are served statelessly.
///
/// A session belongs to the principal whose `initialize` opened it (the
/// [`bearer_auth`](HttpOptions::bearer_auth) hook's answer, compared whole: id, name and
/// scopes; anonymous without a hook). Every request carrying an `MCP-Session-Id` (`POST`,
/// `GET`, `DELETE`, either revision) from another principal, or naming no session of this
/// endpoint, is answered exactly as rmcp answers an unknown session: `404 Not Found`, body
/// `Not Found: Session not found`.
///
/// ```no_run
/// # async fn demo(bridge: rcip_mcp::McpBridge) -> std::io::Result<()> {
/// let app = axum::Router::new().merge(rcip_mcp::http_router(bridge, rcip_mcp::HttpOptions::new()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8001").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub fn http_router(bridge: McpBridge, mut options: HttpOptions) -> Router {
    let mut config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_allowed_origins(options.allowed_origins)
        .with_cancellation_token(options.shutdown)
        .enforce_origin_validation();
    if let Some(hosts) = options.allowed_hosts {
        config = config.with_allowed_hosts(hosts);
    }
    if let Some(store) = &options.sessions {
        config.session_store = Some(Arc::new(Restorer(Arc::clone(store))));
    }
    // With other instances, requests to clients carry this instance's tag (see
    // `request_ids`), in the event store as on the wire.
    let relayed = options
        .relay
        .take()
        .map(|relay| (relay, InstanceIds::new()));
    let mut manager = LocalSessionManager::default();
    if let Some(store) = options.events {
        manager = match &relayed {
            Some((_, ids)) => manager.with_event_store(Arc::new(TaggingEventStore {
                inner: store,
                ids: ids.clone(),
            })),
            None => manager.with_event_store(store),
        };
    }
    let manager = Arc::new(manager);
    let streams = Arc::new(crate::relay::Streams::default());
    if let Some((relay, ids)) = &relayed {
        let _ = bridge.inner.relay.set(Arc::clone(relay));
        let delivery = Delivery {
            manager: Arc::clone(&manager),
            bridge: bridge.inner.clone(),
            on_remote_change: options.on_remote_change.clone(),
            streams: Arc::clone(&streams),
            ids: ids.clone(),
        };
        relay.subscribe(Arc::new(move |notice| delivery.hear(notice)));
    }
    let owners = Arc::new(SessionOwners::new(Arc::clone(&manager), options.sessions));
    let service = StreamableHttpService::new(move || Ok(bridge.clone()), manager, config);
    // Inside the authentication layer: the guard reads the principal the hook settled.
    let mut router =
        Router::new()
            .route_service(&options.path, service)
            .layer(middleware::from_fn(move |request: Request, next: Next| {
                session_owner::guard(Arc::clone(&owners), request, next)
            }));
    // Outside the guard: only what the guard let through (and rmcp accepted) is published.
    if let Some((relay, ids)) = relayed {
        router = router.layer(middleware::from_fn(move |request: Request, next: Next| {
            crate::relay::relay(
                Arc::clone(&relay),
                Arc::clone(&streams),
                ids.clone(),
                request,
                next,
            )
        }));
    }
    let router = router
        .layer(middleware::from_fn(session_ended))
        .layer(middleware::from_fn(log_refusal));
    match options.auth {
        Some(hook) => router.layer(middleware::from_fn(move |request: Request, next: Next| {
            let hook = hook.clone();
            async move { authenticate(&*hook, request, next).await }
        })),
        None => router,
    }
}

/// rmcp answers a refused `Host` or `Origin` with a bare `403` and logs nothing; the
/// operator who bound `0.0.0.0` and is reached by IP or name needs to know which option
/// allows it. The answer to the client stays rmcp's.
async fn log_refusal(request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).cloned();
    let origin = request.headers().get(header::ORIGIN).cloned();
    let response = next.run(request).await;
    if response.status() != StatusCode::FORBIDDEN {
        return response;
    }
    // rmcp's refusals are one short line of known size; anything else passes untouched.
    let short = axum::body::HttpBody::size_hint(response.body())
        .exact()
        .is_some_and(|size| size <= 1024);
    if !short {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1024).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let text = String::from_utf8_lossy(&bytes);
    let shown = |value: Option<HeaderValue>| {
        value.map_or_else(
            || "(none)".to_owned(),
            |v| String::from_utf8_lossy(v.as_bytes()).into_owned(),
        )
    };
    if text.contains("Host header") {
        tracing::warn!(
            target: "rcip::mcp",
            host = %shown(host),
            "refused an MCP request with 403: its Host is not allowed (the default accepts \
             loopback names only, against DNS rebinding); to serve it, list the name in \
             `HttpOptions::allowed_hosts`"
        );
    } else if text.contains("Origin header") {
        tracing::warn!(
            target: "rcip::mcp",
            origin = %shown(origin),
            "refused an MCP request with 403: its Origin is not allowed; to serve that \
             browser origin, list it in `HttpOptions::allowed_origins`"
        );
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// A session ended by `DELETE`: rmcp answers 202 Accepted, which the Python SDK's client
/// logs as a failed termination (it takes 200 or 204); the session is gone at once, so 204
/// No Content says so.
async fn session_ended(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

async fn authenticate(hook: &AuthHook, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    // Only the hook says who is calling.
    parts.extensions.remove::<Principal>();
    match hook(&parts) {
        Ok(principal) => {
            if let Some(principal) = principal {
                parts.extensions.insert(principal);
            }
            next.run(Request::from_parts(parts, body)).await
        }
        Err(rejection) => {
            let challenge = rejection.challenge.as_deref().unwrap_or("Bearer");
            let mut response = Response::new(Body::from("Unauthorized"));
            *response.status_mut() = StatusCode::UNAUTHORIZED;
            if let Ok(value) = HeaderValue::from_str(challenge) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
    }
}

/// Serves [`http_router`] on `addr` until the process ends. Bind a loopback address
/// (`127.0.0.1:PORT`) unless the endpoint is meant to be reached from elsewhere, and then
/// set [`HttpOptions::allowed_hosts`] and an authentication hook.
///
/// # Errors
///
/// [`BridgeError::Io`] when the address cannot be bound or serving fails.
pub async fn serve_http(
    bridge: McpBridge,
    addr: SocketAddr,
    options: HttpOptions,
) -> Result<(), BridgeError> {
    bridge.inner.ensure_watcher();
    let listener = tokio::net::TcpListener::bind(addr).await?;
    // Without it, a response written in two parts (an SSE stream's head, then its event)
    // waits for the client's delayed ACK, about 40 ms on Linux.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY could not be set");
        }
    });
    axum::serve(listener, http_router(bridge, options)).await?;
    Ok(())
}
