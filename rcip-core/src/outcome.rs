//! Invocation outcomes, stable error codes, validation issues and confirmation info.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Effect;

/// The stable error and denial codes of protocol 1.0 (plus the preflight-only
/// `PREFLIGHT_STALE`), with their wire strings.
///
/// Non-exhaustive: the reference added `PREFLIGHT_STALE` in a patch release (2.0.4), so a
/// consumer must expect codes it does not know; match the ones it acts on and treat the
/// rest by [`status`](Self::status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// The id is not in the catalog.
    CapabilityNotFound,
    /// Declared, but no live binding (or the binding changed during policy evaluation).
    CapabilityUnbound,
    /// The binding says it is not available.
    CapabilityUnavailable,
    /// The input is not JSON or fails the input schema.
    InputInvalid,
    /// Host policy denied.
    PolicyDenied,
    /// Host policy failed (error or panic).
    PolicyEvaluationFailed,
    /// The host declined a confirmation.
    ConfirmationDeclined,
    /// A confirmation expired.
    ConfirmationExpired,
    /// No such (or no longer a) pending confirmation.
    ConfirmationNotFound,
    /// Cancelled.
    ExecutionAborted,
    /// The handler failed.
    ExecutionFailed,
    /// The handler's output is not JSON or fails the output schema.
    OutputInvalid,
    /// The invocation id is reserved by another invocation.
    InvocationAlreadyActive,
    /// Discovery changed while a preflight batch was being checked.
    PreflightStale,
}

impl ErrorCode {
    /// Every code, in the reference's table order.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::CapabilityNotFound,
        ErrorCode::CapabilityUnbound,
        ErrorCode::CapabilityUnavailable,
        ErrorCode::InputInvalid,
        ErrorCode::PolicyDenied,
        ErrorCode::PolicyEvaluationFailed,
        ErrorCode::ConfirmationDeclined,
        ErrorCode::ConfirmationExpired,
        ErrorCode::ConfirmationNotFound,
        ErrorCode::ExecutionAborted,
        ErrorCode::ExecutionFailed,
        ErrorCode::OutputInvalid,
        ErrorCode::InvocationAlreadyActive,
        ErrorCode::PreflightStale,
    ];

    /// The wire string.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::CapabilityNotFound => "CAPABILITY_NOT_FOUND",
            ErrorCode::CapabilityUnbound => "CAPABILITY_UNBOUND",
            ErrorCode::CapabilityUnavailable => "CAPABILITY_UNAVAILABLE",
            ErrorCode::InputInvalid => "INPUT_INVALID",
            ErrorCode::PolicyDenied => "POLICY_DENIED",
            ErrorCode::PolicyEvaluationFailed => "POLICY_EVALUATION_FAILED",
            ErrorCode::ConfirmationDeclined => "CONFIRMATION_DECLINED",
            ErrorCode::ConfirmationExpired => "CONFIRMATION_EXPIRED",
            ErrorCode::ConfirmationNotFound => "CONFIRMATION_NOT_FOUND",
            ErrorCode::ExecutionAborted => "EXECUTION_ABORTED",
            ErrorCode::ExecutionFailed => "EXECUTION_FAILED",
            ErrorCode::OutputInvalid => "OUTPUT_INVALID",
            ErrorCode::InvocationAlreadyActive => "INVOCATION_ALREADY_ACTIVE",
            ErrorCode::PreflightStale => "PREFLIGHT_STALE",
        }
    }

    /// The outcome status this code is reported with: `denied` for the two denial codes,
    /// `failed` for the rest.
    #[must_use]
    pub const fn status(self) -> OutcomeStatus {
        match self {
            ErrorCode::PolicyDenied | ErrorCode::ConfirmationDeclined => OutcomeStatus::Denied,
            _ => OutcomeStatus::Failed,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One schema validation failure, as consumers see it.
///
/// `params` are Ajv's error params for the keyword, named as Ajv names them, so a model
/// that proposed the input can correct it: `{"additionalProperty": "x"}` names the property
/// to drop, `{"missingProperty": "x"}` the one to add, `{"type": "string"}` the type wanted
/// (the full list is in `docs/beyond-the-reference.md`). The reference keeps them out of its
/// outcomes; rcip adds them as one more member, omitted when empty, which a reader of the
/// reference's shape ignores.
///
/// ```
/// use rcip_core::ValidationIssue;
/// let issue = ValidationIssue::new("", "additionalProperties", "must NOT have additional properties")
///     .with_param("additionalProperty", "titel");
/// assert_eq!(
///     serde_json::to_value(&issue).unwrap(),
///     serde_json::json!({
///         "instancePath": "",
///         "keyword": "additionalProperties",
///         "message": "must NOT have additional properties",
///         "params": {"additionalProperty": "titel"}
///     })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ValidationIssue {
    /// JSON Pointer into the instance (`""` for the root).
    pub instance_path: String,
    /// The failing schema keyword.
    pub keyword: String,
    /// A human message.
    pub message: String,
    /// Ajv's params for the keyword (empty when it has none, or the issue came from a peer
    /// that does not send them).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Value>,
}

impl ValidationIssue {
    /// An issue without params.
    #[must_use]
    pub fn new(
        instance_path: impl Into<String>,
        keyword: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ValidationIssue {
            instance_path: instance_path.into(),
            keyword: keyword.into(),
            message: message.into(),
            params: Map::new(),
        }
    }

    /// Adds one param (a later one with the same name replaces it).
    #[must_use]
    pub fn with_param(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.params.insert(name.into(), value.into());
        self
    }

    /// One param by its Ajv name, e.g. `issue.param("missingProperty")`.
    #[must_use]
    pub fn param(&self, name: &str) -> Option<&Value> {
        self.params.get(name)
    }
}

/// A stable error: a code, a safe message, and validation issues for schema failures.
///
/// Non-exhaustive (a later protocol version may add members): outside rcip-core it is read,
/// deserialized, or made with `new`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RcipError {
    /// The stable code.
    pub code: ErrorCode,
    /// A message safe to show a consumer (never a handler's or policy's own error text).
    pub message: Cow<'static, str>,
    /// Schema failures, for `INPUT_INVALID` and `OUTPUT_INVALID` schema mismatches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation_issues: Option<Vec<ValidationIssue>>,
}

