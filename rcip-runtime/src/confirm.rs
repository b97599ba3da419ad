//! Confirmation tickets (reference section 3.6): issued when policy asks, single use,
//! invalidated by expiry, cancellation, a change of binding or of context; receipts of
//! tickets that ended on their own are kept (at most 256) and read once.

use std::sync::{Arc, Weak};
use std::time::Duration;

use rcip_core::{
    ConfirmationInfo, ErrorCode, EventPhase, InvocationOutcome, RcipError, SemanticContext,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::confirm_store::{ConfirmationKey, ConfirmationTicket, Filed};
use crate::extensions::Extensions;
use crate::invoke::{Attempt, Ready, RunInput, messages as m};
use crate::reservation::Claim;
use crate::runtime::Inner;
use crate::support::{lock, new_confirmation_id, next_invocation_id, try_sleep};
use crate::tickets::{Counted, Pending, Watcher};

/// Hears how a confirmation ended, whoever ended it: put into a request's extensions, it is
/// called once with the outcome of the confirmation that request raised, when the host
/// resolves it (approved and run, declined, refused) or it expires or is cancelled first.
///
/// The outcome of an approved confirmation otherwise goes only to whoever resolved it. A
/// caller that cannot wait for the human (an MCP client that cannot show the question)
/// uses this to hand the outcome to its later retry; the MCP bridge does.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use rcip_runtime::*;
/// use rcip_runtime::testing::assert_confirmation;
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
/// let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
///     CapabilityDefinition::new("notes.clear", Effect::Destructive, "Clear", "Clears the notes."),
/// );
/// let policy = policy_fn(|ctx| if ctx.confirmed() { PolicyDecision::Allow } else { PolicyDecision::Confirm { reason: None } });
/// let runtime = Runtime::new(definition, RuntimeOptions::default().policy(policy))?;
/// let _binding = runtime.host().bind("notes.clear", Binding::new(|_input, _ctx| async {
///     Ok::<_, HandlerError>(json!(null))
/// }))?;
/// let heard = Arc::new(Mutex::new(None));
/// let slot = heard.clone();
/// let request = InvocationRequest::new("notes.clear", json!({})).with_extension(
///     ConfirmationObserver::new(move |outcome| *slot.lock().unwrap() = Some(outcome.clone())),
/// );
/// let pending = runtime.client().invoke(request).await;
/// let id = assert_confirmation(&pending).id.clone();
/// // The host approves in its own interface...
/// runtime.host().resolve_confirmation(&id, true).await;
/// // ...and the caller hears the outcome.
/// let outcome = heard.lock().unwrap().take().unwrap();
/// assert_eq!(outcome.status(), OutcomeStatus::Succeeded);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ConfirmationObserver(Arc<dyn Fn(&InvocationOutcome) + Send + Sync>);

impl ConfirmationObserver {
    /// An observer calling `hear` with the outcome.
    pub fn new(hear: impl Fn(&InvocationOutcome) + Send + Sync + 'static) -> Self {
        Self(Arc::new(hear))
    }

    fn tell(extensions: &Extensions, outcome: &InvocationOutcome) {
        if let Some(observer) = extensions.get::<ConfirmationObserver>() {
            (observer.0)(outcome);
        }
    }
}

impl std::fmt::Debug for ConfirmationObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConfirmationObserver")
    }
}

/// Why a ticket ended on its own.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Expired,
    Aborted,
}

impl Ending {
    fn code(self) -> ErrorCode {
        match self {
            Ending::Expired => ErrorCode::ConfirmationExpired,
            Ending::Aborted => ErrorCode::ExecutionAborted,
        }
    }

    /// The receipt of a ticket that ended this way.
    fn outcome(self, pending: &Pending) -> InvocationOutcome {
        let message = match self {
            Ending::Expired => m::EXPIRED,
            Ending::Aborted => m::ABORTED,
        };
        InvocationOutcome::from_error(
            String::from(pending.reservation.id()),
            pending.capability_id.clone(),
            RcipError::new(self.code(), message),
        )
    }
}

/// Takes a ticket back out of the store when dropped armed: the future that put it was
/// dropped before this instance held the ticket.
struct Unheld {
    store: Option<Arc<dyn crate::ConfirmationStore>>,
    id: String,
}

