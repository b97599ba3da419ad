//! The directory on PostgreSQL: the directory conformance suite on a schema per test, and
//! what only several instances on one database show (each sees the others' changes, the
//! rules hold across them), the directory's own idempotency key space, and the upgrade of a
//! schema made before the directory existed. Without `RCIP_TEST_POSTGRES_URL` they skip
//! with one line.
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used)]

mod directory_conformance;
mod postgres_support;
mod store_support;

use directory_conformance::{created, entry};
use postgres_support::TestSchema;
use rcip_relationship::{
    Applied, DirectoryChange, DirectoryStore, Member, MemberRole, PostgresStore, RecordStore,
};
use serde_json::json;

// A schema per test, dropped after the store; skipped (one line) without the variable.
directory_conformance!(postgres, {
    let Some(schema) = crate::postgres_support::TestSchema::create().await else {
        return;
    };
    crate::directory_conformance::Kept {
        store: schema.open().await,
        guard: schema,
    }
});

fn demote(principal: &str) -> DirectoryChange {
    DirectoryChange::PutMember {
        workspace_id: "acme".into(),
        member: Member::human(principal, MemberRole::Member),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_share_the_directory_and_its_rules() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (one, two) = (schema.open().await, schema.open().await);
    created(&one, "acme").await;
    let bea = DirectoryChange::PutMember {
        workspace_id: "acme".into(),
        member: Member::human("bea", MemberRole::Owner),
    };
    two.apply(bea, None).await.unwrap();
    assert_eq!(one.access("acme").await.unwrap().unwrap().members.len(), 2);
    // Two owners demoted at once, one through each instance: the workspace keeps one.
    for _ in 0..4 {
        let (a, b) = tokio::join!(
            one.apply(demote("ada"), None),
            two.apply(demote("bea"), None)
        );
        let refused: Vec<_> = [&a, &b]
            .into_iter()
            .filter_map(|r| r.as_ref().err())
            .collect();
        assert_eq!(refused.len(), 1, "{a:?} {b:?}");
        assert_eq!(refused[0].code(), "LAST_OWNER");
        let access = one.access("acme").await.unwrap().unwrap();
        let owners: Vec<&str> = access
            .members
            .iter()
            .filter(|m| m.role == MemberRole::Owner)
            .map(|m| m.principal_id.as_str())
            .collect();
        assert_eq!(owners.len(), 1, "{owners:?}");
        // Both owners again for the next round.
        for principal in ["ada", "bea"] {
            let owner = DirectoryChange::PutMember {
                workspace_id: "acme".into(),
                member: Member::human(principal, MemberRole::Owner),
            };
            one.apply(owner, None).await.unwrap();
        }
    }
}

#[tokio::test]
async fn directory_keys_are_apart_from_record_keys() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    created(&store, "w1").await;
    // A record commit under key k1...
    let record = store_support::record("w1", json!({"title": "one"}));
    store
        .commit(store_support::commit(&record, None, "k1"))
        .await
        .unwrap();
    // ...does not take k1 for the directory, and the directory's k1 leaves the record's.
    assert_eq!(
        DirectoryStore::idempotency(&store, "w1", "k1")
            .await
            .unwrap(),
        None
    );
    let change = DirectoryChange::PutMember {
        workspace_id: "w1".into(),
        member: Member::agent("bot", []),
    };
    assert_eq!(
        store
            .apply(change, Some(entry("w1", "k1", "fp-dir")))
            .await
            .unwrap(),
        Applied::Applied
    );
    let records = RecordStore::idempotency(&store, "w1", "k1")
        .await
        .unwrap()
        .unwrap();
    assert_ne!(records.fingerprint, "fp-dir");
    assert_eq!(
        DirectoryStore::idempotency(&store, "w1", "k1")
            .await
            .unwrap()
            .unwrap()
            .fingerprint,
        "fp-dir"
    );
}

#[tokio::test]
async fn a_schema_from_before_the_directory_is_upgraded() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    created(&store, "kept").await;
    drop(store);
    // Back to migration 1 only, as a build before the directory left it.
    schema
        .client()
        .await
        .batch_execute(
            "DROP TABLE directory_idempotency, program_versions, program_drafts, \
             collection_grants, collections, members, workspaces; \
             DELETE FROM rcip_migrations WHERE version = 2",
        )
        .await
        .unwrap();
    let store = PostgresStore::open_with(schema.config(), 2).await.unwrap();
    assert_eq!(store.migrated(), [2]);
    assert_eq!(store.access("kept").await.unwrap(), None);
    created(&store, "acme").await;
    assert!(store.access("acme").await.unwrap().is_some());
}
