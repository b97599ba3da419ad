//! Conformance: confirmation tickets (reference 3.5 policy, 3.6 tickets, 3.7 ids, 3.8
//! events, 4.4 invocation-id rules, 4.5 cancellation while pending).
//!
//! Every path a ticket can take — approve, decline, expiry by timer, expiry at resolve,
//! abort, unbind, rebind, context change, single use, unknown id, receipts and their
//! eviction, reservation of the invocation id, availability loss, the default policy —
//! is checked for its outcome (status, code, exact message), its events, the handler's
//! calls and what happens to the invocation id.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{EventRecorder, ManualClock, confirm_writes, definition, note};
use rcip_runtime::*;
use serde_json::{Value, json};

// ----- fixtures -------------------------------------------------------------------------

/// The manual wall clock's starting time (epoch ms).
const T0: u64 = 1_700_000_000_000;
/// The fixture's confirmation lifetime.
const TTL: Duration = Duration::from_secs(60);
const TTL_MS: u64 = 60_000;

const DECLINED: &str = "The user declined the requested operation.";
const EXPIRED: &str = "The confirmation request expired.";
const ABORTED: &str = "The capability invocation was cancelled.";
const NOT_FOUND: &str = "The confirmation request no longer exists.";
const CHANGED_WHILE_PENDING: &str =
    "The application changed while confirmation was pending. Request the operation again.";
const DEFAULT_DENIAL: &str = "The host application denied this operation.";
const CONFIRMED_NOT_ALLOWED: &str = "The host policy did not allow the confirmed operation.";
const ALREADY_ACTIVE: &str = "An invocation with this id is already active.";

/// Every handler call: which capability, with which input.
#[derive(Debug, Default)]
struct Calls {
    count: AtomicU64,
    inputs: Mutex<Vec<(String, Value)>>,
}

impl Calls {
    fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }
    fn inputs(&self) -> Vec<(String, Value)> {
        self.inputs.lock().unwrap().clone()
    }
}

/// A handler for `capability` that records its calls and echoes `{"id": "n1", "title"}`.
fn recording_binding(capability: &'static str, calls: Arc<Calls>) -> Binding {
    Binding::new(move |input: Value, _ctx: InvocationContext| {
        calls.count.fetch_add(1, Ordering::SeqCst);
        calls
            .inputs
            .lock()
            .unwrap()
            .push((capability.to_owned(), input.clone()));
        async move {
            let title = input.get("title").cloned().unwrap_or(Value::Null);
            Ok::<_, HandlerError>(json!({"id": "n1", "title": title}))
        }
    })
}

/// `(phase, confirmed, capability id)` of every policy evaluation.
type PolicyLog = Arc<Mutex<Vec<(PolicyPhase, bool, String)>>>;

/// Logs every evaluation, then delegates.
struct Logged {
    inner: Arc<dyn Policy>,
    log: PolicyLog,
}

impl Policy for Logged {
    fn evaluate(&self, context: PolicyContext) -> PolicyVerdict {
        self.log.lock().unwrap().push((
            context.phase(),
            context.confirmed(),
            context.capability().id.to_string(),
        ));
        self.inner.evaluate(context)
    }
}

const NOTE_CAPABILITIES: [&str; 4] = ["notes.read", "notes.create", "notes.share", "notes.purge"];

struct Fx {
    host: Host,
    client: Arc<dyn RcipClient>,
    events: EventRecorder,
    clock: Arc<ManualClock>,
    calls: Arc<Calls>,
    policy_log: PolicyLog,
    guards: HashMap<&'static str, BindingGuard>,
}

impl Fx {
    /// A runtime over the common catalog, every note capability bound to a recording
    /// handler. `policy: None` keeps the runtime's default policy (no policy option).
    fn new(policy: Option<Arc<dyn Policy>>, ttl: Option<Duration>) -> Fx {
        let events = EventRecorder::default();
        let clock = ManualClock::at(T0);
        let policy_log = PolicyLog::default();
        let mut options = RuntimeOptions::default()
            .clock(clock.clone())
            .on_event(events.observer());
        if let Some(policy) = policy {
            options = options.policy(Arc::new(Logged {
                inner: policy,
                log: policy_log.clone(),
            }));
        }
        if let Some(ttl) = ttl {
            options = options.confirmation_ttl(ttl);
        }
        let runtime = Runtime::new(definition(), options).unwrap();
        let host = runtime.host();
        let calls = Arc::new(Calls::default());
        let mut guards = HashMap::new();
        for id in NOTE_CAPABILITIES {
            let guard = host.bind(id, recording_binding(id, calls.clone())).unwrap();
            guards.insert(id, guard);
        }
        Fx {
            client: runtime.client(),
            host,
            events,
            clock,
            calls,
            policy_log,
            guards,
        }
    }

    /// The pilot's policy ("confirm everything but reads unless confirmed"), TTL 60 s.
    fn standard() -> Fx {
        Fx::new(Some(confirm_writes()), Some(TTL))
    }

