//! The RCIP protocol 1.0 runtime.
//!
//! An application declares a catalog of capabilities once ([`ApplicationDefinition`]),
//! compiles it ([`CompiledCatalog`]), and creates a [`Runtime`]. Trusted application code
//! keeps the [`Host`]: it binds live handlers ([`Binding`]), sets the semantic context,
//! refreshes and resolves confirmations. Tools receive only an `Arc<dyn RcipClient>`: they
//! discover capabilities in snapshots, subscribe to revisions, invoke and preflight.
//!
//! Every invocation goes through the reference's lifecycle: id reservation, lookup,
//! binding, live availability, input schema, cancellation, host [`Policy`], rechecks,
//! confirmation or handler, output schema, outcome, revision bump and listeners. Every
//! expected failure is an [`InvocationOutcome`] with a stable [`ErrorCode`]; a panic in host
//! code is contained and never crosses to the client.
//!
//! ```
//! use rcip_runtime::*;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
//! let definition = ApplicationDefinition::new("polls", "Polls", "Create and vote on polls.")
//!     .scope(ScopeDefinition::new("polls", "Polls", "The poll list."))
//!     .capability(
//!         CapabilityDefinition::new("polls.close", Effect::Destructive, "Close a poll", "Closes a poll for good.")
//!             .scope("polls")
//!             .input_schema(json!({
//!                 "type": "object",
//!                 "properties": {"pollId": {"type": "string"}},
//!                 "required": ["pollId"],
//!                 "additionalProperties": false
//!             })),
//!     );
//! let runtime = Runtime::new(definition, RuntimeOptions::default())?;
//! let host = runtime.host();
//! let _binding = host.bind("polls.close", Binding::new(|_input, _ctx| async {
//!     Ok::<_, HandlerError>(serde_json::Value::Null)
//! }))?;
//!
//! // The default policy asks for confirmation of destructive capabilities.
//! let client = runtime.client();
//! let outcome = client
//!     .invoke(InvocationRequest::new("polls.close", json!({"pollId": "p1"})))
//!     .await;
//! let ticket = outcome.confirmation().expect("confirmation required").id.clone();
//! let approved = host.resolve_confirmation(&ticket, true).await;
//! assert_eq!(approved.status(), OutcomeStatus::Succeeded);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod binding;
mod capability;
mod catalog;
mod client;
mod confirm;
mod confirm_store;
mod error;
mod extensions;
mod host;
mod input;
mod invocation_id;
mod invoke;
mod policy;
mod preflight;
pub mod prelude;
mod reservation;
mod runtime;
mod shape;
mod signature;
mod support;
mod surfaces;
#[cfg(feature = "testing")]
pub mod testing;
mod tickets;
mod typed;
mod validation;

pub use rcip_core;
pub use rcip_core::CapabilitySet;
pub use rcip_core::{
    ApplicationDefinition, ApplicationMetadata, ApplicationSnapshot, Availability,
    CapabilityDefinition, CapabilityFilter, CapabilityIter, CapabilityList, CapabilitySnapshot,
    ConfirmationInfo, ContextFilter, DefinitionError, Effect, ErrorCode, EventPhase,
    InvocationOutcome, LongRunning, MAX_IDENTIFIER_LENGTH, OutcomeStatus, PreflightOutcome,
    PreflightReport, RCIP_PROTOCOL_VERSION, RcipError, Relevance, RuntimeEvent, Schema,
    ScopeDefinition, SemanticContext, UsageExample, UsageGuidance, ValidationIssue, catalog_export,
    catalog_revision, is_valid_identifier,
};
pub use rcip_rcp;

pub use binding::{
    Binding, CancellationSignal, Handler, HandlerError, HandlerErrorKind, InvocationContext,
};
pub use capability::{Capability, CapabilitySpec};
pub use catalog::CompiledCatalog;
pub use client::{
    InvocationRequest, Listener, MAX_INVOCATION_ID_LENGTH, PreflightBatch, PreflightProposal,
    RcipClient, Subscription,
};
pub use confirm::ConfirmationObserver;
pub use confirm_store::{
    ConfirmationKey, ConfirmationStore, ConfirmationTicket, Filed, MemoryConfirmationStore,
    StoredConfirmation,
};
pub use error::Error;
pub use extensions::{Extensions, Principal, RequestMetadata, StartObserver};
pub use host::{BindingGuard, BindingGuards, Host};
pub use input::{DEFAULT_MAX_INPUT_BYTES, Input, MAX_INPUT_DEPTH};
pub use policy::{
    DefaultPolicy, Policy, PolicyContext, PolicyDecision, PolicyError, PolicyPhase, PolicyVerdict,
    async_policy_fn, policy_fn,
};
#[cfg(feature = "macros")]
pub use rcip_macros::{Capability, capabilities, capability, catalog};
pub use runtime::{DEFAULT_CONFIRMATION_TTL, EventObserver, Runtime, RuntimeOptions};
pub use signature::{FromInvocation, IntoCapabilityOutput, NoInput, PRINCIPAL_REQUIRED};
pub use support::{BoxFuture, Clock, SystemClock};
pub use surfaces::{ClientSurfaces, PreflightSurface, Surface};
pub use tickets::MAX_CONFIRMATION_RECEIPTS;
pub use tokio_util::sync::CancellationToken;
pub use typed::{RcipClientExt, TypedOutcome};
pub use validation::{
    FULL_REPORT_VALUES, FULL_REPORT_WEIGHT, MAX_ISSUE_TEXT_BYTES, MAX_VALIDATION_ISSUES,
    TRUNCATED_KEYWORD,
};

/// rcip-macros' examples, compiled here: a proc-macro crate cannot run doctests that use the
/// runtime, so its docs include these files except when rustdoc collects doctests, and this
/// item includes them only then (the path leaves the crate, so never in a normal build or a
/// packaged crate).
#[cfg(doctest)]
#[doc = include_str!("../../rcip-macros/doc/capability.md")]
#[doc = include_str!("../../rcip-macros/doc/capabilities.md")]
#[doc = include_str!("../../rcip-macros/doc/catalog.md")]
#[doc = include_str!("../../rcip-macros/doc/derive.md")]
pub struct MacroDoctests;

/// The crate README's code, compiled as a doctest so it cannot go stale.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
