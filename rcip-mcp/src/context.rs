//! What every part of the bridge asks of a request or needs at hand: the revision and the
//! client's extensions, the caller, a call's binding for sealed states, the clock, a
//! cancellation link and a poison-free lock. A leaf: it imports no other module of the
//! crate, so the feature modules and the handler all import it one way.

use std::future::Future;

use rcip_runtime::Principal;
use rmcp::model::ProtocolVersion;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Whether the request speaks 2026-07-28 (or later): MRTR, no server-to-client requests.
pub(crate) fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether the request's client declared the tasks extension.
pub(crate) fn supports_tasks(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .is_some_and(|capabilities| capabilities.supports_tasks())
}

/// The caller the HTTP bearer hook established, if any (never on stdio).
pub(crate) fn principal_of(ctx: &RequestContext<RoleServer>) -> Option<Principal> {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
}

/// Runs `fut`; if the request is cancelled first, cancels `token` and still awaits `fut`
/// (the runtime then ends the invocation as `EXECUTION_ABORTED`).
pub(crate) async fn linked<F: Future>(
    request: &CancellationToken,
    token: &CancellationToken,
    fut: F,
) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    tokio::select! {
        biased;
        out = &mut fut => return out,
        () = request.cancelled() => token.cancel(),
    }
    fut.await
}

/// The call as the bridge resolved it: the tool, the capability, the input.
#[derive(Clone)]
pub(crate) struct Call {
    pub(crate) tool: String,
    pub(crate) capability_id: String,
    pub(crate) arguments: Value,
    pub(crate) principal: Option<Principal>,
}

impl Call {
    /// The associated data a sealed state is bound to: `label` (which kind of state), the
    /// tool, a SHA-256 of the RFC 8785 arguments and the principal. `None` when the arguments
    /// nest too deeply to canonicalize.
    pub(crate) fn binding(&self, label: &str) -> Option<Vec<u8>> {
        state_binding(label, &self.tool, &self.arguments, self.principal.as_ref())
    }
}

/// The associated data of a sealed state: `label` (which kind of state), `subject` (the tool
/// or prompt), a SHA-256 of the RFC 8785 `arguments` and the principal. `None` when the
/// arguments nest too deeply to canonicalize.
pub(crate) fn state_binding(
    label: &str,
    subject: &str,
    arguments: &Value,
    principal: Option<&Principal>,
) -> Option<Vec<u8>> {
    let canonical = rcip_core::jcs::canonical_json(arguments).ok()?;
    let principal = principal.map_or_else(|| "-".to_owned(), |p| format!("p:{}", p.id()));
    serde_json::to_vec(&json!([
        label,
        subject,
        rcip_core::jcs::digest_of_canonical(&canonical),
        principal,
    ]))
    .ok()
}

/// Milliseconds since the Unix epoch: the runtime's own clock, so expiries compare alike.
pub(crate) fn now_ms() -> u64 {
    rcip_runtime::Clock::now_ms(&rcip_runtime::SystemClock)
}

/// A poison-free lock (the runtime's): the data behind these mutexes stays consistent at
/// every await-free step, so a panic elsewhere must not take the bridge down.
pub(crate) use rcip_runtime::__private::shared::lock;
