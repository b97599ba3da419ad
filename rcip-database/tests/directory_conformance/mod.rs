//! The directory store conformance suite: every test is generic over the store, and
//! [`directory_conformance!`] runs them all on one implementation
//! (`directory_conformance!(memory, MemoryDirectory::new());`). A new store (SQLite,
//! PostgreSQL) includes this module and adds one line. `$make` is evaluated inside each
//! async test, so it may await: `directory_conformance!(postgres, connect().await);`.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::sync::Arc;

use rcip_platform::{
    Access, Applied, Collection, DirectoryChange, DirectoryError, DirectoryFuture, DirectoryStore,
    Grant, Member, MemberRole, ProgramDraft, ProgramVersion, Visibility, Workspace,
    WorkspaceAccess,
};
use rcip_records::{DelegatedScope, IdempotencyEntry, StoreError};
use serde_json::json;
use uuid::Uuid;

pub fn workspace(id: &str) -> Workspace {
    Workspace {
        workspace_id: id.to_owned(),
        name: format!("Workspace {id}"),
        created_at: 1_700_000_000_000,
    }
}

pub fn entry(workspace_id: &str, key: &str, fingerprint: &str) -> IdempotencyEntry {
    IdempotencyEntry {
        workspace_id: workspace_id.to_owned(),
        key: key.to_owned(),
        fingerprint: fingerprint.to_owned(),
        result: format!(r#"{{"fingerprint":"{fingerprint}"}}"#),
    }
}

pub fn collection(workspace_id: &str, id: &str, visibility: Visibility) -> Collection {
    Collection {
        workspace_id: workspace_id.to_owned(),
        collection_id: id.to_owned(),
        name: id.to_uppercase(),
        visibility,
        grants: Vec::new(),
        created_at: 1_700_000_000_001,
    }
}

pub fn version(
    workspace_id: Option<&str>,
    namespace: &str,
    number: u64,
    digest: &str,
) -> ProgramVersion {
    ProgramVersion {
        workspace_id: workspace_id.map(str::to_owned),
        namespace: namespace.to_owned(),
        version: number,
        digest: digest.to_owned(),
        package: json!({"namespace": namespace, "version": number, "digest": digest}),
        activated_at: 1_700_000_000_002,
        activated_by: "ada".to_owned(),
    }
}

fn id(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

/// Creates `workspace_id` owned by `ada`.
pub async fn created<S: DirectoryStore>(store: &S, workspace_id: &str) {
    let change = DirectoryChange::CreateWorkspace {
        workspace: workspace(workspace_id),
        owner: "ada".to_owned(),
    };
    assert_eq!(store.apply(change, None).await.unwrap(), Applied::Applied);
}

async fn put<S: DirectoryStore>(
    store: &S,
    workspace_id: &str,
    member: Member,
) -> Result<Applied, DirectoryError> {
    let change = DirectoryChange::PutMember {
        workspace_id: workspace_id.to_owned(),
        member,
    };
    store.apply(change, None).await
}

async fn remove<S: DirectoryStore>(
    store: &S,
    workspace_id: &str,
    principal: &str,
) -> Result<Applied, DirectoryError> {
    let change = DirectoryChange::RemoveMember {
        workspace_id: workspace_id.to_owned(),
        principal_id: principal.to_owned(),
    };
    store.apply(change, None).await
}

pub async fn a_new_workspace_has_its_owner<S: DirectoryStore>(store: S) {
    assert_eq!(store.access("acme").await.unwrap(), None);
    created(&store, "acme").await;
    let access = store.access("acme").await.unwrap().unwrap();
    assert_eq!(access.workspace, workspace("acme"));
    assert_eq!(
        access.members,
        vec![Member::human("ada", MemberRole::Owner)]
    );
    assert!(access.collections.is_empty());
    assert_eq!(
        store.workspaces_of("ada").await.unwrap(),
        vec![(workspace("acme"), Member::human("ada", MemberRole::Owner))]
    );
    assert!(store.workspaces_of("eve").await.unwrap().is_empty());
    let again = DirectoryChange::CreateWorkspace {
        workspace: Workspace {
            name: "Other".into(),
            ..workspace("acme")
        },
        owner: "eve".to_owned(),
    };
    let error = store.apply(again, None).await.unwrap_err();
    assert_eq!(error, DirectoryError::WorkspaceExists("acme".into()));
    assert_eq!(
        store.access("acme").await.unwrap().unwrap().workspace.name,
        "Workspace acme"
    );
    assert!(store.workspaces_of("eve").await.unwrap().is_empty());
}

pub async fn workspaces_of_a_principal_are_in_id_order<S: DirectoryStore>(store: S) {
    for id in ["zeta", "alpha", "mid"] {
        created(&store, id).await;
    }
    let bot = Member::agent("bot", [DelegatedScope::RecordsRead]);
    put(&store, "mid", bot.clone()).await.unwrap();
    put(&store, "zeta", Member::human("bea", MemberRole::Member))
        .await
        .unwrap();
    let ids = |ws: Vec<(Workspace, Member)>| {
        ws.into_iter()
            .map(|(w, m)| (w.workspace_id, m.principal_id))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(store.workspaces_of("ada").await.unwrap()),
        [("alpha", "ada"), ("mid", "ada"), ("zeta", "ada")]
            .map(|(w, m)| (w.to_owned(), m.to_owned()))
    );
    // Each with the principal's own membership, in one answer.
    assert_eq!(
        store.workspaces_of("bot").await.unwrap(),
        [(workspace("mid"), bot)]
    );
    assert_eq!(
        store.workspaces_of("bea").await.unwrap(),
        [(workspace("zeta"), Member::human("bea", MemberRole::Member))]
    );
}

pub async fn a_replayed_key_returns_its_entry_and_applies_nothing<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    let first = entry("acme", "k1", "fp-a");
    let change = |name: &str| DirectoryChange::CreateCollection {
        collection: Collection {
            name: name.to_owned(),
            ..collection("acme", "inbox", Visibility::Workspace)
        },
    };
    assert_eq!(
        store
            .apply(change("Inbox"), Some(first.clone()))
            .await
            .unwrap(),
        Applied::Applied
    );
    assert_eq!(
        store.idempotency("acme", "k1").await.unwrap(),
        Some(first.clone())
    );
    // The same key and fingerprint: the first result, and no second application (the
    // collection keeps its first name; a second create would have been refused as existing).
    let replay = store
        .apply(change("Renamed"), Some(entry("acme", "k1", "fp-a")))
        .await
        .unwrap();
    assert_eq!(replay, Applied::Replayed(first.clone()));
    let access = store.access("acme").await.unwrap().unwrap();
    assert_eq!(access.collections.len(), 1);
    assert_eq!(access.collections[0].name, "Inbox");
    // Another fingerprint: a conflict, and the stored entry is untouched.
    let error = store
        .apply(change("Inbox"), Some(entry("acme", "k1", "fp-b")))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        DirectoryError::IdempotencyConflict { key: "k1".into() }
    );
    assert_eq!(
        (error.code(), error.status().as_u16()),
        ("IDEMPOTENCY_CONFLICT", 409)
    );
    assert_eq!(store.idempotency("acme", "k1").await.unwrap(), Some(first));
    // Keys are per workspace.
    assert_eq!(store.idempotency("other", "k1").await.unwrap(), None);
}

