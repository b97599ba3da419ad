//! The SQLite store's group commit: commits queued together share one transaction, and each
//! still gets the outcome it would have had alone (a refused one leaves the others applied,
//! and a later one sees the earlier ones' writes).
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used)]

mod store_support;

use rcip_database::SqliteStore;
use rcip_records::{CommitError, RecordStore};
use serde_json::json;
use store_support::{commit, next, record};

const W: &str = "w1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_queued_together_keep_their_own_outcomes() {
    let store = SqliteStore::in_memory().unwrap();
    let a = record(W, json!({"n": 1}));
    let b = record(W, json!({"n": 2}));
    store.commit(commit(&b, None, "create b")).await.unwrap();

    // The store's thread stops in the first commit's transaction, so the next five are queued
    // behind it when it goes on, and are taken as one group (a commit is queued by the call,
    // before its future is polled).
    let mut pause = store.pause_next_commit();
    let held = store.commit(commit(&a, None, "create a"));
    pause.reached().await;
    let a2 = next(&a);
    let b2 = next(&b);
    let queued = [
        // Sees the held commit's record (committed by the time the group is written).
        store.commit(commit(&a2, Some(1), "a to 2")),
        // Stale: b is at 1.
        store.commit(commit(&next(&b2), Some(2), "b to 3, too early")),
        // A key taken earlier in the group, with another record.
        store.commit(commit(&b2, Some(1), "a to 2")),
        // Sees nothing of the two refused before it.
        store.commit(commit(&b2, Some(1), "b to 2")),
        // Sees the commit before it in the group.
        store.commit(commit(&next(&b2), Some(2), "b to 3")),
    ];
    pause.release();
    assert_eq!(held.await.unwrap().len(), 1);
    let mut outcomes = Vec::new();
    for outcome in queued {
        outcomes.push(outcome.await);
    }
    let [a_to_2, too_early, taken, b_to_2, b_to_3] = <[_; 5]>::try_from(outcomes).unwrap();
    assert_eq!(a_to_2.unwrap().len(), 2);
    assert_eq!(too_early, Err(CommitError::Stale { actual: 1 }));
    match taken {
        Err(CommitError::DuplicateKey(entry)) => assert_eq!(entry.key, "a to 2"),
        other => panic!("a taken key answered {other:?}"),
    }
    let b_to_2 = b_to_2.unwrap();
    let b_to_3 = b_to_3.unwrap();
    assert!(b_to_2[1] < b_to_3[0], "ids in commit order");

    assert_eq!(store.get(W, a.id).await.unwrap().unwrap().revision, 2);
    assert_eq!(store.get(W, b.id).await.unwrap().unwrap().revision, 3);
    // Nothing of the refused commits is left: 1 + 1 events of the creates, 2 per command.
    let events = store.events(W, None, 0, 100).await.unwrap();
    assert_eq!(events.len(), 2 + 3 * 2);
    assert!(
        store
            .idempotency(W, "b to 3, too early")
            .await
            .unwrap()
            .is_none()
    );
    let ids: Vec<u64> = events.iter().map(|e| e.id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
}

#[tokio::test]
async fn a_dropped_store_closes_its_file() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sqlite-store-{}", store_support::uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.db");
    let a = record(W, json!({"n": 1}));
    {
        let store = SqliteStore::open(&path).unwrap();
        store.commit(commit(&a, None, "create a")).await.unwrap();
    }
    // The last connection closed checkpoints the WAL and removes it.
    assert!(!dir.join("records.db-wal").exists());
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.get(W, a.id).await.unwrap().unwrap().revision, 1);
    drop(store);
    std::fs::remove_dir_all(dir).unwrap();
}
