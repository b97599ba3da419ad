//! Discovery: snapshots, revisions, filters and subscriptions (reference sections 2.1-2.6).
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::{definition, echo_binding, note};
use rcip_runtime::*;
use serde_json::{Value, json};

/// Every capability id of the shared fixture, in catalog order.
const ALL_IDS: [&str; 5] = [
    "notes.read",
    "notes.create",
    "notes.share",
    "notes.purge",
    "app.ping",
];

fn runtime() -> Runtime {
    Runtime::new(definition(), RuntimeOptions::default()).unwrap()
}

fn ping_binding() -> Binding {
    Binding::new(|_input: Value, _ctx: InvocationContext| async {
        Ok::<_, HandlerError>(json!("pong"))
    })
}

fn noop_binding() -> Binding {
    echo_binding(Arc::new(AtomicU64::new(0)))
}

fn ids(capabilities: &[CapabilitySnapshot]) -> Vec<String> {
    capabilities.iter().map(|c| c.id.to_string()).collect()
}

fn entry<'a>(snapshot: &'a ApplicationSnapshot, id: &str) -> &'a CapabilitySnapshot {
    snapshot
        .capabilities
        .iter()
        .find(|c| &*c.id == id)
        .unwrap_or_else(|| panic!("no capability {id}"))
}

fn relevance(snapshot: &ApplicationSnapshot) -> Vec<(String, Relevance)> {
    snapshot
        .capabilities
        .iter()
        .map(|c| (c.id.to_string(), c.relevance))
        .collect()
}

fn filtered(client: &Arc<dyn RcipClient>, filter: CapabilityFilter) -> Vec<String> {
    ids(&client.list_capabilities(&filter))
}

// ----- 2.1 shape and derivation -------------------------------------------------------------

/// 2.1: a fresh runtime's snapshot: protocol "1.0", revision 0, metadata, scopes, the initial
/// `{activeScopeIds: []}` context and every capability, unbound, in catalog order.
#[test]
fn initial_snapshot_has_every_field_of_2_1() {
    let runtime = runtime();
    let snapshot = runtime.client().get_snapshot();

    assert_eq!(&*snapshot.protocol_version, "1.0");
    assert_eq!(snapshot.revision, 0);
    assert_eq!(
        *snapshot.application,
        ApplicationMetadata {
            id: "notes".into(),
            name: "Notes".into(),
            description: "A notebook for tests.".into(),
            version: None,
        }
    );
    assert_eq!(
        snapshot.scopes.to_vec(),
        vec![
            ScopeDefinition::new("notes", "Notes", "The note list."),
            ScopeDefinition::new("archive", "Archive", "Archived notes.").parent("notes"),
        ]
    );
    assert_eq!(*snapshot.context, SemanticContext::default());
    assert!(snapshot.context.active_scope_ids.is_empty());
    assert_eq!(snapshot.context.primary_scope_id, None);
    assert_eq!(ids(&snapshot.capabilities.to_vec()), ALL_IDS);

    for capability in &snapshot.capabilities {
        assert!(!capability.bound, "{} bound", capability.id);
        assert!(!capability.available, "{} available", capability.id);
        assert_eq!(capability.availability, None, "{}", capability.id);
        assert_eq!(capability.usage, None, "{}", capability.id);
    }

    let read = entry(&snapshot, "notes.read");
    assert_eq!(&*read.title, "Title of notes.read");
    assert_eq!(&*read.description, "Description of notes.read.");
    assert_eq!(read.scope_ids.to_vec(), vec!["notes".to_owned()]);
    assert_eq!(read.effect, Effect::Read);
    assert_eq!(read.input_schema, common::note_input_schema());
    assert_eq!(read.output_schema, common::note_output_schema());
    assert_eq!(read.tags.to_vec(), vec!["query".to_owned()]);

    let ping = entry(&snapshot, "app.ping");
    assert!(ping.scope_ids.is_empty());
    assert_eq!(ping.output_schema, json!({"type": "string"}));
}

/// 1.8 / 2.1: `tags` is `[]` (not absent) when the definition declares none.
#[test]
fn tags_default_to_empty_list() {
    let snapshot = runtime().client().get_snapshot();
    for id in ["notes.create", "notes.share", "notes.purge", "app.ping"] {
        assert!(entry(&snapshot, id).tags.is_empty(), "{id}");
    }
    let json = serde_json::to_value(entry(&snapshot, "app.ping")).unwrap();
    assert_eq!(json["tags"], json!([]));
}

