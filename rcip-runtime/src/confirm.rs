//! Confirmation tickets (reference section 3.6): issued when policy asks, single use,
//! invalidated by expiry, cancellation, a change of binding or of context; receipts of
//! tickets that ended on their own are kept (at most 256) and read once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Weak};

use rcip_core::{
    ConfirmationInfo, ErrorCode, EventPhase, InvocationOutcome, RcipError, SemanticContext,
};
use serde_json::Value;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::invoke::{Attempt, Ready, messages as m};
use crate::runtime::{Inner, Reservation};
use crate::support::{lock, new_confirmation_id, next_invocation_id};

/// How many receipts of tickets that ended on their own are kept.
pub const MAX_CONFIRMATION_RECEIPTS: usize = 256;

/// A ticket waiting for the host.
struct Pending {
    invocation_id: Arc<str>,
    capability_id: String,
    input: Arc<Value>,
    cancellation: Option<CancellationToken>,
    /// Holds the invocation id until the ticket ends.
    reservation: Reservation,
    binding_generation: u64,
    index: usize,
    context: Arc<SemanticContext>,
    expires_at: u64,
    watcher: Option<AbortHandle>,
}

impl Pending {
    fn stop_watching(&mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
    }
}

/// Pending tickets and receipts.
#[derive(Default)]
pub(crate) struct Confirmations {
    pending: HashMap<String, Pending>,
    receipts: HashMap<String, InvocationOutcome>,
    receipt_order: VecDeque<String>,
}

impl Confirmations {
    fn store_receipt(&mut self, id: String, outcome: InvocationOutcome) {
        self.receipt_order.push_back(id.clone());
        self.receipts.insert(id, outcome);
        while self.receipt_order.len() > MAX_CONFIRMATION_RECEIPTS {
            if let Some(oldest) = self.receipt_order.pop_front() {
                self.receipts.remove(&oldest);
            }
        }
    }

    fn take_receipt(&mut self, id: &str) -> Option<InvocationOutcome> {
        let outcome = self.receipts.remove(id)?;
        self.receipt_order.retain(|other| other != id);
        Some(outcome)
    }
}

/// Why a ticket ended on its own.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Expired,
    Aborted,
}