    async fn invoke(&self, request: InvocationRequest) -> InvocationOutcome {
        self.client.invoke(request).await
    }

    /// Invokes `notes.purge` with `id` and returns its ticket.
    async fn ticket(&self, id: &str) -> ConfirmationInfo {
        expect_ticket(&self.invoke(purge(id, "purge-me")).await, id)
    }

    fn phases(&self, id: &str) -> Vec<(EventPhase, Option<ErrorCode>)> {
        self.events.phases(Some(id))
    }

    fn revision(&self) -> u64 {
        self.client.get_snapshot().revision
    }

    fn policy_log(&self) -> Vec<(PolicyPhase, bool, String)> {
        self.policy_log.lock().unwrap().clone()
    }

    /// The invocation id is free again: a new invoke with it gets a new ticket.
    async fn assert_released(&self, id: &str, old_ticket: &str) {
        let outcome = self.invoke(purge(id, "again")).await;
        let ticket = expect_ticket(&outcome, id);
        assert_ne!(ticket.id, old_ticket, "a new ticket, not the old one");
    }
}

fn purge(id: &str, title: &str) -> InvocationRequest {
    InvocationRequest::new("notes.purge", note(title)).with_id(id)
}

/// Asserts a `confirmation_required` outcome for `notes.purge` and `invocation_id`.
fn expect_ticket(outcome: &InvocationOutcome, invocation_id: &str) -> ConfirmationInfo {
    assert_eq!(
        outcome.status(),
        OutcomeStatus::ConfirmationRequired,
        "{outcome:?}"
    );
    assert_eq!(outcome.invocation_id(), invocation_id);
    assert_eq!(outcome.capability_id(), "notes.purge");
    let ticket = outcome.confirmation().unwrap().clone();
    assert_ticket_id(&ticket.id);
    ticket
}

/// `confirmation_` followed by 32 lowercase hex digits.
fn assert_ticket_id(id: &str) {
    let hex = id
        .strip_prefix("confirmation_")
        .unwrap_or_else(|| panic!("{id} starts with confirmation_"));
    assert_eq!(hex.len(), 32, "{id}");
    assert!(
        hex.chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
        "{id}"
    );
}

/// Asserts a failed/denied outcome, exactly.
fn assert_error(
    outcome: &InvocationOutcome,
    status: OutcomeStatus,
    invocation_id: &str,
    capability_id: &str,
    code: ErrorCode,
    message: &str,
) {
    assert_eq!(outcome.status(), status, "{outcome:?}");
    assert_eq!(outcome.invocation_id(), invocation_id);
    assert_eq!(outcome.capability_id(), capability_id);
    let error = outcome.error().unwrap();
    assert_eq!(error.code, code);
    assert_eq!(error.message, message);
    assert_eq!(error.validation_issues, None);
}

/// Asserts `CONFIRMATION_NOT_FOUND`: capability "unknown", a fresh generated invocation id.
fn assert_not_found(outcome: &InvocationOutcome, not_this_id: &str) {
    assert_eq!(outcome.status(), OutcomeStatus::Failed, "{outcome:?}");
    assert_eq!(outcome.capability_id(), "unknown");
    assert!(
        outcome.invocation_id().starts_with("invocation_"),
        "{outcome:?}"
    );
    assert_ne!(outcome.invocation_id(), not_this_id);
    let error = outcome.error().unwrap();
    assert_eq!(error.code, ErrorCode::ConfirmationNotFound);
    assert_eq!(error.message, NOT_FOUND);
    assert_eq!(error.validation_issues, None);
}

