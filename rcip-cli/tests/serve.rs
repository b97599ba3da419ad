//! `rcip serve` as a process: it installs the programs of its folder, answers REST on the
//! address it prints, and on SIGTERM stops accepting, answers the request in flight (here
//! one held back by the database's write lock, taken by the test as a slow store), then
//! exits 0; a restart on the same SQLite file finds the record that request committed.
#![cfg(all(unix, feature = "serve"))]
#![allow(clippy::unwrap_used, clippy::panic)]

mod serving;

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rcip_test_support::{header, prometheus_sample};
use serde_json::json;
use serving::{Serving, call, connect, get, read_head, receive, send};

/// `rcip serve` on the folder's SQLite file with its programs.
fn serve(dir: &TempDir) -> Serving {
    let database = format!("sqlite:{}", dir.0.join("rcip.db").display());
    let programs = dir.0.join("programs");
    serving::serve(&database, &["--programs".as_ref(), programs.as_os_str()])
}

/// A folder of its own under the target's temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("serve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(path.join("programs")).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const NOTES: &str = r#"{
  "protocol": "relationship/v1", "namespace": "notes", "version": 1,
  "types": {"note": {"kind": "entity",
    "schema": {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"], "additionalProperties": false}}}
}"#;

#[test]
fn sigterm_lets_the_request_in_flight_commit_and_a_restart_finds_it() {
    let dir = TempDir::new("sigterm");
    std::fs::write(dir.0.join("programs").join("notes.json"), NOTES).unwrap();
    let mut server = serve(&dir);
    let mut stream = connect(&server.address);
    let (status, body) = call(
        &mut stream,
        "workspace.create",
        json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(
        &mut stream,
        "collection.create",
        json!({"workspace_id": "acme", "collection_id": "inbox", "name": "Inbox", "idempotency_key": "c1"}),
    );
    assert_eq!(status, 200, "{body}");
    // The folder's package is installed: every workspace sees it.
    let (status, body) = call(
        &mut stream,
        "program.versions",
        json!({"workspace_id": "acme"}),
    );
    assert_eq!(
        (status, &body["result"]["items"][0]["namespace"]),
        (200, &json!("notes")),
        "{body}"
    );

    // The test takes the database's write lock: the next commit waits for it.
    let lock = rusqlite::Connection::open(dir.0.join("rcip.db")).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    send(
        &mut stream,
        "record.create",
        json!({"workspace_id": "acme", "collection_id": "inbox",
        "namespace": "notes", "version": 1, "type": "note", "data": {"text": "kept"},
        "idempotency_key": "r1"}),
    );
    // Time for the request to reach the server, which then waits on the lock.
    std::thread::sleep(Duration::from_millis(300));
    server.terminate();
    std::thread::sleep(Duration::from_millis(300));
    // Still running: the request in flight holds the shutdown. New connections are refused.
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "exited with a request in flight"
    );
    assert!(
        TcpStream::connect(&server.address).is_err(),
        "still accepting after SIGTERM"
    );
    lock.execute_batch("ROLLBACK").unwrap();
    let (status, created) = receive(&mut stream);
    assert_eq!(status, 200, "{created}");
    let record_id = created["result"]["id"].as_str().unwrap().to_owned();
    let exit = server.child.wait().unwrap();
    assert!(exit.success(), "{exit}");
    drop(server);

    let server = serve(&dir);
    let mut stream = connect(&server.address);
    let (status, body) = call(
        &mut stream,
        "record.get",
        json!({"workspace_id": "acme", "record_id": record_id}),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["data"]["text"], "kept");
}

#[test]
fn a_bad_flag_value_or_database_is_refused_with_status_2() {
    let dir = TempDir::new("refused");
    let database = format!("sqlite:{}", dir.0.join("rcip.db").display());
    for args in [
        vec!["--database", &database, "--insecure-dev-token", "t=robot:x"],
        vec!["--database", "sqlite:"],
        vec!["--database", &database, "--bind", "not an address"],
        vec![
            "--database",
            "postgres://127.0.0.1:1/none?connect_timeout=1",
        ],
        vec![
            "--database",
            &database,
            "--bind",
            "127.0.0.1:0",
            "--metrics-path",
            "metrics",
        ],
        vec![
            "--database",
            &database,
            "--bind",
            "127.0.0.1:0",
            "--metrics-bind",
            "nowhere",
        ],
        #[cfg(not(feature = "otel"))]
        vec![
            "--database",
            &database,
            "--otlp-endpoint",
            "http://127.0.0.1:4318/v1/traces",
        ],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_rcip"))
            .arg("serve")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("rcip serve:"),
            "{args:?}"
        );
    }
    std::fs::write(
        dir.0.join("programs").join("bad.json"),
        r#"{"protocol": "relationship/v1"}"#,
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rcip"))
        .args(["serve", "--bind", "127.0.0.1:0", "--database"])
        .arg(format!("sqlite:{}", dir.0.join("rcip.db").display()))
        .arg("--programs")
        .arg(dir.0.join("programs"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.json") && stderr.contains("PROGRAM_INVALID"),
        "{stderr}"
    );
}

#[test]
fn metrics_are_scraped_apart_from_the_api_and_the_probes_answer() {
    let dir = TempDir::new("metrics");
    let database = format!("sqlite:{}", dir.0.join("rcip.db").display());
    let server = serving::serve(
        &database,
        &["--metrics-bind".as_ref(), "127.0.0.1:0".as_ref()],
    );
    let metrics = server.printed[0]
        .strip_prefix("metrics on http://")
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("{:?}", server.printed))
        .to_owned();
    let mut stream = connect(&server.address);
    for key in ["w1", "w1"] {
        let (status, body) = call(
            &mut stream,
            "workspace.create",
            json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": key}),
        );
        assert_eq!(status, 200, "{body}");
    }
    let (status, _) = call(
        &mut stream,
        "workspace.get",
        json!({"workspace_id": "nope"}),
    );
    assert_eq!(status, 404);
    assert_eq!(
        get(&server.address, "/healthz"),
        (200, r#"{"status":"ok"}"#.to_owned())
    );
    assert_eq!(
        get(&server.address, "/readyz"),
        (200, r#"{"status":"ready"}"#.to_owned())
    );
    // The metrics are not on the API's address.
    assert_eq!(get(&server.address, "/metrics").0, 404);

    let (status, rendered) = get(&metrics, "/metrics");
    assert_eq!(status, 200);
    let series = |name: &str| {
        prometheus_sample(&rendered, name).unwrap_or_else(|| panic!("no {name} in\n{rendered}"))
    };
    assert_eq!(
        series(
            r#"rcip_operations_total{door="rest",operation="workspace.create",status="200",code="OK"}"#
        ),
        2.0
    );
    assert_eq!(
        series(
            r#"rcip_operations_total{door="rest",operation="workspace.get",status="404",code="WORKSPACE_NOT_FOUND"}"#
        ),
        1.0
    );
    assert_eq!(
        series(r#"rcip_http_requests_total{door="rest",status="200"}"#),
        2.0
    );
    assert_eq!(
        series(r#"rcip_http_requests_total{door="public",status="200"}"#),
        2.0
    );
    assert!(series(r#"rcip_http_request_duration_seconds_bucket{door="rest",le="+Inf"}"#) >= 3.0);
    assert!(series("rcip_http_connections_open") >= 1.0);
}

#[test]
fn metrics_can_share_the_apis_address_at_a_path() {
    let dir = TempDir::new("metrics-path");
    let database = format!("sqlite:{}", dir.0.join("rcip.db").display());
    let server = serving::serve(
        &database,
        &["--metrics-path".as_ref(), "/ops/metrics".as_ref()],
    );
    assert_eq!(get(&server.address, "/healthz").0, 200);
    let (status, rendered) = get(&server.address, "/ops/metrics");
    assert_eq!(status, 200);
    assert_eq!(
        prometheus_sample(
            &rendered,
            r#"rcip_http_requests_total{door="public",status="200"}"#
        ),
        Some(1.0),
        "{rendered}"
    );
}

#[test]
fn sigterm_ends_an_open_mcp_stream_and_exits_well_before_the_grace() {
    let dir = TempDir::new("mcp-stream");
    let database = format!("sqlite:{}", dir.0.join("rcip.db").display());
    let mut server = serving::serve(&database, &["--shutdown-grace".as_ref(), "60".as_ref()]);
    // A 2025-11-25 session, then its stream (GET), which never ends by itself.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
    .to_string();
    let mut stream = connect(&server.address);
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ada-token\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         content-length: {}\r\n\r\n{initialize}",
        initialize.len()
    )
    .unwrap();
    let head = read_head(&mut stream);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let session = header(&head, "mcp-session-id")
        .unwrap_or_else(|| panic!("no session: {head}"))
        .to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let mut other = connect(&server.address);
    write!(
        other,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ada-token\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         mcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\n\
         content-length: {}\r\n\r\n{initialized}",
        initialized.len()
    )
    .unwrap();
    let head = read_head(&mut other);
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");
    let mut events = connect(&server.address);
    write!(
        events,
        "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ada-token\r\n\
         accept: text/event-stream\r\nmcp-session-id: {session}\r\n\
         mcp-protocol-version: 2025-11-25\r\n\r\n"
    )
    .unwrap();
    let head = read_head(&mut events);
    assert!(
        head.starts_with("HTTP/1.1 200") && head.contains("text/event-stream"),
        "{head}"
    );

    let signalled = Instant::now();
    server.terminate();
    let exit = loop {
        if let Some(exit) = server.child.try_wait().unwrap() {
            break exit;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(15),
            "still running with an MCP stream open, 15 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit}");
}
