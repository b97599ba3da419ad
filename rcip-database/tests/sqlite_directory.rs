//! The directory in SQLite: the directory conformance suite on a file-backed database (a
//! fresh file per test), and what the file keeps: a second store opened on it sees the
//! directory, and both follow its rules.
#![cfg(feature = "sqlite")]
#![allow(clippy::unwrap_used)]

mod directory_conformance;

use std::path::PathBuf;

use directory_conformance::{Kept, created, entry};
use rcip_database::SqliteStore;
use rcip_platform::{Applied, DirectoryChange, DirectoryError, DirectoryStore, Member, MemberRole};

/// A directory of its own under the target's temporary directory, removed when dropped.
#[derive(Debug)]
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let id = u128::from_le_bytes(rcip_runtime::__private::shared::random_128());
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("directory-{id:032x}"));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn file(&self) -> PathBuf {
        self.0.join("rcip.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

directory_conformance!(sqlite_file, {
    let dir = TempDir::new();
    Kept {
        store: SqliteStore::open(dir.file()).unwrap(),
        guard: dir,
    }
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_keeps_the_directory_for_every_store_opened_on_it() {
    let dir = TempDir::new();
    let one = SqliteStore::open(dir.file()).unwrap();
    created(&one, "acme").await;
    let bot = DirectoryChange::PutMember {
        workspace_id: "acme".into(),
        member: Member::agent("bot", []),
    };
    assert_eq!(
        one.apply(bot.clone(), Some(entry("acme", "k1", "fp")))
            .await
            .unwrap(),
        Applied::Applied
    );
    let secret = one.secret("cursor").await.unwrap();
    drop(one);
    let two = SqliteStore::open(dir.file()).unwrap();
    let access = two.access("acme").await.unwrap().unwrap();
    assert_eq!(
        access
            .members
            .iter()
            .map(|m| m.principal_id.as_str())
            .collect::<Vec<_>>(),
        ["ada", "bot"]
    );
    assert_eq!(two.secret("cursor").await.unwrap(), secret);
    // The key and the rules hold on the reopened file.
    assert!(matches!(
        two.apply(bot, Some(entry("acme", "k1", "fp")))
            .await
            .unwrap(),
        Applied::Replayed(_)
    ));
    let demote = DirectoryChange::PutMember {
        workspace_id: "acme".into(),
        member: Member::human("ada", MemberRole::Member),
    };
    assert_eq!(
        two.apply(demote, None).await.unwrap_err(),
        DirectoryError::LastOwner
    );
    // Two stores on one file at once: a change through one is seen by the other.
    let three = SqliteStore::open(dir.file()).unwrap();
    created(&three, "other").await;
    assert!(two.access("other").await.unwrap().is_some());
}

/// A platform whose directory and records are both in one SQLite file: a restart (a new
/// platform on the file) keeps its workspaces, and a directory key replays after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_platform_on_one_file_keeps_its_directory_across_a_restart() {
    use rcip_platform::Platform;
    use rcip_records::{Actor, Caller, Engine};
    use serde_json::json;
    use std::sync::Arc;

    let dir = TempDir::new();
    let open = || async {
        Platform::open(
            Engine::new(SqliteStore::open(dir.file()).unwrap()),
            Arc::new(SqliteStore::open(dir.file()).unwrap()),
        )
        .await
        .unwrap()
    };
    let ada = Caller::human(Actor::new("ada"));
    let create = json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"});
    let first = open().await;
    let answer = first
        .call(&ada, "workspace.create", create.clone())
        .await
        .unwrap();
    drop(first);
    let again = open().await;
    let listed = again.call(&ada, "workspace.list", json!({})).await.unwrap();
    assert_eq!(listed["items"][0]["workspace_id"], "acme");
    assert_eq!(
        again.call(&ada, "workspace.create", create).await.unwrap(),
        answer,
        "the key replays its first answer"
    );
    let eve = Caller::human(Actor::new("eve"));
    let refused = again
        .call(&eve, "workspace.get", json!({"workspace_id": "acme"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, "WORKSPACE_NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_while_its_schema_is_there() {
    let dir = TempDir::new();
    let store = SqliteStore::open(dir.file()).unwrap();
    store.ready().await.unwrap();
    // Someone drops a table behind the store's back: not ready, and saying why.
    rusqlite::Connection::open(dir.file())
        .unwrap()
        .execute_batch("DROP TABLE workspaces")
        .unwrap();
    let error = store.ready().await.unwrap_err();
    assert!(error.0.contains("workspaces"), "{error}");
}