/// 2.1: unbound -> `bound: false, available: false`, no availability; bound with no check ->
/// `{available: true}`; bound-unavailable -> the host's object verbatim, `available: false`.
#[test]
fn bound_available_and_availability_are_derived_per_capability() {
    let runtime = runtime();
    let host = runtime.host();
    let _read = host.bind("notes.read", noop_binding()).unwrap();
    let _create = host
        .bind(
            "notes.create",
            noop_binding().with_availability(|| Availability {
                available: false,
                reason_code: Some("offline".into()),
                reason: Some("The notebook is offline (sync paused by the user).".into()),
            }),
        )
        .unwrap();
    let _share = host
        .bind(
            "notes.share",
            noop_binding().with_availability(|| Availability {
                available: false,
                reason_code: None,
                reason: None,
            }),
        )
        .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(snapshot.revision, 3);

    let read = entry(&snapshot, "notes.read");
    assert!(read.bound);
    assert!(read.available);
    assert_eq!(read.availability, Some(Availability::available()));

    let create = entry(&snapshot, "notes.create");
    assert!(create.bound);
    assert!(!create.available);
    assert_eq!(
        create.availability,
        Some(Availability {
            available: false,
            reason_code: Some("offline".into()),
            reason: Some("The notebook is offline (sync paused by the user).".into()),
        })
    );

    let share = entry(&snapshot, "notes.share");
    assert!(share.bound);
    assert!(!share.available);
    assert_eq!(
        share.availability,
        Some(Availability {
            available: false,
            reason_code: None,
            reason: None,
        })
    );

    for id in ["notes.purge", "app.ping"] {
        let unbound = entry(&snapshot, id);
        assert!(!unbound.bound, "{id}");
        assert!(!unbound.available, "{id}");
        assert_eq!(unbound.availability, None, "{id}");
    }
}

/// 2.1: a bound capability whose availability check says `available: true` with a reason
/// keeps the reason verbatim and is available.
#[test]
fn available_true_with_reason_is_copied_verbatim() {
    let runtime = runtime();
    let _guard = runtime
        .host()
        .bind(
            "app.ping",
            ping_binding().with_availability(|| Availability {
                available: true,
                reason_code: Some("degraded".into()),
                reason: Some("Slow today.".into()),
            }),
        )
        .unwrap();
    let snapshot = runtime.client().get_snapshot();
    let ping = entry(&snapshot, "app.ping");
    assert!(ping.available);
    assert_eq!(
        ping.availability,
        Some(Availability {
            available: true,
            reason_code: Some("degraded".into()),
            reason: Some("Slow today.".into()),
        })
    );
}

/// 2.1: an availability check that panics publishes the AVAILABILITY_CHECK_FAILED object.
#[test]
fn panicking_availability_check_reads_as_check_failed() {
    let runtime = runtime();
    let _guard = runtime
        .host()
        .bind(
            "app.ping",
            ping_binding().with_availability(|| panic!("availability exploded")),
        )
        .unwrap();
    let snapshot = runtime.client().get_snapshot();
    let ping = entry(&snapshot, "app.ping");
    assert!(ping.bound);
    assert!(!ping.available);
    assert_eq!(
        ping.availability,
        Some(Availability {
            available: false,
            reason_code: Some("AVAILABILITY_CHECK_FAILED".into()),
            reason: Some("The application could not determine current availability.".into()),
        })
    );
}

/// 2.1: with no active scope, only the global capability is current.
#[test]
fn relevance_with_empty_context_only_global_is_current() {
    let snapshot = runtime().client().get_snapshot();
    assert_eq!(
        relevance(&snapshot),
        vec![
            ("notes.read".to_owned(), Relevance::Other),
            ("notes.create".to_owned(), Relevance::Other),
            ("notes.share".to_owned(), Relevance::Other),
            ("notes.purge".to_owned(), Relevance::Other),
            ("app.ping".to_owned(), Relevance::Current),
        ]
    );
}

