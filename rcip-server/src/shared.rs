//! What every route shares ([`Shared`]): the platform behind an erased call, the directory,
//! the authenticator, the limits and the public URLs, and the one way an operation is run
//! and measured.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use rcip_mcp::CancellationToken;
use rcip_mcp::rmcp::transport::streamable_http_server::session::store::EventStore as McpEventStore;
use rcip_platform::{DirectoryStore, Platform, PlatformError, operation};
use rcip_records::{Caller, RecordStore};
use serde_json::Value;
use tracing::Instrument;

use crate::authenticate::{Authenticate, Authenticated, Door};
use crate::limits::Limits;
use crate::observe;
use crate::paths::{MCP_PATH, METADATA_PATH};

/// The future an erased platform call answers.
pub(crate) type CallFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Value, PlatformError>> + Send + 'a>>;

/// [`Platform::call`] with the store type erased: the routes are compiled once for every
/// store, and a command that picks its store at run time (SQLite or PostgreSQL) builds one
/// router type. The price is one boxed future per call, nothing next to a store call.
pub(crate) trait Operations: Send + Sync + 'static {
    fn call<'a>(
        &'a self,
        caller: &'a Caller,
        operation: &'a str,
        arguments: Value,
    ) -> CallFuture<'a>;

    /// [`Platform::call_checked`]: arguments the door's runtime already checked against the
    /// operation's input schema.
    fn call_checked<'a>(
        &'a self,
        caller: &'a Caller,
        operation: &'a str,
        arguments: Value,
    ) -> CallFuture<'a>;
}

impl<S: RecordStore> Operations for Platform<S> {
    fn call<'a>(
        &'a self,
        caller: &'a Caller,
        operation: &'a str,
        arguments: Value,
    ) -> CallFuture<'a> {
        Box::pin(Platform::call(self, caller, operation, arguments))
    }

    fn call_checked<'a>(
        &'a self,
        caller: &'a Caller,
        operation: &'a str,
        arguments: Value,
    ) -> CallFuture<'a> {
        Box::pin(Platform::call_checked(self, caller, operation, arguments))
    }
}

/// What every route shares.
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) platform: Arc<dyn Operations>,
    /// The platform's directory (the explorer lists its installed versions).
    pub(crate) directory: Arc<dyn DirectoryStore>,
    pub(crate) auth: Arc<dyn Authenticate>,
    pub(crate) limits: Limits,
    /// The public base URL, without a trailing slash.
    pub(crate) base_url: String,
    pub(crate) authorization_servers: Vec<String>,
    /// The OpenAPI document (it depends on the registry and the base URL only).
    pub(crate) openapi: Arc<Value>,
    /// Cancelled when the server stops: ends the MCP sessions' open streams.
    pub(crate) shutdown: CancellationToken,
    /// Whether requests and operations are recorded as metrics.
    pub(crate) metrics: bool,
    /// Where `/mcp` keeps its 2025-11-25 sessions when the deployment's instances share
    /// them (`None`: in this process).
    pub(crate) mcp_sessions: Option<Arc<dyn rcip_mcp::SessionStore>>,
    /// Where `/mcp` keeps its event streams' events when the instances share them
    /// (`None`: in this process's memory).
    pub(crate) mcp_events: Option<Arc<dyn McpEventStore>>,
    /// What this instance tells the others of `/mcp`'s sessions, when they share them.
    pub(crate) mcp_relay: Option<Arc<dyn rcip_mcp::Relay>>,
}

impl Shared {
    /// Runs one operation for an authenticated caller. A credential bound to one workspace
    /// becomes a caller that reaches only it ([`Caller::within`]): the platform then answers
    /// another workspace as one the caller is no member of, in its own order of refusals,
    /// and lists that one only.
    pub(crate) async fn call(
        &self,
        who: &Authenticated,
        door: Door,
        name: &str,
        arguments: Value,
    ) -> Result<Value, PlatformError> {
        let span = tracing::info_span!(
            target: "rcip::server",
            "operation",
            otel.name = tracing::field::Empty,
            rcip.operation = tracing::field::Empty,
            rcip.door = observe::door_label(door),
            rcip.code = tracing::field::Empty,
        );
        // The registry's own name, a label from a fixed set whatever the caller sent; looked
        // up only when a span or a metric takes it (the platform looks the name up anyway).
        let operation = (self.metrics || !span.is_disabled())
            .then(|| operation(name).map_or("unknown", |spec| spec.name));
        if let Some(operation) = operation {
            span.record("otel.name", operation);
            span.record("rcip.operation", operation);
        }
        let started = self.metrics.then(Instant::now);
        let answer = async {
            let bound;
            let caller = match who.workspace.as_deref() {
                None => &who.caller,
                Some(workspace) => {
                    bound = who.caller.clone().within(workspace);
                    &bound
                }
            };
            match door {
                Door::Rest => self.platform.call(caller, name, arguments).await,
                // The MCP door's runtime validated the arguments against the same schemas
                // (the platform's capability definitions): not a second pass.
                Door::Mcp => self.platform.call_checked(caller, name, arguments).await,
            }
        }
        .instrument(span.clone())
        .await;
        let (status, code) = match &answer {
            Ok(_) => (200, "OK"),
            Err(error) => (error.status.as_u16(), error.code),
        };
        span.record("rcip.code", code);
        let (Some(started), Some(operation)) = (started, operation) else {
            return answer;
        };
        let door = observe::door_label(door);
        metrics::histogram!(
            "rcip_operation_duration_seconds",
            "door" => door,
            "operation" => operation,
        )
        .record(started.elapsed().as_secs_f64());
        metrics::counter!(
            "rcip_operations_total",
            "door" => door,
            "operation" => operation,
            "status" => observe::status_label(status),
            "code" => code,
        )
        .increment(1);
        answer
    }

    /// The metadata URL of the protected resource behind `door` (RFC 9728: the resource's
    /// path appended to the well-known prefix).
    pub(crate) fn metadata_url(&self, door: Door) -> String {
        match door {
            Door::Rest => format!("{}{}", self.base_url, METADATA_PATH),
            Door::Mcp => format!("{}{}{}", self.base_url, METADATA_PATH, MCP_PATH),
        }
    }
}
