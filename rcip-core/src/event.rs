//! Redacted lifecycle events: no inputs, outputs, messages or reasons.

use serde::{Deserialize, Serialize};

use crate::ErrorCode;

/// A lifecycle phase.
///
/// Non-exhaustive: events are diagnostics, and an observer should keep working when a later
/// version reports a phase more (as `confirmation_declined` was added to the first set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventPhase {
    /// An invocation entered the pipeline.
    Requested,
    /// A confirmation ticket was issued.
    ConfirmationRequested,
    /// The host declined a confirmation.
    ConfirmationDeclined,
    /// The handler is about to run.
    Started,
    /// The handler ran and its output is valid.
    Succeeded,
    /// The invocation failed.
    Failed,
    /// The invocation was denied.
    Denied,
}

impl EventPhase {
    /// The wire string.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            EventPhase::Requested => "requested",
            EventPhase::ConfirmationRequested => "confirmation_requested",
            EventPhase::ConfirmationDeclined => "confirmation_declined",
            EventPhase::Started => "started",
            EventPhase::Succeeded => "succeeded",
            EventPhase::Failed => "failed",
            EventPhase::Denied => "denied",
        }
    }
}

/// One lifecycle event.
///
/// Non-exhaustive (a later protocol version may add members): outside rcip-core it is read,
/// deserialized, or made with `new`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RuntimeEvent {
    /// Milliseconds since the Unix epoch.
    pub timestamp: u64,
    /// The invocation id.
    pub invocation_id: String,
    /// The capability id.
    pub capability_id: String,
    /// The phase.
    pub phase: EventPhase,
    /// The code, for failed, denied and declined phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<ErrorCode>,
}

impl RuntimeEvent {
    /// An event with every member.
    #[must_use]
    pub fn new(
        timestamp: u64,
        invocation_id: impl Into<String>,
        capability_id: impl Into<String>,
        phase: EventPhase,
        error_code: Option<ErrorCode>,
    ) -> Self {
        RuntimeEvent {
            timestamp,
            invocation_id: invocation_id.into(),
            capability_id: capability_id.into(),
            phase,
            error_code,
        }
    }
}
