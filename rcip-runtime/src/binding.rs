//! Live bindings: the handler (and optional availability check) a host installs for a
//! declared capability.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use rcip_core::{Availability, SemanticContext};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::extensions::{Extensions, Principal};
use crate::invocation_id::InvocationId;
use crate::shape::Shape;
use crate::support::BoxFuture;

/// The read side of an invocation's cancellation: a handler can watch it but, as with the
/// reference's `AbortSignal`, cannot trigger it. Costs nothing when the caller gave no token.
#[derive(Debug, Clone, Default)]
pub struct CancellationSignal(Option<CancellationToken>);

impl CancellationSignal {
    /// A signal that follows `token`.
    #[must_use]
    pub fn new(token: Option<CancellationToken>) -> Self {
        CancellationSignal(token)
    }

    /// Whether the caller has cancelled.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(CancellationToken::is_cancelled)
    }

    /// Completes when the caller cancels (never, when there is no token).
    pub async fn cancelled(&self) {
        match &self.0 {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }
}

/// What a handler receives besides its input.
#[derive(Debug, Clone)]
pub struct InvocationContext {
    pub(crate) cancellation: CancellationSignal,
    pub(crate) invocation_id: InvocationId,
    pub(crate) requested_at: u64,
    pub(crate) semantic_context: Arc<SemanticContext>,
    pub(crate) extensions: Extensions,
}

impl InvocationContext {
    /// Fires when the invocation's caller cancels; handlers should cooperate.
    #[must_use]
    pub fn cancellation(&self) -> &CancellationSignal {
        &self.cancellation
    }

    /// The invocation id.
    #[must_use]
    pub fn invocation_id(&self) -> &str {
        &self.invocation_id
    }

    /// When the handler was called, in milliseconds since the Unix epoch.
    #[must_use]
    pub fn requested_at(&self) -> u64 {
        self.requested_at
    }

    /// The semantic context the policy decided under.
    #[must_use]
    pub fn semantic_context(&self) -> &SemanticContext {
        &self.semantic_context
    }

    /// What the caller's transport attached to the request
    /// ([`InvocationRequest::with_extension`](crate::InvocationRequest::with_extension)).
    #[must_use]
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The authenticated caller, if the transport set one.
    #[must_use]
    pub fn principal(&self) -> Option<&Principal> {
        self.extensions.principal()
    }
}

/// How a handler failed. Its message and source stay on the host side: a consumer only ever
/// sees `EXECUTION_FAILED`, `EXECUTION_ABORTED` or `OUTPUT_INVALID` with a fixed message,
/// except for a [`public`](Self::public) failure, whose code and message the handler wrote
/// for the consumer.
#[derive(Debug)]
pub struct HandlerError(Failure);

type Source = Box<dyn std::error::Error + Send + Sync>;

/// A [`HandlerError`]'s kind with what each kind carries.
#[derive(Debug)]
pub(crate) enum Failure {
    Failed(Source),
    Aborted,
    InvalidOutput(Source),
    Public(PublicFailure),
}

/// What a [`HandlerError::public`] failure tells the consumer. The code is kept apart from
/// the message so host code can branch on it; only the outcome joins them, into the one
/// message string the reference's error shape has room for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PublicFailure {
    pub(crate) code: String,
    pub(crate) message: String,
    pub(crate) issues: Vec<rcip_core::ValidationIssue>,
}

impl PublicFailure {
    /// The outcome's message: `"<code>: <message>"`.
    pub(crate) fn outcome_message(&self) -> String {
        format!("{}: {}", self.code, self.message)
    }
}

/// The kinds of [`HandlerError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HandlerErrorKind {
    /// The handler could not complete (`EXECUTION_FAILED`).
    Failed,
    /// The handler stopped because it was cancelled (`EXECUTION_ABORTED`), like a JS
    /// `AbortError`.
    Aborted,
    /// The handler produced something that is not a JSON value (`OUTPUT_INVALID`).
    InvalidOutput,
    /// A failure meant for the consumer (`EXECUTION_FAILED` with the handler's code and
    /// message): see [`HandlerError::public`].
    Public,
}

impl HandlerError {
    /// A failure with a host-side cause.
    pub fn failed(source: impl Into<Source>) -> Self {
        HandlerError(Failure::Failed(source.into()))
    }

