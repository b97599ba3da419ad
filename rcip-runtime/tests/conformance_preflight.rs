//! Conformance: preflight (reference section 5, with the readiness pipeline of 4.1 step 6
//! and the policy phase of 3.5).
//!
//! Batch bounds, every per-proposal outcome (`ready`, `confirmation_required`, `blocked`
//! with each readiness code), input order, duplicates, what the policy sees, what
//! preflight must not do (run handlers, emit events, refresh, reserve ids, create tickets),
//! concurrency of policy calls, staleness (`PREFLIGHT_STALE`) and `checkedAt`.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{EventRecorder, ManualClock, definition, echo_binding, note};
use rcip_runtime::*;
use serde_json::{Value, json};

// ----- fixtures -------------------------------------------------------------------------

const T0: u64 = 1_700_000_000_000;
const BATCH_SIZE: &str = "RCIP preflight requires between 1 and 16 independent proposals.";
const NOT_FOUND: &str = "The requested capability is not part of this application.";
const UNBOUND: &str = "The requested capability has no live application binding.";
const INPUT_SCHEMA: &str = "The capability input does not match its declared schema.";
const PROPOSAL_NOT_JSON: &str = "The proposed capability input must be a JSON value.";
const DEFAULT_DENIAL: &str = "The host application denied this operation.";
const POLICY_FAILED: &str = "The host application could not evaluate this operation safely.";
const ABORTED: &str = "The capability invocation was cancelled.";
const STALE: &str =
    "Application discovery changed during preflight. Check the current state again.";
const CONTEXT_CHANGED: &str = "Application context changed. Request the operation again.";
const NO_LONGER_AVAILABLE: &str = "The capability is no longer available.";
const CONFIRM_REASON: &str = "Sharing publishes the note outside the team.";
const DENY_REASON: &str = "Creating notes is paused.";

/// The fixture policy's decision: by the proposal's `title` when it names one, else by
/// effect (read/write allowed, destructive confirmed, external denied).
fn decide(ctx: &PolicyContext) -> Result<PolicyDecision, PolicyError> {
    let title = ctx
        .input()
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("");
    Ok(match title {
        "allow" => PolicyDecision::Allow,
        "deny" => PolicyDecision::Deny { reason: None },
        "deny-reason" => PolicyDecision::deny(DENY_REASON),
        "confirm" => PolicyDecision::Confirm { reason: None },
        "confirm-reason" => PolicyDecision::confirm(CONFIRM_REASON),
        "fail" => return Err("policy store unreachable: secret detail".into()),
        _ => match ctx.capability().effect {
            Effect::Read | Effect::Write => PolicyDecision::Allow,
            Effect::Destructive => PolicyDecision::Confirm { reason: None },
            Effect::External => PolicyDecision::Deny { reason: None },
        },
    })
}

/// `(phase, confirmed, capability id)` of every policy call.
type PolicyLog = Arc<Mutex<Vec<(PolicyPhase, bool, String)>>>;

/// The fixture policy. With a gate, preflight-phase decisions wait until the gate is
/// cancelled ("opened"); invoke-phase decisions never wait.
struct TestPolicy {
    log: PolicyLog,
    gate: Option<CancellationToken>,
}

impl Policy for TestPolicy {
    fn evaluate(&self, context: PolicyContext) -> PolicyVerdict {
        self.log.lock().unwrap().push((
            context.phase(),
            context.confirmed(),
            context.capability().id.to_string(),
        ));
        let decision = decide(&context);
        match &self.gate {
            Some(gate) if context.phase() == PolicyPhase::Preflight => {
                let gate = gate.clone();
                PolicyVerdict::Pending(Box::pin(async move {
                    gate.cancelled().await;
                    decision
                }))
            }
            _ => PolicyVerdict::Ready(decision),
        }
    }
}

const NOTE_CAPABILITIES: [&str; 4] = ["notes.read", "notes.create", "notes.share", "notes.purge"];

struct Fx {
    host: Host,
    client: Arc<dyn RcipClient>,
    events: EventRecorder,
    clock: Arc<ManualClock>,
    calls: Arc<AtomicU64>,
    policy_log: PolicyLog,
    gate: CancellationToken,
    guards: HashMap<&'static str, BindingGuard>,
}

