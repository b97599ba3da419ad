//! The names most applications use, for a glob import.
//!
//! ```
//! use rcip_runtime::prelude::*;
//!
//! let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.");
//! let runtime = Runtime::new(definition, RuntimeOptions::default())?;
//! let _client: std::sync::Arc<dyn RcipClient> = runtime.client();
//! # Ok::<(), Error>(())
//! ```

pub use crate::{
    ApplicationDefinition, Binding, CancellationSignal, Capability, CapabilityDefinition,
    CapabilitySpec, Effect, Error, ErrorCode, HandlerError, Host, InvocationContext,
    InvocationOutcome, InvocationRequest, NoInput, OutcomeStatus, Policy, PolicyDecision,
    Principal, RcipClient, RcipClientExt, Runtime, RuntimeOptions, ScopeDefinition, policy_fn,
};
#[cfg(feature = "macros")]
pub use crate::{capabilities, capability, catalog};
