//! What the host plugs into Assist: the `decide` callback (any model, any transport) and the
//! trusted confirmation resolver. The resolver holds the [`Host`]; `decide` is only ever given
//! a request by value and a cancellation token, so nothing it returns can approve anything.

use std::future::Future;
use std::sync::Arc;

use rcip_core::InvocationOutcome;
use tokio_util::sync::CancellationToken;

use super::protocol::{AssistAction, AssistRequest, AssistResponse};
use rcip_runtime::BoxFuture;
use rcip_runtime::Host;

/// Any error a host callback reports. Assist never shows its text to the user; it is kept
/// in the [`TurnReport`](super::TurnReport) for the host.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The assistant: given the conversation and the (mode-filtered) snapshot, answers with a
/// message or, in the decide phase, one batch of actions, as JSON in the shapes of
/// [`AssistResponse`]. Implemented for every
/// `Fn(AssistRequest, CancellationToken) -> impl Future<Output = Result<AssistResponse, BoxError>>`.
///
/// The token is cancelled when the turn is; a long call should stop early. Assist stops
/// waiting at once either way.
///
/// ```
/// use rcip_assist::{AssistRequest, BoxError, Decide, Phase, message_response};
/// use rcip_runtime::CancellationToken;
///
/// fn scripted() -> impl Decide {
///     |request: AssistRequest, _cancel: CancellationToken| async move {
///         Ok::<_, BoxError>(match request.phase {
///             Phase::Decide => message_response("I can only talk."),
///             Phase::Summarize => message_response("Done."),
///         })
///     }
/// }
/// # let _ = scripted();
/// ```
pub trait Decide: Send + Sync {
    /// One call: decide or summarize, as `request.phase` says.
    fn decide(
        &self,
        request: AssistRequest,
        cancellation: CancellationToken,
    ) -> BoxFuture<Result<AssistResponse, BoxError>>;
}

impl<F, Fut> Decide for F
where
    F: Fn(AssistRequest, CancellationToken) -> Fut + Send + Sync,
    Fut: Future<Output = Result<AssistResponse, BoxError>> + Send + 'static,
{
    fn decide(
        &self,
        request: AssistRequest,
        cancellation: CancellationToken,
    ) -> BoxFuture<Result<AssistResponse, BoxError>> {
        Box::pin(self(request, cancellation))
    }
}

/// An action waiting for the user's approval, as the trusted surface shows it (the
/// reference's `pendingConfirmation`, `{action, outcome}` in JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PendingConfirmation {
    /// The action (its `id` is the invocation id).
    pub action: AssistAction,
    /// The `confirmation_required` outcome, with the confirmation's title and message.
    pub outcome: InvocationOutcome,
}

/// Asks the user to approve or decline, on a surface the assistant cannot drive (a terminal
/// prompt, a modal dialog). Implemented for every
/// `Fn(PendingConfirmation, CancellationToken) -> impl Future<Output = Result<bool, BoxError>>`.
pub trait AskUser: Send + Sync {
    /// `Ok(true)` approves, `Ok(false)` declines. The token is cancelled when the turn is;
    /// the pending confirmation is then declined without waiting for this answer.
    fn ask(
        &self,
        pending: PendingConfirmation,
        cancellation: CancellationToken,
    ) -> BoxFuture<Result<bool, BoxError>>;
}

impl<F, Fut> AskUser for F
where
    F: Fn(PendingConfirmation, CancellationToken) -> Fut + Send + Sync,
    Fut: Future<Output = Result<bool, BoxError>> + Send + 'static,
{
    fn ask(
        &self,
        pending: PendingConfirmation,
        cancellation: CancellationToken,
    ) -> BoxFuture<Result<bool, BoxError>> {
        Box::pin(self(pending, cancellation))
    }
}

/// The trusted side of confirmations: the host controller and the way to ask the user.
/// Assist hands it each `confirmation_required` outcome and resolves the ticket through
/// [`Host::resolve_confirmation`] with the answer; cancelling the turn declines it.
///
/// ```
/// use rcip_assist::{BoxError, ConfirmationResolver, PendingConfirmation};
/// # fn host() -> rcip_runtime::Host {
/// #     let d = rcip_runtime::ApplicationDefinition::new("a", "A", "An app.");
/// #     rcip_runtime::Runtime::new(d, Default::default()).unwrap().host()
/// # }
/// // Approves nothing: every confirmation is declined.
/// let resolver = ConfirmationResolver::new(host(), |_: PendingConfirmation, _| async {
///     Ok::<_, BoxError>(false)
/// });
/// # let _ = resolver;
/// ```
#[derive(Clone)]
pub struct ConfirmationResolver {
    host: Host,
    ask: Arc<dyn AskUser>,
}

impl std::fmt::Debug for ConfirmationResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfirmationResolver")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl ConfirmationResolver {
    /// Resolves confirmations through `host`, asking `ask` for each answer.
    pub fn new(host: Host, ask: impl AskUser + 'static) -> Self {
        ConfirmationResolver {
            host,
            ask: Arc::new(ask),
        }
    }

    pub(super) fn ask(
        &self,
        pending: PendingConfirmation,
        cancellation: CancellationToken,
    ) -> BoxFuture<Result<bool, BoxError>> {
        self.ask.ask(pending, cancellation)
    }

    pub(super) async fn resolve(&self, confirmation_id: &str, approved: bool) -> InvocationOutcome {
        self.host
            .resolve_confirmation(confirmation_id, approved)
            .await
    }
}
