//! The PostgreSQL store's own behaviour, below the engine: exact round trips, scan and feed
//! order, the commit's refusals (nothing applied), races between instances on one schema,
//! secrets, migrations. Each test has its own schema; without `RCIP_TEST_POSTGRES_URL` they
//! skip with one line.
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use postgres_support::TestSchema;
use rcip_database::PostgresStore;
use rcip_records::{Commit, CommitError, EventKind, Record, ScanFilter};
use rcip_relationship::Kind;
use serde_json::json;
use store_support::{commit, next, record, uuid};
use uuid::Uuid;

const W: &str = "w1";

#[tokio::test]
async fn records_read_back_exactly() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    // Key order, big and fractional numbers, unicode and escapes: what jsonb would rewrite.
    let mut created = record(
        W,
        json!({"zeta": 1, "alpha": {"b": [1, 2.5, -0.0], "a": null}, "big": 18_446_744_073_709_551_615u64,
               "float": 0.1, "text": "é \u{0} \"quoted\" 🎉"}),
    );
    created.kind = Kind::Relationship;
    created.participants = BTreeMap::from([("voter".to_owned(), vec![uuid(), uuid()])]);
    created.state = None;
    assert_eq!(
        store.commit(commit(&created, None, "k1")).await,
        Ok(vec![1])
    );
    let read = store.get(W, created.id).await.unwrap().unwrap();
    assert_eq!(read, created);
    assert_eq!(
        serde_json::to_string(&read.data).unwrap(),
        serde_json::to_string(&created.data).unwrap(),
        "the same text, key order and numbers included"
    );
    // Another workspace does not see it.
    assert_eq!(store.get("w2", created.id).await.unwrap(), None);
    assert_eq!(store.get(W, uuid()).await.unwrap(), None);
    // Every instance sees the same.
    let other = schema.open().await;
    assert_eq!(other.get(W, created.id).await.unwrap(), Some(created));
}

#[tokio::test]
async fn scans_page_in_insertion_order_with_filters() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    let mut made = Vec::new();
    for i in 0..5u64 {
        let mut r = record(W, json!({"i": i}));
        if i == 1 {
            r.archived = true;
        }
        if i == 2 {
            r.state = Some("closed".into());
            r.collection_id = "c2".into();
        }
        if i == 3 {
            r.version = 2;
            r.type_name = "ballot".into();
        }
        store
            .commit(commit(&r, None, &format!("k{i}")))
            .await
            .unwrap();
        made.push(r);
        // Records of another workspace interleave and must not show.
        let foreign = record("w2", json!({"i": i}));
        store
            .commit(commit(&foreign, None, &format!("k{i}")))
            .await
            .unwrap();
    }
    // An update keeps a record's place.
    let updated = next(&made[0]);
    store
        .commit(commit(&updated, Some(1), "update"))
        .await
        .unwrap();
    made[0] = updated;

    let all = ScanFilter {
        include_archived: true,
        ..ScanFilter::default()
    };
    let scanned = store.scan(W, &all, 0, 100).await.unwrap();
    let positions: Vec<u64> = scanned.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        positions,
        [1, 2, 3, 4, 5],
        "positions are per workspace, 1.."
    );
    let records: Vec<Record> = scanned.into_iter().map(|(_, r)| r).collect();
    assert_eq!(records, made);

    // Paging: after a position, with a limit.
    let page: Vec<u64> = store
        .scan(W, &all, 2, 2)
        .await
        .unwrap()
        .iter()
        .map(|(p, _)| *p)
        .collect();
    assert_eq!(page, [3, 4]);
    assert!(store.scan(W, &all, 5, 10).await.unwrap().is_empty());
    assert!(store.scan(W, &all, 0, 0).await.unwrap().is_empty());

    let ids =
        |found: Vec<(u64, Record)>| -> Vec<Uuid> { found.into_iter().map(|(_, r)| r.id).collect() };
    let default = ScanFilter::default();
    assert_eq!(
        ids(store.scan(W, &default, 0, 100).await.unwrap()),
        [made[0].id, made[2].id, made[3].id, made[4].id],
        "archived records only when asked"
    );
    let cases = [
        (
            ScanFilter {
                state: Some("closed".into()),
                ..ScanFilter::default()
            },
            vec![made[2].id],
        ),
        (
            ScanFilter {
                collection_id: Some("c2".into()),
                ..ScanFilter::default()
            },
            vec![made[2].id],
        ),
        (
            ScanFilter {
                namespace: Some("polls".into()),
                type_name: Some("ballot".into()),
                ..ScanFilter::default()
            },
            vec![made[3].id],
        ),
        (
            ScanFilter {
                namespace: Some("polls".into()),
                version: Some(1),
                ..ScanFilter::default()
            },
            vec![made[0].id, made[2].id, made[4].id],
        ),
        (
            ScanFilter {
                namespace: Some("other".into()),
                ..ScanFilter::default()
            },
            vec![],
        ),
    ];
    for (filter, expected) in cases {
        // The store must agree with the filter's own definition.
        let by_definition: Vec<Uuid> = made
            .iter()
            .filter(|r| filter.matches(r))
            .map(|r| r.id)
            .collect();
        assert_eq!(by_definition, expected, "{filter:?}");
        assert_eq!(
            ids(store.scan(W, &filter, 0, 100).await.unwrap()),
            expected,
            "{filter:?}"
        );
    }
}