impl Drop for Unheld {
    fn drop(&mut self) {
        if let Some(store) = self.store.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let id = std::mem::take(&mut self.id);
            runtime.spawn(async move {
                let _ = store.take(&id).await;
            });
        }
    }
}

/// How long after its ticket's expiry a filed outcome waits for its caller.
const FILED_OUTCOME_KEPT_MS: u64 = 60_000;

impl Inner {
    /// Step 8: store the captured request, start the expiry/cancellation watcher, emit
    /// `confirmation_requested`. The invocation id stays reserved.
    pub(crate) fn issue_confirmation(
        self: &Arc<Self>,
        attempt: Attempt<'_>,
        input: Arc<Value>,
        ready: &Ready,
        reason: Option<String>,
    ) -> InvocationOutcome {
        let confirmation = self.announce_ticket(&attempt, ready, reason);
        self.hold(attempt, input, ready, confirmation)
    }

    /// Step 8 with a [`ConfirmationStore`](crate::ConfirmationStore): the ticket is in the
    /// store before the caller hears of it, and only then held here, so that no resolution
    /// on this instance can run ahead of the store.
    pub(crate) async fn issue_shared_confirmation(
        self: &Arc<Self>,
        store: Arc<dyn crate::ConfirmationStore>,
        attempt: Attempt<'_>,
        input: Arc<Value>,
        ready: &Ready,
        reason: Option<String>,
    ) -> InvocationOutcome {
        let confirmation = self.announce_ticket(&attempt, ready, reason);
        let stored = crate::StoredConfirmation::new(
            ConfirmationTicket {
                confirmation: confirmation.clone(),
                capability_id: attempt.capability_id.clone(),
                input: Value::clone(&input),
                principal: attempt.extensions.principal().cloned(),
            },
            String::from(attempt.reservation.id()),
            SemanticContext::clone(&ready.context),
        )
        .with_key(
            attempt
                .extensions
                .get::<ConfirmationKey>()
                .map(|key| key.0.to_string()),
        );
        // A caller that stops waiting while the ticket is put leaves nothing in the store
        // that another instance could run.
        let mut unheld = Unheld {
            store: Some(Arc::clone(&store)),
            id: confirmation.id.clone(),
        };
        let put = store.put(stored).await;
        // Put or refused, the store holds nothing of this call's to take back.
        unheld.store = None;
        if let Err(error) = put {
            tracing::warn!(target: "rcip::confirmation", %error, "a confirmation could not be shared");
            let mut attempt = attempt;
            attempt.reservation.release();
            return self.fail(
                &attempt,
                RcipError::new(ErrorCode::ExecutionFailed, m::EXECUTION_FAILED),
            );
        }
        self.hold(attempt, input, ready, confirmation)
    }

    /// What the caller is told of a new ticket, announced (`confirmation_requested`). The
    /// event goes out before the ticket exists, so that nothing (an expiry of a zero TTL, a
    /// cancellation) can end the ticket ahead of its own announcement.
    fn announce_ticket(
        &self,
        attempt: &Attempt<'_>,
        ready: &Ready,
        reason: Option<String>,
    ) -> ConfirmationInfo {
        self.emit(
            attempt.reservation.id(),
            &attempt.capability_id,
            EventPhase::ConfirmationRequested,
            None,
        );
        let capability = &self.catalog.capabilities[ready.index];
        let ttl_ms = u64::try_from(self.confirmation_ttl.as_millis()).unwrap_or(u64::MAX);
        ConfirmationInfo::new(
            new_confirmation_id(),
            capability.title.as_str(),
            reason.unwrap_or_else(|| capability.description.to_string()),
            capability.effect,
            self.clock.now_ms().saturating_add(ttl_ms),
        )
    }

