//! What a turn reports: how it ended, its steps and reply, and the fixed messages a turn
//! can end with.

use super::protocol::{AssistMessage, AssistStep, BatchError};
use super::status::AssistStatus;

/// The assistant message of a cancelled turn.
pub const CANCELLED_MESSAGE: &str = "The request was cancelled.";
/// The assistant message of a failed turn (the failure itself is in the report).
pub const FAILED_MESSAGE: &str =
    "The configured assistant could not process that request. The application remains available.";
/// The local refusal of a state-changing action in read-only mode.
pub const READ_ONLY_DENIED_MESSAGE: &str =
    "Assist read-only mode denied a state-changing capability.";

/// What happened in one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    /// `turn_<base36 time>_<base36 seq>`, as `decide` saw it.
    pub turn_id: String,
    /// How the turn ended.
    pub ending: TurnEnding,
    /// The actions run and their outcomes, in order.
    pub steps: Vec<AssistStep>,
    /// The assistant message the turn appended (answer, summary or error text).
    pub reply: AssistMessage,
    /// The status the turn left.
    pub status: AssistStatus,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TurnEnding {
    /// `decide` answered with a message; nothing ran.
    Answered,
    /// The batch ran and `summarize` wrote the summary.
    Summarized,
    /// The batch ran and `summarize` gave no usable message (it failed, was blank, or
    /// proposed actions, which are never run): the fallback summary was used.
    FallbackSummary,
    /// Cancelled; `reply` says so.
    Cancelled,
    /// Failed; `reply` is the generic message, this is the reason for the host.
    Failed(TurnFailure),
}

/// Why a turn failed. The user sees only [`FAILED_MESSAGE`]; the host gets this.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TurnFailure {
    /// `decide` returned an error (its text) or panicked.
    #[error("The assist callback failed: {0}")]
    Decide(String),
    /// The decide answer was not a message or a valid batch.
    #[error(transparent)]
    Batch(#[from] BatchError),
    /// The user could not be asked (the resolver failed or panicked); the confirmation
    /// was declined.
    #[error("The confirmation could not be resolved.")]
    Confirmation,
}