pub async fn a_refused_change_keeps_no_idempotency_entry<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    let change = DirectoryChange::RemoveMember {
        workspace_id: "acme".into(),
        principal_id: "nobody".into(),
    };
    let error = store
        .apply(change, Some(entry("acme", "k1", "fp")))
        .await
        .unwrap_err();
    assert_eq!(error, DirectoryError::MemberNotFound);
    assert_eq!(store.idempotency("acme", "k1").await.unwrap(), None);
    // An entry for another workspace than the change's is refused, nothing applied.
    let change = DirectoryChange::PutMember {
        workspace_id: "acme".into(),
        member: Member::agent("bot", []),
    };
    let error = store
        .apply(change, Some(entry("elsewhere", "k2", "fp")))
        .await
        .unwrap_err();
    assert_eq!(error.status(), 400);
    assert!(
        store
            .access("acme")
            .await
            .unwrap()
            .unwrap()
            .member("bot")
            .is_none()
    );
    assert_eq!(store.idempotency("elsewhere", "k2").await.unwrap(), None);
}

pub async fn members_are_put_replaced_and_removed<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    put(
        &store,
        "acme",
        Member::agent("bot", [DelegatedScope::RecordsRead]),
    )
    .await
    .unwrap();
    put(&store, "acme", Member::human("bea", MemberRole::Member))
        .await
        .unwrap();
    let access = store.access("acme").await.unwrap().unwrap();
    let ids: Vec<&str> = access
        .members
        .iter()
        .map(|m| m.principal_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["ada", "bea", "bot"],
        "members come in principal id order"
    );
    // Replacing an agent's scopes.
    put(
        &store,
        "acme",
        Member::agent("bot", [DelegatedScope::RecordsWrite]),
    )
    .await
    .unwrap();
    let access = store.access("acme").await.unwrap().unwrap();
    assert_eq!(
        access.member("bot").unwrap().scopes,
        [DelegatedScope::RecordsWrite].into()
    );
    // A kind never changes.
    let error = put(&store, "acme", Member::human("bot", MemberRole::Member))
        .await
        .unwrap_err();
    assert_eq!(error, DirectoryError::MemberKindConflict("bot".into()));
    // Inconsistent members are refused.
    let error = put(&store, "acme", Member::human("cy", MemberRole::Agent))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "INVALID_ARGUMENTS");
    let mut human_with_scopes = Member::human("cy", MemberRole::Member);
    human_with_scopes.scopes.insert(DelegatedScope::RecordsRead);
    assert_eq!(
        put(&store, "acme", human_with_scopes)
            .await
            .unwrap_err()
            .status(),
        400
    );
    assert!(
        store
            .access("acme")
            .await
            .unwrap()
            .unwrap()
            .member("cy")
            .is_none()
    );
    // Removal; an unknown member and an unknown workspace.
    remove(&store, "acme", "bot").await.unwrap();
    assert!(
        store
            .access("acme")
            .await
            .unwrap()
            .unwrap()
            .member("bot")
            .is_none()
    );
    assert_eq!(
        remove(&store, "acme", "bot").await.unwrap_err(),
        DirectoryError::MemberNotFound
    );
    let error = put(&store, "nowhere", Member::agent("bot", []))
        .await
        .unwrap_err();
    assert_eq!(error, DirectoryError::WorkspaceNotFound);
}

