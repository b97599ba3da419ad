//! The `decide` request and response, field for field the TypeScript SDK's (section 6.2), so
//! a `decide` service written for it works unchanged; action-batch validation; the fallback
//! summaries.

use std::sync::Arc;

use rcip_core::{ApplicationSnapshot, InvocationOutcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::options::{AssistMode, DelayAfter};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The assistant (welcome messages, answers, summaries).
    Assistant,
    /// The user.
    User,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistMessage {
    /// The text.
    pub content: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    /// `message_<base36 time>_<base36 seq>`.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
}

/// Which call of a turn this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// The one call that may propose actions.
    Decide,
    /// The one call after the actions, which may only return text.
    Summarize,
}

/// One proposed action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistAction {
    /// The capability to invoke.
    pub capability_id: String,
    /// The pause after it.
    pub delay_after: DelayAfter,
    /// Its id (the invocation id); generated when missing or blank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The input. An action without one is answered locally as the reference answers an
    /// `undefined` input: `INPUT_INVALID`, "The capability input must be a JSON value.",
    /// without a runtime call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
}

impl AssistAction {
    /// An action without an id (one is generated when it runs).
    pub fn new(capability_id: impl Into<String>, delay_after: DelayAfter, input: Value) -> Self {
        AssistAction {
            capability_id: capability_id.into(),
            delay_after,
            id: None,
            input: Some(input),
        }
    }

    /// Sets the id (the invocation id).
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// An executed action and its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistStep {
    /// The action.
    pub action: AssistAction,
    /// What happened.
    pub outcome: InvocationOutcome,
}

/// What `decide` is given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistRequest {
    /// The conversation so far, the new user message included.
    pub messages: Vec<AssistMessage>,
    /// The mode.
    pub mode: AssistMode,
    /// Decide or summarize.
    pub phase: Phase,
    /// The snapshot (read capabilities only in read-only mode); in interactive mode the
    /// client's own shared snapshot, not a copy.
    pub snapshot: Arc<ApplicationSnapshot>,
    /// Empty when deciding; the executed steps when summarizing.
    pub steps: Vec<AssistStep>,
    /// `turn_<base36 time>_<base36 seq>`.
    pub turn_id: String,
}

/// What `decide` answers, as JSON: `{"type": "message", "message"}` or
/// `{"type": "actions", "actions": [...]}`. Kept as JSON so that a malformed answer is an
/// Assist error with the reference's message rather than a parse failure.
pub type AssistResponse = Value;

/// `{"type": "message", "message": text}`.
///
/// ```
/// use rcip_assist::message_response;
/// assert_eq!(message_response("Hi")["type"], "message");
/// ```
#[must_use]
pub fn message_response(text: impl Into<String>) -> AssistResponse {
    serde_json::json!({"type": "message", "message": text.into()})
}

/// `{"type": "actions", "actions": [...]}`.
///
/// ```
/// use rcip_assist::{AssistAction, DelayAfter, actions_response};
/// let response = actions_response(&[AssistAction::new("polls.list", DelayAfter::Short, serde_json::json!({}))]);
/// assert_eq!(response["actions"][0]["capabilityId"], "polls.list");
/// ```
#[must_use]
pub fn actions_response(actions: &[AssistAction]) -> AssistResponse {
    serde_json::json!({"type": "actions", "actions": actions})
}

/// The trimmed text of a `{"type": "message"}` answer with a non-blank message.
pub(super) fn message_of(response: &Value) -> Option<String> {
    if response.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    let message = response.get("message").and_then(Value::as_str)?;
    (!rcip_core::is_blank(message)).then(|| message.trim().to_owned())
}

/// Why a `decide` answer was refused (the reference's messages). Non-exhaustive, like every
/// error here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// Not a message, not 1 to the limit of actions.
    #[error("The assist callback returned an invalid action batch.")]
    InvalidBatch,
    /// An action without a capability id or a known delay.
    #[error("The assist callback returned an invalid action.")]
    InvalidAction,
}

/// A validated `decide` answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Text to show (trimmed).
    Message(String),
    /// Actions to run, in order, every one valid.
    Actions(Vec<AssistAction>),
}

/// Validates a `decide` answer whole, before anything runs: a non-blank message, or 1 to
/// `max_batch` actions each with a non-blank `capabilityId` and a `delayAfter` of
/// `short`, `medium` or `long`. A blank message is an invalid batch.
///
/// # Errors
///
/// [`BatchError`].
pub fn validate_decision(response: &Value, max_batch: usize) -> Result<Decision, BatchError> {
    if let Some(message) = message_of(response) {
        return Ok(Decision::Message(message));
    }
    if response.get("type").and_then(Value::as_str) != Some("actions") {
        return Err(BatchError::InvalidBatch);
    }
    let Some(actions) = response.get("actions").and_then(Value::as_array) else {
        return Err(BatchError::InvalidBatch);
    };
    if actions.is_empty() || actions.len() > max_batch {
        return Err(BatchError::InvalidBatch);
    }
    actions
        .iter()
        .map(|action| {
            let capability_id = action
                .get("capabilityId")
                .and_then(Value::as_str)
                .filter(|id| !rcip_core::is_blank(id))
                .ok_or(BatchError::InvalidAction)?;
            let delay_after: DelayAfter = action
                .get("delayAfter")
                .and_then(|d| serde_json::from_value(d.clone()).ok())
                .ok_or(BatchError::InvalidAction)?;
            let id = action
                .get("id")
                .and_then(Value::as_str)
                .filter(|id| !rcip_core::is_blank(id))
                .map(str::to_owned);
            Ok(AssistAction {
                capability_id: capability_id.to_owned(),
                delay_after,
                id,
                input: action.get("input").cloned(),
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Decision::Actions)
}

/// The summary used when `summarize` gives no usable message (the reference's texts).
///
/// ```
/// use rcip_assist::fallback_summary;
/// assert_eq!(fallback_summary(&[]), "No capability was run.");
/// ```
#[must_use]
pub fn fallback_summary(steps: &[AssistStep]) -> String {
    let Some(last) = steps.last() else {
        return "No capability was run.".to_owned();
    };
    match &last.outcome {
        InvocationOutcome::Succeeded { .. } if steps.len() == 1 => {
            "The requested action completed successfully.".to_owned()
        }
        InvocationOutcome::Succeeded { .. } => {
            format!("{} actions completed successfully.", steps.len())
        }
        InvocationOutcome::ConfirmationRequired { .. } => {
            "The application is still waiting for confirmation.".to_owned()
        }
        other => format!(
            "The action stopped: {}",
            other.error().map_or("", |e| e.message.as_ref())
        ),
    }
}
