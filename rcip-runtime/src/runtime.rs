//! The runtime: shared state, options, snapshots, revisions, listeners and events.
//!
//! Everything per invocation is O(1) in the catalog's size: bindings live in one slot per
//! capability, found through the catalog's id index; the snapshot is rebuilt lazily, at the
//! first read after a revision change, never on the invoke path, and incrementally: it shares
//! every chunk of entries in which nothing it shows can have changed with the snapshot before.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_core::{
    ApplicationDefinition, ApplicationSnapshot, Availability, CapabilityList, CapabilitySnapshot,
    ErrorCode, EventPhase, InvocationOutcome, PREFLIGHT_MAX_PROPOSALS, PreflightReport,
    RuntimeEvent, SemanticContext,
};
use tracing::Instrument;

use crate::binding::{AvailabilityFn, Handler};
use crate::catalog::{CompiledCapability, CompiledCatalog};
use crate::client::{InvocationRequest, Listener, PreflightBatch, RcipClient, Subscription};
use crate::confirm_store::ConfirmationStore;
use crate::input::DEFAULT_MAX_INPUT_BYTES;
use crate::policy::{DefaultPolicy, Policy};
use crate::reservation::{Claim, Reservation, ReservationTable};
use crate::support::{BoxFuture, Clock, SystemClock, contain, lock};
use crate::surfaces::{ClientSurfaces, PreflightSurface};
use crate::tickets::Confirmations;

/// The reference's default confirmation lifetime: 120 seconds.
pub const DEFAULT_CONFIRMATION_TTL: Duration = Duration::from_secs(120);

/// An observer of redacted lifecycle events. A panic in it is contained and ignored.
pub type EventObserver = Arc<dyn Fn(&RuntimeEvent) + Send + Sync>;

/// How a runtime behaves: [`RuntimeOptions::new`] (or `Default`) has the reference's
/// defaults, and each builder method changes one of them.
///
/// ```
/// use std::time::Duration;
/// use rcip_runtime::{RuntimeOptions, Effect, PolicyDecision, policy_fn};
/// let options = RuntimeOptions::new()
///     .policy(policy_fn(|ctx| match ctx.capability().effect {
///         Effect::Read => PolicyDecision::Allow,
///         _ if ctx.confirmed() => PolicyDecision::Allow,
///         _ => PolicyDecision::Confirm { reason: None },
///     }))
///     .confirmation_ttl(Duration::from_secs(30))
///     .max_input_bytes(64 * 1024)
///     .on_event(|event| eprintln!("{:?} {}", event.phase, event.capability_id));
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct RuntimeOptions {
    policy: Arc<dyn Policy>,
    confirmation_ttl: Duration,
    on_event: Option<EventObserver>,
    clock: Arc<dyn Clock>,
    max_input_bytes: usize,
    /// Whether every declared capability must be bound before the runtime serves.
    pub(crate) require_all_bound: bool,
    /// Whether a caller's cancellation drops a handler that ignores it.
    abort_on_cancel: bool,
    confirmation_store: Option<Arc<dyn ConfirmationStore>>,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            policy: Arc::new(DefaultPolicy),
            confirmation_ttl: DEFAULT_CONFIRMATION_TTL,
            on_event: None,
            clock: Arc::new(SystemClock),
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            require_all_bound: false,
            abort_on_cancel: false,
            confirmation_store: None,
        }
    }
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("confirmation_ttl", &self.confirmation_ttl)
            .field("on_event", &self.on_event.is_some())
            .field("clock", &self.clock)
            .field("max_input_bytes", &self.max_input_bytes)
            .field("require_all_bound", &self.require_all_bound)
            .field("abort_on_cancel", &self.abort_on_cancel)
            .field("confirmation_store", &self.confirmation_store)
            .finish_non_exhaustive()
    }
}