impl RcipError {
    /// An error with no validation issues.
    #[must_use]
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        RcipError {
            code,
            message: message.into(),
            validation_issues: None,
        }
    }

    /// An error with validation issues.
    #[must_use]
    pub fn with_issues(
        code: ErrorCode,
        message: impl Into<Cow<'static, str>>,
        issues: Vec<ValidationIssue>,
    ) -> Self {
        RcipError {
            code,
            message: message.into(),
            validation_issues: Some(issues),
        }
    }
}

impl std::fmt::Display for RcipError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for RcipError {}

/// What a consumer needs to show a pending confirmation (never the input).
///
/// Non-exhaustive (a later protocol version may add members): outside rcip-core it is read,
/// deserialized, or made with `new`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ConfirmationInfo {
    /// The confirmation id (random, unguessable).
    pub id: String,
    /// The capability title.
    pub title: String,
    /// The policy's reason, or the capability description.
    pub description: String,
    /// The capability effect.
    pub effect: Effect,
    /// When it expires, in milliseconds since the Unix epoch.
    pub expires_at: u64,
}

impl ConfirmationInfo {
    /// Confirmation info with every member.
    #[must_use]
    pub fn new(
        id: impl Into<String>,
        title: impl Into<String>,
        description: impl Into<String>,
        effect: Effect,
        expires_at: u64,
    ) -> Self {
        ConfirmationInfo {
            id: id.into(),
            title: title.into(),
            description: description.into(),
            effect,
            expires_at,
        }
    }
}