/// Lets spawned tasks (ticket watchers) run until `done` holds.
async fn wait_until(done: impl Fn() -> bool) {
    for _ in 0..1000 {
        if done() {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("condition not reached");
}

use EventPhase as P;

fn pending_phases() -> Vec<(EventPhase, Option<ErrorCode>)> {
    vec![(P::Requested, None), (P::ConfirmationRequested, None)]
}

fn with_end(end: &[(EventPhase, Option<ErrorCode>)]) -> Vec<(EventPhase, Option<ErrorCode>)> {
    let mut phases = pending_phases();
    phases.extend_from_slice(end);
    phases
}

// ----- issuing ----------------------------------------------------------------------------

/// 3.6: the ticket — id format, title, description (capability description without a
/// reason), effect, `expiresAt = now + ttl`; events `requested` → `confirmation_requested`;
/// no handler call yet.
#[tokio::test]
async fn ticket_carries_capability_title_description_effect_and_expiry() {
    let fx = Fx::standard();
    let ticket = fx.ticket("inv-issue").await;
    assert_eq!(
        ticket,
        ConfirmationInfo::new(
            ticket.id.clone(),
            "Title of notes.purge",
            "Description of notes.purge.",
            Effect::Destructive,
            T0 + TTL_MS,
        )
    );
    assert_eq!(fx.phases("inv-issue"), pending_phases());
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(
        fx.policy_log(),
        vec![(PolicyPhase::Invoke, false, "notes.purge".to_owned())]
    );
}

/// 3.5/3.6: a `confirm` reason becomes the ticket description; `expiresAt` follows the
/// clock at issue time.
#[tokio::test]
async fn ticket_description_is_the_policy_reason() {
    let policy = policy_fn(|ctx| {
        if ctx.confirmed() {
            PolicyDecision::Allow
        } else {
            PolicyDecision::confirm("Purging deletes archived notes for good.")
        }
    });
    let fx = Fx::new(Some(policy), Some(Duration::from_millis(1500)));
    fx.clock.advance(42);
    let ticket = fx.ticket("inv-reason").await;
    assert_eq!(
        ticket.description,
        "Purging deletes archived notes for good."
    );
    assert_eq!(ticket.title, "Title of notes.purge");
    assert_eq!(ticket.effect, Effect::Destructive);
    assert_eq!(ticket.expires_at, T0 + 42 + 1500);
}

/// 3.6/3.7: two tickets have different ids, both well-formed.
#[tokio::test]
async fn two_tickets_have_different_ids() {
    let fx = Fx::standard();
    let a = fx.ticket("inv-a").await;
    let b = fx.ticket("inv-b").await;
    assert_ne!(a.id, b.id);
    // Each resolves to its own invocation.
    let outcome = fx.host.resolve_confirmation(&b.id, true).await;
    assert_eq!(outcome.invocation_id(), "inv-b");
    let outcome = fx.host.resolve_confirmation(&a.id, true).await;
    assert_eq!(outcome.invocation_id(), "inv-a");
    assert_eq!(fx.calls.count(), 2);
}

// ----- approve ----------------------------------------------------------------------------

/// 3.6 step 6: approval re-runs the whole pipeline with the captured request: the handler
/// runs once with the original capability and input; events `requested` →
/// `confirmation_requested` → `requested` → `started` → `succeeded`; the policy sees
/// `confirmed: true`, phase invoke, on the re-run; the id is released afterwards.
#[tokio::test]
async fn approve_runs_the_captured_request_once() {
    let fx = Fx::standard();
    let input = json!({"title": "original", "count": 7, "tags": ["x", "y"]});
    let request = InvocationRequest::new("notes.purge", input.clone()).with_id("inv-approve");
    let ticket = expect_ticket(&fx.invoke(request).await, "inv-approve");
    assert_eq!(fx.calls.count(), 0);
    let revision = fx.revision();

    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(
        outcome,
        InvocationOutcome::Succeeded {
            invocation_id: "inv-approve".to_owned(),
            capability_id: "notes.purge".to_owned(),
            output: json!({"id": "n1", "title": "original"}),
        }
    );
    assert_eq!(fx.calls.count(), 1);
    assert_eq!(fx.calls.inputs(), vec![("notes.purge".to_owned(), input)]);
    assert_eq!(
        fx.phases("inv-approve"),
        with_end(&[
            (P::Requested, None),
            (P::Started, None),
            (P::Succeeded, None)
        ])
    );
    assert_eq!(
        fx.policy_log(),
        vec![
            (PolicyPhase::Invoke, false, "notes.purge".to_owned()),
            (PolicyPhase::Invoke, true, "notes.purge".to_owned()),
        ]
    );
    // Success refreshes the snapshot once.
    assert_eq!(fx.revision(), revision + 1);
    fx.assert_released("inv-approve", &ticket.id).await;
}

/// 3.6 with a generated id: the ticket's outcome, the confirmed re-run's outcome, the
/// handler's context and every event carry the one id the runtime made at the first
/// request, and it is free again afterwards.
#[tokio::test]
async fn a_generated_id_is_the_same_through_the_ticket_and_the_rerun() {
    let mut fx = Fx::standard();
    drop(fx.guards.remove("notes.purge"));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let _guard = fx
        .host
        .bind(
            "notes.purge",
            Binding::new(move |_input: Value, ctx: InvocationContext| {
                record.lock().unwrap().push(ctx.invocation_id().to_owned());
                async { Ok::<_, HandlerError>(json!({"id": "n1", "title": "purged"})) }
            }),
        )
        .unwrap();

    let first = fx
        .invoke(InvocationRequest::new("notes.purge", note("generated")))
        .await;
    let id = first.invocation_id().to_owned();
    assert!(id.starts_with("invocation_"), "{id}");
    let ticket = expect_ticket(&first, &id);

    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.invocation_id(), id);
    assert_eq!(*seen.lock().unwrap(), vec![id.clone()]);
    assert_eq!(
        fx.phases(&id),
        with_end(&[
            (P::Requested, None),
            (P::Started, None),
            (P::Succeeded, None)
        ])
    );
    fx.assert_released(&id, &ticket.id).await;
}

/// 3.5: a policy that answers `confirm` again on the confirmed re-run is a denial.
#[tokio::test]
async fn confirm_again_on_the_confirmed_rerun_is_denied() {
    let fx = Fx::new(
        Some(policy_fn(|_| PolicyDecision::Confirm { reason: None })),
        Some(TTL),
    );
    let ticket = fx.ticket("inv-again").await;
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-again",
        "notes.purge",
        ErrorCode::PolicyDenied,
        CONFIRMED_NOT_ALLOWED,
    );
    assert_eq!(
        fx.phases("inv-again"),
        with_end(&[
            (P::Requested, None),
            (P::Denied, Some(ErrorCode::PolicyDenied))
        ])
    );
    assert_eq!(fx.calls.count(), 0);
    fx.assert_released("inv-again", &ticket.id).await;
}

