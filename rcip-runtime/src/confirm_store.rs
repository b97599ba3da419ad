//! Pending confirmations as a host lists them, and shared by several runtimes (instances of
//! one application): a ticket raised on one is listed and resolved on any, exactly once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcip_core::{ConfirmationInfo, InvocationOutcome, SemanticContext};

use serde_json::Value;

use crate::error::Error;
use crate::support::{BoxFuture, lock};

/// A confirmation waiting for the host's answer, as
/// [`Host::pending_confirmations`](crate::Host::pending_confirmations) lists it: what the
/// caller was told, and what would run on approval, for whom.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ConfirmationTicket {
    /// The ticket (id, title, reason, effect, expiry), as the caller got it.
    pub confirmation: ConfirmationInfo,
    /// The capability that runs on approval.
    pub capability_id: String,
    /// The validated input it runs with.
    pub input: Value,
    /// The caller, when the request named one.
    pub principal: Option<crate::Principal>,
}

impl ConfirmationTicket {
    /// A ticket, as a [`ConfirmationStore`](crate::ConfirmationStore) reads one back.
    #[must_use]
    pub fn new(
        confirmation: ConfirmationInfo,
        capability_id: String,
        input: Value,
        principal: Option<crate::Principal>,
    ) -> Self {
        Self {
            confirmation,
            capability_id,
            input,
            principal,
        }
    }
}

/// A pending confirmation as a [`ConfirmationStore`] keeps it: everything another instance
/// needs to run it on approval.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredConfirmation {
    /// The ticket: what the caller was told, the capability, its validated input and the
    /// caller (id, name and scopes; a principal's extensions stay where it was raised).
    pub ticket: ConfirmationTicket,
    /// The invocation it belongs to; the confirmed run keeps this id.
    pub invocation_id: String,
    /// The semantic context the policy saw: a runtime whose context differs refuses to run
    /// the ticket (`POLICY_DENIED`, as a change of context while pending does on one
    /// instance).
    pub context: SemanticContext,
    /// The caller's [`ConfirmationKey`], when the request carried one.
    pub key: Option<String>,
}

impl StoredConfirmation {
    /// A stored confirmation.
    #[must_use]
    pub fn new(
        ticket: ConfirmationTicket,
        invocation_id: String,
        context: SemanticContext,
    ) -> Self {
        Self {
            ticket,
            invocation_id,
            context,
            key: None,
        }
    }

    /// Filed under the caller's `key` ([`ConfirmationKey`]).
    #[must_use]
    pub fn with_key(mut self, key: Option<String>) -> Self {
        self.key = key;
        self
    }

    /// The confirmation id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.ticket.confirmation.id
    }
}

/// Files the confirmation a request raises under a key of the caller's, so that the same
/// caller asking again (the same call, a retry on any instance) gets that confirmation while
/// it is pending, and its outcome, once, after it was resolved, instead of a second ticket.
/// It takes effect in a runtime with a [`ConfirmationStore`]: the MCP bridge puts one (a
/// digest of the tool, the arguments and the caller) on the calls of clients that cannot
/// answer the confirmation themselves, whose retries may reach any instance.
///
/// A request that finds its key answered ends there: no event, no policy, no handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfirmationKey(pub Arc<str>);

/// What a [`ConfirmationStore`] holds under a [`ConfirmationKey`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Filed {
    /// A confirmation still pending.
    Pending(StoredConfirmation),
    /// The outcome of the confirmation resolved last under the key (handed out once).
    Answered(InvocationOutcome),
}

/// Where a runtime keeps its pending confirmations so that other runtimes of the same
/// application (other instances behind one load balancer) can list and resolve them
/// ([`RuntimeOptions::confirmation_store`](crate::RuntimeOptions::confirmation_store)).
///
/// The runtime that raised a ticket still holds what cannot travel (the caller's
/// cancellation, observers and principal extensions) and ends the ticket at expiry or
/// cancellation; [`take`](Self::take) is what makes every resolution exactly-once: of any
/// number of runtimes taking one id at the same moment, one gets the ticket and runs (or
/// declines) it, and every other finds nothing (`CONFIRMATION_NOT_FOUND`, the reference's
/// code for an already resolved confirmation). [`MemoryConfirmationStore`] shares tickets
/// between runtimes of one process; rcip-database's `PostgresStore::confirmations` between
/// processes.
pub trait ConfirmationStore: Send + Sync + std::fmt::Debug + 'static {
    /// Records a ticket just raised. The caller hears of it only once this has succeeded.
    fn put(&self, confirmation: StoredConfirmation) -> BoxFuture<Result<(), Error>>;

    /// Takes the ticket out, atomically: at most one of any number of concurrent callers,
    /// on any instance, gets `Some`. An expired ticket is still taken (its taker reports
    /// `CONFIRMATION_EXPIRED`); stores may forget tickets well past their expiry.
    fn take(&self, id: &str) -> BoxFuture<Result<Option<StoredConfirmation>, Error>>;

    /// The tickets not yet taken that expire at or after `now_ms`, oldest expiry first
    /// (ties by id).
    fn pending(&self, now_ms: u64) -> BoxFuture<Result<Vec<StoredConfirmation>, Error>>;

    /// What is filed under `key`: an unread outcome (taken out: at most one caller gets
    /// it), else a pending ticket that expires at or after `now_ms`, else nothing.
    fn find(&self, key: &str, now_ms: u64) -> BoxFuture<Result<Option<Filed>, Error>>;

    /// Files the outcome of the ticket filed under `key`, for its caller to read once,
    /// until `keep_until_ms`; a later outcome under the same key replaces it.
    fn file_outcome(
        &self,
        key: &str,
        outcome: InvocationOutcome,
        keep_until_ms: u64,
    ) -> BoxFuture<Result<(), Error>>;
}