impl RuntimeOptions {
    /// The reference's defaults: [`DefaultPolicy`], [`DEFAULT_CONFIRMATION_TTL`], no event
    /// observer, the system clock, [`DEFAULT_MAX_INPUT_BYTES`].
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the host policy ([`DefaultPolicy`] when not set).
    #[must_use]
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = policy;
        self
    }

    /// Sets how long a confirmation stays valid ([`DEFAULT_CONFIRMATION_TTL`]).
    #[must_use]
    pub fn confirmation_ttl(mut self, ttl: Duration) -> Self {
        self.confirmation_ttl = ttl;
        self
    }

    /// Shares this runtime's pending confirmations through `store`, so that other runtimes
    /// of the same application given the same store (other instances behind one load
    /// balancer) list them ([`Host::shared_pending_confirmations`](crate::Host::shared_pending_confirmations))
    /// and resolve them, each exactly once, whichever instance raised it; the approved
    /// capability runs on the instance that resolved it. Without a store, confirmations are
    /// this runtime's alone, as in the reference.
    #[must_use]
    pub fn confirmation_store(mut self, store: Arc<dyn ConfirmationStore>) -> Self {
        self.confirmation_store = Some(store);
        self
    }

    /// Sets the lifecycle observer (events also go to `tracing`, target `rcip::event`). A
    /// panic in it is contained and ignored.
    #[must_use]
    pub fn on_event(mut self, observer: impl Fn(&RuntimeEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(observer));
        self
    }

    /// Sets where wall-clock time comes from.
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets the largest raw JSON text input accepted, in bytes ([`DEFAULT_MAX_INPUT_BYTES`]).
    #[must_use]
    pub fn max_input_bytes(mut self, bytes: usize) -> Self {
        self.max_input_bytes = bytes;
        self
    }

    /// Requires every declared capability to be bound before the runtime serves, so a
    /// forgotten binding fails at start-up with [`Error::Unbound`](crate::Error::Unbound)
    /// (naming the ids) instead of as `CAPABILITY_UNBOUND` at the first invocation.
    ///
    /// Bindings are made through the runtime's own host, so the check runs where the
    /// bindings are known to be complete: at the end of [`Runtime::with_bindings`] (and of
    /// `catalog!`'s `App::runtime`, which uses it), before any client exists.
    /// [`Runtime::new`] binds nothing, so with this option it fails for any catalog that
    /// declares a capability; [`Runtime::check_bound`] runs the same check on demand.
    #[must_use]
    pub fn require_all_bound(mut self, required: bool) -> Self {
        self.require_all_bound = required;
        self
    }

    /// Races each handler against its invocation's cancellation token: when the caller
    /// cancels, the invocation answers `EXECUTION_ABORTED` ("The capability invocation was
    /// cancelled.") at once and the handler's future is dropped, so its work stops at its
    /// next `.await`. Off by default, as in the reference, where cancellation is cooperative
    /// and a handler that ignores it keeps its caller waiting. A handler that must not be
    /// interrupted mid-write should leave this off or finish its writes before awaiting.
    ///
    /// ```
    /// use rcip_runtime::RuntimeOptions;
    /// let options = RuntimeOptions::new().abort_on_cancel(true);
    /// # let _ = options;
    /// ```
    #[must_use]
    pub fn abort_on_cancel(mut self, abort: bool) -> Self {
        self.abort_on_cancel = abort;
        self
    }
}

/// A live binding, as installed.
pub(crate) struct BoundHandler {
    /// Unique per installation: a re-bind of the same id is a different binding.
    pub(crate) generation: u64,
    pub(crate) handler: Arc<dyn Handler>,
    pub(crate) availability: Option<Arc<AvailabilityFn>>,
}

impl BoundHandler {
    /// Reads availability live; a panicking check reads as `AVAILABILITY_CHECK_FAILED`.
    pub(crate) fn availability(&self) -> Availability {
        match &self.availability {
            None => Availability::available(),
            Some(check) => contain(|| check()).unwrap_or_else(Availability::check_failed),
        }
    }
}

type SharedListener = Arc<dyn Fn() + Send + Sync>;

/// The cached snapshot and, per chunk and per page of its capability list, where the
/// entries came from.
#[derive(Clone)]
struct CachedSnapshot {
    snapshot: Arc<ApplicationSnapshot>,
    chunks: Arc<[ChunkOrigin]>,
    pages: Arc<[PageOrigin]>,
}

/// How many changes a page's slots had counted when a build began looking at its chunks,
/// and whether one of its chunks had an availability check. While the count is the same,
/// no change was published in the page since (every change counts itself after stamping
/// its chunk, and before the refresh that publishes it; one still uncounted is not
/// published yet), so the page's chunks are all still what that build made of them and the
/// page is reused whole. A revision stamp could not say this for a page: a chunk reused in
/// a build keeps its older origin, and a change stamped between that origin and the build's
/// revision may still have been on its way.
#[derive(Clone, Copy)]
struct PageOrigin {
    changes: u64,
    checked: bool,
}

