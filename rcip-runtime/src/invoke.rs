//! The invocation lifecycle (reference section 4.1), step for step, and the readiness
//! checks it shares with preflight.

use std::borrow::Cow;
use std::sync::Arc;

use rcip_core::{
    ErrorCode, EventPhase, InvocationOutcome, MAX_IDENTIFIER_LENGTH, RcipError, SemanticContext,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::binding::{CancellationSignal, Failure, HandlerError, InvocationContext, Prepared};
use crate::client::{InvocationRequest, MAX_INVOCATION_ID_LENGTH};
use crate::extensions::Extensions;
use crate::input::Input;
use crate::policy::{
    LazyText, PolicyContext, PolicyDecision, PolicyError, PolicyInput, PolicyPhase, PolicyVerdict,
};
use crate::reservation::{Claim, GeneratedId, Reservation};
use crate::runtime::{BoundHandler, Inner, capability_entry};
use crate::support::{BoxFuture, cancellable, clip, contain, contain_async};

// Public only for rcip's sibling crates, through `__private::shared`; each constant is its text.
#[allow(missing_docs)]
pub mod messages {
    //! The reference's consumer-facing messages, verbatim.
    pub const NOT_JSON: &str = "The capability input must be a JSON value.";
    pub const ALREADY_ACTIVE: &str = "An invocation with this id is already active.";
    pub const NOT_FOUND: &str = "The requested capability is not part of this application.";
    pub const UNBOUND: &str = "The requested capability has no live application binding.";
    pub const UNAVAILABLE: &str = "The requested capability is not available.";
    pub const INPUT_SCHEMA: &str = "The capability input does not match its declared schema.";
    pub const ABORTED: &str = "The capability invocation was cancelled.";
    pub const POLICY_FAILED: &str =
        "The host application could not evaluate this operation safely.";
    pub const BINDING_CHANGED: &str = "The capability binding changed during policy evaluation.";
    pub const CONTEXT_CHANGED: &str = "Application context changed. Request the operation again.";
    pub const NO_LONGER_AVAILABLE: &str = "The capability is no longer available.";
    pub const DENIED: &str = "The host application denied this operation.";
    pub const CONFIRMED_NOT_ALLOWED: &str =
        "The host policy did not allow the confirmed operation.";
    pub const EXECUTION_FAILED: &str = "The application could not complete the capability.";
    pub const OUTPUT_NOT_JSON: &str = "The capability output must be a JSON value.";
    pub const OUTPUT_SCHEMA: &str = "The capability output does not match its declared schema.";
    pub const DECLINED: &str = "The user declined the requested operation.";
    pub const EXPIRED: &str = "The confirmation request expired.";
    pub const CONFIRMATION_NOT_FOUND: &str = "The confirmation request no longer exists.";
    pub const CHANGED_WHILE_PENDING: &str =
        "The application changed while confirmation was pending. Request the operation again.";
    pub const PROPOSAL_NOT_JSON: &str = "The proposed capability input must be a JSON value.";
    pub const INVOCATION_ID_LENGTH: &str = "The invocation id must be 1 to 256 bytes long.";
    pub const PREFLIGHT_STALE: &str =
        "Application discovery changed during preflight. Check the current state again.";
}

use messages as m;

fn error(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> RcipError {
    RcipError::new(code, message)
}

/// One pass through the pipeline: a first attempt, or the confirmed re-run. Its input
/// travels beside it: detached, the runtime's own copy, shared read-only with the policy.
pub(crate) struct Attempt<'a> {
    /// Holds the invocation id until the attempt ends (or a confirmation ticket takes it).
    pub(crate) reservation: Reservation<'a>,
    pub(crate) capability_id: String,
    pub(crate) cancellation: Option<CancellationToken>,
    /// The caller's extensions, for the policy and the handler (a confirmed re-run keeps the
    /// original request's).
    pub(crate) extensions: Extensions,
    pub(crate) confirmed: bool,
    /// The capability's catalog position (`None`: not in the catalog), looked up once.
    pub(crate) index: Option<usize>,
}

/// An attempt's input, past step 4: a value, or JSON text a fast binding already parsed
/// into its typed input (checked against the input schema's shape on the way, so it is
/// schema-valid), with the text kept for the policy and a confirmation.
pub(crate) enum RunInput {
    Value(Arc<Value>),
    /// A value step 4 already found schema-valid (and so within depth) by its shape.
    Checked(Arc<Value>),
    Typed {
        text: Arc<LazyText>,
        /// The binding that parsed it: only its handler can take `prepared`.
        binding: Arc<BoundHandler>,
        prepared: Prepared,
    },
}

impl RunInput {
    /// The input as a value (a typed input's text parsed, once).
    pub(crate) fn into_value(self) -> Arc<Value> {
        match self {
            RunInput::Value(value) | RunInput::Checked(value) => value,
            RunInput::Typed { text, .. } => text.value().clone(),
        }
    }

    /// The input for the readiness checks.
    fn readiness_input(&self) -> ReadinessInput<'_> {
        match self {
            RunInput::Value(value) => ReadinessInput::Shared(value),
            RunInput::Checked(value) => ReadinessInput::Checked(value),
            RunInput::Typed { text, .. } => ReadinessInput::Typed(text),
        }
    }

    /// Calls the handler of `binding` (step 10): a prepared input if `binding` prepared
    /// it, else the value (the policy has dropped its share by now, so this moves rather
    /// than copies).
    fn call(
        self,
        binding: &BoundHandler,
        context: InvocationContext,
    ) -> BoxFuture<Result<Value, HandlerError>> {
        match self {
            RunInput::Value(value) | RunInput::Checked(value) => {
                binding.handler.call(Arc::unwrap_or_clone(value), context)
            }
            RunInput::Typed {
                text,
                binding: parsed_by,
                prepared,
            } => match binding.handler.typed_entry() {
                Some(entry) if std::ptr::eq(&*parsed_by, binding) => {
                    entry.call_prepared(prepared, context)
                }
                // Re-bound since step 4: the new handler gets the value.
                _ => binding.handler.call(Value::clone(text.value()), context),
            },
        }
    }
}