pub async fn a_workspace_keeps_an_owner<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    assert_eq!(
        remove(&store, "acme", "ada").await.unwrap_err(),
        DirectoryError::LastOwner
    );
    let demote = put(&store, "acme", Member::human("ada", MemberRole::Member))
        .await
        .unwrap_err();
    assert_eq!(
        (demote.code(), demote.status().as_u16()),
        ("LAST_OWNER", 409)
    );
    put(&store, "acme", Member::human("bea", MemberRole::Owner))
        .await
        .unwrap();
    put(&store, "acme", Member::human("ada", MemberRole::Member))
        .await
        .unwrap();
    assert_eq!(
        remove(&store, "acme", "bea").await.unwrap_err(),
        DirectoryError::LastOwner
    );
    remove(&store, "acme", "ada").await.unwrap();
    let access = store.access("acme").await.unwrap().unwrap();
    assert_eq!(
        access.members,
        vec![Member::human("bea", MemberRole::Owner)]
    );
}

pub async fn collections_and_grants<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    put(&store, "acme", Member::human("bea", MemberRole::Member))
        .await
        .unwrap();
    for id in ["vault", "inbox"] {
        let visibility = if id == "vault" {
            Visibility::Restricted
        } else {
            Visibility::Workspace
        };
        let change = DirectoryChange::CreateCollection {
            collection: collection("acme", id, visibility),
        };
        store.apply(change, None).await.unwrap();
    }
    let again = DirectoryChange::CreateCollection {
        collection: collection("acme", "vault", Visibility::Workspace),
    };
    assert_eq!(
        store.apply(again, None).await.unwrap_err(),
        DirectoryError::CollectionExists("vault".into())
    );
    let access = store.access("acme").await.unwrap().unwrap();
    let ids: Vec<&str> = access
        .collections
        .iter()
        .map(|c| c.collection_id.as_str())
        .collect();
    assert_eq!(ids, ["inbox", "vault"], "collections come in id order");
    assert_eq!(
        access.collection("vault").unwrap().visibility,
        Visibility::Restricted
    );

    let grant = |collection: &str, principal: &str, access| DirectoryChange::PutGrant {
        workspace_id: "acme".into(),
        collection_id: collection.into(),
        grant: Grant {
            principal_id: principal.into(),
            access,
        },
    };
    store
        .apply(grant("vault", "bea", Access::Read), None)
        .await
        .unwrap();
    store
        .apply(grant("vault", "bea", Access::Write), None)
        .await
        .unwrap();
    let vault = store
        .access("acme")
        .await
        .unwrap()
        .unwrap()
        .collection("vault")
        .unwrap()
        .clone();
    assert_eq!(
        vault.grants,
        vec![Grant {
            principal_id: "bea".into(),
            access: Access::Write
        }],
        "a grant replaces the earlier one"
    );
    assert_eq!(
        store
            .apply(grant("vault", "eve", Access::Read), None)
            .await
            .unwrap_err(),
        DirectoryError::MemberNotFound
    );
    assert_eq!(
        store
            .apply(grant("nope", "bea", Access::Read), None)
            .await
            .unwrap_err(),
        DirectoryError::CollectionNotFound
    );

    let revoke = DirectoryChange::RemoveGrant {
        workspace_id: "acme".into(),
        collection_id: "vault".into(),
        principal_id: "bea".into(),
    };
    store.apply(revoke.clone(), None).await.unwrap();
    assert!(
        store
            .access("acme")
            .await
            .unwrap()
            .unwrap()
            .collection("vault")
            .unwrap()
            .grants
            .is_empty()
    );
    // Revoking what is not granted changes nothing and succeeds.
    store.apply(revoke, None).await.unwrap();

    // Grants come in principal id order.
    put(&store, "acme", Member::human("zed", MemberRole::Member))
        .await
        .unwrap();
    store
        .apply(grant("vault", "zed", Access::Read), None)
        .await
        .unwrap();
    store
        .apply(grant("vault", "bea", Access::Read), None)
        .await
        .unwrap();
    let vault = store
        .access("acme")
        .await
        .unwrap()
        .unwrap()
        .collection("vault")
        .unwrap()
        .clone();
    let order: Vec<&str> = vault
        .grants
        .iter()
        .map(|g| g.principal_id.as_str())
        .collect();
    assert_eq!(order, ["bea", "zed"]);
    // A removed member loses its grants: added again, it starts without them.
    store
        .apply(grant("vault", "bea", Access::Read), None)
        .await
        .unwrap();
    remove(&store, "acme", "bea").await.unwrap();
    put(&store, "acme", Member::human("bea", MemberRole::Member))
        .await
        .unwrap();
    let access = store.access("acme").await.unwrap().unwrap();
    assert_eq!(access.collection("vault").unwrap().grant("bea"), None);
}