/// When a chunk's entries were read from the slots, and whether one had an availability
/// check then. A chunk reused from an earlier snapshot keeps its origin.
#[derive(Clone, Copy)]
struct ChunkOrigin {
    read_at: u64,
    checked: bool,
}

impl ChunkOrigin {
    /// Whether what was read at this origin still shows what its slots hold, given when
    /// they last changed: nothing changed since, and no availability check (host code,
    /// read anew at every revision).
    fn still_current(&self, changed_at: &AtomicU64) -> bool {
        !self.checked && changed_at.load(Ordering::Acquire) < self.read_at
    }
}

/// The state every surface of one runtime shares.
pub(crate) struct Inner {
    pub(crate) catalog: Arc<CompiledCatalog>,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) confirmation_ttl: Duration,
    pub(crate) observer: Option<EventObserver>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) max_input_bytes: usize,
    pub(crate) abort_on_cancel: bool,
    /// One slot per capability, in catalog order.
    bindings: Box<[Mutex<Option<Arc<BoundHandler>>>]>,
    /// Per chunk of [`CapabilityList::CHUNK_LEN`] slots: the highest revision read (under
    /// the slot's lock) by an install or uninstall in it. A chunk whose entries were read at
    /// revision r reflects every change stamped below r (see [`Inner::mark_changed`]).
    chunk_changed_at: Box<[AtomicU64]>,
    /// Per page of chunks: how many installs and uninstalls its slots have had (see
    /// [`PageOrigin`]).
    page_changes: Box<[AtomicU64]>,
    next_generation: AtomicU64,
    context: Mutex<Arc<SemanticContext>>,
    revision: AtomicU64,
    snapshot: Mutex<Option<CachedSnapshot>>,
    listeners: Mutex<Arc<Vec<(u64, SharedListener)>>>,
    /// How many listeners there are, so a refresh with none takes no lock.
    listener_count: AtomicUsize,
    next_listener: AtomicU64,
    reservations: ReservationTable,
    pub(crate) confirmations: Mutex<Confirmations>,
    /// Where pending confirmations are shared with other instances, when they are.
    pub(crate) confirmation_store: Option<Arc<dyn ConfirmationStore>>,
}

impl Inner {
    // ----- bindings -----------------------------------------------------------------

    pub(crate) fn binding(&self, index: usize) -> Option<Arc<BoundHandler>> {
        self.bindings.get(index).and_then(|slot| lock(slot).clone())
    }

    /// Installs a binding unless one is present; returns its generation.
    pub(crate) fn install(
        &self,
        index: usize,
        handler: Arc<dyn Handler>,
        availability: Option<Arc<AvailabilityFn>>,
    ) -> Option<u64> {
        let slot = self.bindings.get(index)?;
        let mut slot = lock(slot);
        if slot.is_some() {
            return None;
        }
        let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
        *slot = Some(Arc::new(BoundHandler {
            generation,
            handler,
            availability,
        }));
        self.mark_changed(index);
        Some(generation)
    }

    /// Removes the binding only if it is still this generation.
    pub(crate) fn uninstall(&self, index: usize, generation: u64) -> bool {
        let Some(slot) = self.bindings.get(index) else {
            return false;
        };
        let removed = {
            let mut slot = lock(slot);
            if slot.as_ref().is_some_and(|b| b.generation == generation) {
                self.mark_changed(index);
                slot.take()
            } else {
                None
            }
        };
        // Dropped after the lock is released: the binding owns host closures, whose
        // destructors may reach back into the runtime.
        removed.is_some()
    }

    /// Stamps the chunk of slot `index` with the current revision; called with the slot's
    /// lock held, after changing it and before the refresh that publishes the change.
    ///
    /// Why a snapshot whose chunk was read at revision r may skip changes stamped below r:
    /// the build loads the revision (r) before it locks any slot. Had it locked this slot
    /// before the change did, that load would happen before the change's own load of the
    /// revision, which would then read r or more. So a stamp below r means the change held
    /// the lock first, and the build saw it. A change the build missed is stamped r or more,
    /// and its refresh makes the stamp visible to every later build.
    ///
    /// Then the change is counted in its page, after the stamp (with release ordering): a
    /// build that reads the count with it sees the stamp too.
    fn mark_changed(&self, index: usize) {
        self.mark_changed_at(index, self.revision());
    }

