//! The incremental snapshot: a revision shares every chunk of entries in which nothing shown
//! changed with the snapshot before it, and reads the rest anew (issue 19, item 4).
#![allow(clippy::unwrap_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use proptest::prelude::*;
use rcip_runtime::*;
use serde_json::{Value, json};

/// 40 capabilities: chunks of 16, 16 and 8. Every third is in scope `a`; the rest are
/// global.
const SIZE: usize = 40;
const CHUNK: usize = CapabilityList::CHUNK_LEN;

fn id(i: usize) -> String {
    format!("app.c{i:02}")
}

fn scoped(i: usize) -> bool {
    i.is_multiple_of(3)
}

fn runtime() -> Runtime {
    runtime_of(SIZE)
}

/// A runtime of `size` capabilities, as [`runtime`]'s.
fn runtime_of(size: usize) -> Runtime {
    let mut definition = ApplicationDefinition::new("app", "App", "An application.")
        .scope(ScopeDefinition::new("a", "A", "Scope a."))
        .scope(ScopeDefinition::new("b", "B", "Scope b."));
    for i in 0..size {
        let mut capability =
            CapabilityDefinition::new(id(i), Effect::Read, "Title", "Description.");
        if scoped(i) {
            capability = capability.scope("a");
        }
        definition = definition.capability(capability);
    }
    Runtime::new(definition, RuntimeOptions::default()).unwrap()
}

fn binding() -> Binding {
    Binding::new(|_input: Value, _ctx: InvocationContext| async {
        Ok::<_, HandlerError>(json!(null))
    })
}

/// A binding whose availability follows `up` and counts its reads.
fn checked_binding(up: Arc<AtomicBool>, reads: Arc<AtomicUsize>) -> Binding {
    binding().with_availability(move || {
        reads.fetch_add(1, Ordering::SeqCst);
        if up.load(Ordering::SeqCst) {
            Availability::available()
        } else {
            Availability::unavailable("down", "Down.")
        }
    })
}

fn bind_all_but(runtime: &Runtime, except: Option<usize>) {
    for i in (0..SIZE).filter(|&i| Some(i) != except) {
        runtime.host().bind(&id(i), binding()).unwrap().keep();
    }
}

/// Which chunks two snapshots share (the same `Arc`).
fn shared(a: &ApplicationSnapshot, b: &ApplicationSnapshot) -> Vec<bool> {
    let (a, b) = (&a.capabilities, &b.capabilities);
    assert_eq!(a.chunk_count(), b.chunk_count());
    a.chunks()
        .zip(b.chunks())
        .map(|(a, b)| Arc::ptr_eq(a, b))
        .collect()
}

#[test]
fn the_list_is_cut_in_chunks_in_catalog_order() {
    let runtime = runtime();
    let snapshot = runtime.client().get_snapshot();
    assert_eq!(snapshot.capabilities.len(), SIZE);
    let lengths: Vec<usize> = snapshot.capabilities.chunks().map(|c| c.len()).collect();
    assert_eq!(lengths, [CHUNK, CHUNK, SIZE - 2 * CHUNK]);
    let ids: Vec<&str> = snapshot
        .capabilities
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    let expected: Vec<String> = (0..SIZE).map(id).collect();
    assert_eq!(ids, expected);
}

#[test]
fn an_unchanged_revision_shares_every_chunk() {
    let runtime = runtime();
    bind_all_but(&runtime, None);
    let client = runtime.client();
    let before = client.get_snapshot();
    runtime.host().refresh();
    let after = client.get_snapshot();
    assert_eq!(after.revision, before.revision + 1);
    assert_eq!(shared(&before, &after), [true, true, true]);
    assert_eq!(after.capabilities, before.capabilities);
    assert!(Arc::ptr_eq(&after.context, &before.context));
}

#[test]
fn a_changed_binding_rebuilds_only_its_chunk() {
    let runtime = runtime();
    let changing = CHUNK + 4;
    bind_all_but(&runtime, Some(changing));
    let client = runtime.client();
    let unbound = client.get_snapshot();
    assert!(!unbound.capabilities[changing].bound);

    let guard = runtime.host().bind(&id(changing), binding()).unwrap();
    let bound = client.get_snapshot();
    assert_eq!(bound.revision, unbound.revision + 1);
    assert_eq!(shared(&unbound, &bound), [true, false, true]);
    assert!(bound.capabilities[changing].bound);
    assert!(bound.capabilities[changing].available);
    assert!(
        !unbound.capabilities[changing].bound,
        "an old snapshot is never changed"
    );
    // Only the changed entry differs; its neighbours in the rebuilt chunk read the same.
    for i in (0..SIZE).filter(|&i| i != changing) {
        assert_eq!(bound.capabilities[i], unbound.capabilities[i], "entry {i}");
    }

    assert!(guard.unbind());
    let again = client.get_snapshot();
    assert_eq!(shared(&bound, &again), [true, false, true]);
    assert!(!again.capabilities[changing].bound);
    assert_eq!(again.capabilities, unbound.capabilities);

    runtime.host().refresh();
    let quiet = client.get_snapshot();
    assert_eq!(shared(&again, &quiet), [true, true, true]);
}

