//! Sessions belong to the principal that opened them.
//!
//! rmcp's streamable HTTP service knows a 2025-11-25 session by its `Mcp-Session-Id` alone:
//! whoever presents the id reaches the session (its requests, its event stream, its end).
//! This layer runs inside the authentication hook's: it records which principal's
//! `initialize` created each session (`None` for an anonymous caller), and answers every
//! request that carries an `Mcp-Session-Id` (any method, either revision) exactly as rmcp
//! answers an unknown session, `404` with the body `Not Found: Session not found`, unless
//! the id names a session recorded for the same whole principal (id, name and scopes).
//!
//! With a shared [`SessionStore`], the owner is also written there before `initialize`'s
//! answer leaves, and a session this instance does not know is looked up there: another
//! instance of the deployment opened it, and rmcp restores it here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rcip_runtime::Principal;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

use crate::context::lock;
use crate::sessions::{SessionOwner, SessionStore};

/// The header naming a 2025-11-25 session, on requests and on `initialize`'s answer.
const SESSION_HEADER: &str = "mcp-session-id";

/// rmcp's body for an unknown (ended, expired, never created) session.
const UNKNOWN_SESSION: &str = "Not Found: Session not found";

/// The table's size below which it is never pruned.
const PRUNE_FLOOR: usize = 64;

/// Who opened each session of one endpoint.
pub(crate) struct SessionOwners {
    manager: Arc<LocalSessionManager>,
    table: Mutex<Table>,
    /// The deployment's sessions, when its instances share them.
    shared: Option<Arc<dyn SessionStore>>,
}

struct Table {
    owners: HashMap<SessionId, Option<Principal>>,
    /// The size at which the next record drops the entries of sessions rmcp no longer has
    /// (it ends idle sessions by itself): twice the size left by the last prune, so the
    /// table stays within about twice the live sessions at an amortized constant cost.
    prune_at: usize,
}

impl SessionOwners {
    /// The owners of the sessions `manager` holds, and of those `shared` holds.
    pub(crate) fn new(
        manager: Arc<LocalSessionManager>,
        shared: Option<Arc<dyn SessionStore>>,
    ) -> Self {
        Self {
            manager,
            table: Mutex::new(Table {
                owners: HashMap::new(),
                prune_at: PRUNE_FLOOR,
            }),
            shared,
        }
    }

    /// Whether session `id` belongs to `principal`: recorded here, or else in the shared
    /// store (then recorded here too, so its next requests do not ask the store again). A
    /// store that fails answers no.
    async fn owned_by(&self, id: &str, principal: Option<&Principal>) -> bool {
        if let Some(owner) = lock(&self.table).owners.get(id) {
            return owner.as_ref() == principal;
        }
        let Some(shared) = &self.shared else {
            return false;
        };
        match shared.owner(id).await {
            Ok(Some(owner)) if owner.is(principal) => {
                lock(&self.table)
                    .owners
                    .insert(id.into(), principal.cloned());
                true
            }
            Ok(_) => false,
            Err(error) => {
                tracing::error!(target: "rcip::mcp", %error, "a session's owner could not be read");
                false
            }
        }
    }

    fn forget(&self, id: &str) {
        lock(&self.table).owners.remove(id);
    }

    /// Sets the `rcip_mcp_sessions` gauge to the sessions rmcp holds now (after a session
    /// was opened or ended here; one ended by rmcp's idle timeout is counted off at the
    /// next such change).
    async fn count(&self) {
        // Without the feature there is no gauge, and the sessions are not read for it.
        #[cfg(feature = "metrics")]
        {
            let open = self.manager.sessions.read().await.len();
            #[allow(clippy::cast_precision_loss)] // Exact below 2^53 sessions.
            metrics::gauge!("rcip_mcp_sessions").set(open as f64);
        }
    }

    async fn record(&self, id: SessionId, principal: Option<Principal>) {
        if let Some(shared) = &self.shared {
            // Before the answer leaves: the client's next request may reach another instance.
            let owner = SessionOwner::of(principal.as_ref());
            if let Err(error) = shared.set_owner(&id, owner).await {
                tracing::error!(target: "rcip::mcp", %error, "a session's owner could not be shared");
            }
        }
        let recorded: Vec<SessionId> = {
            let mut table = lock(&self.table);
            table.owners.insert(id, principal);
            if table.owners.len() < table.prune_at {
                return;
            }
            // Raised before the awaits below, so concurrent records do not prune too; if
            // this future is dropped halfway, the next prune comes at twice the size.
            table.prune_at = table.owners.len().saturating_mul(2);
            table.owners.keys().cloned().collect()
        };
        let mut gone = Vec::new();
        for id in recorded {
            // An error keeps the entry: a live session must never lose its owner.
            if !self.manager.has_session(&id).await.unwrap_or(true) {
                gone.push(id);
            }
        }
        let mut table = lock(&self.table);
        for id in &gone {
            table.owners.remove(id);
        }
        table.prune_at = table.owners.len().saturating_mul(2).max(PRUNE_FLOOR);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        lock(&self.table).owners.len()
    }
}

/// The session id a request or an answer carries, read as rmcp reads it (the first
/// header, when it is visible ASCII; otherwise none).
fn session_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// rmcp's answer to a request naming a session it does not have.
fn unknown_session() -> Response {
    let mut response = Response::new(Body::from(UNKNOWN_SESSION));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// The layer: refuses a session's requests from anyone but its owner, records the owner of
/// a session `initialize` opens, and forgets a session its owner ended.
pub(crate) async fn guard(owners: Arc<SessionOwners>, request: Request, next: Next) -> Response {
    let principal = request.extensions().get::<Principal>().cloned();
    match session_id(request.headers()) {
        Some(id) => {
            // An id this endpoint never recorded is refused too: no principal opened it,
            // and a 2026-07-28 request (which rmcp serves without looking at the id) must
            // not tell a foreign session from an unknown one.
            if !owners.owned_by(&id, principal.as_ref()).await {
                return unknown_session();
            }
            let delete = request.method() == Method::DELETE;
            let response = next.run(request).await;
            if delete && response.status().is_success() {
                owners.forget(&id);
                owners.count().await;
            }
            response
        }
        None => {
            let response = next.run(request).await;
            if response.status().is_success()
                && let Some(id) = session_id(response.headers())
            {
                owners.record(id.into(), principal).await;
                owners.count().await;
            }
            response
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Sessions rmcp ended by itself leave the table once it grows: it stays bounded.
    #[tokio::test]
    async fn entries_of_sessions_rmcp_dropped_are_pruned() {
        let manager = Arc::new(LocalSessionManager::default());
        let owners = SessionOwners::new(Arc::clone(&manager), None);
        let ada = Some(Principal::new("ada"));
        // One live session, then many that rmcp ends (as its idle timeout would).
        let (live, _live_transport) = manager.create_session().await.unwrap();
        owners.record(live.clone(), ada.clone()).await;
        for _ in 0..(PRUNE_FLOOR * 4) {
            let (id, _transport) = manager.create_session().await.unwrap();
            owners.record(id.clone(), ada.clone()).await;
            manager.close_session(&id).await.unwrap();
            assert!(owners.len() <= PRUNE_FLOOR, "{}", owners.len());
        }
        assert!(owners.owned_by(&live, ada.as_ref()).await);
        assert!(!owners.owned_by(&live, Some(&Principal::new("bob"))).await);
        assert!(!owners.owned_by(&live, None).await);
    }
}
