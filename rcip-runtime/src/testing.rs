//! Helpers for testing capabilities, policies and tools against a real [`Runtime`](crate::Runtime)
//! (feature `testing`): a [`Gate`] that holds host code in flight until the test releases it,
//! a [`ManualClock`] the test moves by hand, an [`EventRecorder`] for runtime events, and
//! outcome assertions by code ([`assert_succeeded`], [`assert_error`],
//! [`assert_confirmation`]).
//!
//! ```
//! use std::sync::Arc;
//! use rcip_runtime::testing::{Gate, assert_error, assert_succeeded};
//! use rcip_runtime::*;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
//! let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
//!     CapabilityDefinition::new("notes.count", Effect::Read, "Count notes", "Counts the notes.")
//!         .output_schema(json!({"type": "integer"})),
//! );
//! let runtime = Runtime::new(definition, RuntimeOptions::default())?;
//! let gate = Gate::closed();
//! let held = gate.clone();
//! let _binding = runtime.host().bind("notes.count", Binding::new(move |_input, _ctx| {
//!     let held = held.clone();
//!     async move {
//!         held.pass().await; // the handler waits here until the test releases it
//!         Ok::<_, HandlerError>(json!(3))
//!     }
//! }))?;
//! let client = runtime.client();
//! let request = InvocationRequest::new("notes.count", json!({})).with_id("first");
//! let running = tokio::spawn({
//!     let client = client.clone();
//!     async move { client.invoke(request).await }
//! });
//! gate.entered().await;
//! // While the first call is in flight, its id is taken.
//! let again = client.invoke(InvocationRequest::new("notes.count", json!({})).with_id("first")).await;
//! assert_error(&again, ErrorCode::InvocationAlreadyActive);
//! gate.release();
//! assert_eq!(assert_succeeded(&running.await.unwrap()), &json!(3));
//! # Ok(()) }
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rcip_core::{
    ConfirmationInfo, ErrorCode, EventPhase, InvocationOutcome, OutcomeStatus, RcipError,
    RuntimeEvent,
};
use serde_json::Value;
use tokio::sync::Notify;

use crate::support::{Clock, lock};

/// Holds host code (a handler, an async policy, an availability check's caller) at a known
/// point until the test releases it.
///
/// Host code calls [`pass`](Self::pass); the test waits for [`entered`](Self::entered), looks
/// at the state while the call is in flight, then [`release`](Self::release)s one waiter or
/// [`open`](Self::open)s the gate for good. Permits are kept: a release before the host code
/// arrives lets it through at once, and an arrival before the test waits is not missed.
#[derive(Debug, Default)]
pub struct Gate {
    entered: Notify,
    release: Notify,
    open: AtomicBool,
    arrivals: AtomicUsize,
}

impl Gate {
    /// A closed gate, shared.
    #[must_use]
    pub fn closed() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// An open gate: [`pass`](Self::pass) never waits (arrivals are still counted).
    #[must_use]
    pub fn opened() -> Arc<Self> {
        let gate = Self::default();
        gate.open.store(true, Ordering::SeqCst);
        Arc::new(gate)
    }

    /// Called by host code: announces the arrival, then waits until released (or returns at
    /// once when the gate is open).
    pub async fn pass(&self) {
        self.arrivals.fetch_add(1, Ordering::SeqCst);
        self.entered.notify_one();
        if !self.open.load(Ordering::SeqCst) {
            self.release.notified().await;
        }
    }

    /// Waits until host code has arrived at the gate (once per arrival).
    pub async fn entered(&self) {
        self.entered.notified().await;
    }

    /// Lets one waiting (or the next arriving) caller through.
    pub fn release(&self) {
        self.release.notify_one();
    }

    /// Opens the gate for good: every waiting caller and every later one passes.
    pub fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
        self.release.notify_waiters();
    }

    /// How many times host code has arrived.
    #[must_use]
    pub fn arrivals(&self) -> usize {
        self.arrivals.load(Ordering::SeqCst)
    }
}

/// A [`Clock`] the test moves by hand (milliseconds since the Unix epoch).
///
/// ```
/// use rcip_runtime::Clock;
/// use rcip_runtime::testing::ManualClock;
/// let clock = ManualClock::at(1_000);
/// clock.advance(500);
/// assert_eq!(clock.now_ms(), 1_500);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock reading `ms`, shared.
    #[must_use]
    pub fn at(ms: u64) -> Arc<Self> {
        Arc::new(Self(AtomicU64::new(ms)))
    }

    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock to `ms`.
    pub fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Records every [`RuntimeEvent`] the runtime emits; pass
/// [`observer`](Self::observer) to [`RuntimeOptions::on_event`](crate::RuntimeOptions::on_event).
#[derive(Debug, Clone, Default)]
pub struct EventRecorder(Arc<Mutex<Vec<RuntimeEvent>>>);

impl EventRecorder {
    /// An observer that appends to this recorder.
    pub fn observer(&self) -> impl Fn(&RuntimeEvent) + Send + Sync + 'static {
        let events = self.0.clone();
        move |event| lock(&events).push(event.clone())
    }

    /// Every event so far, in order.
    #[must_use]
    pub fn events(&self) -> Vec<RuntimeEvent> {
        lock(&self.0).clone()
    }

    /// `(phase, error code)` of every event so far, for one invocation id or all (`None`).
    #[must_use]
    pub fn phases(&self, invocation_id: Option<&str>) -> Vec<(EventPhase, Option<ErrorCode>)> {
        lock(&self.0)
            .iter()
            .filter(|e| invocation_id.is_none_or(|id| e.invocation_id == id))
            .map(|e| (e.phase, e.error_code))
            .collect()
    }

    /// Forgets every event so far.
    pub fn clear(&self) {
        lock(&self.0).clear();
    }
}

/// Asserts that `outcome` succeeded and returns its output.
///
/// # Panics
///
/// When it did not, with the outcome's JSON in the message.
#[track_caller]
pub fn assert_succeeded(outcome: &InvocationOutcome) -> &Value {
    match outcome.output() {
        Some(output) if outcome.status() == OutcomeStatus::Succeeded => output,
        _ => panic!("expected a success, got {}", shown(outcome)),
    }
}

/// Asserts that `outcome` carries the error `code` (failed or denied) and returns the error.
///
/// # Panics
///
/// When it carries another code or none, with the outcome's JSON in the message.
#[track_caller]
pub fn assert_error(outcome: &InvocationOutcome, code: ErrorCode) -> &RcipError {
    match outcome.error() {
        Some(error) if error.code == code => error,
        _ => panic!("expected {code}, got {}", shown(outcome)),
    }
}

/// Asserts that `outcome` asks for confirmation and returns the ticket.
///
/// # Panics
///
/// When it does not, with the outcome's JSON in the message.
#[track_caller]
pub fn assert_confirmation(outcome: &InvocationOutcome) -> &ConfirmationInfo {
    match outcome.confirmation() {
        Some(ticket) => ticket,
        None => panic!("expected a confirmation request, got {}", shown(outcome)),
    }
}

fn shown(outcome: &InvocationOutcome) -> String {
    serde_json::to_string(outcome).unwrap_or_else(|_| format!("{outcome:?}"))
}
