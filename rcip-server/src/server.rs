//! The [`Server`]: a platform, an authenticator, limits and the public base URL, made into
//! one axum [`Router`].

use http::StatusCode;
use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::error_handling::HandleErrorLayer;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rcip_mcp::CancellationToken;
use rcip_platform::Platform;
use rcip_records::RecordStore;
use tower::ServiceBuilder;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::load_shed::LoadShedLayer;
use tower::timeout::TimeoutLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

use crate::authenticate::{AuthRefusal, Authenticate, Authenticated, Door};
use crate::error::ApiError;
use crate::limits::{
    AddressLimiter, BodyRules, Limits, PrincipalSlots, RateLimiter, concurrency_limited,
    json_guard, layer_error, principal_rate, principal_slot, reshape_refusal,
};
use crate::paths::{MCP_PATH, METADATA_PATH};
use crate::shared::Shared;
use crate::{discovery, explorer, health, mcp, observe, openapi, rest};

/// The service: a platform behind REST and MCP, with an
/// authenticator, [`Limits`] and the public base URL its documents name.
///
/// ```
/// use std::sync::Arc;
/// use rcip_platform::{MemoryDirectory, Platform};
/// use rcip_records::Engine;
/// use rcip_server::{Server, StaticTokens};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let platform = Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
///     .await
///     .unwrap();
/// let server = Server::new(Arc::new(platform), Arc::new(StaticTokens::new()),
///     "https://relationships.example");
/// let app: axum::Router = server.router();
/// # let _ = app; });
/// ```
pub struct Server {
    shared: Shared,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("base_url", &self.shared.base_url)
            .field("limits", &self.shared.limits)
            .field("authorization_servers", &self.shared.authorization_servers)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server of `platform`, accepting the callers `auth` accepts, reached at `base_url`
    /// (e.g. `https://relationships.example`; a trailing `/` is dropped), with the default
    /// [`Limits`].
    #[must_use]
    pub fn new<S: RecordStore>(
        platform: Arc<Platform<S>>,
        auth: Arc<dyn Authenticate>,
        base_url: impl Into<String>,
    ) -> Self {
        let mut base_url = base_url.into();
        while base_url.ends_with('/') {
            base_url.pop();
        }
        Self {
            shared: Shared {
                directory: Arc::clone(platform.directory()),
                platform,
                auth,
                limits: Limits::default(),
                openapi: Arc::new(openapi::openapi_document(&base_url)),
                base_url,
                authorization_servers: Vec::new(),
                shutdown: CancellationToken::new(),
                metrics: true,
                mcp_sessions: None,
                mcp_events: None,
                mcp_relay: None,
            },
        }
    }

    /// Shares `/mcp`'s 2025-11-25 sessions with the deployment's other instances through
    /// `store` (`rcip-database`'s `PostgresStore::mcp_sessions` on the shared database): a
    /// session opened through one instance is served by any, for its owner only. Without it,
    /// a session lives in the instance that opened it.
    #[must_use]
    pub fn mcp_sessions(mut self, store: Arc<dyn rcip_mcp::SessionStore>) -> Self {
        self.shared.mcp_sessions = Some(store);
        self
    }

    /// Keeps the events of `/mcp`'s 2025-11-25 event streams in `store`, shared with the
    /// deployment's other instances (`rcip-database`'s `PostgresStore::mcp_events`): a client
    /// reconnecting with `Last-Event-ID` to any instance gets what it missed. Without it, the
    /// events are kept in this process's memory.
    #[must_use]
    pub fn mcp_events(
        mut self,
        store: Arc<
            dyn rcip_mcp::rmcp::transport::streamable_http_server::session::store::EventStore,
        >,
    ) -> Self {
        self.shared.mcp_events = Some(store);
        self
    }

    /// Tells the deployment's other instances what they must know of `/mcp`'s 2025-11-25
    /// sessions (`rcip-database`'s `PostgresStore::mcp_relay`): a session's end and its log
    /// level reach every instance, a client's answer the instance waiting for it.
    #[must_use]
    pub fn mcp_relay(mut self, relay: Arc<dyn rcip_mcp::Relay>) -> Self {
        self.shared.mcp_relay = Some(relay);
        self
    }