/// 2.1: a scoped capability is current only when one of its scopes is active; activating the
/// parent (`notes`) of `archive` does NOT make the archive capability current.
#[test]
fn relevance_does_not_inherit_through_parent_scopes() {
    let runtime = runtime();
    let host = runtime.host();
    host.set_context(SemanticContext::active(["notes"]).primary("notes"))
        .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(
        relevance(&snapshot),
        vec![
            ("notes.read".to_owned(), Relevance::Current),
            ("notes.create".to_owned(), Relevance::Current),
            ("notes.share".to_owned(), Relevance::Current),
            ("notes.purge".to_owned(), Relevance::Other),
            ("app.ping".to_owned(), Relevance::Current),
        ]
    );

    // And the other way round: the child being active does not make parent-scoped
    // capabilities current.
    host.set_context(SemanticContext::active(["archive"]))
        .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(
        relevance(&snapshot),
        vec![
            ("notes.read".to_owned(), Relevance::Other),
            ("notes.create".to_owned(), Relevance::Other),
            ("notes.share".to_owned(), Relevance::Other),
            ("notes.purge".to_owned(), Relevance::Current),
            ("app.ping".to_owned(), Relevance::Current),
        ]
    );
}

/// 2.1: the primary scope plays no part in relevance: the same active set with different
/// primaries gives the same relevance.
#[test]
fn primary_scope_does_not_affect_relevance() {
    let runtime = runtime();
    let host = runtime.host();
    host.set_context(SemanticContext::active(["archive", "notes"]).primary("archive"))
        .unwrap();
    let with_archive_primary = relevance(&runtime.client().get_snapshot());
    host.set_context(SemanticContext::active(["archive", "notes"]).primary("notes"))
        .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(
        snapshot.context.primary_scope_id.as_deref(),
        Some("notes"),
        "context is published"
    );
    assert_eq!(relevance(&snapshot), with_archive_primary);
    assert!(
        snapshot
            .capabilities
            .iter()
            .all(|c| c.relevance == Relevance::Current)
    );
}

/// 2.1: the published context is the host's context (primary included).
#[test]
fn snapshot_context_is_the_current_semantic_context() {
    let runtime = runtime();
    runtime
        .host()
        .set_context(SemanticContext::active(["archive", "notes", "archive"]).primary("notes"))
        .unwrap();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(
        *snapshot.context,
        SemanticContext {
            active_scope_ids: vec!["archive".into(), "notes".into()],
            primary_scope_id: Some("notes".into()),
        }
    );
}

// ----- 2.2 revisions ----------------------------------------------------------------------

/// 2.2: revision +1 on bind, unbind (only when it removes the binding), every set_context
/// (even identical), refresh and successful invocation; unchanged on failed or denied
/// invocations, confirmations and preflight.
#[tokio::test]
async fn revision_changes_exactly_on_refresh_points() {
    let runtime = runtime();
    let host = runtime.host();
    let client = runtime.client();
    let revision = || client.get_snapshot().revision;
    assert_eq!(revision(), 0);

    let ping = host.bind("app.ping", ping_binding()).unwrap();
    assert_eq!(revision(), 1);
    let purge = host.bind("notes.purge", noop_binding()).unwrap();
    let create = host.bind("notes.create", noop_binding()).unwrap();
    assert_eq!(revision(), 3);

    host.set_context(SemanticContext::active(["notes"]))
        .unwrap();
    assert_eq!(revision(), 4);
    host.set_context(SemanticContext::active(["notes"]))
        .unwrap();
    assert_eq!(revision(), 5, "an identical context still bumps");
    assert!(host.set_context(SemanticContext::active(["nope"])).is_err());
    assert_eq!(revision(), 5, "a refused context does not bump");

    host.refresh();
    assert_eq!(revision(), 6);

    let ok = client
        .invoke(InvocationRequest::new("app.ping", json!({})))
        .await;
    assert_eq!(ok.status(), OutcomeStatus::Succeeded);
    assert_eq!(revision(), 7);

    // Denied (default policy denies writes), failed (unknown, bad input), confirmation.
    let denied = client
        .invoke(InvocationRequest::new("notes.create", note("x")))
        .await;
    assert_eq!(denied.error_code(), Some(ErrorCode::PolicyDenied));
    let missing = client
        .invoke(InvocationRequest::new("nope.nope", json!({})))
        .await;
    assert_eq!(missing.error_code(), Some(ErrorCode::CapabilityNotFound));
    let invalid = client
        .invoke(InvocationRequest::new("app.ping", json!({"x": 1})))
        .await;
    assert_eq!(invalid.error_code(), Some(ErrorCode::InputInvalid));
    let confirm = client
        .invoke(InvocationRequest::new("notes.purge", note("x")))
        .await;
    assert_eq!(confirm.status(), OutcomeStatus::ConfirmationRequired);
    let report = client
        .preflight(PreflightBatch::new(vec![PreflightProposal::new(
            "app.ping",
            json!({}),
        )]))
        .await
        .unwrap();
    assert_eq!(report.revision, 7);
    assert_eq!(revision(), 7);

    // Unbind: +1 each; `keep` never unbinds.
    assert!(create.unbind());
    assert_eq!(revision(), 8);
    drop(purge);
    assert_eq!(revision(), 9);
    ping.keep();
    assert_eq!(revision(), 9, "keep() does not unbind");
}