impl Fx {
    /// The common catalog, every note capability bound to a counting echo handler; the
    /// fixture policy, gated if `gated`; a manual clock; a recorder (cleared).
    fn new(gated: bool) -> Fx {
        let events = EventRecorder::default();
        let clock = ManualClock::at(T0);
        let policy_log = PolicyLog::default();
        let gate = CancellationToken::new();
        let policy = TestPolicy {
            log: policy_log.clone(),
            gate: gated.then(|| gate.clone()),
        };
        let options = RuntimeOptions::default()
            .clock(clock.clone())
            .policy(Arc::new(policy))
            .confirmation_ttl(Duration::from_secs(1))
            .on_event(events.observer());
        let runtime = Runtime::new(definition(), options).unwrap();
        let host = runtime.host();
        let calls = Arc::new(AtomicU64::new(0));
        let mut guards = HashMap::new();
        for id in NOTE_CAPABILITIES {
            guards.insert(id, host.bind(id, echo_binding(calls.clone())).unwrap());
        }
        Fx {
            client: runtime.client(),
            host,
            events,
            clock,
            calls,
            policy_log,
            gate,
            guards,
        }
    }

    async fn preflight(&self, requests: Vec<PreflightProposal>) -> PreflightReport {
        self.client
            .preflight(PreflightBatch::new(requests))
            .await
            .unwrap()
    }

    fn revision(&self) -> u64 {
        self.client.get_snapshot().revision
    }

    fn policy_calls(&self) -> usize {
        self.policy_log.lock().unwrap().len()
    }

    /// Replaces a capability's binding.
    fn rebind(&mut self, id: &'static str, binding: Binding) {
        if let Some(guard) = self.guards.remove(id) {
            assert!(guard.unbind());
        }
        self.guards.insert(id, self.host.bind(id, binding).unwrap());
    }

    /// Nothing happened on the invocation side: no handler, no event.
    fn assert_no_side_effects(&self) {
        assert_eq!(self.calls.load(Ordering::SeqCst), 0, "no handler ran");
        assert!(self.events.phases(None).is_empty(), "no event");
    }
}

fn proposal(capability: &str, title: &str) -> PreflightProposal {
    PreflightProposal::new(capability, note(title))
}

fn ready(capability: &str, effect: Effect) -> PreflightOutcome {
    PreflightOutcome::Ready {
        capability_id: capability.to_owned(),
        effect,
    }
}

fn needs_confirmation(capability: &str, effect: Effect, reason: &str) -> PreflightOutcome {
    PreflightOutcome::ConfirmationRequired {
        capability_id: capability.to_owned(),
        effect,
        reason: reason.to_owned(),
    }
}

fn blocked(capability: &str, code: ErrorCode, message: &str) -> PreflightOutcome {
    PreflightOutcome::Blocked {
        capability_id: capability.to_owned(),
        error: RcipError::new(code, message.to_owned()),
    }
}