#[tokio::test]
async fn events_are_ordered_per_workspace_and_per_record() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    let a = record(W, json!({}));
    let b = record(W, json!({}));
    let foreign = record("w2", json!({}));
    assert_eq!(store.commit(commit(&a, None, "a1")).await, Ok(vec![1]));
    assert_eq!(
        store.commit(commit(&foreign, None, "f1")).await,
        Ok(vec![1])
    );
    assert_eq!(store.commit(commit(&b, None, "b1")).await, Ok(vec![2]));
    let a2 = next(&a);
    let ids = store.commit(commit(&a2, Some(1), "a2")).await.unwrap();
    assert_eq!(
        ids,
        [3, 4],
        "a commit's events take consecutive ids, in order"
    );

    let feed = store.events(W, None, 0, 100).await.unwrap();
    assert_eq!(feed.iter().map(|e| e.id).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(feed.iter().all(|e| e.workspace_id == W));
    assert_eq!(feed[2].kind, EventKind::CommandExecuted);
    assert_eq!(feed[3].kind, EventKind::WorkRequested);
    // Read back exactly as committed (but for the id).
    let mut expected = commit(&a2, Some(1), "a2").events;
    expected[0].id = 3;
    expected[1].id = 4;
    assert_eq!(feed[2].actor, expected[0].actor);
    assert_eq!(feed[2].payload, expected[0].payload);
    assert_eq!(feed[2].at, expected[0].at);

    let history = store.events(W, Some(a.id), 0, 100).await.unwrap();
    assert_eq!(history.iter().map(|e| e.id).collect::<Vec<_>>(), [1, 3, 4]);
    let after = store.events(W, Some(a.id), 1, 1).await.unwrap();
    assert_eq!(after.iter().map(|e| e.id).collect::<Vec<_>>(), [3]);
    assert_eq!(store.events(W, None, 2, 1).await.unwrap()[0].id, 3);
    assert!(store.events(W, None, 4, 100).await.unwrap().is_empty());
    assert!(
        store
            .events(W, Some(foreign.id), 0, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.events("w2", None, 0, 100).await.unwrap().len(), 1);
}

#[tokio::test]
async fn refused_commits_apply_nothing() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    let created = record(W, json!({"n": 1}));
    let first = commit(&created, None, "create");
    store.commit(first.clone()).await.unwrap();
    let feed_before = store.events(W, None, 0, 100).await.unwrap();

    // A taken key: the stored entry comes back, and the record is untouched.
    let revised = next(&created);
    assert_eq!(
        store.commit(commit(&revised, Some(1), "create")).await,
        Err(CommitError::DuplicateKey(first.idempotency.clone()))
    );
    // A stale revision.
    assert_eq!(
        store.commit(commit(&revised, Some(7), "stale")).await,
        Err(CommitError::Stale { actual: 1 })
    );
    // A create of an id that exists.
    assert_eq!(
        store.commit(commit(&created, None, "again")).await,
        Err(CommitError::Stale { actual: 1 })
    );
    // An update of a record that does not exist.
    let missing = record(W, json!({}));
    assert_eq!(
        store
            .commit(commit(&next(&missing), Some(1), "missing"))
            .await,
        Err(CommitError::Stale { actual: 0 })
    );
    // A value PostgreSQL cannot hold fails the commit, not the process.
    let mut huge = next(&created);
    huge.updated_at = u64::MAX;
    assert!(matches!(
        store.commit(commit(&huge, Some(1), "huge")).await,
        Err(CommitError::Store(_))
    ));

    assert_eq!(store.get(W, created.id).await.unwrap(), Some(created));
    assert_eq!(store.get(W, missing.id).await.unwrap(), None);
    assert_eq!(store.events(W, None, 0, 100).await.unwrap(), feed_before);
    for key in ["stale", "again", "missing", "huge"] {
        assert_eq!(store.idempotency(W, key).await.unwrap(), None, "{key}");
    }
    assert_eq!(
        store.idempotency(W, "create").await.unwrap(),
        Some(first.idempotency)
    );
    // The ids refused commits did not use are not skipped.
    let b = record(W, json!({}));
    assert_eq!(store.commit(commit(&b, None, "b")).await, Ok(vec![2]));
}

