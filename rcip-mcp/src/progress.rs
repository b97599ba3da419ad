//! Progress from inside a capability: the reporter the bridge hands the handler when the
//! call asked for progress (see [`McpProgress`]).

use std::fmt;
use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext, RoleServer};
use tokio::sync::Mutex;

/// Reports a call's progress to the MCP client that asked for it (`_meta.progressToken`).
///
/// When a `tools/call` carries `_meta.progressToken`, the bridge puts one into
/// the invocation's extensions; the handler finds it in its
/// [`InvocationContext`](rcip_runtime::InvocationContext) and reports through it. Each
/// report becomes a `notifications/progress` with the request's token, sent through the
/// request's peer (on 2026-07-28 over streamable HTTP, on the request's own response
/// stream). Without a token there is no reporter, and a handler simply does its work.
///
/// ```
/// use rcip_mcp::McpProgress;
/// use rcip_runtime::{HandlerError, InvocationContext, capability};
///
/// /// Import the rows.
/// ///
/// /// Imports every row, reporting progress when the caller asked for it.
/// #[capability(effect = "write")]
/// async fn import_rows(context: InvocationContext) -> Result<String, HandlerError> {
///     let progress = context.extensions().get::<McpProgress>();
///     for done in 0..=4u32 {
///         // ... import a fifth of the rows ...
///         if let Some(progress) = progress {
///             progress.report(f64::from(done * 25), Some(100.0), Some("importing")).await;
///         }
///     }
///     Ok("imported".to_owned())
/// }
/// # fn main() {}
/// ```
///
/// The spec asks that progress increase and stop once the request is answered: a report
/// whose value is not above the last one sent, or made after the call's result, is dropped
/// ([`report`](McpProgress::report) returns `false`).
///
/// Cheap to clone; every clone reports for the same request.
#[derive(Clone)]
pub struct McpProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    last: Option<f64>,
    finished: bool,
}

impl fmt::Debug for McpProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpProgress")
            .field("token", &self.token.0.to_string())
            .finish_non_exhaustive()
    }
}

impl McpProgress {
    /// The reporter for `ctx`, when its request carries a progress token.
    pub(crate) fn from_request(ctx: &RequestContext<RoleServer>) -> Option<Self> {
        let token = ctx.meta.get_progress_token()?;
        Some(McpProgress {
            peer: ctx.peer.clone(),
            token,
            state: Arc::new(Mutex::new(State::default())),
        })
    }

    /// The request's progress token.
    #[must_use]
    pub fn token(&self) -> &ProgressToken {
        &self.token
    }

    /// Sends `notifications/progress` with `progress` (and the `total`, when known, and a
    /// human-readable `message`). Returns whether it was sent: a value that is not greater
    /// than the last one sent, a non-finite value, a report after the call was answered, or a
    /// closed connection sends nothing. Reports from clones are sent in the order they are
    /// made.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        let mut state = self.state.lock().await;
        if state.finished || !progress.is_finite() || state.last.is_some_and(|l| progress <= l) {
            return false;
        }
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
        if let Some(total) = total.filter(|t| t.is_finite()) {
            param = param.with_total(total);
        }
        if let Some(message) = message {
            param = param.with_message(message.to_owned());
        }
        if self.peer.notify_progress(param).await.is_err() {
            return false;
        }
        state.last = Some(progress);
        true
    }

    /// Ends reporting: the call was answered.
    pub(crate) async fn finish(&self) {
        self.state.lock().await.finished = true;
    }
}
