//! The conversation's and the input side's statuses, which the controller, the turn and the
//! updates all read.

use serde::{Deserialize, Serialize};

/// The conversation's status (`status` in the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum AssistStatus {
    /// Ready, after at least one exchange (or a cancelled turn).
    Active,
    /// A confirmation waits for the user.
    Attention,
    /// The last turn failed or stopped on a non-success.
    Error,
    /// Nothing happened yet (or cleared).
    Idle,
    /// Every action of the last turn succeeded; reads `active` after 1.5 s.
    Success,
    /// A turn is running.
    Working,
}

/// The input side's status (`inputStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum InputStatus {
    /// The last input failed; see [`Assist::input_error`](crate::Assist::input_error).
    Error,
    /// Nothing in progress.
    Idle,
    /// The voice adapter is recording.
    Listening,
    /// The processors are running, or the voice adapter is stopping.
    Processing,
    /// The voice adapter is starting.
    Starting,
}
