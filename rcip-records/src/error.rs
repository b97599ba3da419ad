//! What a record operation can fail with: a stable code and the seed's HTTP-style class.

use rcip_core::ValidationIssue;

/// A failed record operation.
///
/// Every variant has a stable [`code`](Self::code) and the class of the seed's error table
/// ([`status`](Self::status)): invalid arguments 400, insufficient authority 403, missing or
/// restricted record 404, conflicts 409, schema failures 422.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The arguments are malformed or name something that does not exist in the programs.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The cursor was not made for this query, or was edited.
    #[error("invalid cursor: it belongs to another query, or was edited")]
    InvalidCursor,
    /// The actor may not perform this operation.
    #[error("the actor may not {operation}")]
    Forbidden {
        /// The operation, e.g. `record.update`.
        operation: &'static str,
    },
    /// No such record in the workspace, or the actor may not see it.
    #[error("record not found")]
    NotFound,
    /// The record changed since the revision the caller expected.
    #[error("stale revision: expected {expected}, the record is at {actual}")]
    StaleRevision {
        /// The revision the caller gave.
        expected: u64,
        /// The record's revision.
        actual: u64,
    },
    /// The command does not run in the record's state.
    #[error("command {command:?} does not run in state {state:?} (runs from: {from})")]
    StateNotAllowed {
        /// The command.
        command: String,
        /// The record's state.
        state: String,
        /// The states it runs from.
        from: String,
    },
    /// The command's guard did not pass.
    #[error("the guard of command {command:?} did not pass")]
    GuardFailed {
        /// The command.
        command: String,
    },
    /// The record is archived and takes no changes.
    #[error("the record is archived")]
    Archived,
    /// The idempotency key was used before with different arguments.
    #[error("idempotency key {key:?} was already used with other arguments")]
    IdempotencyConflict {
        /// The key.
        key: String,
    },
    /// Data, input or roles do not satisfy the program.
    #[error("{message}")]
    SchemaViolation {
        /// What failed, in one line.
        message: String,
        /// Each failure with its JSON Pointer.
        issues: Vec<ValidationIssue>,
    },
    /// The program version is already pinned to other content (activated or installed):
    /// `namespace/version` names one content forever.
    #[error("program {namespace} v{version} already exists with other content")]
    VersionConflict {
        /// The namespace.
        namespace: String,
        /// The version.
        version: u64,
    },
    /// The store failed (I/O, corruption); the operation had no effect.
    #[error("store failure: {0}")]
    Store(String),
}

impl RecordError {
    /// The stable code.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::InvalidArguments(_) => "INVALID_ARGUMENTS",
            Self::InvalidCursor => "INVALID_CURSOR",
            Self::Forbidden { .. } => "FORBIDDEN",
            Self::NotFound => "RECORD_NOT_FOUND",
            Self::StaleRevision { .. } => "STALE_REVISION",
            Self::StateNotAllowed { .. } => "STATE_NOT_ALLOWED",
            Self::GuardFailed { .. } => "GUARD_FAILED",
            Self::Archived => "RECORD_ARCHIVED",
            Self::IdempotencyConflict { .. } => "IDEMPOTENCY_CONFLICT",
            Self::VersionConflict { .. } => "VERSION_CONFLICT",
            Self::SchemaViolation { .. } => "SCHEMA_VIOLATION",
            Self::Store(_) => "STORE_FAILED",
        }
    }

    /// The HTTP-style class: 400, 403, 404, 409, 422 (500 for store failures).
    #[must_use]
    pub const fn status(&self) -> u16 {
        match self {
            Self::InvalidArguments(_) | Self::InvalidCursor => 400,
            Self::Forbidden { .. } => 403,
            Self::NotFound => 404,
            Self::StaleRevision { .. }
            | Self::StateNotAllowed { .. }
            | Self::GuardFailed { .. }
            | Self::Archived
            | Self::IdempotencyConflict { .. }
            | Self::VersionConflict { .. } => 409,
            Self::SchemaViolation { .. } => 422,
            Self::Store(_) => 500,
        }
    }

    pub(crate) fn schema(message: impl Into<String>, issues: Vec<ValidationIssue>) -> Self {
        Self::SchemaViolation {
            message: message.into(),
            issues,
        }
    }
}

impl From<super::store::StoreError> for RecordError {
    fn from(error: super::store::StoreError) -> Self {
        RecordError::Store(error.0)
    }
}