    /// Holds the ticket until the host resolves it or it ends on its own.
    fn hold(
        self: &Arc<Self>,
        attempt: Attempt<'_>,
        input: Arc<Value>,
        ready: &Ready,
        confirmation: ConfirmationInfo,
    ) -> InvocationOutcome {
        let id = confirmation.id.clone();
        let expires_at = confirmation.expires_at;
        let outcome = InvocationOutcome::ConfirmationRequired {
            invocation_id: String::from(attempt.reservation.id()),
            capability_id: attempt.capability_id.clone(),
            confirmation: confirmation.clone(),
        };
        let token = attempt.cancellation.clone();
        lock(&self.confirmations).pending.insert(
            id.clone(),
            Pending {
                info: confirmation,
                capability_id: attempt.capability_id,
                input,
                cancellation: attempt.cancellation,
                extensions: attempt.extensions,
                reservation: attempt.reservation.into_shared(),
                binding_generation: ready.binding.generation,
                index: ready.index,
                context: ready.context.clone(),
                expires_at,
                watcher: Watcher::default(),
                _counted: Counted::new(),
            },
        );
        self.start_watcher(&id, self.confirmation_ttl, token);
        outcome
    }

    /// Spawns the task that ends the ticket at expiry or cancellation. It needs a tokio
    /// runtime, and one with timers for the expiry; without them, expiry is still enforced
    /// when the host resolves, and [`sweep_stale`](Self::sweep_stale) ends an expired or
    /// cancelled ticket whose id is asked for again.
    fn start_watcher(self: &Arc<Self>, id: &str, ttl: Duration, token: Option<CancellationToken>) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let sleep = try_sleep(ttl);
        if sleep.is_none() && token.is_none() {
            return;
        }
        let task = handle.spawn(watch(Arc::downgrade(self), id.to_owned(), sleep, token));
        let mut table = lock(&self.confirmations);
        if let Some(pending) = table.pending.get_mut(id) {
            pending.watcher = Watcher(Some(task.abort_handle()));
        } else {
            task.abort();
        }
    }

    /// When an invocation id is still reserved by a ticket that has in fact expired or been
    /// cancelled (its watcher could not run), ends that ticket now. Returns whether one was
    /// ended.
    pub(crate) fn sweep_stale(&self, invocation_id: &str) -> bool {
        let now = self.clock.now_ms();
        let stale = {
            let table = lock(&self.confirmations);
            table.pending.iter().find_map(|(id, p)| {
                if p.reservation.id() != invocation_id {
                    return None;
                }
                if p.cancelled() {
                    Some((id.clone(), Ending::Aborted))
                } else if now > p.expires_at {
                    Some((id.clone(), Ending::Expired))
                } else {
                    None
                }
            })
        };
        match stale {
            Some((id, ending)) => {
                self.end_pending(&id, ending);
                // Shared: out of the store too, so no other instance resolves it (its
                // watcher, which would have, went with the ticket).
                if let Some(store) = self.confirmation_store.clone()
                    && let Ok(runtime) = tokio::runtime::Handle::try_current()
                {
                    runtime.spawn(async move {
                        if let Err(error) = store.take(&id).await {
                            tracing::warn!(target: "rcip::confirmation", %error, "an ended confirmation may still be listed by other instances");
                        }
                    });
                }
                true
            }
            None => false,
        }
    }

    /// Ends a ticket by timer or cancellation: releases the id, emits `failed`, keeps a
    /// receipt.
    fn end_pending(&self, id: &str, ending: Ending) {
        let mut table = lock(&self.confirmations);
        let Some(pending) = table.pending.remove(id) else {
            return;
        };
        let outcome = ending.outcome(&pending);
        table.store_receipt(id.to_owned(), outcome.clone());
        drop(table);
        ConfirmationObserver::tell(&pending.extensions, &outcome);
        self.announce_end(pending, ending);
    }

    /// Releases an ended ticket's id and emits `failed`.
    fn announce_end(&self, pending: Pending, ending: Ending) {
        let Pending {
            capability_id,
            mut reservation,
            ..
        } = pending;
        reservation.release();
        self.emit(
            reservation.id(),
            &capability_id,
            EventPhase::Failed,
            Some(ending.code()),
        );
    }

    /// The tickets waiting for the host, oldest expiry first.
    pub(crate) fn pending_confirmations(&self) -> Vec<ConfirmationTicket> {
        let now = self.clock.now_ms();
        let table = lock(&self.confirmations);
        let mut pending: Vec<ConfirmationTicket> = table
            .pending
            .values()
            .filter(|p| !p.cancelled() && p.info.expires_at >= now)
            .map(|p| ConfirmationTicket {
                confirmation: p.info.clone(),
                capability_id: p.capability_id.clone(),
                input: Value::clone(&p.input),
                principal: p.extensions.principal().cloned(),
            })
            .collect();
        drop(table);
        pending.sort_by(|a, b| {
            (a.confirmation.expires_at, &a.confirmation.id)
                .cmp(&(b.confirmation.expires_at, &b.confirmation.id))
        });
        pending
    }

    /// Drops a ticket that another instance resolved: no receipt and no event here (the
    /// resolving instance reports it); the id is released.
    fn forget_pending(&self, id: &str) {
        let pending = lock(&self.confirmations).pending.remove(id);
        if let Some(mut pending) = pending {
            pending.reservation.release();
        }
    }

    /// Every instance's pending tickets, from the store; this runtime's own without one.
    pub(crate) async fn shared_pending_confirmations(
        &self,
    ) -> Result<Vec<ConfirmationTicket>, crate::Error> {
        let Some(store) = &self.confirmation_store else {
            return Ok(self.pending_confirmations());
        };
        let stored = store.pending(self.clock.now_ms()).await?;
        Ok(stored.into_iter().map(|c| c.ticket).collect())
    }

    /// `host.resolveConfirmation`.
    pub(crate) async fn resolve_confirmation(
        self: &Arc<Self>,
        id: &str,
        approved: bool,
    ) -> InvocationOutcome {
        // 1. Take the ticket (its watcher stops with it).
        let taken = {
            let mut table = lock(&self.confirmations);
            match table.pending.remove(id) {
                Some(pending) => Ok(pending),
                None => Err(table.take_receipt(id)),
            }
        };
        let pending = match taken {
            Ok(pending) => {
                // Shared: this instance holds it, but the store decides who resolves it.
                if let Some(store) = &self.confirmation_store {
                    match store.take(id).await {
                        Ok(Some(_)) => {}
                        // Resolved on another instance.
                        Ok(None) => {
                            let mut pending = pending;
                            pending.reservation.release();
                            return self.not_found();
                        }
                        Err(error) => return self.store_failed(id, pending, &error),
                    }
                }
                // A ticket whose invocation was cancelled has ended, even if its watcher has
                // not run yet: the reference ends it synchronously on abort, so resolving it
                // answers with the `EXECUTION_ABORTED` receipt (handed out here, so not
                // kept), never a decline or a re-run.
                if pending.cancelled() {
                    let receipt = Ending::Aborted.outcome(&pending);
                    ConfirmationObserver::tell(&pending.extensions, &receipt);
                    self.announce_end(pending, Ending::Aborted);
                    return receipt;
                }
                pending
            }
            // 2. A receipt is returned once; otherwise NOT_FOUND, with no event.
            Err(Some(receipt)) => return receipt,
            Err(None) => {
                // Raised on another instance?
                if let Some(store) = &self.confirmation_store {
                    match store.take(id).await {
                        Ok(Some(stored)) => return self.resolve_stored(stored, approved).await,
                        Ok(None) => {}
                        Err(error) => {
                            tracing::warn!(target: "rcip::confirmation", %error, "the confirmation store failed");
                            return self.store_unreachable();
                        }
                    }
                }
                return self.not_found();
            }
        };
        let Pending {
            info: _,
            capability_id,
            input,
            cancellation,
            extensions,
            reservation,
            binding_generation,
            index,
            context,
            expires_at,
            watcher,
            _counted: counted,
        } = pending;
        drop(watcher);
        // Taken: no longer pending while the confirmed run goes on.
        drop(counted);
        let attempt = Attempt {
            reservation,
            capability_id,
            cancellation,
            extensions,
            confirmed: true,
            index: Some(index),
        };
        let unchanged = self
            .binding(index)
            .is_some_and(|b| b.generation == binding_generation)
            && *self.context() == *context;
        self.conclude(attempt, input, approved, expires_at, unchanged)
            .await
    }

    /// Resolves a ticket another instance raised and this one took from the store: the
    /// confirmed run happens here, with the caller's principal (without its extensions)
    /// and no cancellation (the caller's request is on the other instance).
    async fn resolve_stored(
        self: &Arc<Self>,
        stored: crate::StoredConfirmation,
        approved: bool,
    ) -> InvocationOutcome {
        let reservation = match self
            .reserve(Claim::Caller(Arc::from(stored.invocation_id.as_str())))
        {
            Ok(reservation) => reservation.into_shared(),
            Err(claim) => {
                // Its invocation id is busy here: the ticket goes back, still pending.
                let capability_id = stored.ticket.capability_id.clone();
                if let Some(store) = &self.confirmation_store
                    && let Err(error) = store.put(stored).await
                {
                    tracing::error!(target: "rcip::confirmation", %error, "a taken confirmation could not be put back");
                }
                return InvocationOutcome::from_error(
                    String::from(claim.id()),
                    capability_id,
                    RcipError::new(ErrorCode::InvocationAlreadyActive, m::ALREADY_ACTIVE),
                );
            }
        };
        let crate::StoredConfirmation {
            ticket,
            context,
            key,
            ..
        } = stored;
        let mut extensions = Extensions::new();
        if let Some(principal) = ticket.principal {
            extensions.insert(principal);
        }
        if let Some(key) = key {
            extensions.insert(ConfirmationKey(Arc::from(key)));
        }
        let index = self.catalog.position(&ticket.capability_id);
        // The binding here is another than the one that raised the ticket; what can be
        // compared is that there is one, and the context.
        let unchanged =
            index.and_then(|index| self.binding(index)).is_some() && *self.context() == context;
        let attempt = Attempt {
            reservation,
            capability_id: ticket.capability_id,
            cancellation: None,
            extensions,
            confirmed: true,
            index,
        };
        let expires_at = ticket.confirmation.expires_at;
        self.conclude(
            attempt,
            Arc::new(ticket.input),
            approved,
            expires_at,
            unchanged,
        )
        .await
    }

    /// Steps 3–6 of a taken ticket: declined, expired, changed while pending, or run.
    async fn conclude(
        self: &Arc<Self>,
        mut attempt: Attempt<'static>,
        input: Arc<Value>,
        approved: bool,
        expires_at: u64,
        unchanged: bool,
    ) -> InvocationOutcome {
        // 3–5. A ticket that will not run releases its id before anything is reported. An
        // approved one keeps its reservation into the re-run, so no other invocation can
        // take the id in between (the reference does these steps without yielding).
        let refusal = if !approved {
            Some(RcipError::new(ErrorCode::ConfirmationDeclined, m::DECLINED))
        } else if self.clock.now_ms() > expires_at {
            Some(RcipError::new(ErrorCode::ConfirmationExpired, m::EXPIRED))
        } else {
            (!unchanged).then(|| RcipError::new(ErrorCode::PolicyDenied, m::CHANGED_WHILE_PENDING))
        };
        let observer = attempt.extensions.get::<ConfirmationObserver>().cloned();
        let key = attempt.extensions.get::<ConfirmationKey>().cloned();
        let outcome = if let Some(error) = refusal {
            attempt.reservation.release();
            if error.code == ErrorCode::ConfirmationDeclined {
                // Declined has its own event phase, and leaves no receipt.
                self.emit(
                    attempt.reservation.id(),
                    &attempt.capability_id,
                    EventPhase::ConfirmationDeclined,
                    Some(error.code),
                );
                InvocationOutcome::from_error(
                    String::from(attempt.reservation.id()),
                    attempt.capability_id,
                    error,
                )
            } else {
                self.fail(&attempt, error)
            }
        } else {
            // 6. The whole pipeline again, confirmed, with the same invocation id.
            self.run(attempt, RunInput::Value(input)).await
        };
        if let Some(observer) = observer {
            (observer.0)(&outcome);
        }
        // Shared: the caller's next request under its key gets this, on any instance.
        if let (Some(store), Some(key)) = (&self.confirmation_store, key) {
            let keep_until = expires_at.saturating_add(FILED_OUTCOME_KEPT_MS);
            if let Err(error) = store
                .file_outcome(&key.0, outcome.clone(), keep_until)
                .await
            {
                tracing::warn!(target: "rcip::confirmation", %error, "an outcome could not be filed for its caller");
            }
        }
        outcome
    }

    /// What is filed under a request's [`ConfirmationKey`] in the store: the pending
    /// ticket's answer again, or the outcome of the one resolved (once); `None` when nothing
    /// is (or the store fails: the request then goes on as any other).
    pub(crate) async fn filed_answer(&self, key: &str) -> Option<InvocationOutcome> {
        let store = self.confirmation_store.as_ref()?;
        match store.find(key, self.clock.now_ms()).await {
            Ok(Some(Filed::Answered(outcome))) => Some(outcome),
            Ok(Some(Filed::Pending(stored))) => Some(InvocationOutcome::ConfirmationRequired {
                invocation_id: stored.invocation_id,
                capability_id: stored.ticket.capability_id,
                confirmation: stored.ticket.confirmation,
            }),
            Ok(None) => None,
            Err(error) => {
                tracing::warn!(target: "rcip::confirmation", %error, "the confirmation store failed");
                None
            }
        }
    }

    /// `CONFIRMATION_NOT_FOUND`: unknown, or already resolved (on any instance); no event.
    fn not_found(&self) -> InvocationOutcome {
        InvocationOutcome::from_error(
            next_invocation_id(self.clock.now_ms(), str::to_owned),
            "unknown".to_owned(),
            RcipError::new(ErrorCode::ConfirmationNotFound, m::CONFIRMATION_NOT_FOUND),
        )
    }

    /// The store could not say whether this instance may resolve a ticket it holds: the
    /// ticket goes back, still pending, and the host hears `EXECUTION_FAILED`.
    fn store_failed(
        self: &Arc<Self>,
        id: &str,
        mut pending: Pending,
        error: &crate::Error,
    ) -> InvocationOutcome {
        tracing::warn!(target: "rcip::confirmation", %error, "the confirmation store failed");
        // A new watcher: the old one may have fired while the ticket was out of the table.
        pending.watcher = Watcher::default();
        let token = pending.cancellation.clone();
        let left = pending.expires_at.saturating_sub(self.clock.now_ms());
        lock(&self.confirmations)
            .pending
            .insert(id.to_owned(), pending);
        self.start_watcher(id, Duration::from_millis(left), token);
        self.store_unreachable()
    }

    fn store_unreachable(&self) -> InvocationOutcome {
        InvocationOutcome::from_error(
            next_invocation_id(self.clock.now_ms(), str::to_owned),
            "unknown".to_owned(),
            RcipError::new(ErrorCode::ExecutionFailed, m::EXECUTION_FAILED),
        )
    }
}

