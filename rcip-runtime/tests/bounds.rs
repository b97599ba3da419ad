//! Hardening at the client boundary: bounded invocation and capability ids (never echoed
//! longer than the limit, empty invocation ids refused), and the opt-in abort of handlers
//! that ignore cancellation.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{EventRecorder, allow_all, definition, note};
use rcip_runtime::testing::{Gate, assert_error, assert_succeeded};
use rcip_runtime::*;
use serde_json::{Value, json};

const INVOCATION_ID_MESSAGE: &str = "The invocation id must be 1 to 256 bytes long.";

struct Fixture {
    runtime: Runtime,
    events: EventRecorder,
    _guard: BindingGuard,
}

fn fixture(definition: ApplicationDefinition, id: &str) -> Fixture {
    let events = EventRecorder::default();
    let options = RuntimeOptions::new()
        .policy(allow_all())
        .on_event(events.observer());
    let runtime = Runtime::new(definition, options).unwrap();
    let guard = runtime
        .host()
        .bind(
            id,
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!({"id": "n1", "title": "t"}))
            }),
        )
        .unwrap();
    Fixture {
        runtime,
        events,
        _guard: guard,
    }
}

fn notes() -> Fixture {
    fixture(definition(), "notes.read")
}

#[tokio::test]
async fn an_empty_invocation_id_is_refused_without_an_event() {
    let fx = notes();
    let request = InvocationRequest::new("notes.read", note("a")).with_id("");
    let outcome = fx.runtime.client().invoke(request).await;
    assert_eq!(
        serde_json::to_value(&outcome).unwrap(),
        json!({
            "status": "failed", "invocationId": "", "capabilityId": "notes.read",
            "error": {"code": "INPUT_INVALID", "message": INVOCATION_ID_MESSAGE}
        })
    );
    assert!(fx.events.events().is_empty());
}

#[tokio::test]
async fn a_long_invocation_id_is_refused_and_echoed_clipped() {
    let fx = notes();
    let client = fx.runtime.client();
    let huge = "x".repeat(1 << 20);
    let outcome = client
        .invoke(InvocationRequest::new("notes.read", note("a")).with_id(huge))
        .await;
    assert_eq!(
        assert_error(&outcome, ErrorCode::InputInvalid).message,
        INVOCATION_ID_MESSAGE
    );
    assert!(outcome.invocation_id().len() <= MAX_INVOCATION_ID_LENGTH);
    assert!(outcome.invocation_id().ends_with('…'));
    assert!(serde_json::to_string(&outcome).unwrap().len() < 1024);

    // Clipping respects characters: 200 two-byte characters are 400 bytes.
    let accented = client
        .invoke(InvocationRequest::new("notes.read", note("a")).with_id("é".repeat(200)))
        .await;
    let echoed = accented.invocation_id();
    assert!(echoed.len() <= MAX_INVOCATION_ID_LENGTH, "{}", echoed.len());
    assert!(echoed.trim_end_matches('…').chars().all(|c| c == 'é'));

    // The limit itself is accepted; one byte more is not.
    let at_limit = client
        .invoke(InvocationRequest::new("notes.read", note("a")).with_id("i".repeat(256)))
        .await;
    assert_succeeded(&at_limit);
    assert_eq!(at_limit.invocation_id().len(), 256);
    let over = client
        .invoke(InvocationRequest::new("notes.read", note("a")).with_id("i".repeat(257)))
        .await;
    assert_error(&over, ErrorCode::InputInvalid);
    assert!(
        fx.events
            .events()
            .iter()
            .all(|e| e.invocation_id.len() == 256)
    );
}

#[tokio::test]
async fn an_unknown_capability_id_is_never_echoed_longer_than_the_limit() {
    let fx = notes();
    let client = fx.runtime.client();
    let huge = format!("notes.{}", "x".repeat(1 << 20));
    let outcome = client
        .invoke(InvocationRequest::new(huge.clone(), note("a")))
        .await;
    assert_error(&outcome, ErrorCode::CapabilityNotFound);
    assert!(outcome.capability_id().len() <= MAX_IDENTIFIER_LENGTH);
    assert!(outcome.capability_id().starts_with("notes.xxx"));
    assert!(serde_json::to_string(&outcome).unwrap().len() < 1024);
    // Observers see the clipped id too.
    let events = fx.events.events();
    assert!(!events.is_empty());
    assert!(
        events
            .iter()
            .all(|e| e.capability_id.len() <= MAX_IDENTIFIER_LENGTH)
    );

    let report = client
        .preflight(PreflightBatch::new(vec![PreflightProposal::new(
            huge,
            note("a"),
        )]))
        .await
        .unwrap();
    let blocked = serde_json::to_value(&report.outcomes[0]).unwrap();
    assert_eq!(blocked["error"]["code"], "CAPABILITY_NOT_FOUND");
    assert!(blocked["capabilityId"].as_str().unwrap().len() <= MAX_IDENTIFIER_LENGTH);
}