/// The status of an outcome.
///
/// Exhaustive on purpose, like [`InvocationOutcome`]: the four statuses are the protocol's
/// (1.0), a consumer must handle each (a wildcard would silently treat a new one as one of
/// these), and a status the protocol added would be a breaking change for every consumer
/// in any language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// Ran and produced valid output.
    Succeeded,
    /// Needs a host decision.
    ConfirmationRequired,
    /// Failed with a stable code.
    Failed,
    /// Denied by policy or by the user.
    Denied,
}

/// The result of an invocation; every expected failure is an outcome, never a panic.
/// Exhaustive, as [`OutcomeStatus`] is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "status",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum InvocationOutcome {
    /// The handler ran and its output is valid.
    Succeeded {
        /// The invocation id.
        invocation_id: String,
        /// The capability id.
        capability_id: String,
        /// The validated output.
        output: Value,
    },
    /// The host must approve first, through its own trusted surface.
    ConfirmationRequired {
        /// The invocation id (still reserved).
        invocation_id: String,
        /// The capability id.
        capability_id: String,
        /// What to show.
        confirmation: ConfirmationInfo,
    },
    /// Failed.
    Failed {
        /// The invocation id.
        invocation_id: String,
        /// The capability id (`"unknown"` for `CONFIRMATION_NOT_FOUND`).
        capability_id: String,
        /// Why.
        error: RcipError,
    },
    /// Denied.
    Denied {
        /// The invocation id.
        invocation_id: String,
        /// The capability id.
        capability_id: String,
        /// Why.
        error: RcipError,
    },
}

impl InvocationOutcome {
    /// A `failed` or `denied` outcome, by the code's status.
    #[must_use]
    pub fn from_error(invocation_id: String, capability_id: String, error: RcipError) -> Self {
        match error.code.status() {
            OutcomeStatus::Denied => InvocationOutcome::Denied {
                invocation_id,
                capability_id,
                error,
            },
            _ => InvocationOutcome::Failed {
                invocation_id,
                capability_id,
                error,
            },
        }
    }

    /// The status.
    #[must_use]
    pub const fn status(&self) -> OutcomeStatus {
        match self {
            InvocationOutcome::Succeeded { .. } => OutcomeStatus::Succeeded,
            InvocationOutcome::ConfirmationRequired { .. } => OutcomeStatus::ConfirmationRequired,
            InvocationOutcome::Failed { .. } => OutcomeStatus::Failed,
            InvocationOutcome::Denied { .. } => OutcomeStatus::Denied,
        }
    }

    /// The invocation id.
    #[must_use]
    pub fn invocation_id(&self) -> &str {
        match self {
            InvocationOutcome::Succeeded { invocation_id, .. }
            | InvocationOutcome::ConfirmationRequired { invocation_id, .. }
            | InvocationOutcome::Failed { invocation_id, .. }
            | InvocationOutcome::Denied { invocation_id, .. } => invocation_id,
        }
    }

    /// The capability id.
    #[must_use]
    pub fn capability_id(&self) -> &str {
        match self {
            InvocationOutcome::Succeeded { capability_id, .. }
            | InvocationOutcome::ConfirmationRequired { capability_id, .. }
            | InvocationOutcome::Failed { capability_id, .. }
            | InvocationOutcome::Denied { capability_id, .. } => capability_id,
        }
    }

    /// The error, for failed and denied outcomes.
    #[must_use]
    pub fn error(&self) -> Option<&RcipError> {
        match self {
            InvocationOutcome::Failed { error, .. } | InvocationOutcome::Denied { error, .. } => {
                Some(error)
            }
            _ => None,
        }
    }

    /// The error code, for failed and denied outcomes.
    #[must_use]
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.error().map(|e| e.code)
    }

    /// The output, for succeeded outcomes.
    #[must_use]
    pub fn output(&self) -> Option<&Value> {
        match self {
            InvocationOutcome::Succeeded { output, .. } => Some(output),
            _ => None,
        }
    }

    /// The confirmation, for confirmation-required outcomes.
    #[must_use]
    pub fn confirmation(&self) -> Option<&ConfirmationInfo> {
        match self {
            InvocationOutcome::ConfirmationRequired { confirmation, .. } => Some(confirmation),
            _ => None,
        }
    }
}
