//! Confirmations: what a human answered through the MCP client, and who acts on it.

use std::fmt;

use rcip_core::InvocationOutcome;
use rcip_runtime::{BoxFuture, Host, Principal};

/// A human's answer to a pending confirmation, as the MCP client reported it.
///
/// The bridge only builds one after an elicitation the client showed its user (2025-11-25:
/// an `elicitation/create` request; 2026-07-28: an `input_required` round whose sealed
/// `requestState` matched the tool, the arguments, the principal and the expiry, used once).
/// The model never sees a confirmation id and no tool approves anything.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConfirmationAnswer {
    /// The runtime's confirmation id.
    pub confirmation_id: String,
    /// The capability waiting for it.
    pub capability_id: String,
    /// `true` only for an accepted form with `confirm: true`; a decline, a cancel, a
    /// `false`, no answer before the expiry or a failed request are all `false`.
    pub approved: bool,
    /// The caller, as the transport established it (the HTTP bearer hook's principal).
    pub principal: Option<Principal>,
}

/// Trusted host code that turns a human's answer into the confirmation's resolution.
///
/// The host decides: it may resolve as answered ([`HostBroker`]), require more (a
/// principal with a scope, a second approver for destructive effects), or refuse. It
/// returns the outcome the invocation ends with, which the bridge maps like any other.
///
/// ```
/// use std::sync::Arc;
/// use rcip_mcp::{ConfirmationAnswer, ConfirmationBroker};
/// use rcip_runtime::{BoxFuture, Host, InvocationOutcome};
///
/// /// Approvals count only for callers with the `notes:write` scope.
/// #[derive(Debug)]
/// struct ScopedBroker(Host);
///
/// impl ConfirmationBroker for ScopedBroker {
///     fn resolve(&self, answer: ConfirmationAnswer) -> BoxFuture<InvocationOutcome> {
///         let host = self.0.clone();
///         Box::pin(async move {
///             let allowed = answer.principal.as_ref().is_some_and(|p| p.has_scope("notes:write"));
///             host.resolve_confirmation(&answer.confirmation_id, answer.approved && allowed).await
///         })
///     }
/// }
/// # let _ = |host: Host| Arc::new(ScopedBroker(host)) as Arc<dyn ConfirmationBroker>;
/// ```
pub trait ConfirmationBroker: Send + Sync + fmt::Debug + 'static {
    /// Resolves the confirmation the answer is about, and returns the invocation's outcome.
    fn resolve(&self, answer: ConfirmationAnswer) -> BoxFuture<InvocationOutcome>;

    /// Whether the application's confirmations are shared by several instances (its
    /// runtime has a `ConfirmationStore`). Then a call waiting for the host's approval is
    /// filed in the store under a key of the caller's (`ConfirmationKey`), so its retry finds
    /// it, and then its outcome, on any instance; otherwise this bridge remembers it. Default:
    /// `false`.
    fn shares_confirmations(&self) -> bool {
        false
    }
}

/// The ready-made broker: resolves through the host exactly as the human answered
/// (approve or decline).
///
/// ```no_run
/// use std::sync::Arc;
/// use rcip_mcp::{HostBroker, McpBridge};
/// # fn demo(runtime: rcip_runtime::Runtime) -> Result<(), rcip_mcp::BridgeError> {
/// let bridge = McpBridge::builder(runtime.client())
///     .confirmations(Arc::new(HostBroker::new(runtime.host())))
///     .build()?;
/// # let _ = bridge; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct HostBroker {
    host: Host,
}

impl HostBroker {
    /// A broker over the application's host.
    #[must_use]
    pub fn new(host: Host) -> Self {
        Self { host }
    }
}

impl ConfirmationBroker for HostBroker {
    fn resolve(&self, answer: ConfirmationAnswer) -> BoxFuture<InvocationOutcome> {
        let host = self.host.clone();
        Box::pin(async move {
            host.resolve_confirmation(&answer.confirmation_id, answer.approved)
                .await
        })
    }

    fn shares_confirmations(&self) -> bool {
        self.host.shares_confirmations()
    }
}