/// 2.2/3.2: a refused bind (already bound) does not bump; unbinding bumps once and a
/// re-bind after it bumps again.
#[test]
fn refused_bind_does_not_bump_revision() {
    let runtime = runtime();
    let host = runtime.host();
    let client = runtime.client();
    let first = host.bind("app.ping", ping_binding()).unwrap();
    assert!(first.unbind());
    let second = host.bind("app.ping", ping_binding()).unwrap();
    assert_eq!(client.get_snapshot().revision, 3);
    assert!(matches!(
        host.bind("app.ping", ping_binding()),
        Err(Error::AlreadyBound(id)) if id == "app.ping"
    ));
    assert!(matches!(
        host.bind("nope.nope", ping_binding()),
        Err(Error::NotRegistered(id)) if id == "nope.nope"
    ));
    assert_eq!(
        client.get_snapshot().revision,
        3,
        "a refused bind does not bump"
    );
    assert!(second.unbind());
    assert_eq!(client.get_snapshot().revision, 4);
    assert!(!entry(&client.get_snapshot(), "app.ping").bound);
}

// ----- 2.3 caching and identity ---------------------------------------------------------------

/// 2.3: `get_snapshot` returns the same shared value until the revision changes.
#[test]
fn snapshot_is_the_same_value_until_the_revision_changes() {
    let runtime = runtime();
    let client = runtime.client();
    let a = client.get_snapshot();
    let b = client.get_snapshot();
    assert!(Arc::ptr_eq(&a, &b));
    runtime.host().refresh();
    let c = client.get_snapshot();
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(c.revision, 1);
    assert_eq!(a.revision, 0, "an old snapshot is never changed");
    assert!(Arc::ptr_eq(&c, &client.get_snapshot()));
}

/// 2.3/2.2: availability is cached in the snapshot until the revision changes: flipping the
/// host's flag is invisible until `host.refresh()`.
#[tokio::test]
async fn availability_is_cached_until_refresh() {
    let runtime = runtime();
    let host = runtime.host();
    let client = runtime.client();
    let up = Arc::new(AtomicBool::new(true));
    let flag = up.clone();
    let _guard = host
        .bind(
            "app.ping",
            ping_binding().with_availability(move || {
                if flag.load(Ordering::SeqCst) {
                    Availability::available()
                } else {
                    Availability::unavailable("maintenance", "Down for maintenance.")
                }
            }),
        )
        .unwrap();
    let before = client.get_snapshot();
    assert!(entry(&before, "app.ping").available);

    up.store(false, Ordering::SeqCst);
    let same = client.get_snapshot();
    assert!(Arc::ptr_eq(&before, &same));
    assert_eq!(same.revision, 1);
    assert!(
        entry(&same, "app.ping").available,
        "still the cached answer"
    );
    assert_eq!(
        filtered(
            &client,
            CapabilityFilter {
                available_only: true,
                ..CapabilityFilter::default()
            }
        ),
        ["app.ping"],
        "list_capabilities filters the cached snapshot"
    );

    // Invocation reads availability live (2.3: discovery may disagree with invocation).
    let outcome = client
        .invoke(InvocationRequest::new("app.ping", json!({})))
        .await;
    assert_eq!(
        outcome.error(),
        Some(&RcipError::new(
            ErrorCode::CapabilityUnavailable,
            "Down for maintenance."
        ))
    );
    assert_eq!(client.get_snapshot().revision, 1);

    host.refresh();
    let after = client.get_snapshot();
    assert_eq!(after.revision, 2);
    let ping = entry(&after, "app.ping");
    assert!(!ping.available);
    assert_eq!(
        ping.availability,
        Some(Availability::unavailable(
            "maintenance",
            "Down for maintenance."
        ))
    );
}