    /// [`mark_changed`](Self::mark_changed) with the revision it read.
    fn mark_changed_at(&self, index: usize, revision: u64) {
        let chunk = index / CapabilityList::CHUNK_LEN;
        if let Some(stamp) = self.chunk_changed_at.get(chunk) {
            stamp.fetch_max(revision, Ordering::AcqRel);
        }
        if let Some(changes) = self.page_changes.get(chunk / CapabilityList::PAGE_LEN) {
            changes.fetch_add(1, Ordering::AcqRel);
        }
    }

    // ----- context ------------------------------------------------------------------

    pub(crate) fn context(&self) -> Arc<SemanticContext> {
        lock(&self.context).clone()
    }

    pub(crate) fn replace_context(&self, context: SemanticContext) {
        *lock(&self.context) = Arc::new(context);
    }

    // ----- revision, snapshot, listeners ----------------------------------------------

    pub(crate) fn revision(&self) -> u64 {
        self.revision.load(Ordering::Acquire)
    }

    /// The reference's `refresh()`: one more revision, then every listener, synchronously.
    /// The snapshot itself is rebuilt at its next read.
    pub(crate) fn refresh(&self) {
        self.revision.fetch_add(1, Ordering::AcqRel);
        if self.listener_count.load(Ordering::Acquire) == 0 {
            return;
        }
        let listeners = lock(&self.listeners).clone();
        for (_, listener) in listeners.iter() {
            // "A diagnostic subscriber must not break application behavior."
            let _ = contain(|| listener());
        }
    }

    pub(crate) fn snapshot(&self) -> Arc<ApplicationSnapshot> {
        let revision = self.revision();
        let previous = match lock(&self.snapshot).as_ref() {
            Some(cached) if cached.snapshot.revision >= revision => {
                return cached.snapshot.clone();
            }
            cached => cached.cloned(),
        };
        // Built without holding a lock: availability checks are host code and may read
        // the snapshot themselves.
        let built = self.build_snapshot(revision, previous);
        let mut cache = lock(&self.snapshot);
        match cache.as_ref() {
            Some(cached) if cached.snapshot.revision >= revision => cached.snapshot.clone(),
            _ => {
                let snapshot = built.snapshot.clone();
                // Cache only what is still current, so one revision has one snapshot.
                if self.revision() == revision {
                    *cache = Some(built);
                }
                snapshot
            }
        }
    }

    /// The snapshot at `revision`, sharing with `previous` every chunk that shows the same
    /// thing: same context (relevance), no slot change since the chunk was read, and no
    /// availability check (host code, re-read at every revision); a page none of whose slots
    /// changed since the previous build (its change count is the same) is shared whole. The
    /// others are read anew.
    fn build_snapshot(&self, revision: u64, previous: Option<CachedSnapshot>) -> CachedSnapshot {
        let context = self.context();
        // Entries depend on the context through their relevance only: an equal context (set
        // again, or the same `Arc`) keeps every entry it allows to be kept.
        let previous = previous.filter(|p| *p.snapshot.context == *context);
        let mut list = CapabilityList::builder(previous.as_ref().map(|p| &p.snapshot.capabilities));
        let mut origins = Vec::with_capacity(self.chunk_changed_at.len());
        let mut page_origins = Vec::with_capacity(self.page_changes.len());
        for (page, page_changes) in self.page_changes.iter().enumerate() {
            let first = page * CapabilityList::PAGE_LEN;
            let last = (first + CapabilityList::PAGE_LEN).min(self.chunk_changed_at.len());
            // Read before any chunk of the page is looked at: a change counted after this is
            // seen by every build at or after its refresh's revision, which then finds
            // another count and goes chunk by chunk.
            let changes = page_changes.load(Ordering::Acquire);
            // A page with no change since the previous build and no availability check:
            // taken over whole.
            if let Some(previous) = &previous
                && let Some(origin) = previous.pages.get(page)
                && !origin.checked
                && origin.changes == changes
                && let Some(chunk_origins) = previous.chunks.get(first..last)
                && list.reuse_page()
            {
                origins.extend_from_slice(chunk_origins);
                page_origins.push(*origin);
                continue;
            }
            for at in first..last {
                if let Some(previous) = &previous
                    && let Some(origin) = previous.chunks.get(at)
                    && origin.still_current(&self.chunk_changed_at[at])
                    && list.reuse_chunk()
                {
                    origins.push(*origin);
                    continue;
                }
                let start = at * CapabilityList::CHUNK_LEN;
                let end = (start + CapabilityList::CHUNK_LEN).min(self.catalog.capabilities.len());
                let mut checked = false;
                let chunk = self.catalog.capabilities[start..end]
                    .iter()
                    .enumerate()
                    .map(|(offset, capability)| {
                        let binding = self.binding(start + offset);
                        checked |= binding.as_ref().is_some_and(|b| b.availability.is_some());
                        let availability = binding.as_ref().map(|b| b.availability());
                        capability_entry(capability, binding.is_some(), availability, &context)
                    })
                    .collect();
                list.push_chunk(chunk);
                origins.push(ChunkOrigin {
                    read_at: revision,
                    checked,
                });
            }
            page_origins.push(PageOrigin {
                changes,
                checked: origins[first..].iter().any(|origin| origin.checked),
            });
        }
        CachedSnapshot {
            snapshot: Arc::new(ApplicationSnapshot::new(
                revision,
                self.catalog.application.clone(),
                self.catalog.scopes.clone(),
                context,
                list.finish(),
            )),
            chunks: origins.into(),
            pages: page_origins.into(),
        }
    }