#[tokio::test]
async fn a_clipped_id_never_names_the_capability_it_starts_with() {
    let longest = "a".repeat(MAX_IDENTIFIER_LENGTH);
    let definition = ApplicationDefinition::new("longest", "Longest", "The longest id.")
        .capability(
            CapabilityDefinition::new(longest.clone(), Effect::Read, "Longest", "The longest id.")
                .output_schema(json!({"type": "object"})),
        );
    let fx = fixture(definition, &longest);
    let client = fx.runtime.client();
    assert_succeeded(
        &client
            .invoke(InvocationRequest::new(longest.clone(), json!({})))
            .await,
    );
    let longer = format!("{longest}a");
    let outcome = client
        .invoke(InvocationRequest::new(longer, json!({})))
        .await;
    assert_error(&outcome, ErrorCode::CapabilityNotFound);
}

#[test]
fn definitions_refuse_identifiers_over_the_limit() {
    let id = "a".repeat(MAX_IDENTIFIER_LENGTH + 1);
    let definition = ApplicationDefinition::new("app", "App", "An app.").capability(
        CapabilityDefinition::new(id, Effect::Read, "Too long", "Too long."),
    );
    let error = Runtime::new(definition, RuntimeOptions::default()).unwrap_err();
    assert_eq!(error.code(), "INVALID_CAPABILITY_ID", "{error}");
}

/// A handler that ignores cancellation: it waits at a gate that is only opened by the test,
/// and records whether its future was dropped unfinished.
fn stubborn(gate: Arc<Gate>, dropped: Arc<AtomicBool>) -> Binding {
    struct OnDrop(Arc<AtomicBool>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    Binding::new(move |_input: Value, _ctx: InvocationContext| {
        let gate = gate.clone();
        let guard = OnDrop(dropped.clone());
        async move {
            gate.pass().await;
            std::mem::forget(guard); // finished: not dropped unfinished
            Ok::<_, HandlerError>(json!({"id": "n1", "title": "t"}))
        }
    })
}

async fn cancelled_stubborn_invoke(
    options: RuntimeOptions,
) -> (
    Arc<Gate>,
    Arc<AtomicBool>,
    tokio::task::JoinHandle<InvocationOutcome>,
) {
    let runtime = Runtime::new(definition(), options.policy(allow_all())).unwrap();
    let gate = Gate::closed();
    let dropped = Arc::new(AtomicBool::new(false));
    runtime
        .host()
        .bind("notes.read", stubborn(gate.clone(), dropped.clone()))
        .unwrap()
        .keep();
    let token = CancellationToken::new();
    let client = runtime.client();
    let request = InvocationRequest::new("notes.read", note("a")).with_cancellation(token.clone());
    let task = tokio::spawn(async move { client.invoke(request).await });
    gate.entered().await;
    token.cancel();
    (gate, dropped, task)
}

#[tokio::test(start_paused = true)]
async fn abort_on_cancel_ends_an_invocation_whose_handler_ignores_cancellation() {
    let (gate, dropped, task) =
        cancelled_stubborn_invoke(RuntimeOptions::new().abort_on_cancel(true)).await;
    let outcome = task.await.unwrap();
    let error = assert_error(&outcome, ErrorCode::ExecutionAborted);
    assert_eq!(error.message, "The capability invocation was cancelled.");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future was dropped"
    );
    assert_eq!(gate.arrivals(), 1);
}

#[tokio::test(start_paused = true)]
async fn by_default_cancellation_stays_cooperative() {
    let (gate, dropped, mut task) = cancelled_stubborn_invoke(RuntimeOptions::new()).await;
    // The paused clock runs ahead as soon as everything waits: an hour passes at once, and
    // the invocation is still waiting for its handler, as in the reference.
    let waited = tokio::time::timeout(Duration::from_secs(3600), &mut task).await;
    assert!(waited.is_err(), "the invocation waits for the handler");
    assert!(!dropped.load(Ordering::SeqCst));
    gate.release();
    // A handler that succeeds after the abort succeeds, as in the reference (only a handler
    // that throws after the abort is EXECUTION_ABORTED there).
    let outcome = task.await.unwrap();
    assert_eq!(assert_succeeded(&outcome)["id"], "n1");
    assert!(
        !dropped.load(Ordering::SeqCst),
        "the handler ran to its end"
    );
}