pub async fn drafts_are_kept_per_workspace<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    created(&store, "other").await;
    let draft = |n: u128, version: u64| ProgramDraft {
        workspace_id: "acme".into(),
        draft_id: id(n),
        namespace: "polls".into(),
        version,
        digest: format!("sha256:{n}"),
        package: json!({"version": version}),
        created_at: 1_700_000_000_000 + u64::try_from(n).unwrap(),
        created_by: "ada".into(),
    };
    // Ids deliberately out of order: drafts come oldest first, not by id.
    store
        .apply(DirectoryChange::SaveDraft { draft: draft(9, 1) }, None)
        .await
        .unwrap();
    store
        .apply(DirectoryChange::SaveDraft { draft: draft(3, 2) }, None)
        .await
        .unwrap();
    let drafts = store.drafts("acme").await.unwrap();
    assert_eq!(
        drafts.iter().map(|d| d.draft_id).collect::<Vec<_>>(),
        [id(9), id(3)]
    );
    assert_eq!(store.draft("acme", id(3)).await.unwrap(), Some(draft(3, 2)));
    assert_eq!(store.draft("other", id(3)).await.unwrap(), None);
    assert!(store.drafts("other").await.unwrap().is_empty());
    let unknown = ProgramDraft {
        workspace_id: "nowhere".into(),
        ..draft(4, 1)
    };
    let error = store
        .apply(DirectoryChange::SaveDraft { draft: unknown }, None)
        .await
        .unwrap_err();
    assert_eq!(error, DirectoryError::WorkspaceNotFound);
}