#[test]
fn changes_between_reads_all_show() {
    let runtime = runtime();
    let host = runtime.host();
    let (first, last) = (1, 2 * CHUNK + 1);
    for i in (0..SIZE).filter(|&i| i != first && i != last) {
        host.bind(&id(i), binding()).unwrap().keep();
    }
    let client = runtime.client();
    let before = client.get_snapshot();
    // Several revisions pass between reads: chunk 0 changes first, chunk 2 last.
    host.bind(&id(first), binding()).unwrap().keep();
    host.refresh();
    let middle = client.get_snapshot();
    host.refresh();
    host.bind(&id(last), binding()).unwrap().keep();
    host.refresh();
    let after = client.get_snapshot();
    assert_eq!(after.revision, before.revision + 5);
    assert_eq!(shared(&before, &middle), [false, true, true]);
    assert_eq!(shared(&middle, &after), [true, true, false]);
    assert_eq!(shared(&before, &after), [false, true, false]);
    assert!(after.capabilities[first].bound && after.capabilities[last].bound);
    assert!(middle.capabilities[first].bound && !middle.capabilities[last].bound);
    assert!(!before.capabilities[first].bound && !before.capabilities[last].bound);
}

#[test]
fn availability_checked_entries_are_reread_at_every_revision() {
    let runtime = runtime();
    let checked = 2 * CHUNK + 3;
    bind_all_but(&runtime, Some(checked));
    let up = Arc::new(AtomicBool::new(true));
    let reads = Arc::new(AtomicUsize::new(0));
    runtime
        .host()
        .bind(&id(checked), checked_binding(up.clone(), reads.clone()))
        .unwrap()
        .keep();
    let client = runtime.client();
    let first = client.get_snapshot();
    assert!(first.capabilities[checked].available);
    assert_eq!(reads.load(Ordering::SeqCst), 1);

    up.store(false, Ordering::SeqCst);
    assert!(Arc::ptr_eq(&first, &client.get_snapshot()), "cached");
    assert_eq!(reads.load(Ordering::SeqCst), 1);

    runtime.host().refresh();
    let second = client.get_snapshot();
    assert_eq!(
        reads.load(Ordering::SeqCst),
        2,
        "re-read at the new revision"
    );
    assert_eq!(shared(&first, &second), [true, true, false]);
    let entry = &second.capabilities[checked];
    assert!(!entry.available);
    assert_eq!(
        entry.availability,
        Some(Availability::unavailable("down", "Down."))
    );

    up.store(true, Ordering::SeqCst);
    runtime.host().refresh();
    let third = client.get_snapshot();
    assert_eq!(reads.load(Ordering::SeqCst), 3);
    assert!(third.capabilities[checked].available);
    assert_eq!(shared(&second, &third), [true, true, false]);
}

#[test]
fn a_context_change_rebuilds_relevance() {
    let runtime = runtime();
    bind_all_but(&runtime, None);
    let client = runtime.client();
    let before = client.get_snapshot();
    for (i, entry) in before.capabilities.iter().enumerate() {
        let expected = if scoped(i) {
            Relevance::Other
        } else {
            Relevance::Current
        };
        assert_eq!(entry.relevance, expected, "entry {i}");
    }
    runtime
        .host()
        .set_context(SemanticContext::active(["a"]))
        .unwrap();
    let after = client.get_snapshot();
    assert_eq!(shared(&before, &after), [false, false, false]);
    assert!(
        after
            .capabilities
            .iter()
            .all(|e| e.relevance == Relevance::Current)
    );
    // The same context again shows the same relevance: every entry is kept.
    runtime
        .host()
        .set_context(SemanticContext::active(["a"]))
        .unwrap();
    let same = client.get_snapshot();
    assert!(same.revision > after.revision);
    assert_eq!(shared(&after, &same), [true, true, true]);
    assert_eq!(same.capabilities, after.capabilities);
}