    /// A failure the consumer may read: the outcome is still `failed` with the reference's
    /// code `EXECUTION_FAILED` (so consumers of either implementation understand it), but its
    /// message is `"<code>: <message>"` instead of the fixed text, and `issues` become its
    /// `validationIssues`. For failures with a stable meaning the consumer can act on (a stale
    /// revision, a failed guard); everything else should stay [`failed`](Self::failed).
    ///
    /// The error itself keeps the code and the message apart
    /// ([`public_code`](Self::public_code), [`public_message`](Self::public_message)).
    ///
    /// ```
    /// use rcip_runtime::{HandlerError, HandlerErrorKind};
    /// let error = HandlerError::public("STALE_REVISION", "the record is at revision 3", Vec::new());
    /// assert_eq!(error.kind(), HandlerErrorKind::Public);
    /// assert_eq!(error.public_code(), Some("STALE_REVISION"));
    /// assert_eq!(error.public_message(), Some("the record is at revision 3"));
    /// assert_eq!(error.to_string(), "STALE_REVISION: the record is at revision 3");
    /// ```
    pub fn public(
        code: impl Into<String>,
        message: impl std::fmt::Display,
        issues: Vec<rcip_core::ValidationIssue>,
    ) -> Self {
        HandlerError(Failure::Public(PublicFailure {
            code: code.into(),
            message: message.to_string(),
            issues,
        }))
    }

    /// The code of a [`public`](Self::public) failure (`None` for other kinds).
    #[must_use]
    pub fn public_code(&self) -> Option<&str> {
        match &self.0 {
            Failure::Public(public) => Some(&public.code),
            _ => None,
        }
    }

    /// The message of a [`public`](Self::public) failure, without its code.
    #[must_use]
    pub fn public_message(&self) -> Option<&str> {
        match &self.0 {
            Failure::Public(public) => Some(&public.message),
            _ => None,
        }
    }

    /// The validation issues of a [`public`](Self::public) failure (empty for other kinds).
    #[must_use]
    pub fn issues(&self) -> &[rcip_core::ValidationIssue] {
        match &self.0 {
            Failure::Public(public) => &public.issues,
            _ => &[],
        }
    }

    /// The handler gave up because its cancellation token fired.
    #[must_use]
    pub fn aborted() -> Self {
        HandlerError(Failure::Aborted)
    }

    /// The output could not be turned into JSON.
    pub fn invalid_output(source: impl Into<Source>) -> Self {
        HandlerError(Failure::InvalidOutput(source.into()))
    }

    /// The kind.
    #[must_use]
    pub fn kind(&self) -> HandlerErrorKind {
        match self.0 {
            Failure::Failed(_) => HandlerErrorKind::Failed,
            Failure::Aborted => HandlerErrorKind::Aborted,
            Failure::InvalidOutput(_) => HandlerErrorKind::InvalidOutput,
            Failure::Public(_) => HandlerErrorKind::Public,
        }
    }

    pub(crate) fn into_failure(self) -> Failure {
        self.0
    }

    fn source_error(&self) -> Option<&Source> {
        match &self.0 {
            Failure::Failed(source) | Failure::InvalidOutput(source) => Some(source),
            Failure::Aborted | Failure::Public(_) => None,
        }
    }
}

impl std::fmt::Display for HandlerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = self.kind();
        match (&self.0, self.source_error()) {
            (Failure::Public(public), _) => write!(f, "{}: {}", public.code, public.message),
            (_, Some(source)) => write!(f, "{kind:?}: {source}"),
            (_, None) => write!(f, "{kind:?}"),
        }
    }
}

impl std::error::Error for HandlerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source_error()
            .map(|s| &**s as &(dyn std::error::Error + 'static))
    }
}

/// A capability handler: an async function of a JSON input and its context.
///
/// Closures `Fn(Value, InvocationContext) -> impl Future<Output = Result<Value, HandlerError>>`
/// implement it; [`Binding::typed`] adapts typed functions.
pub trait Handler: Send + Sync + 'static {
    /// Runs the capability. The input has passed the input schema and is the handler's own
    /// copy.
    fn call(
        &self,
        input: Value,
        context: InvocationContext,
    ) -> BoxFuture<Result<Value, HandlerError>>;

    /// The typed entry of [`Binding::typed`] handlers, which can take raw JSON text
    /// straight into their input type. Not a public API: other handlers have none.
    #[doc(hidden)]
    fn typed_entry(&self) -> Option<&dyn TypedEntry> {
        None
    }
}

