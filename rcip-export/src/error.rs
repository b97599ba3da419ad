//! Why an export or a way back failed.

use std::fmt;

/// Where a schema problem is, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaIssue {
    /// The profile's name.
    pub profile: &'static str,
    /// The capability id.
    pub capability: String,
    /// `"input"` or `"output"`.
    pub role: &'static str,
    /// JSON Pointer (RFC 6901) into the capability's own schema, `""` for the root.
    pub pointer: String,
    /// What cannot be expressed, or which limit is exceeded and by how much.
    pub reason: String,
}

impl fmt::Display for SchemaIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "the root"
        } else {
            &self.pointer
        };
        write!(
            f,
            "{}: capability {:?}, {} schema at {at}: {}",
            self.profile, self.capability, self.role, self.reason
        )
    }
}

/// Why a catalog could not be exported for a profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A schema uses something the profile can neither express nor move into a description.
    #[error("{0}")]
    UnsupportedSchema(SchemaIssue),
    /// A schema exceeds one of the profile's documented limits.
    #[error("{0}")]
    LimitExceeded(SchemaIssue),
    /// Two capability ids (or two property names of one object) map to the same name.
    #[error(
        "{profile}: {first:?} and {second:?} both map to the name {name:?}{}",
        In(context)
    )]
    NameCollision {
        /// The profile's name.
        profile: &'static str,
        /// The first id (or property name), in catalog order.
        first: String,
        /// The second id (or property name).
        second: String,
        /// The name both map to.
        name: String,
        /// For property names: the capability and the JSON Pointer of the object; empty for tool names.
        context: String,
    },
    /// The catalog JSON is not a catalog.
    #[error("invalid catalog: {0}")]
    InvalidCatalog(String),
}

impl ExportError {
    /// A stable code: `UNSUPPORTED_SCHEMA`, `LIMIT_EXCEEDED`, `NAME_COLLISION` or `INVALID_CATALOG`.
    ///
    /// ```
    /// use rcip_export::{Profile, export_catalog};
    /// let error = export_catalog(Profile::OpenAi, &serde_json::json!({"capabilities": 3})).unwrap_err();
    /// assert_eq!(error.code(), "INVALID_CATALOG");
    /// ```
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::UnsupportedSchema(_) => "UNSUPPORTED_SCHEMA",
            Self::LimitExceeded(_) => "LIMIT_EXCEEDED",
            Self::NameCollision { .. } => "NAME_COLLISION",
            Self::InvalidCatalog(_) => "INVALID_CATALOG",
        }
    }
}

/// Why provider arguments could not be mapped back to a capability input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentsError {
    /// No tool of the export has this name.
    #[error("unknown tool name {0:?}")]
    UnknownTool(String),
    /// The arguments are not a JSON object.
    #[error("the arguments of tool {0:?} are not a JSON object")]
    NotAnObject(String),
}

impl ArgumentsError {
    /// A stable code: `UNKNOWN_TOOL` or `ARGUMENTS_NOT_OBJECT`.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::UnknownTool(_) => "UNKNOWN_TOOL",
            Self::NotAnObject(_) => "ARGUMENTS_NOT_OBJECT",
        }
    }
}

/// Prints a collision's context, if any.
struct In<'a>(&'a str);

impl fmt::Display for In<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            Ok(())
        } else {
            write!(f, " ({})", self.0)
        }
    }
}
