//! Log messages from inside a capability: the logger the bridge hands every `tools/call`
//! (see [`McpLog`]), the level each 2025-11-25 session set with `logging/setLevel`, and the
//! level a 2026-07-28 request carries in its `_meta`.
// rmcp marks MCP logging deprecated (SEP-2577); the bridge still speaks it on both revisions.
#![allow(deprecated)]

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use rmcp::model::{JsonObject, LoggingLevel, LoggingMessageNotificationParam, ServerCapabilities};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;

use crate::context::lock;

/// The severity of a log message (RFC 5424), from the least to the most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum McpLogLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// A normal but significant event.
    Notice,
    /// A warning condition.
    Warning,
    /// An error condition.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl McpLogLevel {
    fn from_rmcp(level: LoggingLevel) -> Self {
        match level {
            LoggingLevel::Debug => McpLogLevel::Debug,
            LoggingLevel::Info => McpLogLevel::Info,
            LoggingLevel::Notice => McpLogLevel::Notice,
            LoggingLevel::Warning => McpLogLevel::Warning,
            LoggingLevel::Error => McpLogLevel::Error,
            LoggingLevel::Critical => McpLogLevel::Critical,
            LoggingLevel::Alert => McpLogLevel::Alert,
            LoggingLevel::Emergency => McpLogLevel::Emergency,
        }
    }

    fn to_rmcp(self) -> LoggingLevel {
        match self {
            McpLogLevel::Debug => LoggingLevel::Debug,
            McpLogLevel::Info => LoggingLevel::Info,
            McpLogLevel::Notice => LoggingLevel::Notice,
            McpLogLevel::Warning => LoggingLevel::Warning,
            McpLogLevel::Error => LoggingLevel::Error,
            McpLogLevel::Critical => LoggingLevel::Critical,
            McpLogLevel::Alert => LoggingLevel::Alert,
            McpLogLevel::Emergency => LoggingLevel::Emergency,
        }
    }
}

/// Advertises `logging` (`logging/setLevel` on 2025-11-25, `_meta` logLevel on 2026-07-28).
pub(crate) fn advertise(capabilities: &mut ServerCapabilities) {
    capabilities.logging = Some(JsonObject::default());
}

/// The most sessions whose level is kept: past it, the level set longest ago is forgotten
/// (that session's messages stop until it sets a level again), so sessions that come and go
/// never grow the table without bound.
const MAX_SESSIONS: usize = 10_000;

/// The levels 2025-11-25 sessions set with `logging/setLevel`, by session, each with the
/// order in which it was set.
#[derive(Default)]
pub(crate) struct Levels {
    by_session: Mutex<SessionLevels>,
}

#[derive(Default)]
struct SessionLevels {
    levels: HashMap<String, (McpLogLevel, u64)>,
    next: u64,
}

impl SessionLevels {
    fn set(&mut self, session: String, level: McpLogLevel) {
        if self.levels.len() >= MAX_SESSIONS && !self.levels.contains_key(&session) {
            let oldest = self
                .levels
                .iter()
                .min_by_key(|(_, (_, order))| *order)
                .map(|(s, _)| s.clone());
            if let Some(oldest) = oldest {
                self.levels.remove(&oldest);
            }
        }
        self.next += 1;
        self.levels.insert(session, (level, self.next));
    }

    fn get(&self, session: &str) -> Option<McpLogLevel> {
        self.levels.get(session).map(|(level, _)| *level)
    }
}

