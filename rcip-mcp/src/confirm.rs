//! Pending confirmations put to the human: an `elicitation/create` request (2025-11-25) or
//! an `input_required` round with a sealed `requestState` (2026-07-28).

use std::sync::Arc;
use std::time::Duration;

use rcip_core::{ConfirmationInfo, Effect, ErrorCode, InvocationOutcome};
use rcip_export::Export;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, InputRequest, InputRequests, InputRequiredResult, SealOptions,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::approval::{Slot, pending_result};
use crate::bridge::{Consumed, Inner, PendingConfirmation};
use crate::broker::ConfirmationAnswer;
use crate::context::lock;
use crate::context::now_ms;
use crate::context::{Call, is_modern, linked, supports_tasks};
use crate::results::{self, error_result, outcome_result};
use crate::tasks::{self, Run, TaskSetup};

/// The key of the one input request the bridge makes.
const CONFIRM_KEY: &str = "confirm";
/// Domain separation for the sealed state's associated data.
const BINDING_LABEL: &str = "rcip-mcp/confirmation/v1";
/// The stable code of a replayed `requestState`.
pub(crate) const ALREADY_USED: &str = "CONFIRMATION_ALREADY_USED";

/// What a sealed `requestState` carries (readable, not secret: it is what the human is
/// shown anyway); the tool, the arguments and the principal are bound as associated data.
#[derive(Serialize, Deserialize)]
struct State {
    /// The confirmation id.
    c: String,
    /// When it expires (epoch ms).
    x: u64,
    /// Title, description and effect, to ask again when a retry lacks the answer.
    t: String,
    d: String,
    e: Effect,
}

/// Whether a confirmation this request raises waits for the host's own interface: the
/// bridge has no broker, or the client cannot show a form.
pub(crate) fn waits_for_host(inner: &Inner, ctx: &RequestContext<RoleServer>) -> bool {
    inner.broker.is_none() || !can_elicit_form(ctx)
}

/// Whether the request's client can show a form elicitation.
fn can_elicit_form(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The associated data that binds a state to the tool, the arguments and the principal.
fn binding(call: &Call) -> Result<Vec<u8>, McpError> {
    call.binding(BINDING_LABEL)
        .ok_or_else(|| McpError::invalid_params("The tool arguments are too deeply nested.", None))
}

fn effect_text(effect: Effect) -> &'static str {
    match effect {
        Effect::Read => "read: it only reads",
        Effect::Write => "write: it changes data in the application",
        Effect::External => "external: it acts outside the application",
        Effect::Destructive => "destructive: it may remove or overwrite data for good",
    }
}

/// The form the human answers.
fn form(title: &str, description: &str, effect: Effect) -> Result<ElicitRequestParams, McpError> {
    serde_json::from_value(json!({
        "mode": "form",
        "message": format!("{title}\n\n{description}\n\nEffect: {}.\n\nApprove this operation?", effect_text(effect)),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "confirm": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": format!("Approve \"{title}\"?"),
                    "default": false
                }
            },
            "required": ["confirm"]
        }
    }))
    .map_err(|_| McpError::internal_error("The confirmation form could not be built.", None))
}

/// Whether the elicitation answer approves.
fn approves(result: &ElicitResult) -> bool {
    result.action == ElicitationAction::Accept
        && result
            .content
            .as_ref()
            .and_then(|c| c.get(CONFIRM_KEY))
            .and_then(Value::as_bool)
            == Some(true)
}

/// What a call's invocation was given that a pending confirmation carries on.
pub(crate) struct CallRun {
    /// The invocation's cancellation.
    pub(crate) token: CancellationToken,
    /// The confirmation waits for the host (no broker, or a client that cannot ask).
    pub(crate) waits: bool,
    /// Where the host's answer lands, when the confirmation waits for the host and this
    /// bridge remembers the call (confirmations not shared).
    pub(crate) slot: Option<Slot>,
    /// The call may become a task once approved.
    pub(crate) task: Option<TaskSetup>,
}

/// Ends a call whose invocation returned `outcome`: a pending confirmation is put to the
/// human when the era, the client and the bridge allow it.
pub(crate) async fn finish(
    inner: &Arc<Inner>,
    export: &Export,
    call: &Call,
    outcome: InvocationOutcome,
    run: CallRun,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let CallRun {
        token,
        waits,
        slot,
        task,
    } = run;
    let InvocationOutcome::ConfirmationRequired { confirmation, .. } = outcome else {
        return Ok(outcome_result(inner, export, outcome).into());
    };
    let broker = match &inner.broker {
        Some(broker) if !waits => broker.clone(),
        // Nobody here can ask the human: the host does, in its own interface, and the
        // caller's retry gets the outcome (remembered here, or filed in the shared store).
        _ => {
            if let Some(slot) = slot {
                inner
                    .awaiting
                    .insert(call, &confirmation.title, confirmation.expires_at, slot);
            }
            return Ok(pending_result(&confirmation.title).into());
        }
    };
    if is_modern(ctx) {
        return input_required(inner, call, &confirmation, token, task);
    }
    let params = form(
        &confirmation.title,
        &confirmation.description,
        confirmation.effect,
    )?;
    let left = || Duration::from_millis(confirmation.expires_at.saturating_sub(now_ms()));
    let cancelled = || {
        token.cancel();
        Ok(error_result(
            ErrorCode::ExecutionAborted.as_str(),
            "The capability invocation was cancelled.",
            &[],
        )
        .into())
    };
    // Instances sharing the session ask one at a time (see `Relay::take_turn`); a call
    // cancelled while it waits for its turn stops waiting.
    let link = crate::relay::SessionLink::of(ctx);
    let Some(_held) = crate::relay::turn_unless(link, left(), &ctx.ct).await else {
        return cancelled();
    };
    // The ticket's time left once it is this call's turn: the question ends with the ticket.
    let asked = crate::elicit::ask_form(&ctx.peer, params, left());
    let answer = tokio::select! {
        answer = asked => answer,
        () = ctx.ct.cancelled() => return cancelled(),
    };
    let approved = answer.as_ref().is_ok_and(approves);
    let answer = ConfirmationAnswer {
        confirmation_id: confirmation.id.clone(),
        capability_id: call.capability_id.clone(),
        approved,
        principal: call.principal.clone(),
    };
    let outcome = linked(&ctx.ct, &token, broker.resolve(answer)).await;
    Ok(outcome_result(inner, export, outcome).into())
}

