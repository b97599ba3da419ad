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

use directory_conformance::{created, entry, version};
use postgres_support::TestSchema;
use rcip_database::PostgresStore;
use rcip_platform::{
    Applied, DirectoryChange, DirectoryError, DirectoryStore, Member, MemberRole, ProgramVersion,
};
use rcip_records::RecordStore;
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

/// Activates `version` (a workspace's when it names one, an installation otherwise).
async fn activate(
    store: &PostgresStore,
    version: ProgramVersion,
) -> Result<Applied, DirectoryError> {
    store
        .apply(DirectoryChange::ActivateProgram { version }, None)
        .await
}

/// Holds the activation lock of `polls` `number` in this schema (the statement the store
/// runs, in a transaction of its own) until both `pending` activations wait on it, then
/// lets them go: they reach the store at once, so only the lock can keep them apart.
async fn race_on_the_lock(
    schema: &TestSchema,
    number: i64,
    pending: impl Future<
        Output = (
            Result<Applied, DirectoryError>,
            Result<Applied, DirectoryError>,
        ),
    >,
) -> [Result<Applied, DirectoryError>; 2] {
    let mut holder = schema.client().await;
    let transaction = holder.transaction().await.unwrap();
    transaction
        .execute(
            "SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '/polls/' || $2::int8::text))",
            &[&0x7263_6961_i32, &number],
        )
        .await
        .unwrap();
    let release = async {
        // Both activations queue behind the held lock (bounded: 20 s at most).
        for _ in 0..2000 {
            let waiting: i64 = transaction
                .query_one(
                    "SELECT count(*) FROM pg_locks w JOIN pg_locks mine \
                     ON (w.classid, w.objid, w.objsubid) = (mine.classid, mine.objid, mine.objsubid) \
                     WHERE mine.pid = pg_backend_pid() AND mine.locktype = 'advisory' \
                     AND w.locktype = 'advisory' AND NOT w.granted",
                    &[],
                )
                .await
                .unwrap()
                .get(0);
            if waiting == 2 {
                return transaction.commit().await.unwrap();
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the two activations never waited on the activation lock");
    };
    let ((a, b), ()) = tokio::join!(pending, release);
    [a, b]
}

/// The activation lock (namespace/version, across workspaces and the installed packages):
/// two instances activating one version at once, one for a workspace and one installing,
/// which no unique index keeps apart. Other content: exactly one wins, the other is
/// `VERSION_CONFLICT`; the same content twice: one applies, the other is unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_activations_of_one_version_are_serialized() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (one, two) = (schema.open().await, schema.open().await);
    created(&one, "acme").await;
    // Other content, a workspace's activation against an installation.
    let results = race_on_the_lock(&schema, 1, async {
        tokio::join!(
            activate(&one, version(Some("acme"), "polls", 1, "sha256:mine")),
            activate(&two, version(None, "polls", 1, "sha256:installed")),
        )
    })
    .await;
    let won: Vec<_> = results.iter().filter(|r| r.is_ok()).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    assert_eq!(*won[0].as_ref().unwrap(), Applied::Applied);
    let lost = results.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert_eq!(
        (lost.code(), lost.status().as_u16()),
        ("VERSION_CONFLICT", 409),
        "{lost:?}"
    );
    let kept: Vec<String> = one
        .program_versions("acme", Some("polls"))
        .await
        .unwrap()
        .into_iter()
        .map(|v| v.digest)
        .collect();
    assert_eq!(kept.len(), 1, "one content for polls v1: {kept:?}");
    // Other content, two installations.
    let results = race_on_the_lock(&schema, 2, async {
        tokio::join!(
            activate(&one, version(None, "polls", 2, "sha256:a")),
            activate(&two, version(None, "polls", 2, "sha256:b")),
        )
    })
    .await;
    let codes: Vec<&str> = results
        .iter()
        .map(|r| r.as_ref().map_or_else(DirectoryError::code, |_| "applied"))
        .collect();
    assert!(
        codes == ["applied", "VERSION_CONFLICT"] || codes == ["VERSION_CONFLICT", "applied"],
        "{results:?}"
    );
    // The same content twice: idempotent, once applied.
    let results = race_on_the_lock(&schema, 3, async {
        tokio::join!(
            activate(&one, version(None, "polls", 3, "sha256:same")),
            activate(&two, version(None, "polls", 3, "sha256:same")),
        )
    })
    .await;
    let mut applied: Vec<Applied> = results.into_iter().map(Result::unwrap).collect();
    applied.sort_by_key(|a| format!("{a:?}"));
    assert_eq!(applied, [Applied::Applied, Applied::Unchanged]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_at_this_builds_schema_and_the_pool_in_use() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let store = schema.open().await;
    store.ready().await.unwrap();
    let pool = store.pool_use();
    // The support's stores open a pool of 4.
    assert_eq!(pool.max, 4);
    assert!(
        pool.open >= 1 && pool.idle >= 1 && pool.waiting == 0,
        "{pool:?}"
    );
    // The latest migration gone (a schema another build rolled back): not ready.
    schema
        .client()
        .await
        .execute(
            "DELETE FROM rcip_migrations WHERE version = $1",
            &[&PostgresStore::schema_version()],
        )
        .await
        .unwrap();
    let error = store.ready().await.unwrap_err();
    assert!(error.0.contains("migration"), "{error}");
}
