//! The Relationship Protocol platform (`rcip_platform::Platform`) on the network: REST
//! and MCP over the one operation registry, as an axum [`Router`](axum::Router) an
//! application can serve or mount (`rcip serve` is one such application).
//!
//! ```
//! use std::sync::Arc;
//! use rcip_platform::{MemoryDirectory, Platform};
//! use rcip_records::{Actor, Caller, Engine};
//! use rcip_server::{Authenticated, Limits, Server, StaticTokens};
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let platform = Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
//!     .await
//!     .unwrap();
//! let tokens = StaticTokens::new().token("dev-ada", Authenticated {
//!     caller: Caller::human(Actor::new("ada")),
//!     workspace: None,
//! });
//! let app = Server::new(Arc::new(platform), Arc::new(tokens), "http://127.0.0.1:8080")
//!     .limits(Limits::default())
//!     .router();
//! // rcip_server::serve(tokio::net::TcpListener::bind("127.0.0.1:8080").await?, app,
//! //     rcip_server::ConnectionLimits::default(), shutdown_signal).await?;
//! # let _ = app; });
//! ```
//!
//! | route | what |
//! | --- | --- |
//! | `GET /` | the explorer: a read-only HTML page of the registry and the installed and bundled program versions (no credential) |
//! | `POST /v1/operations` | `{"operation", "arguments"}` -> 200 `{"result"}`, or the refusal's status and `{"error": {"code", "message", "issues"?}}` ([`rest`](crate#rest)) |
//! | `POST\|GET\|DELETE /mcp` | MCP streamable HTTP (both revisions) through `rcip-mcp`: the operations as tools, dots as underscores (`record_get`), reads `readOnlyHint` |
//! | `GET /v1/openapi.json` | the OpenAPI 3.1 document, generated from the registry ([`openapi_document`]) |
//! | `GET /.well-known/oauth-protected-resource` (and `.../mcp`) | RFC 9728 metadata |
//! | `GET /healthz` | liveness: `200 {"status": "ok"}` (no credential, no limit) |
//! | `GET /readyz` | readiness: `200 {"status": "ready"}` when the database answers at this build's schema, else 503 `NOT_READY` (no credential, no limit) |
//!
//! # REST
//!
//! Every call is authenticated by the server's [`Authenticate`] (a refusal: its status, 401
//! with `WWW-Authenticate: Bearer resource_metadata="<base>/.well-known/oauth-protected-resource"`),
//! then meets the limits ([`Limits`]), then the envelope is read: 415
//! `UNSUPPORTED_MEDIA_TYPE` (not `application/json`), 400 `MALFORMED_JSON`, 400
//! `INVALID_REQUEST` (not exactly `operation` and `arguments`). A credential limited to one
//! workspace ([`Authenticated::workspace`]) naming another is answered 404
//! `WORKSPACE_NOT_FOUND`, as the platform answers a workspace the caller may not read, and
//! `workspace.list` lists that one only. Everything else is `Platform::call`'s answer.
//!
//! # MCP
//!
//! The same authenticator (with [`Door::Mcp`]), limits and workspace rule; a refusal before
//! any tool runs is an HTTP 401/403 (401 naming the `/mcp` resource's metadata,
//! `<base>/.well-known/oauth-protected-resource/mcp`); a refused operation is an `isError`
//! result whose message starts with the platform's code (`STALE_REVISION: ...`).
//!
//! # Operations
//!
//! Each request runs in an `http.request` span (target `rcip::http`, named after its route)
//! and each operation in an `operation` span (target `rcip::server`) with the store's `db`
//! spans (target `rcip::store`, DEBUG) under it: a `tracing-opentelemetry` layer turns them
//! into one trace. Metrics go through the `metrics` facade; install an exporter (`rcip
//! serve --metrics-bind` installs Prometheus's) to read them:
//!
//! | metric | kind | labels |
//! | --- | --- | --- |
//! | `rcip_http_requests_total` | counter | `door` (`rest`, `mcp`, `public`), `status` |
//! | `rcip_http_request_duration_seconds` | histogram | `door` (until the answer's head) |
//! | `rcip_http_requests_in_flight` | gauge | `door` |
//! | `rcip_http_connections_open` | gauge | ([`serve`]'s connections) |
//! | `rcip_requests_refused_total` | counter | `limit`: `body_size`, `json_depth`, `body_timeout`, `request_timeout`, `concurrency`, `principal_concurrency`, `rate`, `header_timeout` |
//! | `rcip_operations_total` | counter | `door`, `operation`, `status`, `code` (`OK` or the refusal's) |
//! | `rcip_operation_duration_seconds` | histogram | `door`, `operation` |
//! | `rcip_mcp_sessions` | gauge | (rcip-mcp: the 2025-11-25 sessions open) |
//! | `rcip_pending_confirmations` | gauge | (rcip-runtime: tickets waiting for the host) |
#![deny(missing_docs)]

mod authenticate;
mod connections;
pub mod credentials;
mod discovery;
mod error;
mod explorer;
mod health;
mod limits;
mod mcp;
mod observe;
mod openapi;
mod paths;
mod rest;
mod server;
mod shared;
mod static_tokens;
pub use rcip_platform::tokens;

pub use authenticate::{AuthFuture, AuthRefusal, Authenticate, Authenticated, Door};
pub use connections::{
    ConnectionLimits, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, serve,
};
pub use credentials::{Credentials, CredentialsConfig, Issuer, console_router};
pub use error::ApiError;
pub use limits::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_JSON_DEPTH_LIMIT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONCURRENT_PER_PRINCIPAL, DEFAULT_MAX_CONCURRENT_REQUESTS, DEFAULT_REQUEST_TIMEOUT,
    Limits, RateLimit, RateLimiter, json_depth,
};
pub use openapi::{ERROR_STATUSES, openapi_document};
pub use paths::METADATA_PATH;
pub use server::{Server, router};
pub use static_tokens::{StaticTokens, bearer_token};
pub use tokens::TokenStore;

pub use axum;
/// The token [`Server::shutdown`] takes.
pub use rcip_mcp::CancellationToken;
