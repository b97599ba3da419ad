//! The client surface: everything a tool may do, and nothing else.

use std::sync::Arc;

use rcip_core::{
    ApplicationSnapshot, CapabilityFilter, CapabilitySnapshot, InvocationOutcome, PreflightReport,
};
use tokio_util::sync::CancellationToken;

use crate::Input;
use crate::extensions::Extensions;
use crate::support::BoxFuture;
use crate::surfaces::ClientSurfaces;

/// The longest invocation id a client accepts, in bytes of UTF-8: 256. An empty or longer
/// id is refused as `INPUT_INVALID` ("The invocation id must be 1 to 256 bytes long."),
/// echoed clipped to this length. (The reference accepts any string.)
pub const MAX_INVOCATION_ID_LENGTH: usize = 256;

/// One request to run a capability.
///
/// ```
/// use rcip_runtime::InvocationRequest;
/// let request = InvocationRequest::new("polls.create", serde_json::json!({"question": "Lunch?"}))
///     .with_id("invocation-1");
/// # let _ = request;
/// ```
///
/// A transport can also read one straight from the reference's JSON,
/// `{"capabilityId", "input", "invocationId"?}`. A request without `input` still parses (as
/// [`Input::Missing`]) and is answered like the reference answers an `undefined` input:
/// `INPUT_INVALID` "The capability input must be a JSON value.". `capabilityId` must be a
/// string; a `null` or absent `invocationId` means "generate one"; members it does not know
/// (`signal`, ...) are ignored. The cancellation token and the extensions are never read
/// from JSON: the transport sets them.
///
/// ```
/// use rcip_runtime::{Input, InvocationRequest};
/// let request: InvocationRequest =
///     serde_json::from_str(r#"{"capabilityId": "polls.list", "input": {}, "invocationId": "i-1"}"#)?;
/// assert_eq!(request.invocation_id.as_deref(), Some("i-1"));
/// let malformed: InvocationRequest = serde_json::from_str(r#"{"capabilityId": "polls.list"}"#)?;
/// assert_eq!(malformed.input, Input::Missing);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct InvocationRequest {
    /// The capability id.
    pub capability_id: String,
    /// The input.
    pub input: Input,
    /// A caller-chosen invocation id (any string); one is generated when absent.
    pub invocation_id: Option<String>,
    /// Cancels the invocation (before the handler, during policy, while a confirmation is
    /// pending) and is handed to the handler.
    pub cancellation: Option<CancellationToken>,
    /// Who is calling, as the transport established it: the policy and the handler see it,
    /// no snapshot, outcome or event ever carries it.
    pub(crate) extensions: Extensions,
}

impl InvocationRequest {
    /// A request with a generated id and no cancellation.
    pub fn new(capability_id: impl Into<String>, input: impl Into<Input>) -> Self {
        InvocationRequest {
            capability_id: capability_id.into(),
            input: input.into(),
            invocation_id: None,
            cancellation: None,
            extensions: Extensions::new(),
        }
    }

    /// Sets the invocation id.
    #[must_use]
    pub fn with_id(mut self, invocation_id: impl Into<String>) -> Self {
        self.invocation_id = Some(invocation_id.into());
        self
    }

    /// Sets the cancellation token.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Attaches a typed value for the policy and the handler (a [`Principal`](crate::Principal),
    /// [`RequestMetadata`](crate::RequestMetadata), or a type of the application's own);
    /// one value per type, a later one replaces an earlier one.
    ///
    /// ```
    /// use rcip_runtime::{InvocationRequest, Principal};
    /// let request = InvocationRequest::new("polls.close", serde_json::json!({"pollId": "p1"}))
    ///     .with_extension(Principal::new("user-7"));
    /// assert_eq!(request.extensions().principal().map(Principal::id), Some("user-7"));
    /// ```
    #[must_use]
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The attached values.
    #[must_use]
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The attached values, to change.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }
}

/// One preflight proposal.
///
/// Read from the reference's JSON, `{"capabilityId", "input"}`, a proposal never fails to
/// parse: one that is not an object or whose `capabilityId` is not a string becomes
/// capability `"unknown"` with no input, and one without `input` keeps its id with no input
/// ([`Input::Missing`]); both are then blocked as the reference blocks them, `INPUT_INVALID`
/// "The proposed capability input must be a JSON value.".
#[derive(Debug, Clone)]
pub struct PreflightProposal {
    /// The capability id.
    pub capability_id: String,
    /// The proposed input.
    pub input: Input,
}