/// The 2026-07-28 round asking for the human's answer, its state sealed and recorded.
fn input_required(
    inner: &Inner,
    call: &Call,
    confirmation: &ConfirmationInfo,
    token: CancellationToken,
    task: Option<TaskSetup>,
) -> Result<CallToolResponse, McpError> {
    let now = now_ms();
    let state = State {
        c: confirmation.id.clone(),
        x: confirmation.expires_at,
        t: confirmation.title.clone(),
        d: confirmation.description.clone(),
        e: confirmation.effect,
    };
    let sealed = seal(inner, call, &state, now)?;
    lock(&inner.confirmations).insert(
        confirmation.id.clone(),
        PendingConfirmation {
            token,
            expires_at: confirmation.expires_at,
            task,
        },
        now,
    );
    ask(&state, sealed)
}

fn seal(inner: &Inner, call: &Call, state: &State, now: u64) -> Result<String, McpError> {
    let binding = binding(call)?;
    let ttl = Duration::from_millis(state.x.saturating_sub(now));
    inner
        .codec
        .seal_json_with(
            state,
            &SealOptions::new().associated_data(&binding).ttl(ttl),
        )
        .map_err(|_| McpError::internal_error("The confirmation state could not be sealed.", None))
}

fn ask(state: &State, sealed: String) -> Result<CallToolResponse, McpError> {
    let params = form(&state.t, &state.d, state.e)?;
    let mut requests = InputRequests::new();
    requests.insert(
        CONFIRM_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Ok(InputRequiredResult::new(Some(requests), Some(sealed)).into())
}

/// One refusal for every state that does not open: forged, tampered, expired, or sealed for
/// another tool, other arguments or another principal.
pub(crate) fn refused() -> McpError {
    McpError::invalid_params(
        "The requestState is not valid for this request (altered, expired, or issued for another call).",
        None,
    )
}

/// A 2026-07-28 retry carrying a `requestState`.
pub(crate) async fn retry(
    inner: &Arc<Inner>,
    export: &Export,
    call: &Call,
    sealed: &str,
    request: &CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let binding = binding(call)?;
    let state: State = inner
        .codec
        .open_json_with(sealed, &binding)
        .map_err(|_| refused())?;
    let now = now_ms();
    if state.x < now {
        return Err(refused());
    }
    let Some(broker) = inner.broker.clone() else {
        return Err(refused());
    };
    let already = || {
        McpError::invalid_params(
            format!("{ALREADY_USED}: this confirmation was already answered."),
            None,
        )
    };
    let Some(response) = request
        .input_responses
        .as_ref()
        .and_then(|r| r.get(CONFIRM_KEY))
    else {
        if lock(&inner.confirmations).is_consumed(&state.c) {
            return Err(already());
        }
        // No answer yet: ask again, with the same state.
        return ask(&state, sealed.to_owned());
    };
    let Ok(answer) = serde_json::from_value::<ElicitResult>(response.clone()) else {
        return Err(McpError::invalid_params(
            "inputResponses.confirm is not an elicitation result.",
            None,
        ));
    };
    let pending = match lock(&inner.confirmations).consume(&state.c, state.x, now) {
        Consumed::Again => return Err(already()),
        Consumed::First(pending) => pending,
    };
    let (token, task) =
        pending.map_or_else(|| (CancellationToken::new(), None), |p| (p.token, p.task));
    let answer = ConfirmationAnswer {
        confirmation_id: state.c.clone(),
        capability_id: call.capability_id.clone(),
        approved: approves(&answer),
        principal: call.principal.clone(),
    };
    // Approved, a long-running call becomes a task once its handler starts.
    let outcome = match task.filter(|_| supports_tasks(ctx)) {
        Some(setup) => {
            let resolving = {
                let broker = broker.clone();
                async move { broker.resolve(answer).await }
            };
            let complete = results::task_state(inner.clone());
            match tasks::run(
                &inner.tasks,
                call,
                &setup,
                token,
                &ctx.ct,
                resolving,
                complete,
            )
            .await
            {
                Run::Task(created) => return Ok(created),
                Run::Finished(outcome) => outcome,
            }
        }
        None => linked(&ctx.ct, &token, broker.resolve(answer)).await,
    };
    // The state opened, so the confirmation existed and has not expired: not found means
    // it was answered already, through another instance or the host's own interface.
    if outcome
        .error()
        .is_some_and(|e| e.code == ErrorCode::ConfirmationNotFound)
    {
        return Err(already());
    }
    Ok(outcome_result(inner, export, outcome).into())
}