    fn subscribe(self: &Arc<Self>, listener: Listener) -> Subscription {
        let id = self.next_listener.fetch_add(1, Ordering::Relaxed);
        {
            let mut listeners = lock(&self.listeners);
            Arc::make_mut(&mut listeners).push((id, Arc::from(listener)));
            self.listener_count
                .store(listeners.len(), Ordering::Release);
        }
        let weak = Arc::downgrade(self);
        Subscription::new(move || {
            if let Some(inner) = weak.upgrade() {
                let removed = {
                    let mut listeners = lock(&inner.listeners);
                    let list = Arc::make_mut(&mut listeners);
                    let removed = list
                        .iter()
                        .position(|(other, _)| *other == id)
                        .map(|at| list.remove(at));
                    inner
                        .listener_count
                        .store(listeners.len(), Ordering::Release);
                    removed
                };
                // The listener is host code: drop it only after the lock is released.
                drop(removed);
            }
        })
    }

    // ----- reservations -----------------------------------------------------------------

    /// Reserves an invocation id for the length of a call ([`Reservation::into_shared`]
    /// for longer), or gives the claim back if the id is in use.
    pub(crate) fn reserve(&self, claim: Claim) -> Result<Reservation<'_>, Claim> {
        Reservation::take(&self.reservations, claim)
    }

    // ----- events -------------------------------------------------------------------

    pub(crate) fn emit(
        &self,
        invocation_id: &str,
        capability_id: &str,
        phase: EventPhase,
        error_code: Option<ErrorCode>,
    ) {
        tracing::debug!(
            target: "rcip::event",
            invocation_id,
            capability_id,
            phase = phase.as_str(),
            error_code = error_code.map_or("", ErrorCode::as_str),
        );
        if let Some(observer) = &self.observer {
            let event = RuntimeEvent::new(
                self.clock.now_ms(),
                invocation_id,
                capability_id,
                phase,
                error_code,
            );
            let _ = contain(|| observer(&event));
        }
    }
}

/// One capability's snapshot entry: shared contract plus live facts.
pub(crate) fn capability_entry(
    capability: &CompiledCapability,
    bound: bool,
    availability: Option<Availability>,
    context: &SemanticContext,
) -> CapabilitySnapshot {
    CapabilitySnapshot::new(
        capability.contract.clone(),
        bound,
        availability,
        context.relevance_of(&capability.contract.scope_ids),
    )
}