/// 3.6 step 6: the re-run's policy may still deny (with its reason).
#[tokio::test]
async fn deny_on_the_confirmed_rerun_is_denied_with_its_reason() {
    let policy = policy_fn(|ctx| {
        if ctx.confirmed() {
            PolicyDecision::deny("The archive quota is locked.")
        } else {
            PolicyDecision::Confirm { reason: None }
        }
    });
    let fx = Fx::new(Some(policy), Some(TTL));
    let ticket = fx.ticket("inv-redeny").await;
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-redeny",
        "notes.purge",
        ErrorCode::PolicyDenied,
        "The archive quota is locked.",
    );
    assert_eq!(
        fx.phases("inv-redeny"),
        with_end(&[
            (P::Requested, None),
            (P::Denied, Some(ErrorCode::PolicyDenied))
        ])
    );
    assert_eq!(fx.calls.count(), 0);
}

// ----- decline ----------------------------------------------------------------------------

/// 3.6 step 3: decline → `denied / CONFIRMATION_DECLINED`, event `confirmation_declined`
/// with that code, no receipt (a later resolve is NOT_FOUND), id released, no handler.
#[tokio::test]
async fn decline_is_denied_without_receipt_and_releases_the_id() {
    let fx = Fx::standard();
    let ticket = fx.ticket("inv-decline").await;
    let outcome = fx.host.resolve_confirmation(&ticket.id, false).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-decline",
        "notes.purge",
        ErrorCode::ConfirmationDeclined,
        DECLINED,
    );
    assert_eq!(
        fx.phases("inv-decline"),
        with_end(&[(
            P::ConfirmationDeclined,
            Some(ErrorCode::ConfirmationDeclined)
        )])
    );
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(fx.policy_log().len(), 1, "no re-run");

    let events_before = fx.events.phases(None).len();
    let later = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_not_found(&later, "inv-decline");
    assert_eq!(fx.events.phases(None).len(), events_before, "no event");
    assert_eq!(fx.calls.count(), 0);
    fx.assert_released("inv-decline", &ticket.id).await;
}

// ----- expiry -----------------------------------------------------------------------------

/// 3.6: the TTL timer ends the ticket: event `failed` (CONFIRMATION_EXPIRED), id released,
/// and a receipt `failed / CONFIRMATION_EXPIRED` returned once, then NOT_FOUND.
#[tokio::test(start_paused = true)]
async fn expiry_by_timer_stores_a_receipt_read_once() {
    let fx = Fx::new(Some(confirm_writes()), Some(Duration::from_secs(1)));
    let ticket = fx.ticket("inv-timer").await;
    // Not yet: just before the deadline nothing has happened.
    tokio::time::sleep(Duration::from_millis(999)).await;
    assert_eq!(fx.phases("inv-timer"), pending_phases());

    tokio::time::sleep(Duration::from_millis(2)).await;
    assert_eq!(
        fx.phases("inv-timer"),
        with_end(&[(P::Failed, Some(ErrorCode::ConfirmationExpired))])
    );
    assert_eq!(fx.calls.count(), 0);

    let receipt = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &receipt,
        OutcomeStatus::Failed,
        "inv-timer",
        "notes.purge",
        ErrorCode::ConfirmationExpired,
        EXPIRED,
    );
    let again = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_not_found(&again, "inv-timer");
    // Reading the receipt emitted nothing and ran nothing.
    assert_eq!(
        fx.phases("inv-timer"),
        with_end(&[(P::Failed, Some(ErrorCode::ConfirmationExpired))])
    );
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(fx.policy_log().len(), 1);
    fx.assert_released("inv-timer", &ticket.id).await;
}

/// 4.4: the id is released as soon as the timer fires, before anyone reads the receipt.
#[tokio::test(start_paused = true)]
async fn expiry_by_timer_releases_the_id_before_the_receipt_is_read() {
    let fx = Fx::new(Some(confirm_writes()), Some(Duration::from_secs(1)));
    let ticket = fx.ticket("inv-timer-release").await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    fx.assert_released("inv-timer-release", &ticket.id).await;
    // The old receipt is still there, untouched by the new ticket.
    let receipt = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(receipt.error_code(), Some(ErrorCode::ConfirmationExpired));
    assert_eq!(receipt.invocation_id(), "inv-timer-release");
}