/// A [`ConfirmationStore`] in memory, for runtimes of one process (and for tests of the
/// shared flow without a database).
///
/// ```
/// use std::sync::Arc;
/// use rcip_runtime::*;
/// use rcip_runtime::testing::assert_confirmation;
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
/// let store = Arc::new(MemoryConfirmationStore::default());
/// let policy = policy_fn(|ctx| if ctx.confirmed() { PolicyDecision::Allow } else { PolicyDecision::Confirm { reason: None } });
/// let instance = || -> Result<Runtime, Error> {
///     let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
///         CapabilityDefinition::new("notes.clear", Effect::Destructive, "Clear", "Clears the notes."),
///     );
///     let options = RuntimeOptions::default().policy(policy.clone()).confirmation_store(store.clone());
///     Runtime::new(definition, options)
/// };
/// let (a, b) = (instance()?, instance()?);
/// let _bindings = [&a, &b].map(|runtime| {
///     runtime.host().bind("notes.clear", Binding::new(|_input, _ctx| async { Ok::<_, HandlerError>(json!(null)) }))
/// });
/// // Raised on one instance...
/// let pending = a.client().invoke(InvocationRequest::new("notes.clear", json!({}))).await;
/// let id = assert_confirmation(&pending).id.clone();
/// // ...listed and approved on the other, once.
/// assert_eq!(b.host().shared_pending_confirmations().await?.len(), 1);
/// let outcome = b.host().resolve_confirmation(&id, true).await;
/// assert_eq!(outcome.status(), OutcomeStatus::Succeeded);
/// let again = a.host().resolve_confirmation(&id, false).await;
/// assert_eq!(again.error().map(|e| e.code), Some(ErrorCode::ConfirmationNotFound));
/// # Ok(()) }
/// ```
#[derive(Debug, Default, Clone)]
pub struct MemoryConfirmationStore {
    tickets: Arc<Mutex<HashMap<String, StoredConfirmation>>>,
    /// Outcomes by key, each with how long it is kept.
    outcomes: Arc<Mutex<HashMap<String, (InvocationOutcome, u64)>>>,
}

impl ConfirmationStore for MemoryConfirmationStore {
    fn put(&self, confirmation: StoredConfirmation) -> BoxFuture<Result<(), Error>> {
        lock(&self.tickets).insert(confirmation.id().to_owned(), confirmation);
        Box::pin(std::future::ready(Ok(())))
    }

    fn take(&self, id: &str) -> BoxFuture<Result<Option<StoredConfirmation>, Error>> {
        let taken = lock(&self.tickets).remove(id);
        Box::pin(std::future::ready(Ok(taken)))
    }

    fn pending(&self, now_ms: u64) -> BoxFuture<Result<Vec<StoredConfirmation>, Error>> {
        let mut pending: Vec<StoredConfirmation> = {
            let mut tickets = lock(&self.tickets);
            // Forgotten a minute after expiry, as a database store sweeps them.
            tickets
                .retain(|_, c| c.ticket.confirmation.expires_at.saturating_add(60_000) >= now_ms);
            tickets
                .values()
                .filter(|c| c.ticket.confirmation.expires_at >= now_ms)
                .cloned()
                .collect()
        };
        pending.sort_by(|a, b| {
            let key =
                |c: &StoredConfirmation| (c.ticket.confirmation.expires_at, c.id().to_owned());
            key(a).cmp(&key(b))
        });
        Box::pin(std::future::ready(Ok(pending)))
    }

    fn find(&self, key: &str, now_ms: u64) -> BoxFuture<Result<Option<Filed>, Error>> {
        let answered = {
            let mut outcomes = lock(&self.outcomes);
            outcomes.retain(|_, (_, keep_until)| *keep_until >= now_ms);
            outcomes.remove(key)
        };
        let filed = match answered {
            Some((outcome, _)) => Some(Filed::Answered(outcome)),
            None => lock(&self.tickets)
                .values()
                .filter(|c| {
                    c.key.as_deref() == Some(key) && c.ticket.confirmation.expires_at >= now_ms
                })
                .max_by_key(|c| c.ticket.confirmation.expires_at)
                .cloned()
                .map(Filed::Pending),
        };
        Box::pin(std::future::ready(Ok(filed)))
    }

    fn file_outcome(
        &self,
        key: &str,
        outcome: InvocationOutcome,
        keep_until_ms: u64,
    ) -> BoxFuture<Result<(), Error>> {
        lock(&self.outcomes).insert(key.to_owned(), (outcome, keep_until_ms));
        Box::pin(std::future::ready(Ok(())))
    }
}
