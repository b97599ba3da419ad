//! 2025-11-25 sessions a deployment's instances share: who opened each, and the `initialize`
//! that opened it. With a [`SessionStore`] in [`HttpOptions`](crate::HttpOptions), a request
//! naming a session another instance opened is served here: the owner is read from the
//! store (the session guard still refuses anyone else), and rmcp restores the session from
//! its stored `initialize` (through rmcp's own session store interface, which this module
//! adapts).

use std::sync::Arc;

use rcip_runtime::{BoxFuture, Principal};
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore as RmcpSessionStore, SessionStoreError as RmcpStoreError,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who opened a session, as a store keeps it: a principal's id, name and scopes (what makes
/// two principals the same owner), or an anonymous caller.
///
/// ```
/// use rcip_mcp::SessionOwner;
/// use rcip_runtime::Principal;
/// let ada = Principal::new("ada").with_scope("records:read");
/// let owner = SessionOwner::of(Some(&ada));
/// assert!(owner.is(Some(&ada)));
/// assert!(!owner.is(Some(&Principal::new("ada"))), "other scopes: another owner");
/// assert!(SessionOwner::of(None).is(None));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum SessionOwner {
    /// A caller without credentials (an endpoint without an authentication hook).
    Anonymous,
    /// An authenticated principal.
    Principal {
        /// Its id.
        id: String,
        /// Its display name.
        name: Option<String>,
        /// Its scopes, in the principal's order.
        scopes: Vec<String>,
    },
}

impl SessionOwner {
    /// The owner `principal` is (`None`: anonymous).
    #[must_use]
    pub fn of(principal: Option<&Principal>) -> Self {
        match principal {
            None => Self::Anonymous,
            Some(principal) => Self::Principal {
                id: principal.id().to_owned(),
                name: principal.name().map(str::to_owned),
                scopes: principal.scopes().to_vec(),
            },
        }
    }

    /// Whether `principal` is this owner.
    #[must_use]
    pub fn is(&self, principal: Option<&Principal>) -> bool {
        match (self, principal) {
            (Self::Anonymous, None) => true,
            (Self::Principal { id, name, scopes }, Some(principal)) => {
                principal.id() == id
                    && principal.name() == name.as_deref()
                    && principal.scopes() == scopes.as_slice()
            }
            _ => false,
        }
    }
}

/// Why a session store failed (its own text: for logs, not for clients).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session store: {0}")]
pub struct SessionStoreError(pub String);

/// Where a deployment keeps its 2025-11-25 sessions, so that any instance serves a session
/// another opened (`rcip-database`'s `PostgresSessionStore` is one). One instance needs none:
/// its sessions live in its memory.
///
/// The endpoint records the owner when `initialize` opens a session, and the `initialize`
/// parameters once rmcp finished the handshake; it reads them back when a request names a
/// session this instance does not hold, and forgets the session when its owner ends it.
pub trait SessionStore: Send + Sync + 'static {
    /// Records that `owner` opened session `id`.
    fn set_owner(&self, id: &str, owner: SessionOwner) -> BoxFuture<Result<(), SessionStoreError>>;
    /// Who opened session `id`; `None` for a session the store does not hold.
    fn owner(&self, id: &str) -> BoxFuture<Result<Option<SessionOwner>, SessionStoreError>>;
    /// Records the `initialize` parameters (as JSON) that opened session `id`.
    fn set_initialize(&self, id: &str, params: Value) -> BoxFuture<Result<(), SessionStoreError>>;
    /// The `initialize` parameters of session `id`, if recorded.
    fn initialize(&self, id: &str) -> BoxFuture<Result<Option<Value>, SessionStoreError>>;
    /// Forgets session `id` (its owner ended it).
    fn forget(&self, id: &str) -> BoxFuture<Result<(), SessionStoreError>>;
}

/// A [`SessionStore`] as rmcp's session store: the `initialize` parameters, by which rmcp
/// restores a session on an instance that did not open it.
pub(crate) struct Restorer(pub(crate) Arc<dyn SessionStore>);

#[async_trait::async_trait]
impl RmcpSessionStore for Restorer {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, RmcpStoreError> {
        let Some(params) = self.0.initialize(session_id).await? else {
            return Ok(None);
        };
        let params: InitializeRequestParams = serde_json::from_value(params)?;
        Ok(Some(SessionState::new(params)))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), RmcpStoreError> {
        let params = serde_json::to_value(&state.initialize_params)?;
        Ok(self.0.set_initialize(session_id, params).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), RmcpStoreError> {
        Ok(self.0.forget(session_id).await?)
    }
}
