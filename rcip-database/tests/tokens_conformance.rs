//! One conformance suite for every [`TokenStore`]: memory, SQLite (a file) and PostgreSQL (a
//! schema per test; skipped with one line without `RCIP_TEST_POSTGRES_URL`). Then the races
//! only a database can show: several instances consuming one sign-in ticket.
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use std::sync::Arc;
use std::time::Duration;

use postgres_support::TestSchema;
use rcip_database::{PostgresTokenStore, SqliteTokenStore};
use rcip_platform::tokens::{self, MemoryTokenStore, NewToken, SecretHash, Session, TokenStore};
use rcip_records::DelegatedScope;
use rcip_test_support::TempDb;

/// A token store on `schema` (two connections: the races open four at once).
async fn tokens_on(schema: &TestSchema) -> PostgresTokenStore {
    PostgresTokenStore::open_with(schema.config(), 2)
        .await
        .unwrap()
}

fn new_token(principal: &str, scopes: Vec<DelegatedScope>) -> NewToken {
    NewToken {
        principal: principal.into(),
        workspace: "acme".into(),
        scopes,
        label: Some("ci bot".into()),
    }
}

async fn token_lifecycle(store: &dyn TokenStore) {
    let created = tokens::create_token(
        store,
        new_token(
            "agent-1",
            vec![
                DelegatedScope::RecordsWrite,
                DelegatedScope::RecordsRead,
                DelegatedScope::RecordsRead,
            ],
        ),
    )
    .await
    .unwrap();
    assert!(created.secret.starts_with("rcip_"), "{}", created.secret);
    assert_eq!(created.secret.len(), "rcip_".len() + 43);
    // Sorted and deduplicated.
    assert_eq!(
        created.info.scopes,
        vec![DelegatedScope::RecordsRead, DelegatedScope::RecordsWrite]
    );
    let found = tokens::active_token(store, &created.secret).await.unwrap();
    assert_eq!(found.as_ref(), Some(&created.info));
    // The store holds the hash, not the secret: listing shows no secret anywhere.
    let listed = tokens::list_tokens(store).await.unwrap();
    assert_eq!(listed, vec![created.info.clone()]);
    let listed_json = serde_json::to_string(&listed).unwrap();
    assert!(!listed_json.contains(&created.secret["rcip_".len()..]));

    // A secret of the right shape that was never issued, and text that is not a token.
    let other = format!("rcip_{}", "A".repeat(43));
    assert_eq!(tokens::active_token(store, &other).await.unwrap(), None);
    assert_eq!(
        tokens::active_token(store, "rcip_short").await.unwrap(),
        None
    );

    assert!(tokens::revoke_token(store, &created.info.id).await.unwrap());
    assert!(
        !tokens::revoke_token(store, &created.info.id).await.unwrap(),
        "a second revoke finds no active token"
    );
    assert!(!tokens::revoke_token(store, "tok_unknown").await.unwrap());
    assert_eq!(
        tokens::active_token(store, &created.secret).await.unwrap(),
        None
    );
    let revoked = store
        .find_token(SecretHash::of(&created.secret))
        .await
        .unwrap()
        .unwrap();
    assert!(revoked.revoked_at.is_some());
    assert_eq!(tokens::list_tokens(store).await.unwrap(), vec![revoked]);
}

async fn token_listing(store: &dyn TokenStore) {
    let mut made = Vec::new();
    for (i, created_at) in [(0, 300), (1, 100), (2, 200)] {
        let info = tokens::TokenInfo {
            id: format!("tok_{i}"),
            principal: format!("agent-{i}"),
            workspace: "acme".into(),
            scopes: vec![DelegatedScope::CommandsExecute],
            label: None,
            created_at,
            revoked_at: None,
        };
        store
            .insert_token(&info, SecretHash::of(&format!("secret-{i}")))
            .await
            .unwrap();
        made.push(info);
    }
    let ids: Vec<_> = store
        .list_tokens()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(ids, ["tok_1", "tok_2", "tok_0"], "oldest first");
    // An id or a secret hash taken is refused.
    let duplicate = tokens::TokenInfo {
        id: "tok_9".into(),
        ..made[0].clone()
    };
    assert!(
        store
            .insert_token(&duplicate, SecretHash::of("secret-0"))
            .await
            .is_err()
    );
    assert!(
        tokens::create_token(store, new_token("", vec![]))
            .await
            .is_err(),
        "an empty principal is refused"
    );
}

async fn tickets(store: &dyn TokenStore) {
    let ticket = SecretHash::of("ticket-1");
    store.insert_ticket(ticket, "ada", 200, 100).await.unwrap();
    assert_eq!(
        store.consume_ticket(ticket, 150).await.unwrap().as_deref(),
        Some("ada")
    );
    assert_eq!(
        store.consume_ticket(ticket, 150).await.unwrap(),
        None,
        "used"
    );

    let expired = SecretHash::of("ticket-2");
    store.insert_ticket(expired, "ada", 200, 100).await.unwrap();
    assert_eq!(store.consume_ticket(expired, 200).await.unwrap(), None);
    assert_eq!(
        store.consume_ticket(expired, 150).await.unwrap(),
        None,
        "an expired ticket is gone once presented"
    );

    // Issuing a ticket drops the ones expired by then.
    let stale = SecretHash::of("ticket-3");
    store.insert_ticket(stale, "bob", 50, 10).await.unwrap();
    store
        .insert_ticket(SecretHash::of("ticket-4"), "bob", 500, 60)
        .await
        .unwrap();
    assert_eq!(store.consume_ticket(stale, 20).await.unwrap(), None);

    // The library's issue: a ticket of the right shape, consumed once.
    let text = tokens::issue_ticket(store, "grace", Duration::from_secs(60))
        .await
        .unwrap();
    assert!(tokens::sign_in_path(&text).ends_with(&text));
    let now = tokens::now();
    assert_eq!(
        store
            .consume_ticket(SecretHash::of(&text), now)
            .await
            .unwrap()
            .as_deref(),
        Some("grace")
    );
    assert_eq!(
        store
            .consume_ticket(SecretHash::of(&text), now)
            .await
            .unwrap(),
        None
    );
}

