//! The one error every platform operation answers with: a stable code, the seed's HTTP-style
//! status, a public message and the validation issues (when there are any).
//!
//! The refusals of the authorization decision ([`Denial`](super::authorize::Denial), converted
//! where it is defined), the engine's [`RecordError`] and
//! the directory's [`DirectoryError`] all convert into it, so a transport maps one type.

use std::fmt;

use http::StatusCode;
use rcip_core::ValidationIssue;
use serde::{Serialize, Serializer};

use super::directory::DirectoryError;
use rcip_records::RecordError;

/// A failed platform operation.
///
/// `message` is public: it never holds more than the caller may know (a non-member's
/// refusal reads exactly like an unknown workspace's).
///
/// ```
/// use http::StatusCode;
/// use rcip_platform::PlatformError;
/// let error = PlatformError::unknown_operation("record.delete");
/// assert_eq!((error.status, error.code), (StatusCode::BAD_REQUEST, "UNKNOWN_OPERATION"));
/// assert_eq!(
///     serde_json::to_value(&error).unwrap(),
///     serde_json::json!({"code": "UNKNOWN_OPERATION", "status": 400,
///                        "message": "unknown operation \"record.delete\""})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{code} ({}): {message}", status.as_u16())]
pub struct PlatformError {
    /// 400, 403, 404, 409, 422 (500 for store failures); a number on the wire.
    #[serde(serialize_with = "status_number")]
    pub status: StatusCode,
    /// The stable SCREAMING_SNAKE_CASE code, e.g. `INSUFFICIENT_SCOPE`.
    pub code: &'static str,
    /// What went wrong, safe to show the caller.
    pub message: String,
    /// Each failing argument or package part with its JSON Pointer (400 and 422).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<ValidationIssue>,
}

/// The longest operation name an error repeats: a caller's text is never echoed back at
/// any length.
pub const MAX_ECHOED_NAME: usize = 64;

impl PlatformError {
    /// An error without issues: the status, the code and the message, in the order of the
    /// server's [`ApiError::new`](https://docs.rs/rcip-server) and of the answer's parts.
    #[must_use]
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            issues: Vec::new(),
        }
    }

    /// The same error with these issues.
    #[must_use]
    pub fn with_issues(mut self, issues: Vec<ValidationIssue>) -> Self {
        self.issues = issues;
        self
    }

    /// 400 `UNKNOWN_OPERATION`, naming the operation (at most [`MAX_ECHOED_NAME`]
    /// characters of it).
    #[must_use]
    pub fn unknown_operation(name: &str) -> Self {
        let mut shown: String = name.chars().take(MAX_ECHOED_NAME).collect();
        if shown.len() < name.len() {
            shown.push('…');
        }
        Self::new(
            StatusCode::BAD_REQUEST,
            "UNKNOWN_OPERATION",
            format!("unknown operation {shown:?}"),
        )
    }

    /// 400 `INVALID_ARGUMENTS` with the issues found.
    #[must_use]
    pub fn invalid_arguments(message: impl Into<String>, issues: Vec<ValidationIssue>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "INVALID_ARGUMENTS", message).with_issues(issues)
    }

    /// 500 `STORE_FAILED`: the operation had no effect. The store's own text (a database's
    /// error, which may name tables or values) goes to the log, never to the caller.
    #[must_use]
    pub fn store(message: impl fmt::Display) -> Self {
        tracing::warn!(target: "rcip::platform", error = %message, "store failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "STORE_FAILED",
            "the store failed; the operation had no effect",
        )
    }
}

impl From<RecordError> for PlatformError {
    fn from(error: RecordError) -> Self {
        // The engine's classes are HTTP statuses (400, 403, 404, 409, 422, 500); the engine
        // itself does not depend on an HTTP crate.
        let status =
            StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let code = error.code();
        match error {
            RecordError::SchemaViolation { message, issues } => {
                Self::new(status, code, message).with_issues(issues)
            }
            RecordError::Store(detail) => Self::store(detail),
            other => Self::new(status, code, other.to_string()),
        }
    }
}

impl From<DirectoryError> for PlatformError {
    fn from(error: DirectoryError) -> Self {
        if let DirectoryError::Store(detail) = &error {
            return Self::store(&detail.0);
        }
        Self::new(error.status(), error.code(), error.to_string())
    }
}

/// A status as its number (the wire form of [`PlatformError`]).
fn status_number<S: Serializer>(status: &StatusCode, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u16(status.as_u16())
}