/// 2.3: snapshots of different revisions share each capability's schemas (no copy).
#[test]
fn snapshots_share_schemas_across_revisions() {
    let runtime = runtime();
    let client = runtime.client();
    let a = client.get_snapshot();
    let _guard = runtime.host().bind("notes.read", noop_binding()).unwrap();
    runtime
        .host()
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    let b = client.get_snapshot();
    assert_eq!(b.revision, 2);
    assert_eq!((a.capabilities.len(), b.capabilities.len()), (5, 5));
    for (x, y) in a.capabilities.iter().zip(&b.capabilities) {
        assert!(Arc::ptr_eq(&x.contract, &y.contract), "{}", x.id);
    }
    // And the entries returned by list_capabilities share them too.
    let listed = client.list_capabilities(&CapabilityFilter::default());
    assert!(Arc::ptr_eq(
        &listed[0].contract,
        &b.capabilities[0].contract
    ));
}

// ----- 2.5 filters ----------------------------------------------------------------------------

/// A runtime with context `[notes]`, `notes.read` and `app.ping` bound and available,
/// `notes.create` bound but unavailable, `notes.share` and `notes.purge` unbound.
fn filter_fixture() -> (Runtime, Vec<BindingGuard>) {
    let runtime = runtime();
    let host = runtime.host();
    let guards = vec![
        host.bind("notes.read", noop_binding()).unwrap(),
        host.bind(
            "notes.create",
            noop_binding().with_availability(|| Availability::unavailable("busy", "Busy.")),
        )
        .unwrap(),
        host.bind("app.ping", ping_binding()).unwrap(),
    ];
    host.set_context(SemanticContext::active(["notes"]))
        .unwrap();
    (runtime, guards)
}

/// 2.5: the empty filter and `context: all` keep everything, in catalog order.
#[test]
fn filter_empty_and_context_all_keep_everything() {
    let (runtime, _guards) = filter_fixture();
    let client = runtime.client();
    assert_eq!(filtered(&client, CapabilityFilter::default()), ALL_IDS);
    assert_eq!(
        filtered(
            &client,
            CapabilityFilter {
                context: Some(ContextFilter::All),
                ..CapabilityFilter::default()
            }
        ),
        ALL_IDS
    );
    // The entries are the snapshot's entries.
    assert_eq!(
        client.list_capabilities(&CapabilityFilter::default()),
        client.get_snapshot().capabilities
    );
}

/// 2.5: `context: current` keeps only relevance `current` (the global capability and the
/// `notes`-scoped ones; `notes.purge` is in `archive`).
#[test]
fn filter_context_current() {
    let (runtime, _guards) = filter_fixture();
    assert_eq!(
        filtered(
            &runtime.client(),
            CapabilityFilter {
                context: Some(ContextFilter::Current),
                ..CapabilityFilter::default()
            }
        ),
        ["notes.read", "notes.create", "notes.share", "app.ping"]
    );
}

/// 2.5: `availableOnly` keeps only `available: true` (so never unbound, never bound-but-
/// unavailable).
#[test]
fn filter_available_only() {
    let (runtime, _guards) = filter_fixture();
    assert_eq!(
        filtered(
            &runtime.client(),
            CapabilityFilter {
                available_only: true,
                ..CapabilityFilter::default()
            }
        ),
        ["notes.read", "app.ping"]
    );
}

/// 2.5: `scopeId` keeps capabilities listing it: global ones are excluded, an unknown scope
/// gives an empty list (no error), and an empty string is no filter.
#[test]
fn filter_scope_id() {
    let (runtime, _guards) = filter_fixture();
    let client = runtime.client();
    let by_scope = |scope: &str| {
        filtered(
            &client,
            CapabilityFilter {
                scope_id: Some(scope.to_owned()),
                ..CapabilityFilter::default()
            },
        )
    };
    assert_eq!(
        by_scope("notes"),
        ["notes.read", "notes.create", "notes.share"]
    );
    assert_eq!(by_scope("archive"), ["notes.purge"]);
    assert_eq!(by_scope("unknown.scope"), Vec::<String>::new());
    assert_eq!(by_scope(""), ALL_IDS);
}

/// 2.5: `effect` keeps exact matches.
#[test]
fn filter_effect() {
    let (runtime, _guards) = filter_fixture();
    let client = runtime.client();
    let by_effect = |effect: Effect| {
        filtered(
            &client,
            CapabilityFilter {
                effect: Some(effect),
                ..CapabilityFilter::default()
            },
        )
    };
    assert_eq!(by_effect(Effect::Read), ["notes.read", "app.ping"]);
    assert_eq!(by_effect(Effect::Write), ["notes.create"]);
    assert_eq!(by_effect(Effect::External), ["notes.share"]);
    assert_eq!(by_effect(Effect::Destructive), ["notes.purge"]);
}

