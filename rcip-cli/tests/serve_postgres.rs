//! `rcip serve` on PostgreSQL: two instances on one database (a schema of this test's own,
//! dropped at the end) serve one platform: what one commits the other reads and changes,
//! and a command raced on both is executed once. Skipped, with one line, without
//! `RCIP_TEST_POSTGRES_URL`.
#![cfg(all(unix, feature = "postgres"))]
#![allow(clippy::unwrap_used, clippy::panic)]

mod serving;

use std::io::Write;

use rcip_database::tokio_postgres::{self, NoTls};
use rcip_test_support::{header, prometheus_sample, raw_mcp_post};
use serde_json::{Value, json};
use serving::{call_once as call, get, serve};

/// A schema of its own on the test server, dropped when this is dropped.
struct Schema {
    url: String,
    name: String,
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn execute(url: &str, sql: &str) {
    block_on(async {
        let (client, connection) = tokio_postgres::connect(url, NoTls)
            .await
            .unwrap_or_else(|e| panic!("RCIP_TEST_POSTGRES_URL is set but unreachable: {e}"));
        tokio::spawn(connection);
        client.batch_execute(sql).await.unwrap();
    });
}

impl Schema {
    fn create() -> Option<Self> {
        let Ok(url) = std::env::var("RCIP_TEST_POSTGRES_URL") else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the PostgreSQL tests"
            );
            // Straight to stderr: the harness captures `eprintln!`, and this line must be seen.
            let _ = writeln!(
                std::io::stderr(),
                "skipped: rcip serve on PostgreSQL (RCIP_TEST_POSTGRES_URL not set)"
            );
            return None;
        };
        // One per test of this process: the tests run at once.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let next = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("rcip_serve_{}_{next}", std::process::id());
        execute(&url, &format!("CREATE SCHEMA {name}"));
        Some(Self { url, name })
    }

    /// The URL whose connections work in this schema.
    fn database(&self) -> String {
        let separator = if self.url.contains('?') { '&' } else { '?' };
        format!(
            "{}{separator}options=-csearch_path%3D{}",
            self.url, self.name
        )
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        execute(&self.url, &format!("DROP SCHEMA {} CASCADE", self.name));
    }
}

const NOTES: &str = r#"{
  "protocol": "relationship/v1", "namespace": "notes", "version": 1,
  "types": {"note": {"kind": "entity",
    "schema": {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"], "additionalProperties": false},
    "lifecycle": {"initial": "open", "states": ["open", "closed"]},
    "commands": {"close": {"input": {"type": "object", "properties": {}, "required": [],
                                     "additionalProperties": false},
                           "from": ["open"], "to": "closed"}}}}
}"#;