/// 3.6 step 4: resolved after `expiresAt` (the wall clock moved on, the timer has not
/// fired): `failed / CONFIRMATION_EXPIRED`, event `failed`, handler not run, id released,
/// no receipt.
#[tokio::test]
async fn expiry_at_resolve_when_the_clock_passed_expires_at() {
    let fx = Fx::standard();
    let ticket = fx.ticket("inv-late").await;
    fx.clock.advance(TTL_MS + 1);
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Failed,
        "inv-late",
        "notes.purge",
        ErrorCode::ConfirmationExpired,
        EXPIRED,
    );
    assert_eq!(
        fx.phases("inv-late"),
        with_end(&[(P::Failed, Some(ErrorCode::ConfirmationExpired))])
    );
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(fx.policy_log().len(), 1, "no re-run");
    let again = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_not_found(&again, "inv-late");
    fx.assert_released("inv-late", &ticket.id).await;
}

/// 3.6 step 4: the check is strictly "now > expiresAt": at exactly `expiresAt` approval
/// still runs.
#[tokio::test]
async fn resolve_at_exactly_expires_at_still_runs() {
    let fx = Fx::standard();
    let ticket = fx.ticket("inv-edge").await;
    fx.clock.advance(TTL_MS);
    assert_eq!(fx.clock.now_ms(), ticket.expires_at);
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
    assert_eq!(fx.calls.count(), 1);
}

/// 3.6 step 4: declining wins over expiry (decline is checked first).
#[tokio::test]
async fn decline_after_expires_at_is_still_a_decline() {
    let fx = Fx::standard();
    let ticket = fx.ticket("inv-late-decline").await;
    fx.clock.advance(TTL_MS + 1);
    let outcome = fx.host.resolve_confirmation(&ticket.id, false).await;
    assert_eq!(
        outcome.error_code(),
        Some(ErrorCode::ConfirmationDeclined),
        "{outcome:?}"
    );
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(
        fx.phases("inv-late-decline"),
        with_end(&[(
            EventPhase::ConfirmationDeclined,
            Some(ErrorCode::ConfirmationDeclined)
        )])
    );
}

// ----- abort --------------------------------------------------------------------------------

/// 3.6/4.5: cancelling the request while the ticket is pending ends it with
/// `failed / EXECUTION_ABORTED`: event `failed`, id released, receipt read once.
#[tokio::test]
async fn abort_while_pending_stores_an_aborted_receipt() {
    let fx = Fx::standard();
    let token = CancellationToken::new();
    let request = purge("inv-abort", "purge-me").with_cancellation(token.clone());
    let ticket = expect_ticket(&fx.invoke(request).await, "inv-abort");
    assert_eq!(fx.phases("inv-abort"), pending_phases());

    token.cancel();
    wait_until(|| fx.phases("inv-abort").len() == 3).await;
    assert_eq!(
        fx.phases("inv-abort"),
        with_end(&[(P::Failed, Some(ErrorCode::ExecutionAborted))])
    );
    // Released at once, before anyone resolves.
    fx.assert_released("inv-abort", &ticket.id).await;

    let receipt = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &receipt,
        OutcomeStatus::Failed,
        "inv-abort",
        "notes.purge",
        ErrorCode::ExecutionAborted,
        ABORTED,
    );
    let again = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_not_found(&again, "inv-abort");
    assert_eq!(fx.calls.count(), 0);
}

/// 4.5: the reference ends a ticket synchronously when its invocation is aborted, so
/// resolving it right after the cancel (before the watcher task could run) still answers
/// with the `EXECUTION_ABORTED` receipt: never a decline, never a confirmed re-run.
#[tokio::test]
async fn resolving_right_after_the_abort_returns_the_aborted_receipt() {
    for approved in [true, false] {
        let fx = Fx::standard();
        let token = CancellationToken::new();
        let id = format!("inv-abort-now-{approved}");
        let request = purge(&id, "purge-me").with_cancellation(token.clone());
        let ticket = expect_ticket(&fx.invoke(request).await, &id);
        // No await between the cancel and the resolve: on this single-threaded runtime the
        // watcher task cannot have run.
        token.cancel();
        let receipt = fx.host.resolve_confirmation(&ticket.id, approved).await;
        assert_error(
            &receipt,
            OutcomeStatus::Failed,
            &id,
            "notes.purge",
            ErrorCode::ExecutionAborted,
            ABORTED,
        );
        assert_eq!(
            fx.phases(&id),
            with_end(&[(P::Failed, Some(ErrorCode::ExecutionAborted))])
        );
        assert_eq!(fx.calls.count(), 0);
        fx.assert_released(&id, &ticket.id).await;
    }
}

// ----- binding and context changes ------------------------------------------------------------