/// 2.5: all given criteria are ANDed.
#[test]
fn filters_combine_with_and() {
    let (runtime, _guards) = filter_fixture();
    let client = runtime.client();
    assert_eq!(
        filtered(
            &client,
            CapabilityFilter {
                context: Some(ContextFilter::Current),
                available_only: true,
                effect: Some(Effect::Read),
                scope_id: None,
            }
        ),
        ["notes.read", "app.ping"]
    );
    assert_eq!(
        filtered(
            &client,
            CapabilityFilter {
                context: Some(ContextFilter::Current),
                available_only: true,
                effect: Some(Effect::Read),
                scope_id: Some("notes".into()),
            }
        ),
        ["notes.read"]
    );
    assert_eq!(
        filtered(
            &client,
            CapabilityFilter {
                context: Some(ContextFilter::Current),
                scope_id: Some("archive".into()),
                ..CapabilityFilter::default()
            }
        ),
        Vec::<String>::new(),
        "archive's capability is not current under [notes]"
    );
    assert_eq!(
        filtered(
            &client,
            CapabilityFilter {
                available_only: true,
                effect: Some(Effect::Write),
                ..CapabilityFilter::default()
            }
        ),
        Vec::<String>::new(),
        "notes.create is bound but unavailable"
    );
    assert_eq!(
        filtered(
            &client,
            CapabilityFilter {
                context: Some(ContextFilter::All),
                scope_id: Some("notes".into()),
                effect: Some(Effect::External),
                ..CapabilityFilter::default()
            }
        ),
        ["notes.share"]
    );
}

/// 2.5: `context: current` filters discovery, not invocation: an `other` capability runs.
#[tokio::test]
async fn other_relevance_capability_can_still_be_invoked() {
    let runtime = runtime();
    let calls = Arc::new(AtomicU64::new(0));
    let _guard = runtime
        .host()
        .bind("notes.read", echo_binding(calls.clone()))
        .unwrap();
    let client = runtime.client();
    assert_eq!(
        entry(&client.get_snapshot(), "notes.read").relevance,
        Relevance::Other
    );
    let outcome = client
        .invoke(InvocationRequest::new("notes.read", note("t")).with_id("i1"))
        .await;
    assert_eq!(
        outcome,
        InvocationOutcome::Succeeded {
            invocation_id: "i1".into(),
            capability_id: "notes.read".into(),
            output: json!({"id": "n1", "title": "t"}),
        }
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

// ----- 2.6 subscribe --------------------------------------------------------------------------

/// A listener that records the revision it reads (through the client) at each call.
fn recording_listener(client: Arc<dyn RcipClient>, seen: Arc<Mutex<Vec<u64>>>) -> Listener {
    Box::new(move || {
        let revision = client.get_snapshot().revision;
        seen.lock().unwrap().push(revision);
    })
}

/// 2.6: a listener is called once per refresh, synchronously, after the new snapshot is
/// installed (it reads the new revision inside).
#[tokio::test]
async fn listener_runs_once_per_refresh_synchronously() {
    let runtime = runtime();
    let host = runtime.host();
    let client = runtime.client();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let _subscription = client.subscribe(recording_listener(client.clone(), seen.clone()));
    assert!(seen.lock().unwrap().is_empty(), "not called on subscribe");

    host.refresh();
    assert_eq!(*seen.lock().unwrap(), [1], "called before refresh returned");
    host.refresh();
    host.refresh();
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);

    let guard = host.bind("app.ping", ping_binding()).unwrap();
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4]);
    host.set_context(SemanticContext::active(["notes"]))
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4, 5]);

    // Successful invocation: one call; failed invocation: none.
    let ok = client
        .invoke(InvocationRequest::new("app.ping", json!({})))
        .await;
    assert_eq!(ok.status(), OutcomeStatus::Succeeded);
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4, 5, 6]);
    let bad = client
        .invoke(InvocationRequest::new("app.ping", json!([])))
        .await;
    assert_eq!(bad.error_code(), Some(ErrorCode::InputInvalid));
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4, 5, 6]);

    drop(guard);
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4, 5, 6, 7]);
}

