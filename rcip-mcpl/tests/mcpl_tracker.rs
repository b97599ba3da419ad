//! Manifest change tracking: `changed_domains` presence cases and the `ManifestTracker`
//! (atomic install, coalescing transactions, attach seeds, per-connection baselines, no empty
//! announcement, failing transactions).
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use rcip_mcpl::{
    ChangeDomain::{self, Capabilities, FeatureSets, TagOntology},
    ManifestChanged, ManifestTracker, TransactionError, changed_domains, manifest_digest,
};
use serde_json::{Value, json};

fn domains(before: Value, after: Value) -> Vec<ChangeDomain> {
    changed_domains(Some(&before), &after)
        .unwrap()
        .into_iter()
        .collect()
}

#[test]
fn changed_domains_keeps_absent_null_and_empty_apart() {
    let base = json!({"version": "0.5"});
    assert_eq!(
        domains(base.clone(), json!({"version": "0.5", "featureSets": {}})),
        [FeatureSets, TagOntology]
    );
    assert_eq!(
        domains(base.clone(), json!({"version": "0.5", "featureSets": null})),
        [FeatureSets, TagOntology]
    );
    assert_eq!(
        domains(json!({"featureSets": {}}), json!({"featureSets": null})),
        [FeatureSets, TagOntology]
    );
    assert_eq!(
        domains(base.clone(), json!({"version": "0.5", "tools": null})),
        [Capabilities]
    );
    assert_eq!(
        domains(json!({"tools": null}), json!({"tools": false})),
        [Capabilities]
    );
    // version belongs to no domain; revision is not content.
    assert_eq!(
        domains(base.clone(), json!({"version": "0.6"})),
        Vec::<ChangeDomain>::new()
    );
    assert_eq!(
        domains(
            base.clone(),
            json!({"version": "0.5", "revision": "sha256:x"})
        ),
        Vec::<ChangeDomain>::new()
    );
    // Reordering a set is no change; an ontology change is only tagOntology.
    let sets = |uses: Value, tags: Value| json!({"featureSets": {"fs": {"uses": uses, "tagOntology": {"coreTags": tags}}}});
    assert_eq!(
        domains(
            sets(json!(["b", "a"]), json!(["x"])),
            sets(json!(["a", "b", "a"]), json!(["x"]))
        ),
        Vec::<ChangeDomain>::new()
    );
    assert_eq!(
        domains(
            sets(json!(["a"]), json!(["x"])),
            sets(json!(["a"]), json!(["y"]))
        ),
        [TagOntology]
    );
    assert_eq!(
        domains(
            sets(json!(["a"]), json!(["x"])),
            sets(json!(["b"]), json!(["x"]))
        ),
        [FeatureSets]
    );
    // No previous: everything.
    assert_eq!(changed_domains(None, &base).unwrap().len(), 3);
    // A manifest without a digest has no domains either.
    assert!(changed_domains(Some(&base), &json!({"bad key": true})).is_err());
}

type Log = Arc<Mutex<Vec<ManifestChanged>>>;

fn attach(tracker: &ManifestTracker, seed: Option<&str>) -> Log {
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    tracker.attach(seed, move |changed| {
        sink.lock().unwrap().push(changed.clone())
    });
    log
}

fn sent(log: &Log) -> Vec<(String, Vec<ChangeDomain>)> {
    log.lock()
        .unwrap()
        .iter()
        .map(|m| (m.revision.clone(), m.domains.clone()))
        .collect()
}

#[test]
fn set_manifest_installs_then_announces_only_real_changes() {
    let initial = json!({"version": "0.5", "pushEvents": true, "revision": "sha256:ignored"});
    let tracker = ManifestTracker::new(&initial).unwrap();
    assert_eq!(tracker.revision(), manifest_digest(&initial).unwrap());
    let log = attach(&tracker, None);
    // The same content: nothing changes, nothing is sent.
    let same = tracker
        .set_manifest(&json!({"pushEvents": true, "version": "0.5"}))
        .unwrap();
    assert!(!same.changed);
    assert!(sent(&log).is_empty());
    // A version-only change: a new revision, but no announcement (domains has minItems 1).
    let version = tracker
        .set_manifest(&json!({"version": "0.6", "pushEvents": true}))
        .unwrap();
    assert!(version.changed && version.domains.is_empty() && version.announced_to == 0);
    assert!(sent(&log).is_empty());
    // A capability change is announced with the new revision and nothing else.
    let change = tracker
        .set_manifest(&json!({"version": "0.6", "pushEvents": false}))
        .unwrap();
    assert_eq!(change.domains, [Capabilities]);
    assert_eq!(change.announced_to, 1);
    assert_eq!(sent(&log), [(tracker.revision(), vec![Capabilities])]);
    assert_eq!(
        serde_json::to_value(&log.lock().unwrap()[0]).unwrap(),
        json!({"revision": tracker.revision(), "domains": ["capabilities"]})
    );
    // mcpl/manifest answers from the installed snapshot, complete and flat.
    let manifest = tracker.handle_manifest_request();
    assert_eq!(
        manifest,
        json!({"version": "0.6", "pushEvents": false, "revision": tracker.revision()})
    );
    assert_eq!(manifest_digest(&manifest).unwrap(), tracker.revision());
    // A manifest without a digest installs nothing.
    assert!(tracker.set_manifest(&json!({"bad key": 1})).is_err());
    assert_eq!(tracker.revision(), change.revision);
}

