//! The MCP conformance fixture server: the tools the official conformance suite calls
//! (`rcip_examples::mcp_conformance`), served by rcip-mcp over streamable HTTP at
//! `http://ADDR/mcp`, both protocol revisions, confirmations answered through the client.
//! `tests/interop/mcp.sh` starts it and runs the suite against it; `tests/interop/
//! mcp-clients.sh` drives it with the Python SDK and the MCP Inspector CLI.
//!
//! ```text
//! cargo run -p rcip-examples --example mcp_conformance -- 127.0.0.1:8001
//! cargo run -p rcip-examples --example mcp_conformance -- 127.0.0.1:8002 --database postgres://...
//! ```
//!
//! `--task-lease-ms MS` after `--database` shortens how long a task's lease lasts (30 s by
//! default), for tests that kill an instance mid-task.
//!
//! With `--database`, the instances given the same PostgreSQL database share through it
//! pending confirmations (raised on one, listed and approved on any), 2025-11-25 sessions,
//! their stream events, the answers to the requests an instance sends the client (relayed to
//! it from whichever instance the answer reached), tasks, and the `requestState` key (made
//! once, in the database).
//!
//! Beside `/mcp`, the trusted host's own approval interface, for clients that cannot show a
//! confirmation (no elicitation): `GET /host/confirmations` lists the pending ones, `POST
//! /host/confirmations/approve` approves them all. Loopback only, like the endpoint.

use std::net::SocketAddr;

use axum::Json;
use axum::extract::State;
use axum::routing::{get, post};
use rcip_database::tokio_postgres;
use rcip_examples::mcp_conformance::{ConformanceFixture, SwitchStore};
use std::sync::Arc;

use rcip_mcp::{HttpOptions, http_router};
use rcip_runtime::{BoxFuture, Host, RuntimeOptions};
use serde_json::{Value, json};

/// The pending confirmations, as the host's interface shows them.
async fn pending(State(host): State<Host>) -> Json<Value> {
    let pending: Vec<Value> = host
        .shared_pending_confirmations()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|ticket| {
            json!({
                "id": ticket.confirmation.id,
                "capabilityId": ticket.capability_id,
                "title": ticket.confirmation.title,
                "input": ticket.input,
            })
        })
        .collect();
    Json(json!({ "pending": pending }))
}

/// The host approves every pending confirmation; each call's client gets the outcome when
/// it calls again.
async fn approve_all(State(host): State<Host>) -> Json<Value> {
    let mut approved = 0;
    for ticket in host
        .shared_pending_confirmations()
        .await
        .unwrap_or_default()
    {
        host.resolve_confirmation(&ticket.confirmation.id, true)
            .await;
        approved += 1;
    }
    Json(json!({ "approved": approved }))
}

/// Whether the toggled tool is bound, in the database the instances share: the fixture
/// application's own state (a table of its own beside rcip's), as an application keeps its
/// own.
#[derive(Clone)]
struct PostgresSwitch(Arc<tokio_postgres::Client>);

impl PostgresSwitch {
    async fn open(url: &str) -> Result<Self, Box<dyn std::error::Error>> {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        // Instances starting together: one creates the table, under a lock.
        client
            .batch_execute(
                "BEGIN; SELECT pg_advisory_xact_lock(7300737); \
                 CREATE TABLE IF NOT EXISTS fixture_tool_switch \
                 (id INT PRIMARY KEY, bound BOOLEAN NOT NULL); \
                 INSERT INTO fixture_tool_switch VALUES (1, true) ON CONFLICT DO NOTHING; \
                 COMMIT",
            )
            .await?;
        Ok(Self(Arc::new(client)))
    }

    async fn query(&self, sql: &str) -> Result<bool, String> {
        let row = self
            .0
            .query_one(sql, &[])
            .await
            .map_err(|e| e.to_string())?;
        row.try_get(0).map_err(|e| e.to_string())
    }
}

impl SwitchStore for PostgresSwitch {
    fn flip(&self) -> BoxFuture<Result<bool, String>> {
        let switch = self.clone();
        Box::pin(async move {
            switch
                .query(
                    "UPDATE fixture_tool_switch SET bound = NOT bound WHERE id = 1 RETURNING bound",
                )
                .await
        })
    }

    fn read(&self) -> BoxFuture<Result<bool, String>> {
        let switch = self.clone();
        Box::pin(async move {
            switch
                .query("SELECT bound FROM fixture_tool_switch WHERE id = 1")
                .await
        })
    }
}

/// The command line: `ADDR [--database URL [--task-lease-ms MS]]`.
struct Arguments {
    addr: SocketAddr,
    database: Option<String>,
    /// How long a running task's lease lasts (tests of a killed instance shorten it).
    task_lease: Option<std::time::Duration>,
}

/// The command line, with its defaults.
fn arguments() -> Result<Arguments, Box<dyn std::error::Error>> {
    let mut addr = None;
    let mut database = None;
    let mut task_lease = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--database" => {
                database = Some(args.next().ok_or("--database needs a URL")?);
            }
            "--task-lease-ms" => {
                let ms: u64 = args
                    .next()
                    .ok_or("--task-lease-ms needs a number")?
                    .parse()?;
                task_lease = Some(std::time::Duration::from_millis(ms));
            }
            other if addr.is_none() => addr = Some(other.parse()?),
            other => return Err(format!("unexpected argument {other:?}").into()),
        }
    }
    let addr = addr.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8001)));
    Ok(Arguments {
        addr,
        database,
        task_lease,
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Warnings (a store or relay that failed) to stderr, where the interop scripts keep it.
    tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::WARN)
        .with_writer(std::io::stderr)
        .init();
    let Arguments {
        addr,
        database,
        task_lease,
    } = arguments()?;
    let store = match &database {
        Some(url) => Some(rcip_database::PostgresStore::open(url).await?),
        None => None,
    };
    let mut runtime_options = RuntimeOptions::default();
    if let Some(store) = &store {
        runtime_options = runtime_options.confirmation_store(Arc::new(store.confirmations()));
    }
    let fixture = ConformanceFixture::with_options(runtime_options)?;
    let mut builder = fixture.bridge_builder();
    let mut options = HttpOptions::new();
    if let Some(url) = &database {
        fixture
            .share_tool_switch(Arc::new(PostgresSwitch::open(url).await?))
            .await?;
        options = options.on_remote_change(fixture.on_remote_change());
    }
    if let Some(store) = &store {
        let key = store.secret("mcp-request-state").await?;
        builder = builder
            .task_store(Arc::new(match task_lease {
                Some(lease) => store.mcp_tasks().with_lease(lease),
                None => store.mcp_tasks(),
            }))
            .request_state_key(key.to_vec());
        options = options
            .session_store(Arc::new(store.mcp_sessions()))
            .event_store(Arc::new(store.mcp_events()))
            .relay(Arc::new(store.mcp_relay()));
    }
    let bridge = builder.build()?;
    let host_ui = axum::Router::new()
        .route("/host/confirmations", get(pending))
        .route("/host/confirmations/approve", post(approve_all))
        .with_state(fixture.host());
    let app = http_router(bridge, options).merge(host_ui);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    eprintln!("serving the conformance fixture at http://{addr}/mcp");
    axum::serve(listener, app).await?;
    Ok(())
}
