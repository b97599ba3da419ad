//! The RCIP protocol 1.0 model, pure and synchronous.
//!
//! This crate holds what every other rcip crate agrees on: the identifier grammar
//! ([`is_valid_identifier`]), [`Effect`]s, application definitions with a builder API
//! ([`ApplicationDefinition`]), definition validation ([`validate_definition`]), the strict
//! JSON Schema rules ([`schema::check_strict`]) and the wire types whose JSON is field for
//! field the TypeScript reference's ([`ApplicationSnapshot`], [`InvocationOutcome`],
//! [`PreflightReport`], [`RuntimeEvent`], ...).
//!
//! ```
//! use rcip_core::{ApplicationDefinition, CapabilityDefinition, Effect, validate_definition};
//! let app = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
//!     CapabilityDefinition::new("notes.clear", Effect::Destructive, "Clear notes", "Deletes every note."),
//! );
//! validate_definition(&app).unwrap();
//! ```
#![deny(missing_docs)]

mod capability_list;
mod capability_set;
mod definition;
pub mod depth;
mod effect;
mod event;
mod export;
mod id;
pub mod jcs;
mod outcome;
pub mod pointer;
mod preflight;
pub mod schema;
mod snapshot;
mod validate;

pub use capability_list::{CapabilityIter, CapabilityList, CapabilityListBuilder};
pub use capability_set::CapabilitySet;
pub use definition::{
    ApplicationDefinition, ApplicationMetadata, CapabilityDefinition, LongRunning,
    RCIP_PROTOCOL_VERSION, ScopeDefinition, UsageExample, UsageGuidance,
};
pub use effect::{Effect, UnknownEffect};
pub use event::{EventPhase, RuntimeEvent};
pub use export::{catalog_export, catalog_revision};
pub use id::{MAX_IDENTIFIER_LENGTH, derive_capability_id, is_valid_identifier};
pub use outcome::{
    ConfirmationInfo, ErrorCode, InvocationOutcome, OutcomeStatus, RcipError, ValidationIssue,
};
pub use preflight::{
    PREFLIGHT_MAX_PROPOSALS, PREFLIGHT_MIN_PROPOSALS, PreflightOutcome, PreflightReport,
};
pub use schema::Schema;
pub use snapshot::{
    ApplicationSnapshot, Availability, CapabilityContract, CapabilityFilter, CapabilitySnapshot,
    ContextFilter, Relevance, SemanticContext,
};
pub use validate::{
    DefinitionError, SchemaIds, SchemaRole, check_examples, check_schema, is_blank,
    validate_definition, validate_structure,
};