#[test]
fn transactions_coalesce_and_failures_leave_the_manifest_untouched() {
    let tracker = ManifestTracker::new(&json!({"version": "0.5"})).unwrap();
    let log = attach(&tracker, None);
    let before = tracker.revision();
    let change = tracker
        .transaction(|tx| {
            tx.draft_mut()["pushEvents"] = json!(true);
            tx.transaction(|inner| {
                inner.draft_mut()["featureSets"] = json!({"fs": {"uses": ["pushEvents"]}});
                Ok::<(), String>(())
            })?;
            tx.draft_mut()["modelInfo"] = json!(true);
            Ok::<(), String>(())
        })
        .unwrap();
    assert_eq!(change.domains, [Capabilities, FeatureSets, TagOntology]);
    assert_eq!(
        sent(&log).len(),
        1,
        "one announcement for the whole transaction"
    );
    assert_ne!(tracker.revision(), before);
    let installed = tracker.revision();
    // A failing edit, even after changes to the draft, installs nothing and sends nothing.
    let failed = tracker.transaction(|tx| {
        tx.draft_mut()["pushEvents"] = json!(false);
        Err::<(), &str>("no")
    });
    assert!(matches!(failed, Err(TransactionError::Edit("no"))));
    // So does a draft without a digest.
    let invalid = tracker.transaction(|tx| {
        tx.set_manifest(json!({"bad key": true}));
        Ok::<(), ()>(())
    });
    assert!(matches!(invalid, Err(TransactionError::Digest(_))));
    assert_eq!(tracker.revision(), installed);
    assert_eq!(sent(&log).len(), 1);
}

#[test]
fn each_connection_hears_what_changed_since_it_was_last_told() {
    let tracker = ManifestTracker::new(&json!({"version": "0.5", "pushEvents": true})).unwrap();
    let r0 = tracker.revision();
    let current = attach(&tracker, Some(&r0));
    let stale = attach(&tracker, Some("sha256:something-older"));
    let quiet = attach(&tracker, None);
    tracker
        .set_manifest(&json!({"version": "0.5", "pushEvents": true, "featureSets": {}}))
        .unwrap();
    let r1 = tracker.revision();
    // A known baseline gets the real domains; an unknown one gets all three.
    assert_eq!(
        sent(&current),
        [(r1.clone(), vec![FeatureSets, TagOntology])]
    );
    assert_eq!(sent(&stale), [(r1.clone(), ChangeDomain::ALL.to_vec())]);
    // A connection attached later, seeded with r1, then detached, hears nothing more.
    let late = attach(&tracker, Some(&r1));
    tracker
        .set_manifest(&json!({"version": "0.5", "pushEvents": false, "featureSets": {}}))
        .unwrap();
    let r2 = tracker.revision();
    assert_eq!(sent(&late), [(r2.clone(), vec![Capabilities])]);
    assert_eq!(sent(&quiet).len(), 2);
    // A connection that missed nothing only hears about the latest step.
    assert_eq!(sent(&current).last().unwrap(), &(r2, vec![Capabilities]));
}

#[test]
fn a_notifier_may_read_the_tracker() {
    let tracker = Arc::new(ManifestTracker::new(&json!({})).unwrap());
    let seen = Arc::new(Mutex::new(None));
    let (reader, sink) = (Arc::clone(&tracker), Arc::clone(&seen));
    tracker.attach(None, move |changed| {
        // No deadlock: announcements are sent after the lock is released.
        *sink.lock().unwrap() = Some((changed.revision.clone(), reader.revision()));
    });
    tracker.set_manifest(&json!({"tools": true})).unwrap();
    let (announced, read) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(announced, read, "installed before announced");
}

#[test]
fn a_transaction_never_undoes_a_concurrent_install() {
    let tracker = ManifestTracker::new(&json!({"version": "0.5"})).unwrap();
    let result = tracker.transaction(|tx| {
        tx.draft_mut()["pushEvents"] = json!(true);
        // Someone else installs meanwhile (here: from inside the edit, which holds no lock).
        tracker
            .set_manifest(&json!({"version": "0.5", "modelInfo": true}))
            .unwrap();
        Ok::<(), ()>(())
    });
    assert!(matches!(result, Err(TransactionError::Conflict)));
    assert_eq!(
        tracker.handle_manifest_request()["modelInfo"],
        json!(true),
        "the concurrent change stands"
    );
    // A failing nested transaction leaves the draft as it was.
    tracker
        .transaction(|tx| {
            let _ = tx.transaction(|inner| {
                inner.draft_mut()["tools"] = json!(true);
                Err::<(), ()>(())
            });
            Ok::<(), ()>(())
        })
        .unwrap();
    assert!(tracker.handle_manifest_request().get("tools").is_none());
}