#[test]
fn two_instances_on_one_database_serve_one_platform() {
    let Some(schema) = Schema::create() else {
        return;
    };
    let database = schema.database();
    // The first instance's metrics on a listener of their own (its pools' gauges below).
    let metrics_bind: [&std::ffi::OsStr; 2] = ["--metrics-bind".as_ref(), "127.0.0.1:0".as_ref()];
    let (one, two) = (serve(&database, &metrics_bind), serve(&database, &[]));
    let ok = |address: &str, operation: &str, arguments: Value| {
        let (status, body) = call(address, operation, arguments);
        assert_eq!(status, 200, "{operation}: {body}");
        body["result"].clone()
    };
    ok(
        &one.address,
        "workspace.create",
        json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
    );
    ok(
        &two.address,
        "collection.create",
        json!({"workspace_id": "acme", "collection_id": "inbox", "name": "Inbox", "idempotency_key": "c1"}),
    );
    let package: Value = serde_json::from_str(NOTES).unwrap();
    ok(
        &one.address,
        "program.activate",
        json!({"workspace_id": "acme", "package": package, "idempotency_key": "p1"}),
    );
    let note = ok(
        &two.address,
        "record.create",
        json!({"workspace_id": "acme", "collection_id": "inbox",
        "namespace": "notes", "version": 1, "type": "note", "data": {"text": "shared"}, "idempotency_key": "r1"}),
    );
    let id = note["id"].as_str().unwrap().to_owned();
    let read = ok(
        &one.address,
        "record.get",
        json!({"workspace_id": "acme", "record_id": id}),
    );
    assert_eq!(read["data"]["text"], "shared");
    // The same command on both instances at once: one executes it, the other is refused.
    let close = json!({"workspace_id": "acme", "record_id": id, "command": "close", "expected_revision": 1});
    let answers = std::thread::scope(|scope| {
        let runs: Vec<_> = [(&one.address, "x1"), (&two.address, "x2")]
            .into_iter()
            .map(|(address, key)| {
                let mut arguments = close.clone();
                arguments["idempotency_key"] = json!(key);
                scope.spawn(move || call(address, "command.execute", arguments))
            })
            .collect();
        runs.into_iter()
            .map(|run| run.join().unwrap())
            .collect::<Vec<_>>()
    });
    let mut statuses: Vec<u16> = answers.iter().map(|(status, _)| *status).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 409], "{answers:?}");
    let read = ok(
        &two.address,
        "record.get",
        json!({"workspace_id": "acme", "record_id": id}),
    );
    assert_eq!(
        (read["state"].as_str(), read["revision"].as_u64()),
        (Some("closed"), Some(2))
    );
    // The one pool (records, directory and credentials), read at the scrape.
    let metrics = one.printed[0]
        .strip_prefix("metrics on http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap();
    let (status, scrape) = get(metrics, "/metrics");
    assert_eq!(status, 200);
    let series = |state: &str| {
        prometheus_sample(
            &scrape,
            &format!(r#"rcip_store_pool_connections{{pool="database",state="{state}"}}"#),
        )
        .unwrap_or_else(|| panic!("no database {state} in\n{scrape}"))
    };
    #[allow(clippy::cast_precision_loss)] // A pool size.
    let max = rcip_database::DEFAULT_POOL_SIZE as f64;
    assert_eq!(series("max"), max);
    assert!(series("open") >= 1.0 && series("idle") <= series("open"));
    drop((one, two));
    drop(schema);
}

/// A `POST /mcp` as the holder of `bearer` (`ada-token` is the dev token `serve` sets).
fn post_mcp(
    address: &str,
    bearer: &str,
    session: Option<&str>,
    body: &Value,
) -> (u16, String, String) {
    let headers = format!("authorization: Bearer {bearer}\r\n");
    raw_mcp_post(address, &headers, session, &body.to_string())
}

/// A 2025-11-25 MCP session opened through one instance is served by the other (the
/// owner and the `initialize` are in the database), for its owner only.
#[test]
fn an_mcp_session_is_served_by_either_instance() {
    let Some(schema) = Schema::create() else {
        return;
    };
    let database = schema.database();
    let other: [&std::ffi::OsStr; 2] = [
        "--insecure-dev-token".as_ref(),
        "bob-token=human:bob".as_ref(),
    ];
    let (one, two) = (serve(&database, &other), serve(&database, &other));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (status, head, _) = post_mcp(&one.address, "ada-token", None, &initialize);
    assert_eq!(status, 200, "{head}");
    let session = header(&head, "mcp-session-id")
        .unwrap_or_else(|| panic!("no session id in {head}"))
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = post_mcp(&one.address, "ada-token", Some(&session), &initialized);
    assert_eq!(status, 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, head, body) = post_mcp(&two.address, "ada-token", Some(&session), &list);
    assert_eq!(status, 200, "{head}\n{body}");
    assert!(body.contains("record_get"), "{body}");
    // Bob on either instance, with ada's session id: an unknown session.
    for address in [&one.address, &two.address] {
        let (status, _, body) = post_mcp(address, "bob-token", Some(&session), &list);
        assert_eq!(status, 404, "{body}");
        assert!(body.contains("Session not found"), "{body}");
    }
    drop((one, two));
    drop(schema);
}