/// Past one page (16 chunks of 16) and ending on a whole chunk: 33 chunks in 3 pages.
#[test]
fn a_change_in_a_large_catalog_rereads_one_chunk() {
    const LARGE: usize = 33 * CHUNK;
    let runtime = runtime_of(LARGE);
    let mut guards: Vec<_> = (0..LARGE)
        .map(|i| Some(runtime.host().bind(&id(i), binding()).unwrap()))
        .collect();
    let client = runtime.client();
    let before = client.get_snapshot();
    assert_eq!(before.capabilities.chunk_count(), 33);
    // One capability in the second page, one in the last chunk.
    for changed in [20 * CHUNK + 5, LARGE - 1] {
        let previous = client.get_snapshot();
        assert!(guards[changed].take().unwrap().unbind());
        guards[changed] = Some(runtime.host().bind(&id(changed), binding()).unwrap());
        let after = client.get_snapshot();
        let shared = shared(&previous, &after);
        let rebuilt: Vec<usize> = (0..shared.len()).filter(|&at| !shared[at]).collect();
        assert_eq!(
            rebuilt,
            [changed / CHUNK],
            "only the changed chunk is read anew"
        );
        assert_eq!(after.capabilities.len(), LARGE);
        assert!(after.capabilities.iter().all(|entry| entry.bound));
        let ids: Vec<String> = after.capabilities.iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids, (0..LARGE).map(id).collect::<Vec<_>>());
    }
}

#[test]
fn the_wire_form_is_unchanged_by_sharing() {
    let runtime = runtime();
    bind_all_but(&runtime, Some(3));
    let client = runtime.client();
    let first = client.get_snapshot();
    runtime.host().refresh();
    let shared_snapshot = client.get_snapshot();
    // The snapshot written out is one that shares its chunks with the one before.
    assert_eq!(shared(&first, &shared_snapshot), [true, true, true]);
    let text = serde_json::to_string(&*shared_snapshot).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    let entries = value["capabilities"].as_array().unwrap();
    assert_eq!(entries.len(), SIZE);
    assert_eq!(entries[3]["bound"], json!(false));
    assert_eq!(entries[4]["bound"], json!(true));
    let back: ApplicationSnapshot = serde_json::from_str(&text).unwrap();
    assert_eq!(back, *shared_snapshot);
    assert_eq!(serde_json::to_string(&back).unwrap(), text);
}

