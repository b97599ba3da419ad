//! Round trips to PostgreSQL per platform operation, counted on the wire so they cannot creep
//! back: the store's one connection goes through a loopback proxy that counts the times the
//! client speaks after the server has (a pipelined batch of messages is one round trip). The
//! bounds are what the store does now; a change that adds a round trip fails here and says
//! which operation (skipped with one line without `RCIP_TEST_POSTGRES_URL`).
#![cfg(feature = "postgres")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod postgres_support;
mod store_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use postgres_support::TestSchema;
use rcip_database::PostgresStore;
use rcip_database::tokio_postgres::config::Host;
use rcip_platform::Platform;
use rcip_platform::tokens::{self, NewToken};
use rcip_records::{Actor, Caller, DelegatedScope, RecordStore};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy saw: round trips so far, and whether the server spoke last.
#[derive(Debug, Default)]
struct Wire {
    round_trips: AtomicU64,
    server_spoke_last: AtomicBool,
}

impl Wire {
    fn client_sent(&self) {
        if self.server_spoke_last.swap(false, Ordering::SeqCst) {
            self.round_trips.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn server_sent(&self) {
        self.server_spoke_last.store(true, Ordering::SeqCst);
    }

    fn take(&self) -> u64 {
        self.round_trips.swap(0, Ordering::SeqCst)
    }
}

/// Copies `from` to `to`, telling `wire` who spoke.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    wire: Arc<Wire>,
    client: bool,
) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        // Counted before forwarding: the other side cannot answer what it has not received.
        if client {
            wire.client_sent();
        } else {
            wire.server_sent();
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

/// A proxy on a free loopback port in front of `server`; returns its port.
async fn proxy(server: (String, u16), wire: Arc<Wire>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = TcpStream::connect((server.0.as_str(), server.1))
                .await
                .unwrap();
            let _ = client.set_nodelay(true);
            let _ = upstream.set_nodelay(true);
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = upstream.into_split();
            tokio::spawn(pump(client_read, server_write, Arc::clone(&wire), true));
            tokio::spawn(pump(server_read, client_write, Arc::clone(&wire), false));
        }
    });
    port
}

fn ada() -> Caller {
    Caller::human(Actor::new("ada"))
}

async fn ok<S: RecordStore>(platform: &Platform<S>, operation: &str, arguments: Value) -> Value {
    match platform.call(&ada(), operation, arguments).await {
        Ok(value) => value,
        Err(error) => panic!("{operation} failed: {error}"),
    }
}

/// The round trips of one call, after the same call once (so the connection and its cached
/// statements are warm, as in a running service).
async fn counted<S: RecordStore>(
    platform: &Platform<S>,
    wire: &Wire,
    operation: &str,
    arguments: impl Fn(u64) -> Value,
) -> u64 {
    ok(platform, operation, arguments(1)).await;
    wire.take();
    ok(platform, operation, arguments(2)).await;
    wire.take()
}

#[tokio::test]
async fn postgres_round_trips_per_operation() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let config = schema.config();
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let wire = Arc::new(Wire::default());
    let proxied = proxy((host, port), Arc::clone(&wire)).await;
    // The same user, database and schema, through the proxy (a config's hosts add up, so a
    // new one).
    let mut through = rcip_database::tokio_postgres::Config::new();
    through.host("127.0.0.1").port(proxied);
    if let Some(user) = config.get_user() {
        through.user(user);
    }
    if let Some(password) = config.get_password() {
        through.password(password);
    }
    if let Some(dbname) = config.get_dbname() {
        through.dbname(dbname);
    }
    if let Some(options) = config.get_options() {
        through.options(options);
    }
    // One connection, so every statement of an operation crosses the one counted wire.
    let store = Arc::new(PostgresStore::open_with(through, 1).await.unwrap());
    let platform = Platform::open(rcip_records::Engine::new(Arc::clone(&store)), store.clone())
        .await
        .unwrap();
    let polls: Value =
        serde_json::from_str(include_str!("../../examples/programs/polls.json")).unwrap();
    platform.install(&polls).await.unwrap();
    ok(
        &platform,
        "workspace.create",
        json!({"workspace_id": "w", "name": "W", "idempotency_key": "w"}),
    )
    .await;
    ok(
        &platform,
        "collection.create",
        json!({"workspace_id": "w", "collection_id": "c", "name": "C", "idempotency_key": "c"}),
    )
    .await;
    let poll = ok(
        &platform,
        "record.create",
        json!({"workspace_id": "w", "collection_id": "c", "namespace": "polls", "version": 1,
            "type": "poll", "data": {"question": "Lunch?", "options": ["yes", "no"], "vote_count": 0},
            "idempotency_key": "p"}),
    )
    .await;
    let id = poll["id"].as_str().unwrap().to_owned();

    let get = counted(
        &platform,
        &wire,
        "record.get",
        |_| json!({"workspace_id": "w", "record_id": id}),
    )
    .await;
    let execute = counted(&platform, &wire, "command.execute", |n| {
        json!({"workspace_id": "w", "record_id": id, "command": "vote",
            "expected_revision": n, "idempotency_key": format!("v{n}"),
            "input": {"voter": format!("voter-{n}"), "choice": 0}})
    })
    .await;
    let search = counted(
        &platform,
        &wire,
        "record.search",
        |_| json!({"workspace_id": "w", "namespace": "polls", "type": "poll"}),
    )
    .await;

    let tokens = store.tokens();
    let created = tokens::create_token(
        &tokens,
        NewToken {
            principal: "bot".into(),
            workspace: "w".into(),
            scopes: vec![DelegatedScope::RecordsRead],
            label: None,
        },
    )
    .await
    .unwrap();
    tokens::active_token(&tokens, &created.secret)
        .await
        .unwrap()
        .unwrap();
    wire.take();
    tokens::active_token(&tokens, &created.secret)
        .await
        .unwrap()
        .unwrap();
    let token = wire.take();

    eprintln!(
        "round trips to PostgreSQL: record.get {get}, command.execute {execute}, \
         record.search {search}, token check {token}"
    );
    for (operation, counted, bound) in [
        // The caller's access (one statement), then the record.
        ("record.get", get, 2),
        // Access, the record, its key; then BEGIN with the lock and the key read after it,
        // then the update, the key, the events and COMMIT (each group pipelined).
        ("command.execute", execute, 5),
        ("record.search", search, 2),
        ("token check", token, 1),
    ] {
        assert!(
            counted <= bound,
            "{operation}: {counted} round trips to PostgreSQL, at most {bound} expected"
        );
    }
}