async fn sessions(store: &dyn TokenStore) {
    let id = SecretHash::of("session-1");
    let session = Session {
        principal: "ada".into(),
        created_at: 100,
        expires_at: 200,
    };
    store.insert_session(id, &session).await.unwrap();
    assert_eq!(
        store.find_session(id, 150).await.unwrap(),
        Some(session.clone())
    );
    assert_eq!(store.find_session(id, 200).await.unwrap(), None, "expired");
    assert_eq!(
        store
            .find_session(SecretHash::of("other"), 150)
            .await
            .unwrap(),
        None
    );
    assert!(store.revoke_session(id).await.unwrap());
    assert_eq!(
        store.find_session(id, 150).await.unwrap(),
        None,
        "signed out"
    );
    assert!(!store.revoke_session(id).await.unwrap());

    // A new session drops the ones expired when it starts.
    let old = SecretHash::of("session-2");
    store
        .insert_session(
            old,
            &Session {
                principal: "bob".into(),
                created_at: 10,
                expires_at: 20,
            },
        )
        .await
        .unwrap();
    store
        .insert_session(
            SecretHash::of("session-3"),
            &Session {
                principal: "bob".into(),
                created_at: 30,
                expires_at: 90,
            },
        )
        .await
        .unwrap();
    assert!(!store.revoke_session(old).await.unwrap(), "already dropped");
}

async fn suite(store: &dyn TokenStore) {
    token_lifecycle(store).await;
    tickets(store).await;
    sessions(store).await;
}

#[tokio::test]
async fn memory_store_conforms() {
    suite(&MemoryTokenStore::new()).await;
    token_listing(&MemoryTokenStore::new()).await;
}

#[tokio::test]
async fn sqlite_store_conforms() {
    let db = TempDb::new();
    suite(&SqliteTokenStore::open(&db.path).unwrap()).await;
    token_listing(&SqliteTokenStore::in_memory().unwrap()).await;
}

#[tokio::test]
async fn postgres_store_conforms() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    suite(&tokens_on(&schema).await).await;
    let Some(other) = TestSchema::create().await else {
        return;
    };
    token_listing(&tokens_on(&other).await).await;
}

#[tokio::test]
async fn open_reads_the_database_url() {
    let db = TempDb::new();
    let url = format!("sqlite:{}", db.path.display());
    let first = rcip_database::open_tokens(&url).await.unwrap();
    let created = tokens::create_token(first.as_ref(), new_token("agent-1", vec![]))
        .await
        .unwrap();
    // Another opening of the same file (another instance) sees the token; so does a plain
    // path.
    for url in [
        format!("sqlite://{}", db.path.display()),
        db.path.display().to_string(),
    ] {
        let other = rcip_database::open_tokens(&url).await.unwrap();
        assert_eq!(
            tokens::active_token(other.as_ref(), &created.secret)
                .await
                .unwrap()
                .map(|t| t.id),
            Some(created.info.id.clone())
        );
    }
    assert!(
        rcip_database::open_tokens("/nonexistent-dir/x/y.db")
            .await
            .is_err()
    );
    assert!(
        rcip_database::open_tokens("postgres://nobody@127.0.0.1:1/none")
            .await
            .is_err()
    );
}

/// Several instances present one ticket at once, many times over: exactly one wins each.
async fn race_on_tickets(stores: &[Arc<dyn TokenStore>]) {
    for round in 0..20 {
        let ticket = tokens::issue_ticket(stores[0].as_ref(), "ada", Duration::from_secs(60))
            .await
            .unwrap();
        let barrier = Arc::new(tokio::sync::Barrier::new(stores.len()));
        let tasks: Vec<_> = stores
            .iter()
            .map(|store| {
                let store = Arc::clone(store);
                let barrier = Arc::clone(&barrier);
                let hash = SecretHash::of(&ticket);
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.consume_ticket(hash, tokens::now()).await.unwrap()
                })
            })
            .collect();
        let mut winners = 0;
        for task in tasks {
            if let Some(principal) = task.await.unwrap() {
                assert_eq!(principal, "ada");
                winners += 1;
            }
        }
        assert_eq!(
            winners, 1,
            "round {round}: exactly one instance consumes the ticket"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_instances_race_on_one_ticket() {
    let db = TempDb::new();
    let stores: Vec<Arc<dyn TokenStore>> = (0..4)
        .map(|_| Arc::new(SqliteTokenStore::open(&db.path).unwrap()) as Arc<dyn TokenStore>)
        .collect();
    race_on_tickets(&stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_instances_race_on_one_ticket() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    // The instances open together: the tables are made once, under the advisory lock.
    let (a, b, c, d) = tokio::join!(
        tokens_on(&schema),
        tokens_on(&schema),
        tokens_on(&schema),
        tokens_on(&schema)
    );
    let stores: Vec<Arc<dyn TokenStore>> = vec![Arc::new(a), Arc::new(b), Arc::new(c), Arc::new(d)];
    race_on_tickets(&stores).await;
}