/// Many instances commit at one revision of one record: exactly one wins, the others are
/// told the revision it left; and the same idempotency key from many: one effect, and the
/// others get the first one's entry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_instances_have_one_winner() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(Arc::new(schema.open().await));
    }
    let created = record(W, json!({}));
    stores[0]
        .commit(commit(&created, None, "create"))
        .await
        .unwrap();

    let revised = next(&created);
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&stores[i % stores.len()]);
            let commit = commit(&revised, Some(1), &format!("racer {i}"));
            tokio::spawn(async move { store.commit(commit).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for racer in racers {
        outcomes.push(racer.await.unwrap());
    }
    assert_eq!(
        outcomes.iter().filter(|o| o.is_ok()).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .filter(|o| o.is_err())
            .all(|o| *o == Err(CommitError::Stale { actual: 2 })),
        "{outcomes:?}"
    );

    // One key, many commits of different records: one is applied.
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&stores[i % stores.len()]);
            let commit = commit(&record(W, json!({"i": i})), None, "shared key");
            tokio::spawn(async move { (commit.clone(), store.commit(commit).await) })
        })
        .collect();
    let mut outcomes = Vec::new();
    for racer in racers {
        outcomes.push(racer.await.unwrap());
    }
    let winners: Vec<&Commit> = outcomes
        .iter()
        .filter(|(_, o)| o.is_ok())
        .map(|(c, _)| c)
        .collect();
    assert_eq!(winners.len(), 1);
    let winner = winners[0];
    for (_, outcome) in &outcomes {
        if let Err(error) = outcome {
            assert_eq!(
                *error,
                CommitError::DuplicateKey(winner.idempotency.clone())
            );
        }
    }
    let all = ScanFilter::default();
    let records = stores[1].scan(W, &all, 0, 100).await.unwrap();
    assert_eq!(records.len(), 2, "the first record and the one winner");
    assert_eq!(records[1].1, winner.record);

    // Ids stayed dense and ordered through the races.
    let feed = stores[2].events(W, None, 0, 100).await.unwrap();
    let ids: Vec<u64> = feed.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert_eq!(ids.len(), 1 + 2 + 1);
}

#[tokio::test]
async fn secrets_are_made_once_and_shared() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let one = schema.open().await;
    let two = schema.open().await;
    let (a, b) = tokio::join!(one.secret("cursor"), two.secret("cursor"));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.len(), 32);
    assert_eq!(a, b);
    assert_eq!(one.secret("cursor").await.unwrap(), a);
    let other = one.secret("other").await.unwrap();
    assert_ne!(other, a);
    // Another schema is another deployment: another secret.
    let Some(elsewhere) = TestSchema::create().await else {
        return;
    };
    assert_ne!(elsewhere.open().await.secret("cursor").await.unwrap(), a);
}

#[tokio::test]
async fn migrations_are_recorded_and_a_newer_schema_is_refused() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let first = schema.open().await;
    assert_eq!(first.migrated(), [1, 2, 3, 4, 5]);
    assert_eq!(PostgresStore::schema_version(), 5);
    let again = schema.open().await;
    assert!(again.migrated().is_empty(), "already current");
    let client = schema.client().await;
    let rows = client
        .query(
            "SELECT version, name FROM rcip_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap();
    let recorded: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        recorded,
        [
            (1, "initial".to_owned()),
            (2, "directory".to_owned()),
            (3, "tokens".to_owned()),
            (4, "mcp".to_owned()),
            (5, "instances".to_owned())
        ]
    );

    // A schema some newer build migrated further: this one refuses to run on it.
    client
        .execute(
            "INSERT INTO rcip_migrations (version, name) VALUES (99, 'future')",
            &[],
        )
        .await
        .unwrap();
    let error = PostgresStore::open_with(schema.config(), 1)
        .await
        .unwrap_err();
    assert!(error.0.contains("newer than this build"), "{error}");
}

