//! Consumer helpers on any [`RcipClient`]: typed invocation, for consumers that share the
//! contract types of a capability, and preflight gated on the client's advertised surfaces.

use rcip_core::{ConfirmationInfo, ErrorCode, InvocationOutcome, PreflightReport, RcipError};
use rcip_rcp::{RcpError, RcpErrorCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::capability::CapabilitySpec;
use crate::client::{
    InvocationRequest, PreflightBatch, PreflightProposal, RcipClient, Subscription,
};
use crate::support::BoxFuture;
use crate::surfaces::Surface;
use crate::{Error, Input};

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
    /// Calls `listener` after every revision until the returned guard is dropped (or
    /// [`unsubscribe`](Subscription::unsubscribe)d); read the snapshot in it. A panic in it
    /// is contained and ignored. Works on `dyn RcipClient` too; the closure is boxed once
    /// and handed to [`RcipClient::subscribe_boxed`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use rcip_runtime::{RcipClient, RcipClientExt, Subscription};
    ///
    /// fn track_revision(client: Arc<dyn RcipClient>, seen: Arc<AtomicU64>) -> Subscription {
    ///     let reader = client.clone();
    ///     client.subscribe(move || seen.store(reader.get_snapshot().revision, Ordering::Relaxed))
    /// }
    /// ```
    fn subscribe(&self, listener: impl Fn() + Send + Sync + 'static) -> Subscription {
        self.subscribe_boxed(Box::new(listener))
    }

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

    /// Preflight, gated on the client's advertised `preflight` surface
    /// ([`RcipClient::surfaces`]). Before anything else, in this order:
    ///
    /// 1. `preflight` not advertised: [`Error::CapabilityMissing`] (-32003,
    ///    `client does not advertise 'preflight'`);
    /// 2. fewer than 1 or more than 16 proposals: [`Error::PreflightBatchSize`] (the
    ///    reference's message);
    /// 3. more proposals than the advertised `maxProposals`: [`Error::OptionUnsupported`]
    ///    (-32005, `data.option` = `"maxProposals"`).
    ///
    /// In each case the client's [`preflight`](RcipClient::preflight) is not called. Otherwise
    /// the result is the client's.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use rcip_runtime::{Error, PreflightBatch, PreflightProposal, RcipClient, RcipClientExt};
    ///
    /// async fn ready_to_write(client: Arc<dyn RcipClient>) -> Result<bool, Error> {
    ///     let batch = PreflightBatch::new(vec![PreflightProposal::new(
    ///         "polls.create",
    ///         serde_json::json!({"question": "Lunch?"}),
    ///     )]);
    ///     match client.preflight_checked(batch).await {
    ///         Ok(report) => Ok(report.consistent),
    ///         // The client offers no preflight: decide without it.
    ///         Err(Error::CapabilityMissing(_)) => Ok(true),
    ///         Err(other) => Err(other),
    ///     }
    /// }
    /// ```
    fn preflight_checked(
        &self,
        batch: PreflightBatch,
    ) -> BoxFuture<Result<PreflightReport, Error>> {
        if let Err(refused) = check_preflight(self, batch.requests.len()) {
            return Box::pin(std::future::ready(Err(refused)));
        }
        self.preflight(batch)
    }

    /// Preflight of one typed proposal for capability `C`, gated as
    /// [`preflight_checked`](Self::preflight_checked): the input is serialized only once the
    /// gate has passed. An input that does not serialize to JSON reaches the client as input
    /// that is not JSON, which the runtime's client reports as a `blocked` outcome with
    /// `INPUT_INVALID` "The proposed capability input must be a JSON value." (the reference's
    /// answer for an input it cannot copy).
    fn preflight_typed<C>(&self, input: &C::Input) -> BoxFuture<Result<PreflightReport, Error>>
    where
        C: CapabilitySpec,
        C::Input: Serialize,
    {
        if let Err(refused) = check_preflight(self, 1) {
            return Box::pin(std::future::ready(Err(refused)));
        }
        // An input that does not serialize goes as text that is not JSON: the client blocks
        // it as it blocks any input it cannot copy.
        let input = match serde_json::to_value(input) {
            Ok(value) => Input::Value(value),
            Err(_) => Input::text(String::new()),
        };
        self.preflight(PreflightBatch::new(vec![PreflightProposal::new(
            C::ID,
            input,
        )]))
    }
}

/// The gate of the preflight helpers: advertised, within the protocol's bounds, within the
/// advertised `maxProposals`.
fn check_preflight<C: RcipClient + ?Sized>(client: &C, proposals: usize) -> Result<(), Error> {
    let surfaces = client.surfaces();
    surfaces.gate(Surface::Preflight)?;
    crate::preflight::check_batch_size(proposals)?;
    let advertised = surfaces.preflight().and_then(|p| p.max_proposals);
    if let Some(max) = advertised.filter(|max| proposals > max.get()) {
        return Err(Error::OptionUnsupported(
            RcpError::new(
                RcpErrorCode::OptionUnsupported,
                format!(
                    "client advertises 'preflight' with 'maxProposals' {max}; the batch has {proposals} proposals"
                ),
            )
            .with_data(json!({"option": "maxProposals"})),
        ));
    }
    Ok(())
}

impl<T: RcipClient + ?Sized> RcipClientExt for T {}