/// An RCIP runtime: one catalog's bindings, context, revision, confirmations and listeners.
///
/// Hand [`client`](Self::client) to tools and keep [`host`](Self::host) in trusted
/// application code.
///
/// ```
/// use rcip_runtime::*;
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
/// let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
///     CapabilityDefinition::new("notes.count", Effect::Read, "Count notes", "Counts the notes.")
///         .output_schema(json!({"type": "integer"})),
/// );
/// let runtime = Runtime::new(definition, RuntimeOptions::default())?;
/// let _guard = runtime.host().bind(
///     "notes.count",
///     Binding::new(|_input, _ctx| async { Ok::<_, HandlerError>(json!(3)) }),
/// )?;
/// let outcome = runtime.client().invoke(InvocationRequest::new("notes.count", json!({}))).await;
/// assert_eq!(outcome.output(), Some(&json!(3)));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Runtime {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("application", &self.inner.catalog.application.id)
            .field("capabilities", &self.inner.catalog.len())
            .field("revision", &self.inner.revision())
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Validates and compiles a definition, then creates a runtime from it.
    ///
    /// # Errors
    ///
    /// [`Error::Definition`](crate::Error::Definition) for an invalid definition;
    /// [`Error::Unbound`](crate::Error::Unbound) with
    /// [`RuntimeOptions::require_all_bound`] and any capability (nothing is bound yet: use
    /// [`with_bindings`](Self::with_bindings)).
    pub fn new(
        definition: ApplicationDefinition,
        options: RuntimeOptions,
    ) -> Result<Self, crate::Error> {
        let required = options.require_all_bound;
        let runtime = Self::from_catalog(CompiledCatalog::compile(definition)?, options);
        if required {
            runtime.check_bound()?;
        }
        Ok(runtime)
    }

    /// Checks that every declared capability has a live binding.
    ///
    /// # Errors
    ///
    /// [`Error::Unbound`](crate::Error::Unbound) with the unbound ids, in catalog order.
    pub fn check_bound(&self) -> Result<(), crate::Error> {
        let unbound: Vec<String> = self
            .inner
            .catalog
            .capabilities
            .iter()
            .enumerate()
            .filter(|(index, _)| self.inner.binding(*index).is_none())
            .map(|(_, capability)| capability.contract.id.clone())
            .collect();
        if unbound.is_empty() {
            Ok(())
        } else {
            Err(crate::Error::Unbound(unbound))
        }
    }

    /// Creates a runtime from an already compiled catalog: no schema work at all.
    #[must_use]
    pub fn from_catalog(catalog: Arc<CompiledCatalog>, options: RuntimeOptions) -> Self {
        let bindings = (0..catalog.len()).map(|_| Mutex::new(None)).collect();
        let chunk_count = catalog.len().div_ceil(CapabilityList::CHUNK_LEN);
        let zeros = |count: usize| (0..count).map(|_| AtomicU64::new(0)).collect();
        let chunk_changed_at = zeros(chunk_count);
        let page_changes = zeros(chunk_count.div_ceil(CapabilityList::PAGE_LEN));
        Runtime {
            inner: Arc::new(Inner {
                catalog,
                policy: options.policy,
                confirmation_ttl: options.confirmation_ttl,
                observer: options.on_event,
                clock: options.clock,
                max_input_bytes: options.max_input_bytes,
                abort_on_cancel: options.abort_on_cancel,
                bindings,
                chunk_changed_at,
                page_changes,
                next_generation: AtomicU64::new(1),
                context: Mutex::new(Arc::new(SemanticContext::default())),
                revision: AtomicU64::new(0),
                snapshot: Mutex::new(None),
                listeners: Mutex::new(Arc::new(Vec::new())),
                listener_count: AtomicUsize::new(0),
                next_listener: AtomicU64::new(0),
                reservations: ReservationTable::default(),
                confirmations: Mutex::new(Confirmations::default()),
                confirmation_store: options.confirmation_store,
            }),
        }
    }

    /// The client surface, for tools.
    #[must_use]
    pub fn client(&self) -> Arc<dyn RcipClient> {
        Arc::new(Client {
            inner: self.inner.clone(),
        })
    }

    pub(crate) fn from_inner(inner: Arc<Inner>) -> Self {
        Runtime { inner }
    }

    /// The compiled catalog.
    #[must_use]
    pub fn catalog(&self) -> &Arc<CompiledCatalog> {
        &self.inner.catalog
    }
}

/// The runtime's own [`RcipClient`].
struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RcipClient")
            .field("application", &self.inner.catalog.application.id)
            .field("revision", &self.inner.revision())
            .finish_non_exhaustive()
    }
}

impl RcipClient for Client {
    fn get_snapshot(&self) -> Arc<ApplicationSnapshot> {
        self.inner.snapshot()
    }

    fn subscribe_boxed(&self, listener: Listener) -> Subscription {
        self.inner.subscribe(listener)
    }

