//! Preflight (reference section 5): advisory readiness of 1–16 independent proposals,
//! checked concurrently. No handler runs, no id is reserved, no ticket is created, no event
//! is emitted.

use std::sync::Arc;

use futures_util::future::join_all;
use rcip_core::{
    ErrorCode, MAX_IDENTIFIER_LENGTH, PREFLIGHT_MAX_PROPOSALS, PREFLIGHT_MIN_PROPOSALS,
    PreflightOutcome, PreflightReport, RcipError,
};

use crate::client::PreflightBatch;
use crate::invoke::{clip, messages as m};
use crate::policy::{PolicyDecision, PolicyInput, PolicyPhase};
use crate::runtime::Inner;

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
        let token = batch.cancellation;
        let extensions = &batch.extensions;
        let checks = batch.requests.into_iter().map(|proposal| {
            let token = token.clone();
            async move {
                let capability_id = clip(proposal.capability_id, MAX_IDENTIFIER_LENGTH);
                let Some(input) = proposal.input.into_value(self.max_input_bytes) else {
                    return PreflightOutcome::Blocked {
                        capability_id,
                        error: RcipError::new(ErrorCode::InputInvalid, m::PROPOSAL_NOT_JSON),
                    };
                };
                let input = PolicyInput::Value(Arc::new(input));
                let ready = self
                    .readiness(
                        &capability_id,
                        input,
                        token.as_ref(),
                        extensions,
                        PolicyPhase::Preflight,
                        false,
                    )
                    .await;
                match ready {
                    Err(error) => PreflightOutcome::Blocked {
                        capability_id,
                        error,
                    },
                    Ok(ready) => {
                        let capability = &self.catalog.capabilities[ready.index];
                        match ready.decision {
                            PolicyDecision::Confirm { reason } => {
                                PreflightOutcome::ConfirmationRequired {
                                    capability_id,
                                    effect: capability.effect,
                                    reason: reason
                                        .unwrap_or_else(|| capability.description.to_string()),
                                }
                            }
                            _ => PreflightOutcome::Ready {
                                capability_id,
                                effect: capability.effect,
                            },
                        }
                    }
                }
            }
        });
        let mut outcomes = join_all(checks).await;
        let consistent = self.revision() == start_revision;
        if !consistent {
            for outcome in &mut outcomes {
                if !matches!(outcome, PreflightOutcome::Blocked { .. }) {
                    *outcome = PreflightOutcome::Blocked {
                        capability_id: outcome.capability_id().to_owned(),
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
}
