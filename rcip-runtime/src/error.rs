//! The runtime's one error type: host configuration mistakes, never invocation failures
//! (those are [`InvocationOutcome`](crate::InvocationOutcome)s).

use rcip_core::DefinitionError;

/// A host configuration error, with a stable [`code`](Self::code). Messages of errors the
/// reference has are its messages, verbatim; [`hint`](Self::hint) says what to do, and the
/// `Debug` form (what `fn main() -> Result<(), Error>` prints) gives code, message and hint:
///
/// ```
/// let error = rcip_runtime::Error::NotRegistered("notes.ping".into());
/// assert_eq!(error.to_string(), "Capability notes.ping is not the registered catalog definition.");
/// assert!(format!("{error:?}").starts_with(
///     "CAPABILITY_NOT_REGISTERED: Capability notes.ping is not the registered catalog definition.\n  help: "
/// ));
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
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
    /// The catalog export could not be made canonical (a schema or example nested past
    /// [`MAX_CANONICAL_DEPTH`](rcip_core::jcs::MAX_CANONICAL_DEPTH)).
    #[error(transparent)]
    Export(#[from] rcip_core::jcs::JcsError),
    /// A [`ConfirmationStore`](crate::ConfirmationStore) could not be reached or refused
    /// the operation: why, in the store's words.
    #[error("The confirmation store failed: {0}")]
    ConfirmationStore(String),
}

impl std::fmt::Debug for Error {
    /// Code, message and hint: what `fn main() -> Result<(), Error>` prints when it fails.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {self}", self.code())?;
        if let Some(hint) = self.hint() {
            write!(f, "\n  help: {hint}")?;
        }
        Ok(())
    }
}

impl Error {
    /// What the host's author can do about it, for the mistakes a new application makes
    /// (the message itself stays the reference's).
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::NotRegistered(id) => Some(format!(
                "`{id}` is not in the catalog this runtime was built from: add its capability \
                 to the `capabilities = [...]` of the `catalog!` (or to the \
                 `ApplicationDefinition` given to `Runtime::new`)"
            )),
            Error::AlreadyBound(id) => Some(format!(
                "`{id}` is bound already: drop the first binding's guard before binding it again"
            )),
            Error::UnknownScope(id) => Some(format!(
                "declare the scope `{id}` in the catalog's `scopes = [...]` first"
            )),
            Error::Unbound(_) => Some(
                "bind them before serving: `App::runtime(options, states)` binds every \
                 `#[capability]` of a `catalog!`, `Host::bind` one handler; or leave out \
                 `RuntimeOptions::require_all_bound`"
                    .to_owned(),
            ),
            _ => None,
        }
    }

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
            Error::Export(error) => error.code(),
            Error::ConfirmationStore(_) => "CONFIRMATION_STORE_FAILED",
            Error::SchemaGeneration { error, .. } => error.code(),
        }
    }
}
