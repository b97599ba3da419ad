//! Pending confirmations shared by two instances of one application through one PostgreSQL
//! schema (`PostgresStore::confirmations`), each instance its own runtime and its own pool
//! (skipped with one line without `RCIP_TEST_POSTGRES_URL`): raised on one, listed and
//! resolved on the other; resolved exactly once when both answer at the same moment; expired
//! for both at once; still resolvable when the instance that raised it is gone.
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use postgres_support::TestSchema;
use rcip_core::{ErrorCode, OutcomeStatus};
use rcip_database::PostgresStore;
use rcip_runtime::testing::assert_confirmation;
use rcip_runtime::{
    ApplicationDefinition, Binding, CapabilityDefinition, Effect, HandlerError, InvocationOutcome,
    InvocationRequest, PolicyDecision, Principal, Runtime, RuntimeOptions, policy_fn,
};
use serde_json::json;

/// One instance: `notes.clear` always asks first; `runs` counts its handler's runs.
struct Instance {
    runtime: Runtime,
    runs: Arc<AtomicUsize>,
    _store: PostgresStore,
}

async fn instance(schema: &TestSchema, ttl: Duration) -> Instance {
    let store = schema.open().await;
    let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
        CapabilityDefinition::new(
            "notes.clear",
            Effect::Destructive,
            "Clear",
            "Clears the notes.",
        )
        .input_schema(json!({
            "type": "object",
            "properties": {"folder": {"type": "string"}},
            "required": ["folder"],
            "additionalProperties": false
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {"cleared": {"type": "string"}, "by": {"type": ["string", "null"]}},
            "required": ["cleared", "by"],
            "additionalProperties": false
        })),
    );
    let policy = policy_fn(|ctx| {
        if ctx.confirmed() {
            PolicyDecision::Allow
        } else {
            PolicyDecision::Confirm { reason: None }
        }
    });
    let options = RuntimeOptions::default()
        .policy(policy)
        .confirmation_ttl(ttl)
        .confirmation_store(Arc::new(store.confirmations()));
    let runtime = Runtime::new(definition, options).unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    runtime
        .host()
        .bind(
            "notes.clear",
            Binding::new(
                move |input: serde_json::Value, ctx: rcip_runtime::InvocationContext| {
                    let counter = counter.clone();
                    async move {
                        counter.fetch_add(1, Ordering::SeqCst);
                        let caller = ctx.principal().map(|p| p.id().to_owned());
                        Ok::<_, HandlerError>(json!({"cleared": input["folder"], "by": caller}))
                    }
                },
            ),
        )
        .unwrap()
        .keep();
    Instance {
        runtime,
        runs,
        _store: store,
    }
}

/// Raises a confirmation on `instance`, as `principal`; returns its id.
async fn raise(instance: &Instance, folder: &str) -> String {
    let request = InvocationRequest::new("notes.clear", json!({"folder": folder}))
        .with_extension(Principal::new("ada").with_scope("notes:write"));
    let pending = instance.runtime.client().invoke(request).await;
    assert_confirmation(&pending).id.clone()
}

/// Resolves `id` on `instance`, in a task of its own (so two answers race).
fn answer(
    instance: &Arc<Instance>,
    id: &str,
    approved: bool,
) -> tokio::task::JoinHandle<InvocationOutcome> {
    let (instance, id) = (instance.clone(), id.to_owned());
    tokio::spawn(async move {
        instance
            .runtime
            .host()
            .resolve_confirmation(&id, approved)
            .await
    })
}

/// Two instances on `schema`, or `None` (skipped) without a server.
async fn two(ttl: Duration) -> Option<(TestSchema, Instance, Instance)> {
    let schema = TestSchema::create().await?;
    let a = instance(&schema, ttl).await;
    let b = instance(&schema, ttl).await;
    Some((schema, a, b))
}

fn code(outcome: &InvocationOutcome) -> Option<ErrorCode> {
    outcome.error().map(|e| e.code)
}

