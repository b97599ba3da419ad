//! The table of pending confirmation tickets and the receipts of those that ended on their
//! own: plain data, which the confirmation flow (`confirm.rs`) and the runtime's `Inner` hold
//! and change.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use rcip_core::{ConfirmationInfo, InvocationOutcome, SemanticContext};
use serde_json::Value;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::extensions::Extensions;
use crate::reservation::Reservation;

/// How many receipts of tickets that ended on their own are kept.
pub const MAX_CONFIRMATION_RECEIPTS: usize = 256;

/// A ticket waiting for the host.
pub(crate) struct Pending {
    /// What the outcome told the caller.
    pub(crate) info: ConfirmationInfo,
    pub(crate) capability_id: String,
    pub(crate) input: Arc<Value>,
    pub(crate) cancellation: Option<CancellationToken>,
    /// The original request's extensions, for the confirmed re-run.
    pub(crate) extensions: Extensions,
    /// Holds the invocation id until the ticket ends.
    pub(crate) reservation: Reservation<'static>,
    pub(crate) binding_generation: u64,
    pub(crate) index: usize,
    pub(crate) context: Arc<SemanticContext>,
    pub(crate) expires_at: u64,
    pub(crate) watcher: Watcher,
    /// Counts the ticket in the `rcip_pending_confirmations` gauge while it lives.
    pub(crate) _counted: Counted,
}

/// One pending ticket in the process's `rcip_pending_confirmations` gauge (every runtime's
/// tickets, added up): counted when made, counted off when dropped, however the ticket
/// ends. With the `metrics` feature off it is nothing; on, with no recorder installed, an
/// atomic load.
pub(crate) struct Counted;

impl Counted {
    pub(crate) fn new() -> Self {
        #[cfg(feature = "metrics")]
        metrics::gauge!("rcip_pending_confirmations").increment(1.0);
        Self
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        #[cfg(feature = "metrics")]
        metrics::gauge!("rcip_pending_confirmations").decrement(1.0);
    }
}

impl Pending {
    /// Its invocation was cancelled (the ticket has ended, whether or not its watcher ran).
    pub(crate) fn cancelled(&self) -> bool {
        self.cancellation
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }
}

/// The task that ends a ticket at expiry or cancellation; stopped when the ticket goes,
/// however it goes (resolved, ended, or the runtime dropped).
#[derive(Default)]
pub(crate) struct Watcher(pub(crate) Option<AbortHandle>);

impl Drop for Watcher {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// Pending tickets and receipts.
#[derive(Default)]
pub(crate) struct Confirmations {
    pub(crate) pending: HashMap<String, Pending>,
    pub(crate) receipts: HashMap<String, InvocationOutcome>,
    pub(crate) receipt_order: VecDeque<String>,
}

impl Confirmations {
    pub(crate) fn store_receipt(&mut self, id: String, outcome: InvocationOutcome) {
        self.receipt_order.push_back(id.clone());
        self.receipts.insert(id, outcome);
        while self.receipt_order.len() > MAX_CONFIRMATION_RECEIPTS {
            if let Some(oldest) = self.receipt_order.pop_front() {
                self.receipts.remove(&oldest);
            }
        }
    }

    pub(crate) fn take_receipt(&mut self, id: &str) -> Option<InvocationOutcome> {
        let outcome = self.receipts.remove(id)?;
        self.receipt_order.retain(|other| other != id);
        Some(outcome)
    }
}
