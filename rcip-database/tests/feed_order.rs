//! Feed order across concurrent writers, on both durable stores: a commit is held before its
//! `COMMIT` while another instance commits, a consumer polls the feed from its checkpoint in
//! between and after, and it must see every event exactly once (after deduplicating
//! `event_id`). With ids that do not follow commit order (a PostgreSQL sequence, say) the
//! second commit's event would be read first, the checkpoint would move past the held one's
//! lower id, and the consumer would never see it.
#![cfg(all(feature = "postgres", feature = "sqlite"))]
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use postgres_support::TestSchema;
use rcip_database::{PostgresStore, SqliteStore};
use rcip_records::{ChangeEvent, RecordStore};
use serde_json::json;
use store_support::{commit, next, record};
use uuid::Uuid;

const W: &str = "w1";
const ROUNDS: usize = 3;

/// What a consumer has read: every event it was given, and where it polls from.
#[derive(Default)]
struct Consumer {
    checkpoint: u64,
    seen: Vec<ChangeEvent>,
}

impl Consumer {
    /// Polls from the checkpoint until the feed has nothing more (pages of 2, so paging
    /// counts too).
    async fn poll(&mut self, store: &impl RecordStore) {
        loop {
            let page = store.events(W, None, self.checkpoint, 2).await.unwrap();
            let Some(last) = page.last() else {
                return;
            };
            self.checkpoint = last.id;
            self.seen.extend(page);
        }
    }

    /// Every event of `committed` was seen, exactly once once deduplicated, and nothing else;
    /// ids only ever grew.
    fn check(&self, committed: &BTreeSet<Uuid>) {
        let seen: BTreeSet<Uuid> = self.seen.iter().map(|e| e.event_id).collect();
        let missed: Vec<&Uuid> = committed.difference(&seen).collect();
        assert!(missed.is_empty(), "the consumer never saw {missed:?}");
        assert_eq!(&seen, committed);
        let ids: Vec<u64> = self.seen.iter().map(|e| e.id).collect();
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "ids went back: {ids:?}"
        );
        // The same event id never stands for two events.
        let mut by_id = BTreeMap::new();
        for event in &self.seen {
            assert_eq!(
                *by_id.entry(event.id).or_insert(event.event_id),
                event.event_id
            );
        }
    }
}

