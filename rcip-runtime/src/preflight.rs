//! Preflight (reference section 5): advisory readiness of 1–16 independent proposals,
//! checked concurrently. No handler runs, no id is reserved, no ticket is created, no event
//! is emitted.
//!
//! The proposals are checked one after another up to their policy's answer, synchronously,
//! so every policy is called (in proposal order) before any answer is awaited; only the
//! proposals whose policy answers asynchronously are then awaited, together. With a
//! synchronous policy no future exists per proposal and nothing is allocated beyond the
//! outcomes.

use std::sync::Arc;

use futures_util::future::join_all;
use rcip_core::{
    Effect, ErrorCode, MAX_IDENTIFIER_LENGTH, PREFLIGHT_MAX_PROPOSALS, PREFLIGHT_MIN_PROPOSALS,
    PreflightOutcome, PreflightReport, RcipError,
};

use crate::client::PreflightBatch;
use crate::input::Detached;
use crate::invoke::{Ask, ReadinessInput, Ready, SeenContext, Start, messages as m};
use crate::policy::{PolicyDecision, PolicyPhase};
use crate::runtime::Inner;
use crate::support::clip;

/// The protocol's bounds on a preflight batch (1 to 16 proposals).
pub(crate) fn check_batch_size(proposals: usize) -> Result<(), crate::Error> {
    if (PREFLIGHT_MIN_PROPOSALS..=PREFLIGHT_MAX_PROPOSALS).contains(&proposals) {
        Ok(())
    } else {
        Err(crate::Error::PreflightBatchSize(proposals))
    }
}

impl Inner {
    pub(crate) async fn preflight(
        self: &Arc<Self>,
        batch: PreflightBatch,
    ) -> Result<PreflightReport, crate::Error> {
        check_batch_size(batch.requests.len())?;
        let start_revision = self.revision();
        // Read once for the batch (after the revision, as `SeenContext` requires).
        let seen = SeenContext {
            revision: start_revision,
            context: self.context(),
        };
        let ask = Ask {
            token: batch.cancellation.as_ref(),
            extensions: &batch.extensions,
            phase: PolicyPhase::Preflight,
            confirmed: false,
            seen: Some(&seen),
        };
        let mut outcomes = Vec::with_capacity(batch.requests.len());
        // (slot in `outcomes`, capability id, the check waiting on its policy); allocated
        // only if some policy answers asynchronously.
        let mut waiting = Vec::new();
        for proposal in batch.requests {
            let capability_id = clip(proposal.capability_id, MAX_IDENTIFIER_LENGTH);
            let Some(input) = proposal.input.into_detached(self.max_input_bytes) else {
                outcomes.push(PreflightOutcome::Blocked {
                    capability_id,
                    error: RcipError::new(ErrorCode::InputInvalid, m::PROPOSAL_NOT_JSON),
                });
                continue;
            };
            // A shared input stays shared: the policy gets a reference count, no copy.
            let shared;
            let input = match input {
                Detached::Owned(value) => ReadinessInput::Owned(value),
                Detached::Shared(value) => {
                    shared = value;
                    ReadinessInput::Shared(&shared)
                }
            };
            match self.readiness_start(self.catalog.position(&capability_id), input, &ask) {
                Start::Done(result) => outcomes.push(self.proposal_outcome(capability_id, result)),
                Start::Pending(pending) => {
                    waiting.push((outcomes.len(), capability_id, pending));
                    // A placeholder (no allocation), replaced once the policy answers.
                    outcomes.push(PreflightOutcome::Ready {
                        capability_id: String::new(),
                        effect: Effect::Read,
                    });
                }
            }
        }
        if !waiting.is_empty() {
            let token = ask.token;
            let settled = join_all(waiting.into_iter().map(
                |(slot, capability_id, pending)| async move {
                    let result = self.readiness_finish(pending, token).await;
                    (slot, capability_id, result)
                },
            ))
            .await;
            for (slot, capability_id, result) in settled {
                outcomes[slot] = self.proposal_outcome(capability_id, result);
            }
        }

        let consistent = self.revision() == start_revision;
        if !consistent {
            for outcome in &mut outcomes {
                if let PreflightOutcome::Ready { capability_id, .. }
                | PreflightOutcome::ConfirmationRequired { capability_id, .. } = outcome
                {
                    *outcome = PreflightOutcome::Blocked {
                        capability_id: std::mem::take(capability_id),
                        error: RcipError::new(ErrorCode::PreflightStale, m::PREFLIGHT_STALE),
                    };
                }
            }
        }
        Ok(PreflightReport::new(
            start_revision,
            self.clock.now_ms(),
            consistent,
            outcomes,
        ))
    }

    /// One proposal's outcome from its readiness.
    fn proposal_outcome(
        &self,
        capability_id: String,
        ready: Result<Ready, RcipError>,
    ) -> PreflightOutcome {
        let ready = match ready {
            Ok(ready) => ready,
            Err(error) => {
                return PreflightOutcome::Blocked {
                    capability_id,
                    error,
                };
            }
        };
        let capability = &self.catalog.capabilities[ready.index];
        match ready.decision {
            PolicyDecision::Confirm { reason } => PreflightOutcome::ConfirmationRequired {
                capability_id,
                effect: capability.effect,
                reason: reason.unwrap_or_else(|| capability.description.to_string()),
            },
            _ => PreflightOutcome::Ready {
                capability_id,
                effect: capability.effect,
            },
        }
    }
}