/// What passed the readiness checks.
pub(crate) struct Ready {
    /// The revision before the binding and context were read: while it is unchanged,
    /// neither can have changed (every change of them bumps it).
    pub(crate) revision: u64,
    pub(crate) index: usize,
    pub(crate) binding: Arc<BoundHandler>,
    pub(crate) context: Arc<SemanticContext>,
    /// `Allow` or `Confirm` (a `Deny` is an error by then).
    pub(crate) decision: PolicyDecision,
}

/// What a readiness check is for, beside the capability and input: the same for every
/// proposal of a preflight batch.
pub(crate) struct Ask<'a> {
    pub(crate) token: Option<&'a CancellationToken>,
    pub(crate) extensions: &'a Extensions,
    pub(crate) phase: PolicyPhase,
    pub(crate) confirmed: bool,
    /// The context a batch read once, reused while the revision stays the one read before it.
    pub(crate) seen: Option<&'a SeenContext>,
}

/// A semantic context and the revision read just before it: while the revision is still that
/// one, the context is too (every context change bumps it).
pub(crate) struct SeenContext {
    pub(crate) revision: u64,
    pub(crate) context: Arc<SemanticContext>,
}

/// The input a readiness check validates and shows the policy.
pub(crate) enum ReadinessInput<'a> {
    /// An invocation's: the handler gets it after the policy, so the policy gets a share.
    Shared(&'a Arc<Value>),
    /// An invocation's, found schema-valid at step 4.
    Checked(&'a Arc<Value>),
    /// A proposal's: nothing needs it after the policy, so the policy owns it (and shares it
    /// only if it reads it).
    Owned(Value),
    /// An invocation's text, parsed into the typed input (and checked on the way) at step 4.
    Typed(&'a Arc<LazyText>),
}

impl ReadinessInput<'_> {
    /// The value to check against the input schema (`None`: it passed already).
    fn value(&self) -> Option<&Value> {
        match self {
            ReadinessInput::Shared(input) => Some(input),
            ReadinessInput::Owned(input) => Some(input),
            ReadinessInput::Checked(_) | ReadinessInput::Typed(_) => None,
        }
    }

    fn into_policy_input(self) -> PolicyInput {
        match self {
            ReadinessInput::Shared(input) | ReadinessInput::Checked(input) => {
                PolicyInput::shared(input.clone())
            }
            ReadinessInput::Owned(input) => PolicyInput::owned(input),
            ReadinessInput::Typed(text) => PolicyInput::text(text.clone()),
        }
    }
}

/// What passed the checks before the policy.
pub(crate) struct Checked {
    revision: u64,
    index: usize,
    binding: Arc<BoundHandler>,
    context: Arc<SemanticContext>,
}

/// A readiness check waiting on an asynchronous policy's answer.
pub(crate) struct Pending {
    checked: Checked,
    future: BoxFuture<Result<PolicyDecision, PolicyError>>,
}

/// How [`Inner::readiness_start`] ends: decided (ready or not), or waiting on the policy.
pub(crate) enum Start {
    Done(Result<Ready, RcipError>),
    Pending(Pending),
}

pub(crate) fn is_cancelled(token: Option<&CancellationToken>) -> bool {
    token.is_some_and(CancellationToken::is_cancelled)
}

impl Inner {
    /// `client.invoke`, steps 1–4, which never wait: the attempt and its input for
    /// [`run`](Self::run), or the outcome that ends it here (with no event). Apart from `run`
    /// so that the client's future holds the pipeline's directly, not inside one more.
    // The refusal is the outcome the caller returns as it is; boxing it would only add an
    // allocation to every refusal.
    #[allow(clippy::result_large_err)]
    pub(crate) fn admit(
        &self,
        request: InvocationRequest,
    ) -> Result<(Attempt<'_>, RunInput), InvocationOutcome> {
        // Bounded ids (rcip's, not the reference's): an over-long capability id is clipped,
        // so it is echoed at most at the limit and is not found; an empty or over-long
        // invocation id is refused before anything else, with no event.
        let capability_id = clip(request.capability_id, MAX_IDENTIFIER_LENGTH);
        let claim = match request.invocation_id {
            Some(id) if id.is_empty() || id.len() > MAX_INVOCATION_ID_LENGTH => {
                return Err(InvocationOutcome::from_error(
                    clip(id, MAX_INVOCATION_ID_LENGTH),
                    capability_id,
                    error(ErrorCode::InputInvalid, m::INVOCATION_ID_LENGTH),
                ));
            }
            Some(id) => Claim::Caller(Arc::from(id)),
            None => Claim::Generated(GeneratedId::next(self.clock.now_ms())),
        };
        // Step 2: a reserved id gets nothing else, not even an event. (An id held by a
        // ticket that has in fact expired or been cancelled is freed first.)
        let reservation = self.reserve(claim).or_else(|claim| {
            if self.sweep_stale(claim.id()) {
                self.reserve(claim)
            } else {
                Err(claim)
            }
        });
        let reservation = match reservation {
            Ok(reservation) => reservation,
            Err(claim) => {
                return Err(InvocationOutcome::from_error(
                    String::from(claim.id()),
                    capability_id,
                    error(ErrorCode::InvocationAlreadyActive, m::ALREADY_ACTIVE),
                ));
            }
        };
        // Step 4: detach the input, before even the capability lookup; no event.
        let index = self.catalog.position(&capability_id);
        let Some(input) = self.detach(index, request.input) else {
            return Err(InvocationOutcome::from_error(
                String::from(reservation.id()),
                capability_id,
                error(ErrorCode::InputInvalid, m::NOT_JSON),
            ));
        };
        let attempt = Attempt {
            reservation,
            capability_id,
            cancellation: request.cancellation,
            extensions: request.extensions,
            confirmed: false,
            index,
        };
        Ok((attempt, input))
    }

    /// Step 4. Text for a typed binding of a shaped schema is parsed straight into its typed
    /// input; if that parse refuses it (not JSON, not valid, not taken by the type), or for
    /// any other input, the input is parsed and measured as a `Value`, so every refusal is
    /// today's.
    fn detach(&self, index: Option<usize>, input: Input) -> Option<RunInput> {
        if let Input::Text(text) = &input
            && text.len() <= self.max_input_bytes
            && let Some(index) = index
            && let Some(shape) = self.catalog.capabilities[index].input.shape()
            && let Some(binding) = self.binding(index)
            && let Some(entry) = binding.handler.typed_entry()
            // Host code (the type's `Deserialize`): a panic takes the `Value` path.
            && let Some(Some(prepared)) = contain(|| entry.parse_text(text, shape))
            && let Input::Text(text) = input
        {
            return Some(RunInput::Typed {
                text: Arc::new(LazyText::new(text)),
                binding,
                prepared,
            });
        }
        // A value the capability's shape accepts, where the shape bounds how deep what it
        // accepts can nest: valid and within depth in one walk, so step 6 does not check it
        // again. Anything else is measured here and checked at step 6, in the reference's
        // order.
        let shape = || {
            self.catalog.capabilities[index?]
                .input
                .shape()
                .filter(|shape| shape.bounds_depth())
        };
        let input = match input {
            Input::Value(value) if shape().is_some_and(|shape| shape.accepts(&value)) => {
                return Some(RunInput::Checked(Arc::new(value)));
            }
            Input::Shared(value) if shape().is_some_and(|shape| shape.accepts(&value)) => {
                return Some(RunInput::Checked(value));
            }
            input => input,
        };
        let value = input.into_detached(self.max_input_bytes)?;
        Some(RunInput::Value(value.into_shared()))
    }

    /// Steps 5–14, shared by first attempts and confirmed re-runs. The reservation is held
    /// until the outcome is final, or handed to a pending confirmation.
    pub(crate) async fn run(
        self: &Arc<Self>,
        mut attempt: Attempt<'_>,
        input: RunInput,
    ) -> InvocationOutcome {
        let token = attempt.cancellation.as_ref();
        self.emit(
            attempt.reservation.id(),
            &attempt.capability_id,
            EventPhase::Requested,
            None,
        );

        let ask = Ask {
            token,
            extensions: &attempt.extensions,
            phase: PolicyPhase::Invoke,
            confirmed: attempt.confirmed,
            seen: None,
        };
        // Step 6: a synchronous policy's answer needs no future at all, and an
        // asynchronous one's is boxed, so neither adds to this future.
        // (In a block of its own, so the result's place ends with it.)
        let ready = {
            let start = self.readiness_start(attempt.index, input.readiness_input(), &ask);
            let result = match start {
                Start::Done(result) => result,
                Start::Pending(pending) => Box::pin(self.readiness_finish(pending, token)).await,
            };
            match result {
                Ok(ready) => ready,
                Err(e) => return self.fail(&attempt, e),
            }
        };

        if let PolicyDecision::Confirm { reason } = &ready.decision {
            if attempt.confirmed {
                return self.fail(
                    &attempt,
                    error(ErrorCode::PolicyDenied, m::CONFIRMED_NOT_ALLOWED),
                );
            }
            let reason = reason.clone();
            if let Some(store) = self.confirmation_store.clone() {
                // Boxed: only a runtime sharing its confirmations waits here.
                return Box::pin(self.issue_shared_confirmation(
                    store,
                    attempt,
                    input.into_value(),
                    &ready,
                    reason,
                ))
                .await;
            }
            return self.issue_confirmation(attempt, input.into_value(), &ready, reason);
        }

        // Step 9: observers run synchronously and may change host state: check again. With
        // no observer nothing runs between the post-policy recheck and here.
        self.emit(
            attempt.reservation.id(),
            &attempt.capability_id,
            EventPhase::Started,
            None,
        );
        if let Some(observer) = attempt.extensions.get::<crate::StartObserver>() {
            observer.tell();
        }
        if self.observer.is_some()
            && let Err(e) = self.recheck(&ready, token)
        {
            return self.fail(&attempt, e);
        }

        // Step 10: the handler gets its own copy of the input and the policy-time context
        // (moved: nothing reads it after this).
        let Ready {
            index,
            binding,
            context: semantic_context,
            ..
        } = ready;
        let context = InvocationContext {
            cancellation: CancellationSignal::new(attempt.cancellation.clone()),
            invocation_id: attempt.reservation.context_id(),
            requested_at: self.clock.now_ms(),
            semantic_context,
            extensions: attempt.extensions.clone(),
        };
        let binding = &*binding;
        let result = match token.filter(|_| self.abort_on_cancel) {
            // Opt-in: the caller's cancellation ends the invocation even if the handler
            // ignores it; its future is dropped, so its work stops at its next await.
            // Boxed for the same reason: an opt-in path.
            Some(token) => {
                match Box::pin(cancellable(token, || input.call(binding, context))).await {
                    Some(result) => result,
                    None => {
                        return self.fail(&attempt, error(ErrorCode::ExecutionAborted, m::ABORTED));
                    }
                }
            }
            None => match contain(|| input.call(binding, context)) {
                Some(future) => contain_async(future).await,
                None => None,
            },
        };

        // Step 11: failures never carry the handler's own text across, except a failure the
        // handler made public (`HandlerError::public`). A panic counts as a failure of no
        // particular kind.
        let output = match result {
            Some(Ok(output)) => output,
            failure => {
                let failure = failure.and_then(Result::err);
                if let Some(e) = &failure
                    && tracing::enabled!(target: "rcip::handler", tracing::Level::DEBUG)
                {
                    // Host `Display` code: contained like any other host code.
                    if let Some(text) = contain(|| e.to_string()) {
                        tracing::debug!(target: "rcip::handler", capability_id = %attempt.capability_id, error = %text, "handler failed");
                    }
                }
                let failure = failure.map(HandlerError::into_failure);
                return self.fail(&attempt, handler_failure(failure, token));
            }
        };

        // Step 12: the output must be schema-valid.
        let capability = &self.catalog.capabilities[index];
        if let Err(issues) = capability.output.check_host_output(&output) {
            // The consumer's issues name nothing of the output; the whole ones stay on the
            // host's side, in its log (checked again: only here, and only when enabled).
            if tracing::enabled!(target: "rcip::handler", tracing::Level::DEBUG)
                && let Err(whole) = capability.output.check(&output)
            {
                let whole = serde_json::to_string(&whole).unwrap_or_default();
                tracing::debug!(target: "rcip::handler", capability_id = %attempt.capability_id, issues = %whole, "handler output does not match its schema");
            }
            return self.fail(
                &attempt,
                RcipError::with_issues(ErrorCode::OutputInvalid, m::OUTPUT_SCHEMA, issues),
            );
        }

        // Step 13: succeeded event, then the refresh (listeners), then the id is released.
        self.emit(
            attempt.reservation.id(),
            &attempt.capability_id,
            EventPhase::Succeeded,
            None,
        );
        self.refresh();
        attempt.reservation.release();
        InvocationOutcome::Succeeded {
            invocation_id: attempt.reservation.take_id(),
            capability_id: attempt.capability_id,
            output,
        }
    }

    /// Emits the failed/denied event and builds the outcome.
    pub(crate) fn fail(&self, attempt: &Attempt<'_>, error: RcipError) -> InvocationOutcome {
        let phase = match error.code.status() {
            rcip_core::OutcomeStatus::Denied => EventPhase::Denied,
            _ => EventPhase::Failed,
        };
        self.emit(
            attempt.reservation.id(),
            &attempt.capability_id,
            phase,
            Some(error.code),
        );
        InvocationOutcome::from_error(
            String::from(attempt.reservation.id()),
            attempt.capability_id.clone(),
            error,
        )
    }

    /// Step 6 up to the policy's answer, synchronously: the capability (its catalog position,
    /// which the caller looked up; `None`: not in the catalog), binding, live availability,
    /// input schema, cancellation, policy; with a synchronous answer also the post-policy
    /// recheck and denial, so nothing is left to await.
    pub(crate) fn readiness_start(
        &self,
        index: Option<usize>,
        input: ReadinessInput<'_>,
        ask: &Ask<'_>,
    ) -> Start {
        let index = match index {
            Some(index) => index,
            None => return Start::Done(Err(error(ErrorCode::CapabilityNotFound, m::NOT_FOUND))),
        };
        let capability = &self.catalog.capabilities[index];
        let revision = self.revision();
        let Some(binding) = self.binding(index) else {
            return Start::Done(Err(error(ErrorCode::CapabilityUnbound, m::UNBOUND)));
        };
        let availability = binding.availability();
        if !availability.available {
            let message = availability
                .reason
                .map_or(Cow::Borrowed(m::UNAVAILABLE), Cow::Owned);
            return Start::Done(Err(error(ErrorCode::CapabilityUnavailable, message)));
        }
        // Text input passed the schema's shape as it was parsed into the typed input.
        if let Some(input) = input.value()
            && let Err(issues) = capability.input.check(input)
        {
            return Start::Done(Err(RcipError::with_issues(
                ErrorCode::InputInvalid,
                m::INPUT_SCHEMA,
                issues,
            )));
        }
        if is_cancelled(ask.token) {
            return Start::Done(Err(error(ErrorCode::ExecutionAborted, m::ABORTED)));
        }

        let context = match ask.seen {
            // Unchanged revision, unchanged context: no lock.
            Some(seen) if self.revision() == seen.revision => seen.context.clone(),
            _ => self.context(),
        };
        let policy_context = PolicyContext {
            phase: ask.phase,
            capability: capability_entry(capability, true, Some(availability), &context),
            input: input.into_policy_input(),
            semantic_context: context.clone(),
            confirmed: ask.confirmed,
            extensions: ask.extensions.clone(),
        };
        let checked = Checked {
            revision,
            index,
            binding,
            context,
        };
        let decision = match contain(|| self.policy.evaluate(policy_context)) {
            Some(PolicyVerdict::Ready(result)) => result.ok(),
            Some(PolicyVerdict::Pending(future)) => {
                return Start::Pending(Pending { checked, future });
            }
            None => None,
        };
        Start::Done(self.settle(checked, decision, ask.token))
    }

    /// The rest of step 6 after an asynchronous policy: its answer (awaited abortably), the
    /// post-policy recheck, denial.
    pub(crate) async fn readiness_finish(
        &self,
        pending: Pending,
        token: Option<&CancellationToken>,
    ) -> Result<Ready, RcipError> {
        let Pending { checked, future } = pending;
        let decision = match token {
            Some(token) => match cancellable(token, || future).await {
                None => return Err(error(ErrorCode::ExecutionAborted, m::ABORTED)),
                Some(result) => result.and_then(Result::ok),
            },
            None => contain_async(future).await.and_then(Result::ok),
        };
        self.settle(checked, decision, token)
    }

    /// The policy's answer (`None`: it failed or panicked), then the post-policy recheck and
    /// denial.
    fn settle(
        &self,
        checked: Checked,
        decision: Option<PolicyDecision>,
        token: Option<&CancellationToken>,
    ) -> Result<Ready, RcipError> {
        let Some(decision) = decision else {
            return Err(if is_cancelled(token) {
                error(ErrorCode::ExecutionAborted, m::ABORTED)
            } else {
                error(ErrorCode::PolicyEvaluationFailed, m::POLICY_FAILED)
            });
        };
        let Checked {
            revision,
            index,
            binding,
            context,
        } = checked;
        let ready = Ready {
            revision,
            index,
            binding,
            context,
            decision,
        };
        self.recheck(&ready, token)?;
        if let PolicyDecision::Deny { reason } = ready.decision {
            let message = reason.map_or(Cow::Borrowed(m::DENIED), Cow::Owned);
            return Err(error(ErrorCode::PolicyDenied, message));
        }
        Ok(ready)
    }

    /// The post-policy recheck (steps 6h, 7 and 9): cancellation, binding identity,
    /// context, live availability.
    pub(crate) fn recheck(
        &self,
        ready: &Ready,
        token: Option<&CancellationToken>,
    ) -> Result<(), RcipError> {
        if is_cancelled(token) {
            return Err(error(ErrorCode::ExecutionAborted, m::ABORTED));
        }
        if self.revision() != ready.revision {
            let current = self.binding(ready.index);
            if current.is_none_or(|b| b.generation != ready.binding.generation) {
                return Err(error(ErrorCode::CapabilityUnbound, m::BINDING_CHANGED));
            }
            let context = self.context();
            if !Arc::ptr_eq(&context, &ready.context) && *context != *ready.context {
                return Err(error(ErrorCode::PolicyDenied, m::CONTEXT_CHANGED));
            }
        }
        // The binding is the same one, so its availability check is the one to ask.
        if !ready.binding.availability().available {
            return Err(error(
                ErrorCode::CapabilityUnavailable,
                m::NO_LONGER_AVAILABLE,
            ));
        }
        Ok(())
    }
}

/// What a failed handler reports (step 11; a non-JSON output is step 12's `OUTPUT_INVALID`,
/// whether or not the invocation was cancelled). `None`: the handler panicked.
fn handler_failure(failure: Option<Failure>, token: Option<&CancellationToken>) -> RcipError {
    match failure {
        Some(Failure::InvalidOutput(_)) => error(ErrorCode::OutputInvalid, m::OUTPUT_NOT_JSON),
        _ if is_cancelled(token) => error(ErrorCode::ExecutionAborted, m::ABORTED),
        Some(Failure::Aborted) => error(ErrorCode::ExecutionAborted, m::ABORTED),
        Some(Failure::Public(public)) if public.issues.is_empty() => {
            error(ErrorCode::ExecutionFailed, public.outcome_message())
        }
        Some(Failure::Public(public)) => {
            let message = public.outcome_message();
            RcipError::with_issues(ErrorCode::ExecutionFailed, message, public.issues)
        }
        Some(Failure::Failed(_)) | None => error(ErrorCode::ExecutionFailed, m::EXECUTION_FAILED),
    }
}
