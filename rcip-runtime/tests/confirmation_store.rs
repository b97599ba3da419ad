//! Pending confirmations shared through a `ConfirmationStore` (two runtimes on one
//! `MemoryConfirmationStore`, and a store that fails): a cancelled ticket is resolvable
//! nowhere, a changed context refuses the run on the resolving instance, and a store that
//! fails loses nothing.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rcip_core::SemanticContext;
use rcip_runtime::testing::assert_confirmation;
use rcip_runtime::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// A store that can be told to fail, over a memory store.
#[derive(Debug, Default)]
struct Flaky {
    inner: MemoryConfirmationStore,
    failing: AtomicBool,
}

impl Flaky {
    fn check(&self) -> Result<(), Error> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(Error::ConfirmationStore("the test's store is down".into()));
        }
        Ok(())
    }
}

impl ConfirmationStore for Flaky {
    fn put(&self, c: StoredConfirmation) -> BoxFuture<Result<(), Error>> {
        match self.check() {
            Ok(()) => self.inner.put(c),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
    fn take(&self, id: &str) -> BoxFuture<Result<Option<StoredConfirmation>, Error>> {
        match self.check() {
            Ok(()) => self.inner.take(id),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
    fn pending(&self, now_ms: u64) -> BoxFuture<Result<Vec<StoredConfirmation>, Error>> {
        match self.check() {
            Ok(()) => self.inner.pending(now_ms),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
    fn find(&self, key: &str, now_ms: u64) -> BoxFuture<Result<Option<Filed>, Error>> {
        match self.check() {
            Ok(()) => self.inner.find(key, now_ms),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
    fn file_outcome(
        &self,
        key: &str,
        outcome: InvocationOutcome,
        keep_until_ms: u64,
    ) -> BoxFuture<Result<(), Error>> {
        match self.check() {
            Ok(()) => self.inner.file_outcome(key, outcome, keep_until_ms),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }
}

fn instance(store: Arc<dyn ConfirmationStore>, runs: &Arc<AtomicUsize>) -> (Runtime, BindingGuard) {
    let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.")
        .capability(CapabilityDefinition::new(
            "notes.clear",
            Effect::Destructive,
            "Clear",
            "Clears the notes.",
        ))
        .scope(ScopeDefinition::new("notes", "Notes", "The notebook."));
    let policy = policy_fn(|ctx| {
        if ctx.confirmed() {
            PolicyDecision::Allow
        } else {
            PolicyDecision::Confirm { reason: None }
        }
    });
    let runtime = Runtime::new(
        definition,
        RuntimeOptions::default()
            .policy(policy)
            .confirmation_store(store),
    )
    .unwrap();
    let runs = runs.clone();
    let guard = runtime
        .host()
        .bind(
            "notes.clear",
            Binding::new(move |_input: serde_json::Value, _ctx: InvocationContext| {
                let runs = runs.clone();
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, HandlerError>(json!(null))
                }
            }),
        )
        .unwrap();
    (runtime, guard)
}

fn code(outcome: &InvocationOutcome) -> Option<ErrorCode> {
    outcome.error().map(|e| e.code)
}

#[tokio::test]
async fn a_cancelled_ticket_is_resolved_nowhere() {
    let store = Arc::new(MemoryConfirmationStore::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let (a, _ga) = instance(store.clone(), &runs);
    let (b, _gb) = instance(store.clone(), &runs);
    let token = CancellationToken::new();
    let pending = a
        .client()
        .invoke(InvocationRequest::new("notes.clear", json!({})).with_cancellation(token.clone()))
        .await;
    let id = assert_confirmation(&pending).id.clone();
    token.cancel();
    // The raising instance's watcher ends it (and takes it out of the store).
    for _ in 0..100 {
        if store.pending(0).await.unwrap().is_empty() {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(
        b.host()
            .shared_pending_confirmations()
            .await
            .unwrap()
            .is_empty()
    );
    let late = b.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&late), Some(ErrorCode::ConfirmationNotFound));
    let receipt = a.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&receipt), Some(ErrorCode::ExecutionAborted));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_context_changed_on_the_resolving_instance_refuses_the_run() {
    let store = Arc::new(MemoryConfirmationStore::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let (a, _ga) = instance(store.clone(), &runs);
    let (b, _gb) = instance(store.clone(), &runs);
    let pending = a
        .client()
        .invoke(InvocationRequest::new("notes.clear", json!({})))
        .await;
    let id = assert_confirmation(&pending).id.clone();
    b.host()
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    let refused = b.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&refused), Some(ErrorCode::PolicyDenied));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Taken, so resolved: nowhere pending any more.
    let again = a.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&again), Some(ErrorCode::ConfirmationNotFound));
}

#[tokio::test]
async fn a_failing_store_refuses_the_call_and_keeps_a_held_ticket_pending() {
    let store = Arc::new(Flaky::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let (a, _ga) = instance(store.clone(), &runs);

    // Down when the ticket is raised: the call fails, nothing is pending, the id is free.
    store.failing.store(true, Ordering::SeqCst);
    let request = InvocationRequest::new("notes.clear", json!({})).with_id("inv-1");
    let failed = a.client().invoke(request).await;
    assert_eq!(code(&failed), Some(ErrorCode::ExecutionFailed));
    assert!(a.host().pending_confirmations().is_empty());
    store.failing.store(false, Ordering::SeqCst);
    let request = InvocationRequest::new("notes.clear", json!({})).with_id("inv-1");
    let pending = a.client().invoke(request).await;
    let id = assert_confirmation(&pending).id.clone();

    // Down when it is resolved: not resolved, still pending, resolvable once it is back.
    store.failing.store(true, Ordering::SeqCst);
    let refused = a.host().resolve_confirmation(&id, true).await;
    assert_eq!(code(&refused), Some(ErrorCode::ExecutionFailed));
    assert!(a.host().shared_pending_confirmations().await.is_err());
    assert_eq!(a.host().pending_confirmations().len(), 1);
    store.failing.store(false, Ordering::SeqCst);
    let outcome = a.host().resolve_confirmation(&id, true).await;
    assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_keyed_request_finds_its_ticket_and_then_its_outcome_on_any_instance() {
    let store = Arc::new(MemoryConfirmationStore::default());
    let runs = Arc::new(AtomicUsize::new(0));
    let (a, _ga) = instance(store.clone(), &runs);
    let (b, _gb) = instance(store.clone(), &runs);
    let keyed = || {
        InvocationRequest::new("notes.clear", json!({}))
            .with_extension(ConfirmationKey(Arc::from("caller-1")))
    };
    let pending = a.client().invoke(keyed()).await;
    let first = assert_confirmation(&pending).clone();
    // Asked again through the other instance: the same ticket, no second one.
    let again = b.client().invoke(keyed()).await;
    assert_eq!(assert_confirmation(&again), &first);
    assert_eq!(again.invocation_id(), pending.invocation_id());
    assert_eq!(
        b.host().shared_pending_confirmations().await.unwrap().len(),
        1
    );
    // Approved through B: the caller's next request, on A, gets the outcome, once.
    let approved = b.host().resolve_confirmation(&first.id, true).await;
    assert_eq!(approved.status(), OutcomeStatus::Succeeded);
    let outcome = a.client().invoke(keyed()).await;
    assert_eq!(outcome, approved);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "run once");
    // After that, the same request asks anew.
    let next = b.client().invoke(keyed()).await;
    assert_ne!(assert_confirmation(&next).id, first.id);
    // A request without the key never finds anything filed.
    let plain = a
        .client()
        .invoke(InvocationRequest::new("notes.clear", json!({})))
        .await;
    assert_ne!(
        assert_confirmation(&plain).id,
        assert_confirmation(&next).id
    );
}