    /// Replaces the limits.
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.shared.limits = limits;
        self
    }

    /// The OAuth authorization servers (issuers) whose tokens this resource accepts, as the
    /// protected-resource metadata lists them.
    #[must_use]
    pub fn authorization_servers<I, T>(mut self, issuers: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.shared.authorization_servers = issuers.into_iter().map(Into::into).collect();
        self
    }

    /// Ends MCP's open streams when `token` is cancelled: cancel it when the server stops
    /// accepting, so that a client's `GET /mcp` stream (which never ends by itself) does
    /// not hold the drain until its deadline. `rcip serve` cancels it at SIGTERM.
    #[must_use]
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shared.shutdown = token;
        self
    }

    /// Whether requests and operations are recorded through the `metrics` facade (default:
    /// yes). With no recorder installed each record is a no-op, but still costs the labels'
    /// keys and the clock reads (about 1 µs a request): turn it off when nothing scrapes.
    #[must_use]
    pub fn record_metrics(mut self, on: bool) -> Self {
        self.shared.metrics = on;
        self
    }

    /// The public base URL (no trailing `/`).
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.shared.base_url
    }

    /// The router: every route of `docs/server-design.md` with the limit layers, ready to
    /// serve or to merge into an application's router (its own routes then meet no limit of
    /// this server's).
    pub fn router(&self) -> Router {
        let shared = Arc::new(self.shared.clone());
        let limits = &shared.limits;
        // One bucket, one count per principal and one bucket per address across both doors.
        let guards = Guards {
            rate: limits
                .rate_limit
                .map(|rate| Arc::new(RateLimiter::new(rate))),
            slots: Arc::new(PrincipalSlots::new(limits.max_concurrent_per_principal)),
            addresses: limits
                .unauthenticated_rate_limit
                .map(|rate| Arc::new(AddressLimiter::new(rate))),
        };
        let rest = Router::new()
            .route("/v1/operations", post(rest::operations))
            .with_state(Arc::clone(&shared));
        let rest = door(rest, &shared, Door::Rest, &guards);
        let mcp = door(mcp::router(&shared), &shared, mcp::DOOR, &guards);
        let public = Router::new()
            .route("/", get(explorer::page))
            .route("/v1/openapi.json", get(openapi::serve))
            .route(METADATA_PATH, get(discovery::rest))
            .route(&format!("{}{MCP_PATH}", METADATA_PATH), get(discovery::mcp))
            .with_state(Arc::clone(&shared));
        let limited = Router::new()
            .merge(rest)
            .merge(mcp)
            .merge(public)
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .layer(
                ServiceBuilder::new()
                    .layer(middleware::from_fn(reshape_refusal))
                    .layer(RequestBodyLimitLayer::new(limits.max_body_bytes))
                    .layer(HandleErrorLayer::new(layer_error))
                    .layer(TimeoutLayer::new(limits.request_timeout))
                    .layer(LoadShedLayer::new())
                    .layer(GlobalConcurrencyLimitLayer::new(
                        limits.max_concurrent_requests.max(1),
                    )),
            );
        // The probes stand outside every limit; the metrics and the span wrap everything.
        let readiness = Arc::new(health::Readiness::new(Arc::clone(&shared.directory)));
        let mut app = Router::new()
            .route("/healthz", get(health::healthz))
            .route("/readyz", get(health::readyz))
            .with_state(readiness)
            .merge(limited);
        if shared.metrics {
            app = app.layer(middleware::from_fn(observe::measure));
        }
        app.layer(
            TraceLayer::new_for_http()
                .make_span_with(observe::request_span)
                .on_request(())
                .on_response(observe::record_status),
        )
    }
}

/// The per-caller limits both doors share.
struct Guards {
    rate: Option<Arc<RateLimiter>>,
    slots: Arc<PrincipalSlots>,
    addresses: Option<Arc<AddressLimiter>>,
}

