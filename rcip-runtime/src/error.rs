//! The runtime's one error type: host configuration mistakes, never invocation failures
//! (those are [`InvocationOutcome`](crate::InvocationOutcome)s).

use rcip_core::DefinitionError;

/// A host configuration error, with a stable [`code`](Self::code). Messages of errors the
/// reference has are its messages, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The definition is invalid.
    #[error(transparent)]
    Definition(#[from] DefinitionError),
    /// `bind` named an id that is not in the catalog.
    #[error("Capability {0} is not the registered catalog definition.")]
    NotRegistered(String),
    /// `bind` named an id that already has a live binding.
    #[error("Capability {0} is already bound.")]
    AlreadyBound(String),
    /// `set_context` named an undeclared scope.
    #[error("Unknown RCIP scope id: {0}")]
    UnknownScope(String),
    /// `set_context` named a primary scope that is not active.
    #[error("The primary RCIP scope must also be active.")]
    PrimaryScopeNotActive,
    /// A preflight batch had fewer than 1 or more than 16 proposals.
    #[error("RCIP preflight requires between 1 and 16 independent proposals.")]
    PreflightBatchSize(usize),
    /// A typed capability's input or output type has no strict schema.
    #[error("RCIP capability {capability_id} has no strict schema: {error}")]
    SchemaGeneration {
        /// The capability id.
        capability_id: String,
        /// Why.
        error: rcip_core::schema::SchemaGenerationError,
    },
    /// The client does not implement preflight.
    #[error("This RCIP client does not support preflight.")]
    PreflightUnsupported,
    /// A consumer helper needs an optional surface the client does not advertise
    /// ([`ClientSurfaces`](crate::ClientSurfaces)): RCP's `CapabilityMissing` (-32003),
    /// `client does not advertise '<key>'`. Nothing was done.
    #[error(transparent)]
    CapabilityMissing(rcip_rcp::RcpError),
    /// A consumer helper was asked for more than the client advertises (for example a
    /// preflight batch over the advertised `maxProposals`): RCP's `OptionUnsupported`
    /// (-32005), `data.option` naming the option. Nothing was done.
    #[error(transparent)]
    OptionUnsupported(rcip_rcp::RcpError),
    /// With [`RuntimeOptions::require_all_bound`](crate::RuntimeOptions::require_all_bound),
    /// declared capabilities had no binding when the runtime was about to serve: their ids,
    /// in catalog order.
    #[error("RCIP capabilities are declared but not bound: {}", .0.join(", "))]
    Unbound(Vec<String>),
}

impl Error {
    /// The stable machine code; for definition errors, the definition error's own code.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Error::Definition(e) => e.code(),
            Error::NotRegistered(_) => "CAPABILITY_NOT_REGISTERED",
            Error::AlreadyBound(_) => "CAPABILITY_ALREADY_BOUND",
            Error::UnknownScope(_) => "UNKNOWN_SCOPE",
            Error::PrimaryScopeNotActive => "PRIMARY_SCOPE_NOT_ACTIVE",
            Error::PreflightBatchSize(_) => "PREFLIGHT_BATCH_SIZE",
            Error::PreflightUnsupported => "PREFLIGHT_UNSUPPORTED",
            Error::CapabilityMissing(_) => "CAPABILITY_MISSING",
            Error::OptionUnsupported(_) => "OPTION_UNSUPPORTED",
            Error::Unbound(_) => "CAPABILITIES_UNBOUND",
            Error::SchemaGeneration { error, .. } => error.code(),
        }
    }
}