/// 3.6 step 5: unbinding while pending → `denied / POLICY_DENIED` (changed while pending),
/// event `denied`, no handler, no re-run, id released.
#[tokio::test]
async fn unbind_while_pending_denies_the_approval() {
    let mut fx = Fx::standard();
    let ticket = fx.ticket("inv-unbind").await;
    assert!(fx.guards.remove("notes.purge").unwrap().unbind());
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-unbind",
        "notes.purge",
        ErrorCode::PolicyDenied,
        CHANGED_WHILE_PENDING,
    );
    assert_eq!(
        fx.phases("inv-unbind"),
        with_end(&[(P::Denied, Some(ErrorCode::PolicyDenied))])
    );
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(fx.policy_log().len(), 1, "no re-run");
    // The id is free again: with the capability unbound, a reuse reaches the lookup.
    let reuse = fx.invoke(purge("inv-unbind", "again")).await;
    assert_eq!(reuse.error_code(), Some(ErrorCode::CapabilityUnbound));
}

/// 3.2/3.6 step 5: unbind + bind again (a new binding identity) while pending → the same
/// denial; neither the old nor the new handler runs.
#[tokio::test]
async fn rebind_while_pending_denies_the_approval() {
    let mut fx = Fx::standard();
    let ticket = fx.ticket("inv-rebind").await;
    assert!(fx.guards.remove("notes.purge").unwrap().unbind());
    let new_calls = Arc::new(Calls::default());
    let guard = fx
        .host
        .bind(
            "notes.purge",
            recording_binding("notes.purge", new_calls.clone()),
        )
        .unwrap();
    fx.guards.insert("notes.purge", guard);

    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-rebind",
        "notes.purge",
        ErrorCode::PolicyDenied,
        CHANGED_WHILE_PENDING,
    );
    assert_eq!(
        fx.phases("inv-rebind"),
        with_end(&[(P::Denied, Some(ErrorCode::PolicyDenied))])
    );
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(new_calls.count(), 0);
    fx.assert_released("inv-rebind", &ticket.id).await;
}

/// 3.3/3.6 step 5: a context change while pending → the same denial, no handler.
#[tokio::test]
async fn context_change_while_pending_denies_the_approval() {
    let fx = Fx::standard();
    fx.host
        .set_context(SemanticContext::active(["notes", "archive"]))
        .unwrap();
    let ticket = fx.ticket("inv-ctx").await;
    fx.host
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-ctx",
        "notes.purge",
        ErrorCode::PolicyDenied,
        CHANGED_WHILE_PENDING,
    );
    assert_eq!(
        fx.phases("inv-ctx"),
        with_end(&[(P::Denied, Some(ErrorCode::PolicyDenied))])
    );
    assert_eq!(fx.calls.count(), 0);
    fx.assert_released("inv-ctx", &ticket.id).await;
}

/// 3.3: a change of the primary scope alone is a change of context.
#[tokio::test]
async fn primary_scope_change_while_pending_denies_the_approval() {
    let fx = Fx::standard();
    let active = SemanticContext::active(["notes", "archive"]);
    fx.host
        .set_context(active.clone().primary("notes"))
        .unwrap();
    let ticket = fx.ticket("inv-primary").await;
    fx.host.set_context(active.primary("archive")).unwrap();
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-primary",
        "notes.purge",
        ErrorCode::PolicyDenied,
        CHANGED_WHILE_PENDING,
    );
    assert_eq!(fx.calls.count(), 0);
}

/// 3.3: setting an identical context bumps the revision but does not invalidate the
/// ticket: approval runs.
#[tokio::test]
async fn identical_context_does_not_invalidate_the_ticket() {
    let fx = Fx::standard();
    let context = SemanticContext::active(["notes", "archive"]).primary("archive");
    fx.host.set_context(context.clone()).unwrap();
    let ticket = fx.ticket("inv-same").await;
    let revision = fx.revision();
    // Duplicates are dropped first, so this is the identical context.
    fx.host
        .set_context(SemanticContext::active(["notes", "archive", "notes"]).primary("archive"))
        .unwrap();
    assert_eq!(fx.revision(), revision + 1);
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
    assert_eq!(fx.calls.count(), 1);
    assert_eq!(
        fx.phases("inv-same"),
        with_end(&[
            (P::Requested, None),
            (P::Started, None),
            (P::Succeeded, None)
        ])
    );
}

/// 3.3: re-ordering the same active scopes is a change: the ticket is invalidated.
#[tokio::test]
async fn reordered_active_scopes_invalidate_the_ticket() {
    let fx = Fx::standard();
    fx.host
        .set_context(SemanticContext::active(["notes", "archive"]))
        .unwrap();
    let ticket = fx.ticket("inv-order").await;
    fx.host
        .set_context(SemanticContext::active(["archive", "notes"]))
        .unwrap();
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Denied,
        "inv-order",
        "notes.purge",
        ErrorCode::PolicyDenied,
        CHANGED_WHILE_PENDING,
    );
    assert_eq!(fx.calls.count(), 0);
}