/// 2.6: dropping the subscription unsubscribes; other listeners keep being called.
#[test]
fn dropping_subscription_unsubscribes() {
    let runtime = runtime();
    let client = runtime.client();
    let a = Arc::new(AtomicU64::new(0));
    let b = Arc::new(AtomicU64::new(0));
    let counter = |n: Arc<AtomicU64>| -> Listener {
        Box::new(move || {
            n.fetch_add(1, Ordering::SeqCst);
        })
    };
    let sub_a = client.subscribe(counter(a.clone()));
    let _sub_b = client.subscribe(counter(b.clone()));
    runtime.host().refresh();
    assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (1, 1));
    drop(sub_a);
    runtime.host().refresh();
    runtime.host().refresh();
    assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (1, 3));
}

/// 2.6: `unsubscribe()` ends the subscription; ending is idempotent (the drop that follows
/// does not cancel a second time).
#[test]
fn unsubscribe_method_is_idempotent() {
    let runtime = runtime();
    let client = runtime.client();
    let calls = Arc::new(AtomicU64::new(0));
    let n = calls.clone();
    let subscription = client.subscribe(move || {
        n.fetch_add(1, Ordering::SeqCst);
    });
    runtime.host().refresh();
    subscription.unsubscribe();
    runtime.host().refresh();
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // The guard's own cancel runs exactly once, whichever way it ends.
    let cancels = Arc::new(AtomicU64::new(0));
    let c = cancels.clone();
    let custom = Subscription::new(move || {
        c.fetch_add(1, Ordering::SeqCst);
    });
    custom.unsubscribe();
    assert_eq!(cancels.load(Ordering::SeqCst), 1);
    let c = cancels.clone();
    drop(Subscription::new(move || {
        c.fetch_add(1, Ordering::SeqCst);
    }));
    assert_eq!(cancels.load(Ordering::SeqCst), 2);

    // Unsubscribing after the runtime is gone is harmless.
    let late = client.subscribe(|| {});
    drop(client);
    drop(runtime);
    late.unsubscribe();
}

/// 2.6: a listener may read the snapshot and list capabilities inside (no deadlock); what it
/// reads is the cached snapshot of the new revision.
#[test]
fn listener_calling_get_snapshot_does_not_deadlock() {
    let runtime = runtime();
    let client = runtime.client();
    type Seen = Vec<(Arc<ApplicationSnapshot>, Vec<String>)>;
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let inner_client = client.clone();
    let store = seen.clone();
    let _subscription = client.subscribe(move || {
        let snapshot = inner_client.get_snapshot();
        let current = ids(&inner_client.list_capabilities(&CapabilityFilter {
            context: Some(ContextFilter::Current),
            ..CapabilityFilter::default()
        }));
        store.lock().unwrap().push((snapshot, current));
    });
    let _guard = runtime.host().bind("app.ping", ping_binding()).unwrap();
    runtime
        .host()
        .set_context(SemanticContext::active(["archive"]))
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.iter().map(|(s, _)| s.revision).collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(entry(&seen[0].0, "app.ping").bound);
    assert_eq!(seen[0].1, ["app.ping"]);
    assert_eq!(
        seen[1].0.context.active_scope_ids,
        vec!["archive".to_owned()]
    );
    assert_eq!(seen[1].1, ["notes.purge", "app.ping"]);
    assert!(Arc::ptr_eq(&seen[1].0, &client.get_snapshot()));
}

/// 2.6: a panicking listener is contained; the refresh completes and later listeners run.
#[test]
fn panicking_listener_does_not_break_refresh() {
    let runtime = runtime();
    let client = runtime.client();
    let _bad = client.subscribe(|| panic!("listener exploded"));
    let calls = Arc::new(AtomicU64::new(0));
    let n = calls.clone();
    let _good = client.subscribe(move || {
        n.fetch_add(1, Ordering::SeqCst);
    });
    runtime.host().refresh();
    runtime.host().refresh();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(client.get_snapshot().revision, 2);
}

// ----- object safety, custom clients ------------------------------------------------------------

/// A tool that only knows `Arc<dyn RcipClient>`: discovers, then invokes.
async fn tool(client: Arc<dyn RcipClient>) -> (Vec<String>, InvocationOutcome) {
    let available = client.list_capabilities(&CapabilityFilter {
        available_only: true,
        ..CapabilityFilter::default()
    });
    let first = available[0].id.to_string();
    let outcome = client
        .invoke(InvocationRequest::new(first, json!({})).with_id("tool-1"))
        .await;
    (ids(&available), outcome)
}

