//! One turn, step for step as the reference's section 6.3: decide once; a message, or one
//! batch validated whole; the batch run in order until the first non-success, with
//! confirmations through the host and cancellable delays between actions; one summarize
//! call that can only talk.

use std::sync::Arc;

use rcip_core::{
    ApplicationSnapshot, Effect, ErrorCode, InvocationOutcome, OutcomeStatus, RcipError,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::callbacks::PendingConfirmation;
use super::engine::Inner;
use super::options::AssistMode;
use super::protocol::{
    AssistAction, AssistRequest, AssistStep, Decision, Phase, Role, fallback_summary, message_of,
    validate_decision,
};
use super::report::{
    CANCELLED_MESSAGE, FAILED_MESSAGE, READ_ONLY_DENIED_MESSAGE, TurnEnding, TurnFailure,
    TurnReport,
};
use super::status::AssistStatus;
use rcip_runtime::__private::shared::messages as m;
use rcip_runtime::__private::shared::{cancellable, next_sequenced_id, try_sleep};
use rcip_runtime::InvocationRequest;
use rcip_runtime::{Clock, SystemClock};

/// Why a turn stopped early.
enum Stop {
    Cancelled,
    Failed(TurnFailure),
}

impl Inner {
    /// Runs one turn for `text` (already trimmed and non-empty); `decide` first sees
    /// `snapshot` (the one the processors saw).
    pub(super) async fn run_turn(
        &self,
        text: String,
        snapshot: Arc<ApplicationSnapshot>,
        token: &CancellationToken,
    ) -> TurnReport {
        let turn_id = next_sequenced_id("turn_", SystemClock.now_ms(), str::to_owned);
        self.append(Role::User, text);
        self.with_state(|state| state.set_status(AssistStatus::Working));
        let mut steps = Vec::new();
        let turn = self.turn(&turn_id, snapshot, token, &mut steps).await;
        let (ending, content, status) = match turn {
            Ok((TurnEnding::Answered, text)) => (TurnEnding::Answered, text, AssistStatus::Active),
            Ok((ending, text)) => {
                let all_succeeded = !steps.is_empty()
                    && steps
                        .iter()
                        .all(|s| s.outcome.status() == OutcomeStatus::Succeeded);
                let status = if all_succeeded {
                    AssistStatus::Success
                } else {
                    AssistStatus::Error
                };
                (ending, text, status)
            }
            Err(Stop::Cancelled) => (
                TurnEnding::Cancelled,
                CANCELLED_MESSAGE.to_owned(),
                AssistStatus::Active,
            ),
            Err(Stop::Failed(failure)) => (
                TurnEnding::Failed(failure),
                FAILED_MESSAGE.to_owned(),
                AssistStatus::Error,
            ),
        };
        let reply = self.append(Role::Assistant, content);
        self.with_state(|state| {
            state.set_pending(None);
            state.set_status(status);
        });
        TurnReport {
            turn_id,
            ending,
            steps,
            reply,
            status,
        }
    }

    async fn turn(
        &self,
        turn_id: &str,
        snapshot: Arc<ApplicationSnapshot>,
        token: &CancellationToken,
        steps: &mut Vec<AssistStep>,
    ) -> Result<(TurnEnding, String), Stop> {
        // The conversation does not change until the turn answers: one history serves both
        // calls.
        let messages = self.history();
        let request = |phase, snapshot, steps| AssistRequest {
            messages: messages.clone(),
            mode: self.config.mode,
            phase,
            snapshot,
            steps,
            turn_id: turn_id.to_owned(),
        };
        let response = self
            .call(request(Phase::Decide, snapshot, Vec::new()), token)
            .await?;
        let actions = match validate_decision(&response, self.config.max_batch_size) {
            Ok(Decision::Message(text)) => return Ok((TurnEnding::Answered, text)),
            Ok(Decision::Actions(actions)) => actions,
            Err(error) => return Err(Stop::Failed(error.into())),
        };
        let count = actions.len();
        for (index, mut action) in actions.into_iter().enumerate() {
            if token.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            let id = action
                .id
                .get_or_insert_with(|| {
                    next_sequenced_id("action_", SystemClock.now_ms(), str::to_owned)
                })
                .clone();
            let outcome = self.execute(&action, &id, token).await;
            let (outcome, stop) = match outcome.confirmation().map(|c| c.id.clone()) {
                Some(ticket) => self.confirm(&action, outcome, ticket, token).await,
                None => (outcome, None),
            };
            let succeeded = outcome.status() == OutcomeStatus::Succeeded;
            let delay = self.config.delays.get(action.delay_after);
            steps.push(AssistStep { action, outcome });
            if let Some(stop) = stop {
                return Err(stop);
            }
            if token.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            if !succeeded {
                break;
            }
            if index + 1 < count && !delay.is_zero() {
                // No timers, no pause.
                if let Some(sleep) = try_sleep(delay) {
                    tokio::select! {
                        biased;
                        () = token.cancelled() => return Err(Stop::Cancelled),
                        () = sleep => {}
                    }
                }
            }
        }
        // Summarize sees the snapshot as the actions left it.
        let summarize = request(Phase::Summarize, self.decide_snapshot(), steps.clone());
        let summary = match self.call(summarize, token).await {
            Ok(response) => message_of(&response),
            Err(Stop::Cancelled) => return Err(Stop::Cancelled),
            Err(Stop::Failed(_)) => None,
        };
        Ok(match summary {
            Some(text) => (TurnEnding::Summarized, text),
            None => (TurnEnding::FallbackSummary, fallback_summary(steps)),
        })
    }

    /// One `decide` call. Assist stops waiting as soon as the token is cancelled, and an
    /// answer that arrives after the cancellation is the cancellation too.
    async fn call(&self, request: AssistRequest, token: &CancellationToken) -> Result<Value, Stop> {
        let decide = &self.config.decide;
        let Some(answer) = cancellable(token, || decide.decide(request, token.clone())).await
        else {
            return Err(Stop::Cancelled);
        };
        if token.is_cancelled() {
            return Err(Stop::Cancelled);
        }
        match answer {
            Some(Ok(response)) => Ok(response),
            Some(Err(error)) => Err(Stop::Failed(TurnFailure::Decide(error.to_string()))),
            None => Err(Stop::Failed(TurnFailure::Decide(
                "the callback panicked".to_owned(),
            ))),
        }
    }

    /// Runs one action with its id as the invocation id. In read-only mode an action whose
    /// capability is not a read is refused here, without a runtime call: `POLICY_DENIED`
    /// with the reference's message, or `CAPABILITY_NOT_FOUND` (the runtime's own answer)
    /// for an unknown id, where the reference says `POLICY_DENIED`.
    async fn execute(
        &self,
        action: &AssistAction,
        id: &str,
        token: &CancellationToken,
    ) -> InvocationOutcome {
        if self.config.mode == AssistMode::ReadOnly {
            let snapshot = self.config.client.get_snapshot();
            let effect = snapshot
                .capabilities
                .iter()
                .find(|c| c.contract.id == action.capability_id)
                .map(|c| c.contract.effect);
            let refusal = match effect {
                None => Some(RcipError::new(ErrorCode::CapabilityNotFound, m::NOT_FOUND)),
                Some(Effect::Read) => None,
                Some(_) => Some(RcipError::new(
                    ErrorCode::PolicyDenied,
                    READ_ONLY_DENIED_MESSAGE,
                )),
            };
            if let Some(error) = refusal {
                return InvocationOutcome::from_error(
                    id.to_owned(),
                    action.capability_id.clone(),
                    error,
                );
            }
        }
        let Some(input) = action.input.clone() else {
            return InvocationOutcome::from_error(
                id.to_owned(),
                action.capability_id.clone(),
                RcipError::new(ErrorCode::InputInvalid, m::NOT_JSON),
            );
        };
        let request = InvocationRequest::new(action.capability_id.clone(), input)
            .with_id(id)
            .with_cancellation(token.clone());
        self.config.client.invoke(request).await
    }

    /// Hands a `confirmation_required` outcome to the trusted resolver and resolves the
    /// ticket with its answer. Cancelling the turn declines the ticket (which, its
    /// invocation being cancelled, answers with the `EXECUTION_ABORTED` receipt); a resolver
    /// that fails declines it too and fails the turn.
    async fn confirm(
        &self,
        action: &AssistAction,
        outcome: InvocationOutcome,
        ticket: String,
        token: &CancellationToken,
    ) -> (InvocationOutcome, Option<Stop>) {
        let pending = PendingConfirmation {
            action: action.clone(),
            outcome,
        };
        self.with_state(|state| {
            state.set_pending(Some(pending.clone()));
            state.set_status(AssistStatus::Attention);
        });
        let confirmations = &self.config.confirmations;
        let answer = cancellable(token, || confirmations.ask(pending, token.clone())).await;
        let (approved, stop) = match answer {
            _ if token.is_cancelled() => (false, Some(Stop::Cancelled)),
            Some(Some(Ok(approved))) => (approved, None),
            _ => (false, Some(Stop::Failed(TurnFailure::Confirmation))),
        };
        // The card goes as soon as there is an answer; an approved action runs as `working`.
        self.with_state(|state| {
            state.set_pending(None);
            if stop.is_none() {
                state.set_status(AssistStatus::Working);
            }
        });
        let resolved = self.config.confirmations.resolve(&ticket, approved).await;
        (resolved, stop)
    }
}