/// The session a request belongs to: its `MCP-Session-Id` over HTTP; stdio serves one.
fn session_of(ctx: &RequestContext<RoleServer>) -> String {
    ctx.extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|id| id.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

impl Levels {
    /// `logging/setLevel`: remembers the session's level.
    pub(crate) fn set(&self, level: LoggingLevel, ctx: &RequestContext<RoleServer>) {
        lock(&self.by_session).set(session_of(ctx), McpLogLevel::from_rmcp(level));
    }

    /// The level another instance heard session `session` set.
    pub(crate) fn set_for(&self, session: &str, level: LoggingLevel) {
        lock(&self.by_session).set(session.to_owned(), McpLogLevel::from_rmcp(level));
    }

    /// The minimum level for messages of this request: on 2026-07-28 its `_meta` logLevel,
    /// on 2025-11-25 its session's level; none (nothing is sent) when the client set none.
    fn threshold(&self, ctx: &RequestContext<RoleServer>) -> Option<McpLogLevel> {
        if crate::context::is_modern(ctx) {
            return ctx.meta.log_level().map(McpLogLevel::from_rmcp);
        }
        lock(&self.by_session).get(&session_of(ctx))
    }
}

/// Sends log messages (`notifications/message`) to the MCP client during a call.
///
/// The bridge puts one into every `tools/call` invocation's extensions; the handler finds
/// it in its [`InvocationContext`](rcip_runtime::InvocationContext). A message is sent only
/// at or above the level the client asked for: on 2025-11-25 the session's
/// `logging/setLevel` (none set: nothing is sent), on 2026-07-28 the request's
/// `_meta["io.modelcontextprotocol/logLevel"]` (absent: nothing is sent).
///
/// ```
/// use rcip_mcp::{McpLog, McpLogLevel};
/// use rcip_runtime::{HandlerError, InvocationContext, capability};
/// use serde_json::json;
///
/// /// Sync the mailbox.
/// ///
/// /// Fetches new mail, logging what it does.
/// #[capability(effect = "write")]
/// async fn sync_mail(context: InvocationContext) -> Result<String, HandlerError> {
///     if let Some(log) = context.extensions().get::<McpLog>() {
///         log.emit(McpLogLevel::Info, Some("mail"), json!("sync started")).await;
///     }
///     Ok("synced".to_owned())
/// }
/// # fn main() {}
/// ```
///
/// Cheap to clone; every clone logs for the same request.
#[derive(Clone)]
pub struct McpLog {
    peer: Peer<RoleServer>,
    threshold: Option<McpLogLevel>,
    /// Where the messages also go when another instance holds the session's standalone
    /// stream (rmcp sends them there).
    elsewhere: Option<crate::relay::SessionLink>,
}

impl fmt::Debug for McpLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpLog")
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl McpLog {
    /// The logger for `ctx`, with the level its client asked for.
    pub(crate) fn for_request(levels: &Levels, ctx: &RequestContext<RoleServer>) -> Self {
        let threshold = levels.threshold(ctx);
        McpLog {
            peer: ctx.peer.clone(),
            elsewhere: threshold.and_then(|_| crate::relay::SessionLink::of(ctx)),
            threshold,
        }
    }

    /// Whether a message at `level` would be sent.
    #[must_use]
    pub fn enabled(&self, level: McpLogLevel) -> bool {
        self.threshold.is_some_and(|min| level >= min)
    }

    /// Sends `notifications/message` with `level`, the optional `logger` name and `data`
    /// (any JSON). Returns whether it was sent: below the client's level, with no level
    /// asked for, or on a closed connection, nothing is sent.
    pub async fn emit(&self, level: McpLogLevel, logger: Option<&str>, data: Value) -> bool {
        if !self.enabled(level) {
            return false;
        }
        let mut param = LoggingMessageNotificationParam::new(level.to_rmcp(), data);
        if let Some(logger) = logger {
            param = param.with_logger(logger);
        }
        if let Some(elsewhere) = &self.elsewhere {
            let message = || {
                serde_json::json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": &param,
                })
            };
            elsewhere.notify(message).await;
        }
        self.peer.notify_logging_message(param).await.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_SESSIONS, McpLogLevel, SessionLevels};

    #[test]
    fn the_session_table_is_bounded_and_forgets_the_oldest() {
        let mut levels = SessionLevels::default();
        for n in 0..=MAX_SESSIONS {
            levels.set(format!("s{n}"), McpLogLevel::Info);
        }
        assert_eq!(levels.levels.len(), MAX_SESSIONS);
        assert_eq!(levels.get("s0"), None);
        assert_eq!(levels.get("s1"), Some(McpLogLevel::Info));
        // Setting a kept session again keeps it, and makes it the newest.
        levels.set("s1".to_owned(), McpLogLevel::Error);
        levels.set("new".to_owned(), McpLogLevel::Debug);
        assert_eq!(levels.get("s1"), Some(McpLogLevel::Error));
        assert_eq!(levels.get("s2"), None);
        assert_eq!(levels.levels.len(), MAX_SESSIONS);
    }
}