/// The final state after concurrent binds, unbinds and reads: a snapshot at the last
/// revision shows every change, whatever chunks the reads in between shared.
#[test]
fn concurrent_changes_and_reads_end_in_the_current_state() {
    const WRITERS: usize = 4;
    const FLIPS: usize = 301;
    let runtime = runtime();
    let start = Arc::new(Barrier::new(WRITERS + 1));
    // Set by the reader after its first read: the writers wait for it, so reads and writes
    // overlap however the threads are scheduled (a loaded machine could otherwise run every
    // writer to the end before the reader's first read).
    let reading = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let client = runtime.client();
        let (start, reading, done) = (start.clone(), reading.clone(), done.clone());
        std::thread::spawn(move || {
            start.wait();
            loop {
                let snapshot = client.get_snapshot();
                assert_eq!(snapshot.capabilities.len(), SIZE);
                reading.store(true, Ordering::SeqCst);
                if done.load(Ordering::SeqCst) {
                    break;
                }
            }
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let host = runtime.host();
            let (start, reading) = (start.clone(), reading.clone());
            std::thread::spawn(move || {
                start.wait();
                while !reading.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                let mut kept = Vec::new();
                // Writer w owns every WRITERS-th capability, so all chunks see changes.
                for round in 0..FLIPS {
                    for i in (w..SIZE).step_by(WRITERS) {
                        if round % 2 == 0 {
                            kept.push(host.bind(&id(i), binding()).unwrap());
                        } else {
                            kept.clear();
                        }
                    }
                }
                // FLIPS is odd: the last round bound everything this writer owns, except
                // what it now unbinds, every other one of its capabilities.
                let mut guards = kept.into_iter();
                while let Some(guard) = guards.next() {
                    assert!(guard.unbind());
                    if let Some(guard) = guards.next() {
                        guard.keep();
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    // The reader checked every snapshot it read while the writers ran (a failed check
    // panics its thread).
    reader.join().unwrap();

    let snapshot = runtime.client().get_snapshot();
    for (i, entry) in snapshot.capabilities.iter().enumerate() {
        // Writer w's capabilities are w, w+W, w+2W, ...: the 1st, 3rd, ... were unbound.
        let position = i / WRITERS;
        assert_eq!(entry.bound, position % 2 == 1, "entry {i}");
    }
}

#[derive(Debug, Clone)]
enum Op {
    Bind { at: usize, checked: bool },
    Unbind { at: usize },
    SetAvailable { at: usize, up: bool },
    SetContext { scope: Option<&'static str> },
    Refresh,
}

/// An operation on one of `size` capabilities.
fn op(size: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..size, any::<bool>()).prop_map(|(at, checked)| Op::Bind { at, checked }),
        (0..size).prop_map(|at| Op::Unbind { at }),
        (0..size, any::<bool>()).prop_map(|(at, up)| Op::SetAvailable { at, up }),
        prop_oneof![Just(None), Just(Some("a")), Just(Some("b"))]
            .prop_map(|scope| Op::SetContext { scope }),
        Just(Op::Refresh),
    ]
}

/// What one capability should show, by the test's own bookkeeping.
#[derive(Default)]
struct Model {
    guard: Option<BindingGuard>,
    /// The availability flag of a checked binding.
    up: Option<Arc<AtomicBool>>,
}

/// Three pages of 16 chunks of 16 (the last page short, its last chunk too): what the model
/// test runs on besides [`SIZE`], so that whole pages are taken over and mixed.
const PAGES: usize = 2 * CapabilityList::PAGE_LEN * CHUNK + 5 * CHUNK + 8;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After any sequence of changes, read or not in between, a snapshot shows exactly what
    /// a full read of the bindings, their availability and the context would.
    #[test]
    fn snapshots_match_the_model(ops in proptest::collection::vec((op(SIZE), any::<bool>()), 1..60)) {
        check_model(SIZE, ops)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The same over several pages.
    #[test]
    fn snapshots_of_several_pages_match_the_model(
        ops in proptest::collection::vec((op(PAGES), any::<bool>()), 1..60),
    ) {
        check_model(PAGES, ops)?;
    }
}

/// Runs `ops` on a runtime of `size` capabilities, reading a snapshot after each op marked
/// so and comparing it with the model.
fn check_model(size: usize, ops: Vec<(Op, bool)>) -> Result<(), TestCaseError> {
    let runtime = runtime_of(size);
    let host = runtime.host();
    let client = runtime.client();
    let mut model: Vec<Model> = (0..size).map(|_| Model::default()).collect();
    let mut scope: Option<&'static str> = None;
    for (op, read) in ops {
        match op {
            Op::Bind { at, checked } => {
                if model[at].guard.is_none() {
                    let up = checked.then(|| Arc::new(AtomicBool::new(true)));
                    let binding = match &up {
                        Some(up) => checked_binding(up.clone(), Arc::default()),
                        None => binding(),
                    };
                    model[at].guard = Some(host.bind(&id(at), binding).unwrap());
                    model[at].up = up;
                }
            }
            Op::Unbind { at } => {
                if let Some(guard) = model[at].guard.take() {
                    prop_assert!(guard.unbind());
                    model[at].up = None;
                }
            }
            Op::SetAvailable { at, up } => {
                if let Some(flag) = &model[at].up {
                    flag.store(up, Ordering::SeqCst);
                }
                // The change shows at the next revision.
                host.refresh();
            }
            Op::SetContext { scope: next } => {
                scope = next;
                host.set_context(SemanticContext::active(next)).unwrap();
            }
            Op::Refresh => host.refresh(),
        }
        if !read {
            continue;
        }
        let snapshot = client.get_snapshot();
        prop_assert_eq!(snapshot.capabilities.len(), size);
        for (i, entry) in snapshot.capabilities.iter().enumerate() {
            let bound = model[i].guard.is_some();
            let availability = bound.then(|| match &model[i].up {
                Some(up) if !up.load(Ordering::SeqCst) => {
                    Availability::unavailable("down", "Down.")
                }
                _ => Availability::available(),
            });
            let relevance = if !scoped(i) || scope == Some("a") {
                Relevance::Current
            } else {
                Relevance::Other
            };
            prop_assert_eq!(&entry.id, &id(i));
            prop_assert_eq!(entry.bound, bound, "bound {}", i);
            prop_assert_eq!(&entry.availability, &availability, "availability {}", i);
            prop_assert_eq!(
                entry.available,
                availability.as_ref().is_some_and(|a| a.available),
                "available {}",
                i
            );
            prop_assert_eq!(entry.relevance, relevance, "relevance {}", i);
        }
    }
    Ok(())
}