/// Lets spawned tasks run until `done` holds.
async fn wait_until(done: impl Fn() -> bool) {
    for _ in 0..1000 {
        if done() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("condition not reached");
}

// ----- batch bounds ---------------------------------------------------------------------------

/// 5: an empty batch is rejected with the reference's message.
#[tokio::test]
async fn batch_of_zero_is_rejected() {
    let fx = Fx::new(false);
    let error = fx
        .client
        .preflight(PreflightBatch::new(vec![]))
        .await
        .unwrap_err();
    assert_eq!(error, Error::PreflightBatchSize(0));
    assert_eq!(error.to_string(), BATCH_SIZE);
    assert_eq!(fx.policy_calls(), 0);
}

/// 5: 17 proposals are rejected with the reference's message; no policy is asked.
#[tokio::test]
async fn batch_of_seventeen_is_rejected() {
    let fx = Fx::new(false);
    let requests = vec![proposal("notes.read", "r"); 17];
    let error = fx
        .client
        .preflight(PreflightBatch::new(requests))
        .await
        .unwrap_err();
    assert_eq!(error, Error::PreflightBatchSize(17));
    assert_eq!(error.to_string(), BATCH_SIZE);
    assert_eq!(fx.policy_calls(), 0);
}

/// 5: 1 and 16 proposals are accepted; one outcome per proposal.
#[tokio::test]
async fn batches_of_one_and_sixteen_are_accepted() {
    let fx = Fx::new(false);
    let one = fx.preflight(vec![proposal("notes.read", "r")]).await;
    assert_eq!(one.outcomes, vec![ready("notes.read", Effect::Read)]);
    let sixteen = fx.preflight(vec![proposal("notes.read", "r"); 16]).await;
    assert_eq!(
        sixteen.outcomes,
        vec![ready("notes.read", Effect::Read); 16]
    );
    assert!(sixteen.consistent);
    assert_eq!(fx.policy_calls(), 17);
}

// ----- outcomes -------------------------------------------------------------------------------

/// 5: `ready` carries the capability's effect; the whole report is exact (revision,
/// `checkedAt` from the clock, consistent).
#[tokio::test]
async fn ready_outcome_carries_the_effect() {
    let fx = Fx::new(false);
    let revision = fx.revision();
    fx.clock.advance(250);
    let report = fx
        .preflight(vec![
            proposal("notes.create", "write"),
            PreflightProposal::new("app.ping", json!({})),
        ])
        .await;
    assert_eq!(
        report,
        PreflightReport::new(
            revision,
            T0 + 250,
            true,
            vec![
                ready("notes.create", Effect::Write),
                blocked("app.ping", ErrorCode::CapabilityUnbound, UNBOUND),
            ],
        )
    );
    fx.assert_no_side_effects();
}

/// 5: `confirmation_required` with reason = policy reason, or the capability description
/// when none; no ticket is created: no events, and nothing expires later.
#[tokio::test(start_paused = true)]
async fn confirmation_required_creates_no_ticket() {
    let fx = Fx::new(false);
    let report = fx
        .preflight(vec![
            proposal("notes.purge", "purge"),
            proposal("notes.share", "confirm-reason"),
            proposal("notes.create", "confirm"),
        ])
        .await;
    assert_eq!(
        report.outcomes,
        vec![
            needs_confirmation(
                "notes.purge",
                Effect::Destructive,
                "Description of notes.purge."
            ),
            needs_confirmation("notes.share", Effect::External, CONFIRM_REASON),
            needs_confirmation(
                "notes.create",
                Effect::Write,
                "Description of notes.create."
            ),
        ]
    );
    // A ticket would expire after the 1 s TTL and emit `failed`; nothing does.
    tokio::time::sleep(Duration::from_secs(5)).await;
    fx.assert_no_side_effects();
}

/// 5/4.1 6a: an unknown capability is blocked CAPABILITY_NOT_FOUND.
#[tokio::test]
async fn blocked_not_found() {
    let fx = Fx::new(false);
    let report = fx.preflight(vec![proposal("notes.missing", "x")]).await;
    assert_eq!(
        report.outcomes,
        vec![blocked(
            "notes.missing",
            ErrorCode::CapabilityNotFound,
            NOT_FOUND
        )]
    );
    assert_eq!(fx.policy_calls(), 0);
}

/// 5/4.1 6b: a declared but unbound capability is blocked CAPABILITY_UNBOUND.
#[tokio::test]
async fn blocked_unbound() {
    let mut fx = Fx::new(false);
    assert!(fx.guards.remove("notes.share").unwrap().unbind());
    let report = fx.preflight(vec![proposal("notes.share", "x")]).await;
    assert_eq!(
        report.outcomes,
        vec![blocked(
            "notes.share",
            ErrorCode::CapabilityUnbound,
            UNBOUND
        )]
    );
    assert_eq!(fx.policy_calls(), 0);
}

/// 5/4.1 6c: an unavailable capability is blocked CAPABILITY_UNAVAILABLE with the host's
/// reason.
#[tokio::test]
async fn blocked_unavailable_with_the_host_reason() {
    let mut fx = Fx::new(false);
    let calls = fx.calls.clone();
    fx.rebind(
        "notes.create",
        echo_binding(calls).with_availability(|| {
            Availability::unavailable("OFFLINE", "Notes are read-only while offline.")
        }),
    );
    let report = fx.preflight(vec![proposal("notes.create", "x")]).await;
    assert_eq!(
        report.outcomes,
        vec![blocked(
            "notes.create",
            ErrorCode::CapabilityUnavailable,
            "Notes are read-only while offline."
        )]
    );
    assert_eq!(fx.policy_calls(), 0);
}

/// 5/4.1 6d: schema failure is blocked INPUT_INVALID with validation issues.
#[tokio::test]
async fn blocked_input_invalid_with_validation_issues() {
    let fx = Fx::new(false);
    let report = fx
        .preflight(vec![PreflightProposal::new(
            "notes.create",
            json!({"count": 1}),
        )])
        .await;
    let [
        PreflightOutcome::Blocked {
            capability_id,
            error,
        },
    ] = report.outcomes.as_slice()
    else {
        panic!("{report:?}");
    };
    assert_eq!(capability_id, "notes.create");
    assert_eq!(error.code, ErrorCode::InputInvalid);
    assert_eq!(error.message, INPUT_SCHEMA);
    let issues = error.validation_issues.as_ref().unwrap();
    assert!(!issues.is_empty());
    assert!(issues.iter().any(|i| i.keyword == "required"), "{issues:?}");
    assert_eq!(fx.policy_calls(), 0);
}

/// 5: a proposal whose input is not a JSON value is blocked INPUT_INVALID with the
/// preflight-specific message and no validation issues — before even the lookup.
#[tokio::test]
async fn blocked_non_json_proposal_input() {
    let fx = Fx::new(false);
    let report = fx
        .preflight(vec![
            PreflightProposal::new("notes.create", Input::text("{not json")),
            PreflightProposal::new("notes.missing", Input::text("")),
        ])
        .await;
    assert_eq!(
        report.outcomes,
        vec![
            blocked("notes.create", ErrorCode::InputInvalid, PROPOSAL_NOT_JSON),
            blocked("notes.missing", ErrorCode::InputInvalid, PROPOSAL_NOT_JSON),
        ]
    );
    assert_eq!(fx.policy_calls(), 0);
}

/// 5/3.5: a policy `deny` is blocked POLICY_DENIED with its reason, or the default text.
#[tokio::test]
async fn blocked_policy_denied() {
    let fx = Fx::new(false);
    let report = fx
        .preflight(vec![
            proposal("notes.create", "deny-reason"),
            proposal("notes.share", "share"),
        ])
        .await;
    assert_eq!(
        report.outcomes,
        vec![
            blocked("notes.create", ErrorCode::PolicyDenied, DENY_REASON),
            blocked("notes.share", ErrorCode::PolicyDenied, DEFAULT_DENIAL),
        ]
    );
}

/// 5/3.5: a failing policy is blocked POLICY_EVALUATION_FAILED; its own text never crosses.
#[tokio::test]
async fn blocked_policy_evaluation_failed() {
    let fx = Fx::new(false);
    let report = fx.preflight(vec![proposal("notes.create", "fail")]).await;
    assert_eq!(
        report.outcomes,
        vec![blocked(
            "notes.create",
            ErrorCode::PolicyEvaluationFailed,
            POLICY_FAILED
        )]
    );
    assert!(!format!("{report:?}").contains("secret detail"));
}

/// 5: a cancelled batch token blocks EXECUTION_ABORTED every proposal that reaches the
/// abort check; earlier failures keep their own codes; the call still resolves.
#[tokio::test]
async fn blocked_execution_aborted_for_a_cancelled_batch() {
    let fx = Fx::new(false);
    let token = CancellationToken::new();
    token.cancel();
    let batch = PreflightBatch::new(vec![
        proposal("notes.create", "x"),
        proposal("notes.missing", "x"),
        PreflightProposal::new("notes.read", json!({"title": 5})),
        proposal("notes.purge", "x"),
    ])
    .with_cancellation(token);
    let report = fx.client.preflight(batch).await.unwrap();
    assert_eq!(
        report.outcomes[0],
        blocked("notes.create", ErrorCode::ExecutionAborted, ABORTED)
    );
    assert_eq!(
        report.outcomes[1],
        blocked("notes.missing", ErrorCode::CapabilityNotFound, NOT_FOUND)
    );
    assert_eq!(
        report.outcomes[2].error().unwrap().code,
        ErrorCode::InputInvalid
    );
    assert_eq!(
        report.outcomes[3],
        blocked("notes.purge", ErrorCode::ExecutionAborted, ABORTED)
    );
    assert!(report.consistent);
    assert_eq!(fx.policy_calls(), 0, "aborted before the policy");
}

/// 5/3.5: cancelling the batch while policies are pending stops waiting: the proposals
/// are blocked EXECUTION_ABORTED and the call resolves.
#[tokio::test]
async fn cancelling_during_policy_wait_blocks_execution_aborted() {
    let fx = Fx::new(true);
    let token = CancellationToken::new();
    let batch = PreflightBatch::new(vec![
        proposal("notes.create", "x"),
        proposal("notes.purge", "x"),
    ])
    .with_cancellation(token.clone());
    let task = tokio::spawn(fx.client.preflight(batch));
    wait_until(|| fx.policy_calls() == 2).await;
    assert!(!task.is_finished());
    token.cancel();
    let report = task.await.unwrap().unwrap();
    assert_eq!(
        report.outcomes,
        vec![
            blocked("notes.create", ErrorCode::ExecutionAborted, ABORTED),
            blocked("notes.purge", ErrorCode::ExecutionAborted, ABORTED),
        ]
    );
    fx.assert_no_side_effects();
}

/// 5: outcomes come back in input order for a mixed batch.
#[tokio::test]
async fn mixed_batch_outcomes_are_in_input_order() {
    let mut fx = Fx::new(false);
    assert!(fx.guards.remove("notes.share").unwrap().unbind());
    let report = fx
        .preflight(vec![
            proposal("notes.purge", "p"),
            proposal("notes.missing", "m"),
            proposal("notes.read", "r"),
            proposal("notes.share", "s"),
            proposal("notes.create", "deny"),
            PreflightProposal::new("notes.create", Input::text("[")),
            proposal("notes.create", "c"),
        ])
        .await;
    assert_eq!(
        report.outcomes,
        vec![
            needs_confirmation(
                "notes.purge",
                Effect::Destructive,
                "Description of notes.purge."
            ),
            blocked("notes.missing", ErrorCode::CapabilityNotFound, NOT_FOUND),
            ready("notes.read", Effect::Read),
            blocked("notes.share", ErrorCode::CapabilityUnbound, UNBOUND),
            blocked("notes.create", ErrorCode::PolicyDenied, DEFAULT_DENIAL),
            blocked("notes.create", ErrorCode::InputInvalid, PROPOSAL_NOT_JSON),
            ready("notes.create", Effect::Write),
        ]
    );
    assert!(report.consistent);
}

/// 5: duplicate proposals are allowed and each gets its own outcome.
#[tokio::test]
async fn duplicate_proposals_are_allowed() {
    let fx = Fx::new(false);
    let report = fx
        .preflight(vec![
            proposal("notes.create", "same"),
            proposal("notes.create", "same"),
            proposal("notes.purge", "same"),
            proposal("notes.purge", "same"),
        ])
        .await;
    let purge = needs_confirmation(
        "notes.purge",
        Effect::Destructive,
        "Description of notes.purge.",
    );
    assert_eq!(
        report.outcomes,
        vec![
            ready("notes.create", Effect::Write),
            ready("notes.create", Effect::Write),
            purge.clone(),
            purge,
        ]
    );
    assert_eq!(fx.policy_calls(), 4);
}

// ----- what the policy sees, what does not happen ---------------------------------------------

/// 3.5/5: the policy sees phase preflight and `confirmed: false`, once per proposal that
/// reaches it.
#[tokio::test]
async fn policy_sees_preflight_phase_unconfirmed() {
    let fx = Fx::new(false);
    fx.preflight(vec![
        proposal("notes.read", "r"),
        proposal("notes.purge", "p"),
        proposal("notes.missing", "m"),
    ])
    .await;
    assert_eq!(
        *fx.policy_log.lock().unwrap(),
        vec![
            (PolicyPhase::Preflight, false, "notes.read".to_owned()),
            (PolicyPhase::Preflight, false, "notes.purge".to_owned()),
        ]
    );
}

/// 5: no handler runs, no event is emitted, the revision does not change.
#[tokio::test]
async fn preflight_runs_nothing_emits_nothing_and_keeps_the_revision() {
    let fx = Fx::new(false);
    let revision = fx.revision();
    let report = fx
        .preflight(vec![
            proposal("notes.read", "r"),
            proposal("notes.create", "c"),
            proposal("notes.purge", "p"),
            proposal("notes.share", "s"),
        ])
        .await;
    assert_eq!(report.revision, revision);
    assert_eq!(fx.revision(), revision);
    fx.assert_no_side_effects();
}

/// 5: no invocation id is reserved: while a preflight is pending, invokes with any id
/// (including generated-looking ones) run normally.
#[tokio::test]
async fn pending_preflight_reserves_no_invocation_id() {
    let fx = Fx::new(true);
    let batch = PreflightBatch::new(vec![
        proposal("notes.read", "r"),
        proposal("notes.create", "c"),
    ]);
    let task = tokio::spawn(fx.client.preflight(batch));
    wait_until(|| fx.policy_calls() == 2).await;
    assert!(!task.is_finished());

    for id in ["inv-1", "invocation_1", " "] {
        let outcome = fx
            .client
            .invoke(InvocationRequest::new("notes.read", note("r")).with_id(id))
            .await;
        assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
        assert_eq!(outcome.invocation_id(), id);
    }
    let generated = fx
        .client
        .invoke(InvocationRequest::new("notes.read", note("r")))
        .await;
    assert_eq!(generated.status(), OutcomeStatus::Succeeded);
    assert_eq!(fx.calls.load(Ordering::SeqCst), 4);

    fx.gate.cancel();
    let report = task.await.unwrap().unwrap();
    // The invokes refreshed the snapshot, so the batch is stale (and says so).
    assert!(!report.consistent);
    assert_eq!(report.outcomes.len(), 2);
}

/// 5: the policies of all proposals are invoked before any of them settles.
#[tokio::test]
async fn all_policies_are_invoked_before_any_settles() {
    let fx = Fx::new(true);
    let batch = PreflightBatch::new(vec![
        proposal("notes.read", "r"),
        proposal("notes.create", "c"),
        proposal("notes.purge", "p"),
        proposal("notes.share", "allow"),
        proposal("notes.create", "confirm-reason"),
    ]);
    let task = tokio::spawn(fx.client.preflight(batch));
    // Every policy is waiting on the closed gate, so none has settled yet.
    wait_until(|| fx.policy_calls() == 5).await;
    assert!(!task.is_finished());
    fx.gate.cancel();
    let report = task.await.unwrap().unwrap();
    assert_eq!(
        report.outcomes,
        vec![
            ready("notes.read", Effect::Read),
            ready("notes.create", Effect::Write),
            needs_confirmation(
                "notes.purge",
                Effect::Destructive,
                "Description of notes.purge."
            ),
            ready("notes.share", Effect::External),
            needs_confirmation("notes.create", Effect::Write, CONFIRM_REASON),
        ]
    );
    assert!(report.consistent);
    assert_eq!(fx.policy_calls(), 5);
}

// ----- staleness and checkedAt ------------------------------------------------------------------

/// 5: a revision change while the batch is pending makes it inconsistent: every `ready`
/// and `confirmation_required` becomes `blocked / PREFLIGHT_STALE`, blocked outcomes keep
/// their codes, `revision` is the start revision, `checkedAt` is read at the end.
#[tokio::test]
async fn revision_change_during_preflight_is_stale() {
    let fx = Fx::new(true);
    let start = fx.revision();
    let batch = PreflightBatch::new(vec![
        proposal("notes.create", "c"),
        proposal("notes.purge", "p"),
        proposal("notes.missing", "m"),
        proposal("notes.share", "deny-reason"),
        PreflightProposal::new("notes.read", json!({"title": ""})),
        proposal("notes.read", "confirm-reason"),
    ]);
    let task = tokio::spawn(fx.client.preflight(batch));
    wait_until(|| fx.policy_calls() == 4).await;
    fx.host.refresh();
    fx.clock.advance(777);
    fx.gate.cancel();
    let report = task.await.unwrap().unwrap();

    assert!(!report.consistent);
    assert_eq!(report.revision, start);
    assert_eq!(fx.revision(), start + 1);
    assert_eq!(report.checked_at, T0 + 777);
    assert_eq!(report.outcomes.len(), 6);
    assert_eq!(
        report.outcomes[0],
        blocked("notes.create", ErrorCode::PreflightStale, STALE)
    );
    assert_eq!(
        report.outcomes[1],
        blocked("notes.purge", ErrorCode::PreflightStale, STALE)
    );
    assert_eq!(
        report.outcomes[2],
        blocked("notes.missing", ErrorCode::CapabilityNotFound, NOT_FOUND)
    );
    assert_eq!(
        report.outcomes[3],
        blocked("notes.share", ErrorCode::PolicyDenied, DENY_REASON)
    );
    let schema = report.outcomes[4].error().unwrap();
    assert_eq!(schema.code, ErrorCode::InputInvalid);
    assert_eq!(schema.message, INPUT_SCHEMA);
    assert!(schema.validation_issues.is_some());
    assert_eq!(
        report.outcomes[5],
        blocked("notes.read", ErrorCode::PreflightStale, STALE)
    );
    fx.assert_no_side_effects();
}

/// 5/4.1 6h: the post-policy recheck runs in preflight too. A context change while the
/// policy is pending blocks POLICY_DENIED (context changed) — a blocked outcome, so it
/// keeps its code although the batch is stale.
#[tokio::test]
async fn context_change_during_policy_wait_is_blocked_policy_denied() {
    let fx = Fx::new(true);
    let batch = PreflightBatch::new(vec![proposal("notes.create", "c")]);
    let task = tokio::spawn(fx.client.preflight(batch));
    wait_until(|| fx.policy_calls() == 1).await;
    fx.host
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    fx.gate.cancel();
    let report = task.await.unwrap().unwrap();
    assert!(!report.consistent);
    assert_eq!(
        report.outcomes,
        vec![blocked(
            "notes.create",
            ErrorCode::PolicyDenied,
            CONTEXT_CHANGED
        )]
    );
}

/// 5/4.1 6h: availability lost while the policy is pending (without a refresh) blocks
/// CAPABILITY_UNAVAILABLE with the generic recheck text; the batch stays consistent.
#[tokio::test]
async fn availability_lost_during_policy_wait_is_blocked_unavailable() {
    let mut fx = Fx::new(true);
    let available = Arc::new(AtomicBool::new(true));
    let flag = available.clone();
    let calls = fx.calls.clone();
    fx.rebind(
        "notes.create",
        echo_binding(calls).with_availability(move || {
            if flag.load(Ordering::SeqCst) {
                Availability::available()
            } else {
                Availability::unavailable("GONE", "Gone.")
            }
        }),
    );
    let batch = PreflightBatch::new(vec![proposal("notes.create", "c")]);
    let task = tokio::spawn(fx.client.preflight(batch));
    wait_until(|| fx.policy_calls() == 1).await;
    available.store(false, Ordering::SeqCst);
    fx.gate.cancel();
    let report = task.await.unwrap().unwrap();
    assert!(report.consistent);
    assert_eq!(
        report.outcomes,
        vec![blocked(
            "notes.create",
            ErrorCode::CapabilityUnavailable,
            NO_LONGER_AVAILABLE
        )]
    );
}

/// 5: `checkedAt` is the clock's time when the report is made.
#[tokio::test]
async fn checked_at_comes_from_the_clock() {
    let fx = Fx::new(false);
    let first = fx.preflight(vec![proposal("notes.read", "r")]).await;
    assert_eq!(first.checked_at, T0);
    fx.clock.advance(12_345);
    let second = fx.preflight(vec![proposal("notes.read", "r")]).await;
    assert_eq!(second.checked_at, T0 + 12_345);
    assert_eq!(first.revision, second.revision);
}