/// Ends a ticket when it expires or its invocation is cancelled, whichever comes first.
/// `sleep` is absent on a runtime without timers; then only cancellation is watched.
async fn watch(
    inner: Weak<Inner>,
    id: String,
    sleep: Option<tokio::time::Sleep>,
    token: Option<CancellationToken>,
) {
    let expiry = async {
        match sleep {
            Some(sleep) => sleep.await,
            None => std::future::pending().await,
        }
    };
    let cancelled = async {
        match &token {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let ending = tokio::select! {
        () = expiry => Ending::Expired,
        () = cancelled => Ending::Aborted,
    };
    let Some(inner) = inner.upgrade() else {
        return;
    };
    // Shared: the ticket leaves the store first (a ticket another instance took first was
    // resolved there). A store that fails is asked again, a few times, so that an ended
    // ticket does not stay resolvable elsewhere.
    if let Some(store) = inner.confirmation_store.clone() {
        let mut wait = Duration::from_millis(100);
        for attempt in 0..5 {
            match store.take(&id).await {
                Ok(Some(_)) => break,
                Ok(None) => {
                    inner.forget_pending(&id);
                    return;
                }
                Err(error) if attempt == 4 => {
                    tracing::error!(target: "rcip::confirmation", %error, "an ended confirmation may still be listed by other instances");
                }
                Err(_) => {
                    // (A runtime without timers asks once.)
                    let Some(sleep) = try_sleep(wait) else { break };
                    sleep.await;
                    wait *= 2;
                }
            }
        }
    }
    inner.end_pending(&id, ending);
}