impl PreflightProposal {
    /// A proposal.
    pub fn new(capability_id: impl Into<String>, input: impl Into<Input>) -> Self {
        PreflightProposal {
            capability_id: capability_id.into(),
            input: input.into(),
        }
    }
}

/// 1 to 16 independent proposals, checked concurrently.
///
/// Read from the reference's JSON, `{"requests": [...]}` (unknown members, such as
/// `signal`, ignored). A `requests` that is absent or not an array reads as no proposals, so
/// [`preflight`](RcipClient::preflight) answers it as the reference does a non-array,
/// [`Error::PreflightBatchSize`](crate::Error::PreflightBatchSize).
///
/// ```
/// use rcip_runtime::PreflightBatch;
/// let batch: PreflightBatch = serde_json::from_str(
///     r#"{"requests": [{"capabilityId": "polls.list", "input": {}}, {"capabilityId": 7}]}"#,
/// )?;
/// assert_eq!(batch.requests[1].capability_id, "unknown");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct PreflightBatch {
    /// The proposals.
    pub requests: Vec<PreflightProposal>,
    /// Cancels the whole batch.
    pub cancellation: Option<CancellationToken>,
    /// Who is asking, for the policy (see [`InvocationRequest::with_extension`]).
    pub(crate) extensions: Extensions,
}

impl PreflightBatch {
    /// A batch of these proposals.
    #[must_use]
    pub fn new(requests: Vec<PreflightProposal>) -> Self {
        PreflightBatch {
            requests,
            cancellation: None,
            extensions: Extensions::new(),
        }
    }

    /// Sets the token that cancels the whole batch.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Attaches a typed value every proposal's policy check sees (see
    /// [`InvocationRequest::with_extension`]).
    #[must_use]
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The attached values.
    #[must_use]
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The attached values, to change.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }
}

/// The JSON forms of requests, field for field the reference's: a transport parses them
/// directly, and malformed parts reach the runtime's malformed-input answers instead of
/// failing the parse.
mod wire {
    use serde::{Deserialize, Deserializer};
    use serde_json::Value;

    use super::{InvocationRequest, PreflightBatch, PreflightProposal};
    use crate::Input;
    use crate::extensions::Extensions;

    /// The capability id the reference reports for a proposal without a string id.
    const UNKNOWN_CAPABILITY: &str = "unknown";

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Request {
        capability_id: String,
        #[serde(default, deserialize_with = "present")]
        input: Option<Value>,
        #[serde(default)]
        invocation_id: Option<String>,
    }

    /// `Some` for any present value, `null` included; only an absent member is `None`.
    fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
        Value::deserialize(deserializer).map(Some)
    }

    fn input(value: Option<Value>) -> Input {
        value.map_or(Input::Missing, Input::Value)
    }

    impl<'de> Deserialize<'de> for InvocationRequest {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let request = Request::deserialize(deserializer)?;
            Ok(InvocationRequest {
                capability_id: request.capability_id,
                input: input(request.input),
                invocation_id: request.invocation_id,
                cancellation: None,
                extensions: Extensions::new(),
            })
        }
    }

    impl<'de> Deserialize<'de> for PreflightProposal {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let Value::Object(mut proposal) = Value::deserialize(deserializer)? else {
                return Ok(PreflightProposal::new(UNKNOWN_CAPABILITY, Input::Missing));
            };
            Ok(match proposal.remove("capabilityId") {
                Some(Value::String(id)) => {
                    PreflightProposal::new(id, input(proposal.remove("input")))
                }
                _ => PreflightProposal::new(UNKNOWN_CAPABILITY, Input::Missing),
            })
        }
    }

    impl<'de> Deserialize<'de> for PreflightBatch {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            #[derive(Deserialize)]
            struct Batch {
                #[serde(default)]
                requests: Value,
            }
            let requests = match Batch::deserialize(deserializer)?.requests {
                Value::Array(items) => items
                    .into_iter()
                    .map(PreflightProposal::deserialize)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(serde::de::Error::custom)?,
                _ => Vec::new(),
            };
            Ok(PreflightBatch::new(requests))
        }
    }
}