/// A handler's input parsed straight from JSON text into its type (by
/// [`TypedEntry::parse_text`]), for that same handler's [`TypedEntry::call_prepared`].
pub struct Prepared(Box<dyn Any + Send>);

impl Prepared {
    /// `text` parsed into `T` through `shape` (see [`TypedEntry::parse_text`]).
    pub(crate) fn parse<T: DeserializeOwned + Send + 'static>(
        text: &str,
        shape: &Shape,
    ) -> Option<Prepared> {
        let input: T = crate::shape::parse_text(text, shape)?;
        Some(Prepared(Box::new(input)))
    }

    /// The input back as `T`; `None` for an input another handler prepared (the runtime
    /// only hands a handler what it prepared itself, so that is a defect:
    /// [`foreign_input`](Self::foreign_input)).
    pub(crate) fn take<T: 'static>(self) -> Option<T> {
        self.0.downcast::<T>().ok().map(|input| *input)
    }

    /// The handler error for an input another handler prepared.
    pub(crate) fn foreign_input() -> HandlerError {
        HandlerError::failed("input prepared by another handler")
    }

    /// `run` on the input back as `T` (see [`take`](Self::take)).
    pub(crate) fn run<T: 'static>(
        self,
        run: impl FnOnce(T) -> BoxFuture<Result<Value, HandlerError>>,
    ) -> BoxFuture<Result<Value, HandlerError>> {
        match self.take::<T>() {
            Some(input) => run(input),
            None => failed(Prepared::foreign_input()),
        }
    }
}

/// `run` on a schema-valid `input` as `I`, the `Value` way of typed handlers. If serde still
/// refuses it, schema and type disagree, which is a host defect: `EXECUTION_FAILED`, never
/// a crash.
pub(crate) fn run_value<I: DeserializeOwned>(
    input: Value,
    run: impl FnOnce(I) -> BoxFuture<Result<Value, HandlerError>>,
) -> BoxFuture<Result<Value, HandlerError>> {
    match I::deserialize(input) {
        Ok(input) => run(input),
        Err(error) => failed(HandlerError::failed(error)),
    }
}

/// A handler's answer that is an error already.
fn failed(error: HandlerError) -> BoxFuture<Result<Value, HandlerError>> {
    Box::pin(std::future::ready(Err(error)))
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prepared(..)")
    }
}

/// The typed side of a [`Binding::typed`] handler. Not a public API.
#[doc(hidden)]
pub trait TypedEntry: Send + Sync {
    /// `text` parsed into the handler's input type, every value checked against the input
    /// schema's shape on the way; `None` if the text is not JSON, not valid by the shape, or
    /// refused by the type (the caller then takes the `Value` path).
    fn parse_text(&self, text: &str, shape: &Shape) -> Option<Prepared>;

    /// Runs the handler on an input this handler prepared.
    fn call_prepared(
        &self,
        input: Prepared,
        context: InvocationContext,
    ) -> BoxFuture<Result<Value, HandlerError>>;
}