/// The client trait is object-safe: discovery and invocation through `Arc<dyn RcipClient>`.
#[tokio::test]
async fn client_is_object_safe() {
    let runtime = runtime();
    let _guard = runtime.host().bind("app.ping", ping_binding()).unwrap();
    let (available, outcome) = tool(runtime.client()).await;
    assert_eq!(available, ["app.ping"]);
    assert_eq!(
        outcome,
        InvocationOutcome::Succeeded {
            invocation_id: "tool-1".into(),
            capability_id: "app.ping".into(),
            output: json!("pong"),
        }
    );
    // The host hands out a client of the same runtime.
    assert_eq!(runtime.host().client().get_snapshot().revision, 2);
}

/// A custom client (e.g. a remote proxy) that does not implement preflight.
#[derive(Debug)]
struct FixedClient {
    snapshot: Arc<ApplicationSnapshot>,
}

impl RcipClient for FixedClient {
    fn get_snapshot(&self) -> Arc<ApplicationSnapshot> {
        self.snapshot.clone()
    }

    fn subscribe_boxed(&self, _listener: Listener) -> Subscription {
        Subscription::new(|| {})
    }

    fn invoke(&self, request: InvocationRequest) -> BoxFuture<InvocationOutcome> {
        let outcome = InvocationOutcome::from_error(
            request.invocation_id.unwrap_or_default(),
            request.capability_id,
            RcipError::new(ErrorCode::CapabilityUnbound, "proxy"),
        );
        Box::pin(std::future::ready(outcome))
    }
}

/// 5: preflight is optional on a client; the default answers `PreflightUnsupported`. The
/// default `list_capabilities` filters the custom client's snapshot.
#[tokio::test]
async fn custom_client_without_preflight_gets_unsupported() {
    let runtime = runtime();
    let _guard = runtime.host().bind("app.ping", ping_binding()).unwrap();
    let client: Arc<dyn RcipClient> = Arc::new(FixedClient {
        snapshot: runtime.client().get_snapshot(),
    });
    let err = client
        .preflight(PreflightBatch::new(vec![PreflightProposal::new(
            "app.ping",
            json!({}),
        )]))
        .await
        .unwrap_err();
    assert_eq!(err, Error::PreflightUnsupported);
    assert_eq!(err.code(), "PREFLIGHT_UNSUPPORTED");
    assert_eq!(
        err.to_string(),
        "This RCIP client does not support preflight."
    );

    let (available, outcome) = tool(client).await;
    assert_eq!(available, ["app.ping"]);
    assert_eq!(outcome.error_code(), Some(ErrorCode::CapabilityUnbound));
    assert_eq!(outcome.invocation_id(), "tool-1");
}

// ----- isolation --------------------------------------------------------------------------------

/// 3: runtimes created from one compiled catalog are isolated: bindings, context and
/// revisions are per runtime, while the contracts (schemas) are shared.
#[tokio::test]
async fn runtimes_from_one_catalog_are_isolated() {
    let catalog = CompiledCatalog::compile(definition()).unwrap();
    let a = Runtime::from_catalog(catalog.clone(), RuntimeOptions::default());
    let b = Runtime::from_catalog(catalog.clone(), RuntimeOptions::default());
    assert!(Arc::ptr_eq(a.catalog(), b.catalog()));

    let _guard = a.host().bind("app.ping", ping_binding()).unwrap();
    a.host()
        .set_context(SemanticContext::active(["notes"]))
        .unwrap();
    let snap_a = a.client().get_snapshot();
    let snap_b = b.client().get_snapshot();
    assert_eq!(snap_a.revision, 2);
    assert_eq!(snap_b.revision, 0);
    assert!(entry(&snap_a, "app.ping").bound);
    assert!(!entry(&snap_b, "app.ping").bound);
    assert_eq!(*snap_b.context, SemanticContext::default());
    assert!(Arc::ptr_eq(
        &snap_a.capabilities[0].contract,
        &snap_b.capabilities[0].contract
    ));

    // b can bind the same id independently, and invocations stay in their runtime.
    let _guard_b = b.host().bind("app.ping", ping_binding()).unwrap();
    let out = a
        .client()
        .invoke(InvocationRequest::new("app.ping", json!({})))
        .await;
    assert_eq!(out.status(), OutcomeStatus::Succeeded);
    assert_eq!(a.client().get_snapshot().revision, 3);
    assert_eq!(b.client().get_snapshot().revision, 1);

    // A listener on b is not told about a's refreshes.
    let calls = Arc::new(AtomicU64::new(0));
    let n = calls.clone();
    let _sub = b.client().subscribe(move || {
        n.fetch_add(1, Ordering::SeqCst);
    });
    a.host().refresh();
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    b.host().refresh();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