/// 3.6: availability is not checked at step 5 but by the re-run: a capability that became
/// unavailable while pending fails `CAPABILITY_UNAVAILABLE` with the host's reason; the
/// re-run emits `requested` → `failed`; the policy is not asked again.
#[tokio::test]
async fn availability_lost_while_pending_fails_in_the_rerun() {
    let mut fx = Fx::standard();
    assert!(fx.guards.remove("notes.purge").unwrap().unbind());
    let available = Arc::new(AtomicBool::new(true));
    let flag = available.clone();
    let binding = recording_binding("notes.purge", fx.calls.clone()).with_availability(move || {
        if flag.load(Ordering::SeqCst) {
            Availability::available()
        } else {
            Availability::unavailable("ARCHIVE_LOCKED", "The archive is locked right now.")
        }
    });
    fx.guards
        .insert("notes.purge", fx.host.bind("notes.purge", binding).unwrap());

    let ticket = fx.ticket("inv-avail").await;
    available.store(false, Ordering::SeqCst);
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_error(
        &outcome,
        OutcomeStatus::Failed,
        "inv-avail",
        "notes.purge",
        ErrorCode::CapabilityUnavailable,
        "The archive is locked right now.",
    );
    assert_eq!(
        fx.phases("inv-avail"),
        with_end(&[
            (P::Requested, None),
            (P::Failed, Some(ErrorCode::CapabilityUnavailable))
        ])
    );
    assert_eq!(fx.calls.count(), 0);
    assert_eq!(fx.policy_log().len(), 1);
    // Released after the failed re-run.
    available.store(true, Ordering::SeqCst);
    fx.assert_released("inv-avail", &ticket.id).await;
}

// ----- single use, unknown ids, receipts ----------------------------------------------------

/// 3.6: tickets are single use: a second `resolve(true)` is CONFIRMATION_NOT_FOUND
/// (capability "unknown", fresh generated invocation id), with no event and no second run.
#[tokio::test]
async fn second_resolve_is_not_found() {
    let fx = Fx::standard();
    let ticket = fx.ticket("inv-once").await;
    let first = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(first.status(), OutcomeStatus::Succeeded);
    let events = fx.events.phases(None).len();

    let second = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_not_found(&second, "inv-once");
    let third = fx.host.resolve_confirmation(&ticket.id, false).await;
    assert_not_found(&third, "inv-once");
    assert_ne!(second.invocation_id(), third.invocation_id(), "fresh ids");
    assert_eq!(fx.events.phases(None).len(), events, "no event");
    assert_eq!(fx.calls.count(), 1);
}

/// 3.6 step 2: an id that never existed is CONFIRMATION_NOT_FOUND, no event.
#[tokio::test]
async fn unknown_confirmation_id_is_not_found() {
    let fx = Fx::standard();
    for (id, approved) in [
        ("confirmation_00000000000000000000000000000000", true),
        ("confirmation_00000000000000000000000000000000", false),
        ("", true),
    ] {
        let outcome = fx.host.resolve_confirmation(id, approved).await;
        assert_not_found(&outcome, "");
    }
    assert!(fx.events.phases(None).is_empty());
    assert_eq!(fx.calls.count(), 0);
}