impl Inner {
    /// Step 8: store the captured request, start the expiry/cancellation watcher, emit
    /// `confirmation_requested`. The invocation id stays reserved.
    pub(crate) fn issue_confirmation(
        self: &Arc<Self>,
        attempt: Attempt,
        input: Arc<Value>,
        ready: &Ready,
        reason: Option<String>,
        reservation: Reservation,
    ) -> InvocationOutcome {
        let capability = &self.catalog.capabilities[ready.index];
        let id = new_confirmation_id();
        let ttl = self.confirmation_ttl;
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let expires_at = self.clock.now_ms().saturating_add(ttl_ms);
        let confirmation = ConfirmationInfo {
            id: id.clone(),
            title: capability.title.to_string(),
            description: reason.unwrap_or_else(|| capability.description.to_string()),
            effect: capability.effect,
            expires_at,
        };
        let outcome = InvocationOutcome::ConfirmationRequired {
            invocation_id: attempt.invocation_id.to_string(),
            capability_id: attempt.capability_id.clone(),
            confirmation,
        };
        let token = attempt.cancellation.clone();
        lock(&self.confirmations).pending.insert(
            id.clone(),
            Pending {
                invocation_id: attempt.invocation_id.clone(),
                capability_id: attempt.capability_id.clone(),
                input,
                cancellation: attempt.cancellation,
                reservation,
                binding_generation: ready.binding.generation,
                index: ready.index,
                context: ready.context.clone(),
                expires_at,
                watcher: None,
            },
        );
        // The watcher needs a tokio runtime; without one, expiry is still enforced when
        // the host resolves, and cancellation by the re-run's checks.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let watcher = handle
                .spawn(watch(Arc::downgrade(self), id.clone(), ttl, token))
                .abort_handle();
            let mut table = lock(&self.confirmations);
            match table.pending.get_mut(&id) {
                Some(pending) => pending.watcher = Some(watcher),
                None => watcher.abort(),
            }
        }
        self.emit(
            &attempt.invocation_id,
            &attempt.capability_id,
            EventPhase::ConfirmationRequested,
            None,
        );
        outcome
    }

    /// Ends a ticket by timer or cancellation: releases the id, emits `failed`, keeps a
    /// receipt.
    fn end_pending(&self, id: &str, ending: Ending) {
        let (code, message) = match ending {
            Ending::Expired => (ErrorCode::ConfirmationExpired, m::EXPIRED),
            Ending::Aborted => (ErrorCode::ExecutionAborted, m::ABORTED),
        };
        let mut table = lock(&self.confirmations);
        let Some(mut pending) = table.pending.remove(id) else {
            return;
        };
        pending.stop_watching();
        let outcome = InvocationOutcome::from_error(
            pending.invocation_id.to_string(),
            pending.capability_id.clone(),
            RcipError::new(code, message),
        );
        table.store_receipt(id.to_owned(), outcome);
        drop(table);
        drop(pending.reservation);
        self.emit(
            &pending.invocation_id,
            &pending.capability_id,
            EventPhase::Failed,
            Some(code),
        );
    }

    /// `host.resolveConfirmation`.
    pub(crate) async fn resolve_confirmation(
        self: &Arc<Self>,
        id: &str,
        approved: bool,
    ) -> InvocationOutcome {
        // 1. Take the ticket; its id is released here.
        let taken = {
            let mut table = lock(&self.confirmations);
            match table.pending.remove(id) {
                Some(pending) => Ok(pending),
                None => Err(table.take_receipt(id)),
            }
        };
        let mut pending = match taken {
            Ok(pending) => pending,
            // 2. A receipt is returned once; otherwise NOT_FOUND, with no event.
            Err(Some(receipt)) => return receipt,
            Err(None) => {
                return InvocationOutcome::from_error(
                    next_invocation_id(self.clock.now_ms(), str::to_owned),
                    "unknown".to_owned(),
                    RcipError::new(ErrorCode::ConfirmationNotFound, m::CONFIRMATION_NOT_FOUND),
                );
            }
        };
        pending.stop_watching();
        drop(pending.reservation);
        let attempt = Attempt {
            invocation_id: pending.invocation_id,
            capability_id: pending.capability_id,
            cancellation: pending.cancellation,
            confirmed: true,
        };

        // 3. Declined: its own event phase, no receipt.
        if !approved {
            let error = RcipError::new(ErrorCode::ConfirmationDeclined, m::DECLINED);
            self.emit(
                &attempt.invocation_id,
                &attempt.capability_id,
                EventPhase::ConfirmationDeclined,
                Some(error.code),
            );
            return InvocationOutcome::from_error(
                attempt.invocation_id.to_string(),
                attempt.capability_id,
                error,
            );
        }
        // 4. Expired, though the timer has not fired yet.
        if self.clock.now_ms() > pending.expires_at {
            return self.fail(
                &attempt,
                RcipError::new(ErrorCode::ConfirmationExpired, m::EXPIRED),
            );
        }
        // 5. The binding or the context changed while the ticket was pending.
        let same_binding = self
            .binding(pending.index)
            .is_some_and(|b| b.generation == pending.binding_generation);
        if !same_binding || *self.context() != *pending.context {
            return self.fail(
                &attempt,
                RcipError::new(ErrorCode::PolicyDenied, m::CHANGED_WHILE_PENDING),
            );
        }
        // 6. The whole pipeline again, confirmed, with the same invocation id.
        let Some(reservation) = self.reserve(&attempt.invocation_id) else {
            return InvocationOutcome::from_error(
                attempt.invocation_id.to_string(),
                attempt.capability_id,
                RcipError::new(ErrorCode::InvocationAlreadyActive, m::ALREADY_ACTIVE),
            );
        };
        self.run(attempt, pending.input, reservation).await
    }
}

/// Ends a ticket when it expires or its invocation is cancelled, whichever comes first.
async fn watch(
    inner: Weak<Inner>,
    id: String,
    ttl: std::time::Duration,
    token: Option<CancellationToken>,
) {
    let ending = match token {
        Some(token) => tokio::select! {
            () = tokio::time::sleep(ttl) => Ending::Expired,
            () = token.cancelled() => Ending::Aborted,
        },
        None => {
            tokio::time::sleep(ttl).await;
            Ending::Expired
        }
    };
    if let Some(inner) = inner.upgrade() {
        inner.end_pending(&id, ending);
    }
}
