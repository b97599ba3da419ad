//! Typed invocation, for consumers that share the contract types of a capability.

use rcip_core::{ConfirmationInfo, ErrorCode, InvocationOutcome, RcipError};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::capability::CapabilitySpec;
use crate::client::{InvocationRequest, RcipClient};
use crate::support::BoxFuture;

/// The outcome of [`RcipClientExt::invoke_typed`]: an [`InvocationOutcome`] whose output is
/// already the capability's output type.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedOutcome<O> {
    /// Ran; the output, typed.
    Succeeded {
        /// The invocation id.
        invocation_id: String,
        /// The output.
        output: O,
    },
    /// The host must approve first.
    ConfirmationRequired {
        /// The invocation id.
        invocation_id: String,
        /// What to show.
        confirmation: ConfirmationInfo,
    },
    /// Failed (including an output that does not fit the output type: `OUTPUT_INVALID`).
    Failed {
        /// The invocation id.
        invocation_id: String,
        /// Why.
        error: RcipError,
    },
    /// Denied.
    Denied {
        /// The invocation id.
        invocation_id: String,
        /// Why.
        error: RcipError,
    },
}

impl<O> TypedOutcome<O> {
    /// The output of a succeeded invocation.
    pub fn output(&self) -> Option<&O> {
        match self {
            TypedOutcome::Succeeded { output, .. } => Some(output),
            _ => None,
        }
    }

    /// The error of a failed or denied invocation.
    pub fn error(&self) -> Option<&RcipError> {
        match self {
            TypedOutcome::Failed { error, .. } | TypedOutcome::Denied { error, .. } => Some(error),
            _ => None,
        }
    }

    fn from_outcome(outcome: InvocationOutcome) -> Self
    where
        O: DeserializeOwned,
    {
        match outcome {
            InvocationOutcome::Succeeded {
                invocation_id,
                output,
                ..
            } => match O::deserialize(output) {
                Ok(output) => TypedOutcome::Succeeded {
                    invocation_id,
                    output,
                },
                Err(_) => TypedOutcome::Failed {
                    invocation_id,
                    error: RcipError::new(
                        ErrorCode::OutputInvalid,
                        "The capability output does not match its declared type.",
                    ),
                },
            },
            InvocationOutcome::ConfirmationRequired {
                invocation_id,
                confirmation,
                ..
            } => TypedOutcome::ConfirmationRequired {
                invocation_id,
                confirmation,
            },
            InvocationOutcome::Failed {
                invocation_id,
                error,
                ..
            } => TypedOutcome::Failed {
                invocation_id,
                error,
            },
            InvocationOutcome::Denied {
                invocation_id,
                error,
                ..
            } => TypedOutcome::Denied {
                invocation_id,
                error,
            },
        }
    }
}

/// Typed invocation on any [`RcipClient`].
///
/// ```ignore
/// let outcome = client.invoke_typed::<create_poll>(&CreatePoll { .. }).await;
/// if let Some(created) = outcome.output() { println!("{}", created.poll_id); }
/// ```
pub trait RcipClientExt: RcipClient {
    /// Invokes capability `C` with a typed input and reads its output as `C::Output`. The
    /// request goes through the same runtime checks as any other.
    fn invoke_typed<C>(&self, input: &C::Input) -> BoxFuture<TypedOutcome<C::Output>>
    where
        C: CapabilitySpec,
        C::Input: Serialize,
        C::Output: DeserializeOwned,
    {
        let request = match serde_json::to_value(input) {
            Ok(value) => InvocationRequest::new(C::ID, value),
            Err(_) => {
                let outcome = TypedOutcome::Failed {
                    invocation_id: String::new(),
                    error: RcipError::new(
                        ErrorCode::InputInvalid,
                        "The capability input must be a JSON value.",
                    ),
                };
                return Box::pin(std::future::ready(outcome));
            }
        };
        let outcome = self.invoke(request);
        Box::pin(async move { TypedOutcome::from_outcome(outcome.await) })
    }
}

impl<T: RcipClient + ?Sized> RcipClientExt for T {}