    fn invoke(&self, request: InvocationRequest) -> BoxFuture<InvocationOutcome> {
        let inner = self.inner.clone();
        // The invocation's span (a trace's step between the transport's and the handler's
        // store calls); its lifecycle events (`rcip::event`) land in it. Disabled, it costs
        // one interest check here and on each poll.
        let span = tracing::debug_span!(
            target: "rcip::runtime",
            "invocation",
            otel.name = %request.capability_id,
            rcip.capability = %request.capability_id,
        );
        // Steps 1–4 on the first poll, then the pipeline held in this future itself.
        // A request filed under a key whose confirmation is pending or answered (shared
        // confirmations only) gets that.
        let key = inner
            .confirmation_store
            .as_ref()
            .and_then(|_| request.extensions().get::<crate::ConfirmationKey>())
            .map(|key| Arc::clone(&key.0));
        Box::pin(
            async move {
                if let Some(key) = key
                    && let Some(answer) = Box::pin(inner.filed_answer(&key)).await
                {
                    return answer;
                }
                // Taken apart before the await, so this future does not keep the admission's
                // result beside the pipeline's.
                let (attempt, input) = match inner.admit(request) {
                    Ok(admitted) => admitted,
                    Err(outcome) => return outcome,
                };
                inner.run(attempt, input).await
            }
            .instrument(span),
        )
    }

    fn preflight(&self, batch: PreflightBatch) -> BoxFuture<Result<PreflightReport, crate::Error>> {
        let inner = self.inner.clone();
        Box::pin(async move { inner.preflight(batch).await })
    }

    fn surfaces(&self) -> ClientSurfaces {
        ClientSurfaces::new().with_preflight(PreflightSurface::new(PREFLIGHT_MAX_PROPOSALS))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{Binding, CapabilityDefinition, HandlerError, InvocationContext};
    use rcip_core::{ApplicationDefinition, Effect};
    use serde_json::Value;

    fn binding() -> Binding {
        Binding::new(|_input: Value, _context: InvocationContext| async {
            Ok::<_, HandlerError>(Value::Null)
        })
    }

    /// A change that read the revision before another change's refresh, and stamped and
    /// counted itself only after a snapshot was built at that refresh's revision, shows in
    /// the snapshot after its own refresh: its page, in which that snapshot reused the
    /// change's chunk (from before the change), is not taken over whole afterwards. The
    /// interleaving is played step by step on one thread, with the late change's steps
    /// written out (`install`'s slot write, then its stamp with the revision it read).
    #[test]
    fn a_change_stamped_late_shows_at_its_own_refresh() {
        let mut definition = ApplicationDefinition::new("app", "App", "An application.");
        for i in 0..40 {
            definition = definition.capability(CapabilityDefinition::new(
                format!("app.c{i:02}"),
                Effect::Read,
                "Title",
                "Description.",
            ));
        }
        let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
        let (inner, host, client) = (&runtime.inner, runtime.host(), runtime.client());
        // One page: the late change at 0 (chunk 0), the other at 20 (chunk 1).
        let (late, other) = (0, CapabilityList::CHUNK_LEN + 4);
        host.bind("app.c01", binding()).unwrap().keep();
        // Chunk 0 read at a revision after its last stamp, then reused by a later build.
        let _ = client.get_snapshot();
        host.refresh();
        let _ = client.get_snapshot();

        // The late change writes its slot and reads the revision... (`install` would hold
        // the slot's lock until its stamp; on one thread the build below would then wait
        // for it if it read the slot, so the lock is released here and the build is
        // checked to have reused the chunk instead.)
        let read = {
            let handler = binding();
            *lock(&inner.bindings[late]) = Some(Arc::new(BoundHandler {
                generation: u64::MAX,
                handler: handler.handler,
                availability: handler.availability,
            }));
            inner.revision()
        };
        // ...another change is made and published, and a snapshot is read...
        host.bind(&format!("app.c{other}"), binding())
            .unwrap()
            .keep();
        let between = client.get_snapshot();
        assert!(between.capabilities[other].bound);
        // The case in question: that build reused the late change's chunk, from before it.
        assert!(!between.capabilities[late].bound);
        let reused_from = lock(&inner.snapshot).as_ref().unwrap().chunks[0].read_at;
        assert!(reused_from < between.revision);
        // ...then the late change stamps itself and is published.
        inner.mark_changed_at(late, read);
        inner.refresh();
        let after = client.get_snapshot();
        assert!(after.revision > between.revision);
        assert!(
            after.capabilities[late].bound,
            "the late change is published"
        );
        assert!(after.capabilities[other].bound);
        assert!(after.capabilities[1].bound);
    }
}