#[tokio::test]
async fn raised_on_one_instance_it_is_listed_and_run_on_the_other_once() {
    let Some((_schema, a, b)) = two(Duration::from_secs(60)).await else {
        return;
    };
    let id = raise(&a, "inbox").await;

    let listed = b
        .runtime
        .host()
        .shared_pending_confirmations()
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].confirmation.id, id);
    assert_eq!(listed[0].capability_id, "notes.clear");
    assert_eq!(listed[0].input, json!({"folder": "inbox"}));
    assert_eq!(listed[0].principal.as_ref().map(Principal::id), Some("ada"));

    // Approved on B: the handler runs on B, with the caller's principal and input.
    let outcome = b.runtime.host().resolve_confirmation(&id, true).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
    assert_eq!(
        outcome.output(),
        Some(&json!({"cleared": "inbox", "by": "ada"}))
    );
    assert_eq!(
        (a.runs.load(Ordering::SeqCst), b.runs.load(Ordering::SeqCst)),
        (0, 1)
    );

    // Nowhere pending any more; a second answer on either instance finds nothing.
    assert!(
        a.runtime
            .host()
            .shared_pending_confirmations()
            .await
            .unwrap()
            .is_empty()
    );
    for (instance, approved) in [(&a, false), (&b, true), (&a, true)] {
        let again = instance
            .runtime
            .host()
            .resolve_confirmation(&id, approved)
            .await;
        assert_eq!(code(&again), Some(ErrorCode::ConfirmationNotFound));
    }
    assert_eq!(
        a.runs.load(Ordering::SeqCst) + b.runs.load(Ordering::SeqCst),
        1
    );
    // A resolved here is gone from the raising instance's own list too once it asks.
    assert!(a.runtime.host().pending_confirmations().is_empty());

    // Declined on the raising instance: B finds nothing, nothing runs.
    let id = raise(&a, "drafts").await;
    let declined = a.runtime.host().resolve_confirmation(&id, false).await;
    assert_eq!(code(&declined), Some(ErrorCode::ConfirmationDeclined));
    let late = b.runtime.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&late), Some(ErrorCode::ConfirmationNotFound));
    assert_eq!(
        a.runs.load(Ordering::SeqCst) + b.runs.load(Ordering::SeqCst),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_and_decline_at_once_on_two_instances_resolve_once_in_200_rounds() {
    let Some((_schema, a, b)) = two(Duration::from_secs(60)).await else {
        return;
    };
    let (a, b) = (Arc::new(a), Arc::new(b));
    let mut approved_won = 0;
    for round in 0..200 {
        // Raised on either; approved on one and declined on the other, at the same moment.
        let (raiser, approver, decliner) = match round % 4 {
            0 => (&a, &a, &b),
            1 => (&a, &b, &a),
            2 => (&b, &a, &b),
            _ => (&b, &b, &a),
        };
        let id = raise(raiser, &format!("folder-{round}")).await;
        let runs_before = a.runs.load(Ordering::SeqCst) + b.runs.load(Ordering::SeqCst);
        let approve = answer(approver, &id, true);
        let decline = answer(decliner, &id, false);
        let (approve, decline) = (approve.await.unwrap(), decline.await.unwrap());
        let runs = a.runs.load(Ordering::SeqCst) + b.runs.load(Ordering::SeqCst) - runs_before;
        match (code(&approve), code(&decline)) {
            (None, Some(ErrorCode::ConfirmationNotFound)) => {
                assert_eq!(approve.status(), OutcomeStatus::Succeeded, "round {round}");
                assert_eq!(runs, 1, "round {round}: the approval ran once");
                approved_won += 1;
            }
            (Some(ErrorCode::ConfirmationNotFound), Some(ErrorCode::ConfirmationDeclined)) => {
                assert_eq!(runs, 0, "round {round}: a decline runs nothing");
            }
            other => panic!("round {round}: not exactly one resolution: {other:?}"),
        }
    }
    // Both answers won some rounds (a race that one side always won would test little).
    println!("approvals won {approved_won} of 200 rounds");
    assert!((1..200).contains(&approved_won), "{approved_won}");
    assert_eq!(
        a.runs.load(Ordering::SeqCst) + b.runs.load(Ordering::SeqCst),
        approved_won
    );
    assert!(
        a.runtime
            .host()
            .shared_pending_confirmations()
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_confirmation_expires_for_every_instance_at_once() {
    let Some((_schema, a, b)) = two(Duration::from_millis(300)).await else {
        return;
    };
    let id = raise(&a, "inbox").await;
    assert_eq!(
        b.runtime
            .host()
            .shared_pending_confirmations()
            .await
            .unwrap()
            .len(),
        1
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert!(
        b.runtime
            .host()
            .shared_pending_confirmations()
            .await
            .unwrap()
            .is_empty()
    );
    assert!(a.runtime.host().pending_confirmations().is_empty());
    // The raising instance ended it: its receipt there, nothing to take on the other.
    let late = b.runtime.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&late), Some(ErrorCode::ConfirmationNotFound));
    let receipt = a.runtime.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&receipt), Some(ErrorCode::ConfirmationExpired));
    assert_eq!(
        a.runs.load(Ordering::SeqCst) + b.runs.load(Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn the_confirmations_of_an_instance_that_is_gone_are_resolved_by_another() {
    let Some((schema, a, b)) = two(Duration::from_secs(60)).await else {
        return;
    };
    let approve = raise(&a, "inbox").await;
    let decline = raise(&a, "drafts").await;
    drop(a);
    let outcome = b.runtime.host().resolve_confirmation(&approve, true).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
    let declined = b.runtime.host().resolve_confirmation(&decline, false).await;
    assert_eq!(code(&declined), Some(ErrorCode::ConfirmationDeclined));
    assert_eq!(b.runs.load(Ordering::SeqCst), 1);

    // Past its expiry, a ticket nobody ended is taken as expired, and runs nowhere.
    let c = instance(&schema, Duration::from_millis(100)).await;
    let expired = raise(&c, "archive").await;
    drop(c);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let late = b.runtime.host().resolve_confirmation(&expired, true).await;
    assert_eq!(code(&late), Some(ErrorCode::ConfirmationExpired));
    assert_eq!(b.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_keyed_request_finds_its_ticket_then_its_outcome_once_on_any_instance() {
    let Some((_schema, a, b)) = two(Duration::from_secs(60)).await else {
        return;
    };
    let keyed = || {
        InvocationRequest::new("notes.clear", json!({"folder": "inbox"}))
            .with_extension(rcip_runtime::ConfirmationKey(Arc::from("caller-key")))
    };
    let first = a.runtime.client().invoke(keyed()).await;
    let ticket = assert_confirmation(&first).clone();
    let again = b.runtime.client().invoke(keyed()).await;
    assert_eq!(
        assert_confirmation(&again),
        &ticket,
        "the same ticket, not a second"
    );
    let approved = a
        .runtime
        .host()
        .resolve_confirmation(&ticket.id, true)
        .await;
    assert_eq!(approved.status(), OutcomeStatus::Succeeded, "{approved:?}");
    assert_eq!(b.runtime.client().invoke(keyed()).await, approved);
    let next = a.runtime.client().invoke(keyed()).await;
    assert_ne!(assert_confirmation(&next).id, ticket.id, "handed out once");
    assert_eq!(
        a.runs.load(Ordering::SeqCst) + b.runs.load(Ordering::SeqCst),
        1
    );
}