/// 3.6: at most 256 receipts are kept, the oldest evicted: of 257 tickets expired by
/// timer, the first one's receipt is gone and the 2nd and the 257th are still there.
#[tokio::test(start_paused = true)]
async fn receipts_are_bounded_to_256_oldest_evicted() {
    assert_eq!(MAX_CONFIRMATION_RECEIPTS, 256);
    let fx = Fx::new(Some(confirm_writes()), Some(Duration::from_secs(1)));
    let mut tickets = Vec::new();
    for i in 1..=257 {
        tickets.push(fx.ticket(&format!("inv-{i}")).await.id);
        // One millisecond apart, so the timers fire in issue order.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let expired = fx
        .events
        .phases(None)
        .into_iter()
        .filter(|e| *e == (P::Failed, Some(ErrorCode::ConfirmationExpired)))
        .count();
    assert_eq!(expired, 257);

    let first = fx.host.resolve_confirmation(&tickets[0], true).await;
    assert_not_found(&first, "inv-1");
    let second = fx.host.resolve_confirmation(&tickets[1], true).await;
    assert_error(
        &second,
        OutcomeStatus::Failed,
        "inv-2",
        "notes.purge",
        ErrorCode::ConfirmationExpired,
        EXPIRED,
    );
    let last = fx.host.resolve_confirmation(&tickets[256], true).await;
    assert_error(
        &last,
        OutcomeStatus::Failed,
        "inv-257",
        "notes.purge",
        ErrorCode::ConfirmationExpired,
        EXPIRED,
    );
    assert_eq!(fx.calls.count(), 0);
}

// ----- reservation --------------------------------------------------------------------------

/// 3.6/4.4: the invocation id stays reserved while the ticket is pending: a reuse (any
/// capability) is `INVOCATION_ALREADY_ACTIVE`, with no event and no effect on the ticket.
#[tokio::test]
async fn pending_ticket_keeps_the_invocation_id_reserved() {
    let fx = Fx::standard();
    let ticket = fx.ticket("inv-held").await;
    for request in [
        purge("inv-held", "other"),
        InvocationRequest::new("notes.read", note("read")).with_id("inv-held"),
    ] {
        let capability = request.capability_id.clone();
        let outcome = fx.invoke(request).await;
        assert_error(
            &outcome,
            OutcomeStatus::Failed,
            "inv-held",
            &capability,
            ErrorCode::InvocationAlreadyActive,
            ALREADY_ACTIVE,
        );
    }
    assert_eq!(fx.phases("inv-held"), pending_phases(), "no events");
    assert_eq!(fx.calls.count(), 0);
    // The ticket is intact and still runs the original request.
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(
        outcome.output(),
        Some(&json!({"id": "n1", "title": "purge-me"}))
    );
    assert_eq!(fx.calls.count(), 1);
}

// ----- default policy --------------------------------------------------------------------------

/// 3.5 default policy: reads are allowed.
#[tokio::test]
async fn default_policy_allows_reads() {
    let fx = Fx::new(None, None);
    let outcome = fx
        .invoke(InvocationRequest::new("notes.read", note("r")).with_id("inv-r"))
        .await;
    assert_eq!(
        outcome,
        InvocationOutcome::Succeeded {
            invocation_id: "inv-r".to_owned(),
            capability_id: "notes.read".to_owned(),
            output: json!({"id": "n1", "title": "r"}),
        }
    );
    assert_eq!(fx.calls.count(), 1);
}

/// 3.5 default policy: writes and external operations are denied with the default text.
#[tokio::test]
async fn default_policy_denies_writes_and_external() {
    let fx = Fx::new(None, None);
    for (capability, id) in [("notes.create", "inv-w"), ("notes.share", "inv-x")] {
        let outcome = fx
            .invoke(InvocationRequest::new(capability, note("w")).with_id(id))
            .await;
        assert_error(
            &outcome,
            OutcomeStatus::Denied,
            id,
            capability,
            ErrorCode::PolicyDenied,
            DEFAULT_DENIAL,
        );
        assert_eq!(
            fx.phases(id),
            vec![
                (P::Requested, None),
                (P::Denied, Some(ErrorCode::PolicyDenied))
            ]
        );
    }
    assert_eq!(fx.calls.count(), 0);
}

/// 3.5 default policy: destructive asks for confirmation (capability description, default
/// TTL of 120 s), and the approved operation runs.
#[tokio::test]
async fn default_policy_confirms_destructive_and_approval_runs() {
    let fx = Fx::new(None, None);
    let ticket = fx.ticket("inv-d").await;
    assert_eq!(ticket.description, "Description of notes.purge.");
    assert_eq!(ticket.expires_at, T0 + 120_000);
    assert_eq!(DEFAULT_CONFIRMATION_TTL, Duration::from_secs(120));
    let outcome = fx.host.resolve_confirmation(&ticket.id, true).await;
    assert_eq!(
        outcome.output(),
        Some(&json!({"id": "n1", "title": "purge-me"}))
    );
    assert_eq!(fx.calls.count(), 1);
    assert_eq!(
        fx.phases("inv-d"),
        with_end(&[
            (P::Requested, None),
            (P::Started, None),
            (P::Succeeded, None)
        ])
    );
}

// ----- redaction ------------------------------------------------------------------------------

/// 3.6/2.4/3.8: neither the confirmation outcome, nor the snapshot, nor the events carry
/// the input.
#[tokio::test]
async fn confirmation_outcome_snapshot_and_events_never_contain_the_input() {
    const MARKER: &str = "SECRET-MARKER-5f2c9d";
    let fx = Fx::standard();
    let outcome = fx.invoke(purge("inv-secret", MARKER)).await;
    let ticket = expect_ticket(&outcome, "inv-secret");

    let outcome_json = serde_json::to_string(&outcome).unwrap();
    assert!(outcome_json.contains(&ticket.id), "sanity: it serialized");
    assert!(!outcome_json.contains(MARKER), "{outcome_json}");

    let snapshot_json = serde_json::to_string(&*fx.client.get_snapshot()).unwrap();
    assert!(
        snapshot_json.contains("notes.purge"),
        "sanity: it serialized"
    );
    assert!(!snapshot_json.contains(MARKER));

    let events = fx.events.events();
    let events_json = serde_json::to_string(&events).unwrap();
    assert!(events_json.contains("inv-secret"));
    assert!(!events_json.contains(MARKER));
    assert!(!format!("{outcome:?}").contains(MARKER));
}