pub async fn a_version_pins_its_content<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    created(&store, "other").await;
    let activate = |v: ProgramVersion| DirectoryChange::ActivateProgram { version: v };
    let polls1 = version(Some("acme"), "polls", 1, "sha256:one");
    assert_eq!(
        store.apply(activate(polls1.clone()), None).await.unwrap(),
        Applied::Applied
    );
    // The same content again: a no-op.
    let again = ProgramVersion {
        activated_at: 9,
        activated_by: "bea".into(),
        ..polls1.clone()
    };
    assert_eq!(
        store.apply(activate(again), None).await.unwrap(),
        Applied::Unchanged
    );
    assert_eq!(
        store.program("acme", "polls", 1).await.unwrap(),
        Some(polls1.clone()),
        "the first activation stays"
    );
    // Other content under the same version: refused, whatever the key.
    let error = store
        .apply(
            activate(version(Some("acme"), "polls", 1, "sha256:two")),
            Some(entry("acme", "k", "fp")),
        )
        .await
        .unwrap_err();
    assert_eq!(
        error,
        DirectoryError::VersionConflict {
            namespace: "polls".into(),
            version: 1
        }
    );
    assert_eq!(store.idempotency("acme", "k").await.unwrap(), None);
    // Several versions of one namespace are normal; other workspaces have their own.
    store
        .apply(
            activate(version(Some("acme"), "polls", 2, "sha256:two")),
            None,
        )
        .await
        .unwrap();
    store
        .apply(
            activate(version(Some("other"), "polls", 1, "sha256:mine")),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .program("other", "polls", 1)
            .await
            .unwrap()
            .unwrap()
            .digest,
        "sha256:mine"
    );
    assert_eq!(store.program("acme", "polls", 3).await.unwrap(), None);
    assert_eq!(store.program("acme", "hiring", 1).await.unwrap(), None);
    let unknown = store
        .apply(activate(version(Some("nowhere"), "polls", 1, "x")), None)
        .await
        .unwrap_err();
    assert_eq!(unknown, DirectoryError::WorkspaceNotFound);
}