impl<F, Fut> Handler for F
where
    F: Fn(Value, InvocationContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, HandlerError>> + Send + 'static,
{
    fn call(
        &self,
        input: Value,
        context: InvocationContext,
    ) -> BoxFuture<Result<Value, HandlerError>> {
        Box::pin(self(input, context))
    }
}

/// Adapts a typed function: deserializes the input from the validated JSON, serializes the
/// output back.
struct TypedHandler<F, I, O> {
    f: F,
    _types: std::marker::PhantomData<fn(I) -> O>,
}

impl<F, Fut, I, O> TypedHandler<F, I, O>
where
    F: Fn(I, InvocationContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    O: Serialize + 'static,
{
    fn run(&self, input: I, context: InvocationContext) -> BoxFuture<Result<Value, HandlerError>> {
        let fut = (self.f)(input, context);
        Box::pin(async move { output_value(fut.await) })
    }
}

/// A handler's result with its output serialized: what every typed handler's future ends
/// with (a closure's through [`Binding::typed`], a capability's `call` written by
/// `#[capability]`). An output that does not serialize is `HandlerError::invalid_output`.
/// Generic only in the output type: compiled once per output type.
// Inlined into each handler's future: without the hint callgrind counts about 30
// instructions more per `Binding::typed` invoke.
#[inline]
pub fn output_value<O: Serialize>(output: Result<O, HandlerError>) -> Result<Value, HandlerError> {
    serde_json::to_value(output?).map_err(HandlerError::invalid_output)
}

impl<F, Fut, I, O> Handler for TypedHandler<F, I, O>
where
    F: Fn(I, InvocationContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    I: DeserializeOwned + Send + 'static,
    O: Serialize + 'static,
{
    fn call(
        &self,
        input: Value,
        context: InvocationContext,
    ) -> BoxFuture<Result<Value, HandlerError>> {
        run_value(input, |input| self.run(input, context))
    }

    fn typed_entry(&self) -> Option<&dyn TypedEntry> {
        Some(self)
    }
}

impl<F, Fut, I, O> TypedEntry for TypedHandler<F, I, O>
where
    F: Fn(I, InvocationContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    I: DeserializeOwned + Send + 'static,
    O: Serialize + 'static,
{
    fn parse_text(&self, text: &str, shape: &Shape) -> Option<Prepared> {
        Prepared::parse::<I>(text, shape)
    }

    fn call_prepared(
        &self,
        input: Prepared,
        context: InvocationContext,
    ) -> BoxFuture<Result<Value, HandlerError>> {
        input.run(|input: I| self.run(input, context))
    }
}

pub(crate) type AvailabilityFn = dyn Fn() -> Availability + Send + Sync;

/// A handler plus an optional synchronous availability check, ready to bind.
///
/// ```
/// use rcip_runtime::{Availability, Binding, HandlerError};
/// use serde_json::{Value, json};
///
/// let binding = Binding::new(|input: Value, _ctx| async move {
///     Ok::<_, HandlerError>(json!({"echo": input}))
/// })
/// .with_availability(|| Availability::available());
/// # let _ = binding;
/// ```
#[derive(Clone)]
pub struct Binding {
    pub(crate) handler: Arc<dyn Handler>,
    pub(crate) availability: Option<Arc<AvailabilityFn>>,
}

impl std::fmt::Debug for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binding")
            .field("has_availability", &self.availability.is_some())
            .finish_non_exhaustive()
    }
}

impl Binding {
    /// A binding of a JSON handler, always available.
    pub fn new(handler: impl Handler) -> Self {
        Binding {
            handler: Arc::new(handler),
            availability: None,
        }
    }

    /// A binding of a typed handler: `I` is deserialized from the validated input and `O`
    /// serialized into the output.
    ///
    /// When the input schema uses only plain keywords (what the strict generator writes
    /// for structs of strings, numbers, options and lists: no `format`, `pattern`,
    /// composition), raw JSON text input is parsed straight into `I`, each value checked
    /// against the schema on its way in, with no `Value` in between; anything it does not
    /// take goes the `Value` way, so the outcome, events and issues are the same.
    ///
    /// ```
    /// use rcip_runtime::{Binding, HandlerError, InvocationContext};
    /// #[derive(serde::Deserialize)]
    /// struct Vote { option: u32 }
    /// let binding = Binding::typed(|vote: Vote, _ctx: InvocationContext| async move {
    ///     Ok::<_, HandlerError>(vote.option + 1)
    /// });
    /// # let _ = binding;
    /// ```
    pub fn typed<I, O, F, Fut>(handler: F) -> Self
    where
        F: Fn(I, InvocationContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
        I: DeserializeOwned + Send + 'static,
        O: Serialize + 'static,
    {
        Binding::new(TypedHandler {
            f: handler,
            _types: std::marker::PhantomData,
        })
    }

    /// Adds a live availability check. It must be synchronous and cheap: it runs two or
    /// three times per invocation (on entry, after the policy, and after `started` when an
    /// observer is installed), once per preflight proposal plus its recheck, and whenever a
    /// snapshot is built. A panic in it reads as `AVAILABILITY_CHECK_FAILED`.
    #[must_use]
    pub fn with_availability(
        mut self,
        check: impl Fn() -> Availability + Send + Sync + 'static,
    ) -> Self {
        self.availability = Some(Arc::new(check));
        self
    }
}