#[tokio::test]
async fn a_search_path_without_a_schema_is_a_clear_error() {
    let Some(url) = postgres_support::server_url() else {
        return;
    };
    let mut config: rcip_database::tokio_postgres::Config = url.parse().unwrap();
    config.options("-c search_path=rcip_no_such_schema");
    let error = PostgresStore::open_with(config, 1).await.unwrap_err();
    assert!(error.0.contains("no schema"), "{error}");
}

#[tokio::test]
async fn an_unreachable_server_is_an_error_not_a_panic() {
    // Needs no server: port 1 on loopback: nothing listens there.
    let error = PostgresStore::open("postgres://postgres@127.0.0.1:1/test?connect_timeout=5")
        .await
        .unwrap_err();
    assert!(error.0.starts_with("postgres:"), "{error}");
    let error = PostgresStore::open("not a url=").await.unwrap_err();
    assert!(error.0.contains("connection string"), "{error}");
}

#[tokio::test]
async fn each_workspace_counts_its_own_event_ids() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    let workspaces = ["w1", "w2", "w3"];
    for round in 0..2 {
        for workspace in workspaces {
            let r = record(workspace, json!({}));
            store
                .commit(commit(&r, None, &format!("{round}")))
                .await
                .unwrap();
        }
    }
    for workspace in workspaces {
        let feed = store.events(workspace, None, 0, 10).await.unwrap();
        assert_eq!(feed.iter().map(|e| e.id).collect::<Vec<_>>(), [1, 2]);
    }
}

/// Updates queued together are written in one transaction (group commit) and checked one
/// after the other: concurrent updates of distinct records all commit, with every event id
/// given once and the feed gap-free; concurrent updates of one record at one revision have
/// one winner, the others stale at the winner's revision; one key used twice is taken once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_are_written_together_and_checked_in_turn() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = Arc::new(schema.open().await);
    let w = "group";
    let records: Vec<Record> = (0..16).map(|i| record(w, json!({"i": i}))).collect();
    for (i, created) in records.iter().enumerate() {
        store
            .commit(commit(created, None, &format!("create-{i}")))
            .await
            .unwrap();
    }
    let run = |commits: Vec<Commit>| {
        let tasks: Vec<_> = commits
            .into_iter()
            .map(|c| {
                let store = Arc::clone(&store);
                tokio::spawn(async move { store.commit(c).await })
            })
            .collect();
        async move {
            let mut outcomes = Vec::new();
            for task in tasks {
                outcomes.push(task.await.unwrap());
            }
            outcomes
        }
    };

    let distinct: Vec<Commit> = records
        .iter()
        .enumerate()
        .map(|(i, r)| commit(&next(r), Some(1), &format!("update-{i}")))
        .collect();
    let mut ids = std::collections::BTreeSet::new();
    for outcome in run(distinct).await {
        for id in outcome.unwrap() {
            assert!(ids.insert(id), "event id {id} given twice");
        }
    }
    let feed = store.events(w, None, 0, 1000).await.unwrap();
    let expected: Vec<u64> = (1..=feed.len() as u64).collect();
    assert_eq!(feed.iter().map(|e| e.id).collect::<Vec<_>>(), expected);
    assert_eq!(feed.len(), 16 + 2 * 16);

    let at_two = next(&records[0]);
    let racing: Vec<Commit> = (0..16)
        .map(|i| commit(&next(&at_two), Some(2), &format!("race-{i}")))
        .collect();
    let outcomes = run(racing).await;
    assert_eq!(
        outcomes.iter().filter(|o| o.is_ok()).count(),
        1,
        "{outcomes:?}"
    );
    for outcome in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert_eq!(*outcome, CommitError::Stale { actual: 3 });
    }

    let twice: Vec<Commit> = [&records[1], &records[2]]
        .into_iter()
        .map(|r| commit(&next(&next(r)), Some(2), "one-key"))
        .collect();
    let outcomes = run(twice).await;
    assert_eq!(
        outcomes.iter().filter(|o| o.is_ok()).count(),
        1,
        "{outcomes:?}"
    );
    assert!(
        outcomes
            .iter()
            .any(|o| matches!(o, Err(CommitError::DuplicateKey(entry)) if entry.key == "one-key")),
        "{outcomes:?}"
    );
}
