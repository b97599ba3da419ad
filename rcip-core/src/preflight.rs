//! Preflight reports: advisory readiness of up to 16 independent proposals.

use serde::{Deserialize, Serialize};

use crate::{Effect, RcipError};

/// The smallest batch a preflight accepts.
pub const PREFLIGHT_MIN_PROPOSALS: usize = 1;
/// The largest batch a preflight accepts.
pub const PREFLIGHT_MAX_PROPOSALS: usize = 16;

/// The readiness of one proposal. Exhaustive for the reason
/// [`OutcomeStatus`](crate::OutcomeStatus) is: the three statuses are the protocol's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "status",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum PreflightOutcome {
    /// Would run now.
    Ready {
        /// The capability id.
        capability_id: String,
        /// Its effect.
        effect: Effect,
    },
    /// Would need host approval (no ticket was created).
    ConfirmationRequired {
        /// The capability id.
        capability_id: String,
        /// Its effect.
        effect: Effect,
        /// The policy's reason, or the capability description.
        reason: String,
    },
    /// Would not run.
    Blocked {
        /// The capability id (`"unknown"` when the proposal had none).
        capability_id: String,
        /// Why.
        error: RcipError,
    },
}

impl PreflightOutcome {
    /// The capability id.
    #[must_use]
    pub fn capability_id(&self) -> &str {
        match self {
            PreflightOutcome::Ready { capability_id, .. }
            | PreflightOutcome::ConfirmationRequired { capability_id, .. }
            | PreflightOutcome::Blocked { capability_id, .. } => capability_id,
        }
    }

    /// The error of a blocked outcome.
    #[must_use]
    pub fn error(&self) -> Option<&RcipError> {
        match self {
            PreflightOutcome::Blocked { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// The report of one preflight batch.
///
/// Non-exhaustive (a later protocol version may add members): outside rcip-core it is read,
/// deserialized, or made with `new`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PreflightReport {
    /// The discovery revision when the batch started.
    pub revision: u64,
    /// When the batch finished, in milliseconds since the Unix epoch.
    pub checked_at: u64,
    /// Whether the revision was unchanged at the end; when not, every positive outcome was
    /// replaced by `PREFLIGHT_STALE`.
    pub consistent: bool,
    /// One outcome per proposal, in input order.
    pub outcomes: Vec<PreflightOutcome>,
}

impl PreflightReport {
    /// A report with every member.
    #[must_use]
    pub fn new(
        revision: u64,
        checked_at: u64,
        consistent: bool,
        outcomes: Vec<PreflightOutcome>,
    ) -> Self {
        PreflightReport {
            revision,
            checked_at,
            consistent,
            outcomes,
        }
    }
}