/// The layers of a door, outermost first: admission (the client address's bucket,
/// authentication, the principal's rate and concurrency limits, in one layer: each layer
/// costs a boxed future per request), then the JSON body guard (the body is read only for
/// an authenticated caller with a free slot).
fn door(routes: Router, shared: &Arc<Shared>, door: Door, guards: &Guards) -> Router {
    let rules = BodyRules {
        depth_limit: shared
            .limits
            .json_depth_limit
            .min(crate::limits::DEFAULT_JSON_DEPTH_LIMIT),
        timeout: shared.limits.body_timeout,
    };
    let gate = Arc::new(Gate {
        shared: Arc::clone(shared),
        door,
        addresses: guards.addresses.clone(),
        rate: guards.rate.clone(),
        slots: Arc::clone(&guards.slots),
    });
    routes
        .layer(middleware::from_fn_with_state(rules, json_guard))
        .layer(middleware::from_fn_with_state(gate, admit))
}

/// What a door's admission checks.
pub(crate) struct Gate {
    shared: Arc<Shared>,
    door: Door,
    addresses: Option<Arc<AddressLimiter>>,
    rate: Option<Arc<RateLimiter>>,
    slots: Arc<PrincipalSlots>,
}

/// The same as [`Server::router`].
pub fn router(server: &Server) -> Router {
    server.router()
}

/// Admits a request through a door: before any credential is looked at, the client
/// address must have a token left in its bucket (each refusal of authentication draws one;
/// an authenticated request draws nothing); then the authenticator says who calls (the
/// answer lands in the request's extensions, any `Authenticated` already there is dropped:
/// only this layer says who calls); then one of the principal's slots, held until the
/// answer, and its rate bucket. A refusal is answered at once.
pub(crate) async fn admit(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let address = gate
        .addresses
        .as_ref()
        .and_then(|limiter| Some((limiter, AddressLimiter::address(&parts.extensions)?)));
    if let Some((limiter, address)) = address
        && let Some(refused) = limiter.check(address)
    {
        return refused;
    }
    parts.extensions.remove::<Authenticated>();
    let who = match gate.shared.auth.authenticate(&parts, gate.door).await {
        Ok(who) => who,
        Err(refusal) => {
            if let Some((limiter, address)) = address {
                limiter.charge(address);
            }
            return refused(&gate.shared, gate.door, refusal).into_response();
        }
    };
    // A slot first: a request refused for want of one draws nothing from the bucket.
    let Some(slot) = principal_slot(&gate.slots, &who) else {
        return concurrency_limited(&gate.slots);
    };
    if let Some(refusal) = gate
        .rate
        .as_ref()
        .and_then(|limiter| principal_rate(limiter, &who))
    {
        return refusal;
    }
    parts.extensions.insert(who);
    let response = next.run(Request::from_parts(parts, body)).await;
    drop(slot);
    response
}

/// A refusal as the error body; every 401 names where the resource's metadata is (RFC
/// 9728), and a bad token says so (RFC 6750).
pub(crate) fn refused(shared: &Shared, door: Door, refusal: AuthRefusal) -> ApiError {
    let status = match refusal.status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => refusal.status,
        other => {
            tracing::warn!(target: "rcip::server", status = other.as_u16(), "an authenticator answered a status other than 401 or 403");
            StatusCode::UNAUTHORIZED
        }
    };
    let mut error = ApiError::new(status, refusal.code, refusal.message);
    if status == StatusCode::UNAUTHORIZED {
        // RFC 6750 3.1: a bearer token that was presented and refused is `invalid_token`, so
        // that a client knows to get a new one; a request without a credential gets no error
        // code.
        let invalid = if refusal.invalid_token {
            ", error=\"invalid_token\""
        } else {
            ""
        };
        error.challenge = Some(format!(
            "Bearer resource_metadata=\"{}\"{invalid}",
            shared.metadata_url(door)
        ));
    }
    error
}

async fn not_found() -> Response {
    ApiError::new(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route").into_response()
}

async fn method_not_allowed() -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "METHOD_NOT_ALLOWED",
        "the route does not take this method",
    )
    .into_response()
}