pub async fn installed_versions_are_seen_by_every_workspace<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    created(&store, "other").await;
    let activate = |v: ProgramVersion| DirectoryChange::ActivateProgram { version: v };
    store
        .apply(activate(version(None, "hiring", 1, "sha256:h1")), None)
        .await
        .unwrap();
    store
        .apply(
            activate(version(Some("acme"), "polls", 2, "sha256:p2")),
            None,
        )
        .await
        .unwrap();
    store
        .apply(
            activate(version(Some("acme"), "polls", 1, "sha256:p1")),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .apply(activate(version(None, "hiring", 1, "sha256:h1")), None)
            .await
            .unwrap(),
        Applied::Unchanged
    );
    let listed = |vs: Vec<ProgramVersion>| {
        vs.into_iter()
            .map(|v| (v.namespace, v.version))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        listed(store.program_versions("acme", None).await.unwrap()),
        [
            ("hiring".to_owned(), 1),
            ("polls".to_owned(), 1),
            ("polls".to_owned(), 2)
        ],
        "(namespace, version) order"
    );
    assert_eq!(
        listed(store.program_versions("acme", Some("polls")).await.unwrap()).len(),
        2
    );
    assert_eq!(
        listed(store.program_versions("other", None).await.unwrap()),
        [("hiring".to_owned(), 1)]
    );
    assert_eq!(
        store
            .program("other", "hiring", 1)
            .await
            .unwrap()
            .unwrap()
            .workspace_id,
        None
    );
    // A workspace cannot pin other content under an installed version...
    let error = store
        .apply(
            activate(version(Some("other"), "hiring", 1, "sha256:mine")),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), "VERSION_CONFLICT");
    // ...nor can an installed package take a version a workspace pinned to other content.
    let error = store
        .apply(activate(version(None, "polls", 1, "sha256:else")), None)
        .await
        .unwrap_err();
    assert_eq!(
        error,
        DirectoryError::VersionConflict {
            namespace: "polls".into(),
            version: 1
        }
    );
    // The same content as the workspace's is fine, and installs it: every workspace sees
    // it, and the one that had it lists it once, as installed.
    assert_eq!(
        store
            .apply(activate(version(None, "polls", 2, "sha256:p2")), None)
            .await
            .unwrap(),
        Applied::Applied
    );
    assert_eq!(
        listed(store.program_versions("other", None).await.unwrap()),
        [("hiring".to_owned(), 1), ("polls".to_owned(), 2)]
    );
    let acme = store.program_versions("acme", Some("polls")).await.unwrap();
    assert_eq!(
        acme.iter()
            .map(|v| (v.version, v.workspace_id.as_deref()))
            .collect::<Vec<_>>(),
        [(1, Some("acme")), (2, None)]
    );
    assert_eq!(
        store
            .program("acme", "polls", 2)
            .await
            .unwrap()
            .unwrap()
            .workspace_id,
        None
    );
    // Installed versions are what a workspace that cannot exist (the empty id) sees.
    assert_eq!(
        listed(store.program_versions("", None).await.unwrap()),
        [("hiring".to_owned(), 1), ("polls".to_owned(), 2)]
    );
    let installed = store.installed_versions().await.unwrap();
    assert_eq!(
        listed(installed.clone()),
        [("hiring".to_owned(), 1), ("polls".to_owned(), 2)]
    );
    assert!(installed.iter().all(|v| v.workspace_id.is_none()));
}

pub async fn secrets_are_created_once<S: DirectoryStore>(store: S) {
    let store = Arc::new(store);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.secret("cursor").await.unwrap() })
        })
        .collect();
    let mut seen = Vec::new();
    for task in tasks {
        seen.push(task.await.unwrap());
    }
    assert!(
        seen.iter().all(|s| *s == seen[0]),
        "every first call agrees"
    );
    assert_eq!(store.secret("cursor").await.unwrap(), seen[0]);
    assert_ne!(seen[0], [0u8; 32]);
    assert_ne!(store.secret("other").await.unwrap(), seen[0]);
}

pub async fn concurrent_creates_of_one_workspace_have_one_winner<S: DirectoryStore>(store: S) {
    let store = Arc::new(store);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let change = DirectoryChange::CreateWorkspace {
                    workspace: workspace("race"),
                    owner: format!("p{i}"),
                };
                store
                    .apply(change, Some(entry("race", &format!("key-{i}"), "fp")))
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    assert_eq!(outcomes.iter().filter(|o| o.is_ok()).count(), 1);
    assert!(
        outcomes
            .iter()
            .filter_map(|o| o.as_ref().err())
            .all(|e| e.code() == "WORKSPACE_EXISTS")
    );
    assert_eq!(
        store.access("race").await.unwrap().unwrap().members.len(),
        1
    );
}