/// Keeps a subscription alive; dropping it (or calling [`unsubscribe`](Self::unsubscribe))
/// ends it. Ending twice is harmless.
#[must_use = "dropping a Subscription unsubscribes at once"]
pub struct Subscription {
    cancel: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl Subscription {
    /// A subscription that runs `cancel` when it ends.
    pub fn new(cancel: impl FnOnce() + Send + Sync + 'static) -> Self {
        Subscription {
            cancel: Some(Box::new(cancel)),
        }
    }

    /// Ends the subscription now.
    pub fn unsubscribe(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            cancel();
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.end();
    }
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("active", &self.cancel.is_some())
            .finish()
    }
}

/// A snapshot listener, boxed for [`RcipClient::subscribe_boxed`]: called with no arguments
/// after each revision; read the snapshot in it. A panic in it is contained and ignored.
pub type Listener = Box<dyn Fn() + Send + Sync>;

/// The generic RCIP client. A tool receives an `Arc<dyn RcipClient>` and nothing else: it
/// can discover, subscribe, invoke and preflight, but never bind, set context or approve.
///
/// ```
/// use std::sync::Arc;
/// use rcip_runtime::{CapabilityFilter, ContextFilter, RcipClient};
///
/// fn current_capabilities(client: &Arc<dyn RcipClient>) -> Vec<String> {
///     let filter = CapabilityFilter {
///         context: Some(ContextFilter::Current),
///         available_only: true,
///         ..CapabilityFilter::default()
///     };
///     client.list_capabilities(&filter).iter().map(|c| c.id.to_string()).collect()
/// }
/// ```
pub trait RcipClient: Send + Sync + std::fmt::Debug {
    /// The current snapshot: the same shared value until the revision changes.
    fn get_snapshot(&self) -> Arc<ApplicationSnapshot>;

    /// The current snapshot's capabilities that pass `filter`, in catalog order.
    fn list_capabilities(&self, filter: &CapabilityFilter) -> Vec<CapabilitySnapshot> {
        self.get_snapshot()
            .capabilities
            .iter()
            .filter(|c| filter.matches(c))
            .cloned()
            .collect()
    }

    /// Calls `listener` after every revision until the returned guard is dropped: the
    /// object-safe form that implementors write. Callers use
    /// [`RcipClientExt::subscribe`](crate::RcipClientExt::subscribe), which takes a closure
    /// as [`Assist::subscribe`](https://docs.rs/rcip-assist) does.
    fn subscribe_boxed(&self, listener: Listener) -> Subscription;

    /// Asks the host to run one capability. Never fails: every expected failure is an
    /// outcome.
    fn invoke(&self, request: InvocationRequest) -> BoxFuture<InvocationOutcome>;

    /// Checks 1 to 16 proposals without running anything. Clients that do not implement it
    /// answer [`Error::PreflightUnsupported`](crate::Error::PreflightUnsupported).
    ///
    /// An optional surface: a client that implements it also advertises it in
    /// [`surfaces`](Self::surfaces), and consumers reach it through
    /// [`RcipClientExt::preflight_checked`](crate::RcipClientExt::preflight_checked), which
    /// gates on that advertisement.
    fn preflight(&self, batch: PreflightBatch) -> BoxFuture<Result<PreflightReport, crate::Error>> {
        drop(batch);
        Box::pin(std::future::ready(Err(crate::Error::PreflightUnsupported)))
    }

    /// The optional surfaces this client offers, as an RCP-style presence map: a surface is
    /// offered when its key is present, with metadata as its value (the runtime's client
    /// answers `{"preflight": {"maxProposals": 16}}`).
    ///
    /// The default offers none, which is right for a client that keeps the default
    /// [`preflight`](Self::preflight). A client that implements an optional method advertises
    /// it here; one that advertises a surface it does not implement sends consumers to the
    /// default method's error.
    ///
    /// ```
    /// use rcip_runtime::{RcipClient, Surface};
    ///
    /// fn can_preflight(client: &dyn RcipClient) -> bool {
    ///     client.surfaces().supports(Surface::Preflight)
    /// }
    /// ```
    fn surfaces(&self) -> ClientSurfaces {
        ClientSurfaces::new()
    }
}