/// Whether a session called `application_name` waits on a lock.
async fn waits_on_a_lock(client: &rcip_database::tokio_postgres::Client, name: &str) -> bool {
    let row = client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE application_name = $1 AND wait_event_type = 'Lock'",
            &[&name],
        )
        .await
        .unwrap();
    row.get::<_, i64>(0) > 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_consumer_never_misses_an_event_committed_late() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let held = Arc::new(schema.open().await);
    let tag = format!("b-{}", schema.name);
    let other = Arc::new(
        PostgresStore::open_with(schema.config_named(&tag), 2)
            .await
            .unwrap(),
    );
    let reader = schema.open().await;
    let observer = schema.client().await;
    let mut consumer = Consumer::default();
    let mut committed = BTreeSet::new();
    for round in 0..ROUNDS {
        let first = commit(
            &record(W, json!({"round": round})),
            None,
            &format!("held {round}"),
        );
        let second = commit(
            &record(W, json!({"round": round})),
            None,
            &format!("other {round}"),
        );
        committed.extend(first.events.iter().map(|e| e.event_id));
        committed.extend(second.events.iter().map(|e| e.event_id));

        let mut pause = held.pause_next_commit();
        let store = Arc::clone(&held);
        let first = tokio::spawn(async move { store.commit(first).await });
        pause.reached().await;
        let store = Arc::clone(&other);
        let second = tokio::spawn(async move { store.commit(second).await });
        // Until the second commit is done (were ids not in commit order) or waits for the
        // held one (they are).
        let started = Instant::now();
        while !second.is_finished() && !waits_on_a_lock(&observer, &tag).await {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the second commit neither finished nor waited"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        consumer.poll(&reader).await;

        pause.release();
        first.await.unwrap().unwrap();
        second.await.unwrap().unwrap();
        consumer.poll(&reader).await;
    }
    consumer.check(&committed);
    assert_eq!(consumer.seen.len(), 2 * ROUNDS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_consumer_never_misses_an_event_committed_late() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("feed-order-{}", store_support::uuid()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("records.db");
    // Two instances on one file (two connections), and a reader.
    let held = Arc::new(SqliteStore::open(&path).unwrap());
    let other = Arc::new(SqliteStore::open(&path).unwrap());
    let reader = SqliteStore::open(&path).unwrap();
    let mut consumer = Consumer::default();
    let mut committed = BTreeSet::new();
    for round in 0..ROUNDS {
        let first = commit(
            &record(W, json!({"round": round})),
            None,
            &format!("held {round}"),
        );
        let second = commit(
            &record(W, json!({"round": round})),
            None,
            &format!("other {round}"),
        );
        committed.extend(first.events.iter().map(|e| e.event_id));
        committed.extend(second.events.iter().map(|e| e.event_id));

        // The held commit has written its event and taken its id, not yet committed.
        let mut pause = held.pause_next_commit();
        let store = Arc::clone(&held);
        let first = tokio::spawn(async move { store.commit(first).await });
        pause.reached().await;
        let store = Arc::clone(&other);
        let second = tokio::spawn(async move { store.commit(second).await });
        // The second commit cannot get in while the first holds the write lock: SQLite has
        // one writer at a time. Give it a bounded chance to (wrongly) commit first, polling
        // meanwhile; nothing to observe it waiting by, short of time.
        let window = Instant::now();
        while window.elapsed() < Duration::from_millis(100) && !second.is_finished() {
            consumer.poll(&reader).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(
            !second.is_finished(),
            "a second writer committed while the first held the lock"
        );

        pause.release();
        first.await.unwrap().unwrap();
        second.await.unwrap().unwrap();
        consumer.poll(&reader).await;
    }
    consumer.check(&committed);
    assert_eq!(consumer.seen.len(), 2 * ROUNDS);
    drop((held, other, reader));
    std::fs::remove_dir_all(dir).unwrap();
}

/// A commit abandoned inside its transaction (its future dropped, as a request timeout does)
/// leaves no transaction and no lock behind: its connection leaves the pool and the server
/// rolls it back, so the next commit of the workspace and of the record goes through, and the
/// abandoned one left nothing in the feed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_commit_abandoned_in_its_transaction_holds_nothing() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = Arc::new(PostgresStore::open_with(schema.config(), 1).await.unwrap());
    let created = record(W, json!({"n": 0}));
    store
        .commit(commit(&created, None, "create"))
        .await
        .unwrap();
    let abandoned = commit(&next(&created), Some(1), "abandoned");
    let abandoned_events: BTreeSet<Uuid> = abandoned.events.iter().map(|e| e.event_id).collect();
    let mut pause = store.pause_next_commit();
    let task = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.commit(abandoned).await })
    };
    // Written, holding the record's lock and the workspace's counter, not committed.
    pause.reached().await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    drop(pause);
    // The pool's one connection was closed with its transaction; a new one serves this.
    let again = commit(&next(&created), Some(1), "again");
    let expected = 1 + again.events.len();
    tokio::time::timeout(Duration::from_secs(30), store.commit(again))
        .await
        .expect("a commit after the abandoned one waits for nothing")
        .unwrap();
    let feed = store.events(W, None, 0, 10).await.unwrap();
    assert_eq!(
        feed.len(),
        expected,
        "the creation and the second commit: {feed:?}"
    );
    assert!(
        feed.iter().all(|e| !abandoned_events.contains(&e.event_id)),
        "{feed:?}"
    );
    assert_eq!(store.pool_use().waiting, 0);
}