pub async fn concurrent_uses_of_one_key_apply_once<S: DirectoryStore>(store: S) {
    created(&store, "acme").await;
    let store = Arc::new(store);
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let change = DirectoryChange::PutMember {
                    workspace_id: "acme".into(),
                    member: Member::agent(format!("bot{i}"), []),
                };
                store
                    .apply(change, Some(entry("acme", "one-key", "fp")))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut applied = 0;
    for task in tasks {
        match task.await.unwrap() {
            Applied::Applied => applied += 1,
            Applied::Replayed(entry) => assert_eq!(entry.fingerprint, "fp"),
            Applied::Unchanged => panic!("a new member is a change"),
        }
    }
    assert_eq!(applied, 1);
    assert_eq!(
        store.access("acme").await.unwrap().unwrap().members.len(),
        2
    );
}

/// Runs every test of the suite on the store `$make` builds (a fresh one per test).
#[macro_export]
macro_rules! directory_conformance {
    ($name:ident, $make:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            $crate::directory_conformance!(@tests $make;
                a_new_workspace_has_its_owner,
                workspaces_of_a_principal_are_in_id_order,
                a_replayed_key_returns_its_entry_and_applies_nothing,
                a_refused_change_keeps_no_idempotency_entry,
                members_are_put_replaced_and_removed,
                a_workspace_keeps_an_owner,
                collections_and_grants,
                drafts_are_kept_per_workspace,
                a_version_pins_its_content,
                installed_versions_are_seen_by_every_workspace,
                secrets_are_created_once,
                concurrent_creates_of_one_workspace_have_one_winner,
                concurrent_uses_of_one_key_apply_once,
            );
        }
    };
    (@tests $make:expr; $($test:ident,)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                $crate::directory_conformance::$test($make).await;
            }
        )*
    };
}

/// A store kept with what must outlive it (a test schema, a temporary file), dropped after
/// it: what a durable store's suite runs on.
#[derive(Debug)]
pub struct Kept<S, G> {
    // Fields drop in order: the store (its connections) before its guard.
    pub store: S,
    pub guard: G,
}

impl<S: DirectoryStore, G: std::fmt::Debug + Send + Sync + 'static> DirectoryStore for Kept<S, G> {
    fn access<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<WorkspaceAccess>, StoreError>> {
        self.store.access(workspace_id)
    }

    fn workspaces_of<'a>(
        &'a self,
        principal_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<(Workspace, Member)>, StoreError>> {
        self.store.workspaces_of(principal_id)
    }

    fn apply(
        &self,
        change: DirectoryChange,
        idempotency: Option<IdempotencyEntry>,
    ) -> DirectoryFuture<'_, Result<Applied, DirectoryError>> {
        self.store.apply(change, idempotency)
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        DirectoryStore::idempotency(&self.store, workspace_id, key)
    }

    fn drafts<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramDraft>, StoreError>> {
        self.store.drafts(workspace_id)
    }

    fn draft<'a>(
        &'a self,
        workspace_id: &'a str,
        draft_id: Uuid,
    ) -> DirectoryFuture<'a, Result<Option<ProgramDraft>, StoreError>> {
        self.store.draft(workspace_id, draft_id)
    }

    fn program_versions<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: Option<&'a str>,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramVersion>, StoreError>> {
        self.store.program_versions(workspace_id, namespace)
    }

    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: u64,
    ) -> DirectoryFuture<'a, Result<Option<ProgramVersion>, StoreError>> {
        self.store.program(workspace_id, namespace, version)
    }

    fn secret<'a>(&'a self, name: &'a str) -> DirectoryFuture<'a, Result<[u8; 32], StoreError>> {
        DirectoryStore::secret(&self.store, name)
    }
}
