//! Two conformance fixtures (`mcp_conformance -- ADDR --database URL`) on one PostgreSQL
//! schema of this test's own (dropped at the end; skipped with one line without
//! `RCIP_TEST_POSTGRES_URL`): a 2025-11-25 session opened on one is served by the other.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use rcip_database::tokio_postgres::{self, NoTls};
use rcip_test_support::{header, raw_mcp_post};

/// `target/<profile>/examples/mcp_conformance`, next to this test's `deps/` binary.
fn fixture_binary() -> PathBuf {
    let test_binary = std::env::current_exe().unwrap();
    let profile_dir = test_binary.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir
        .join("examples")
        .join(format!("mcp_conformance{}", std::env::consts::EXE_SUFFIX))
}

fn execute(url: &str, sql: &str) {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
            tokio::spawn(connection);
            client.batch_execute(sql).await.unwrap();
        });
}

/// A schema of this test's own, dropped (with its tables) when this is, panic or not.
struct Schema {
    url: String,
    name: String,
}

impl Drop for Schema {
    fn drop(&mut self) {
        execute(
            &self.url,
            &format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name),
        );
    }
}

/// A fixture on a free loopback port; killed when dropped.
struct Fixture {
    child: Child,
    address: String,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(database: &str) -> Fixture {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let mut child = Command::new(fixture_binary())
        .args([address.as_str(), "--database", database])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("the fixture ended before serving"))
            .unwrap();
        if line.contains("serving the conformance fixture") {
            break;
        }
    }
    Fixture { child, address }
}

fn post(address: &str, session: Option<&str>, body: &str) -> (u16, String, String) {
    raw_mcp_post(address, "", session, body)
}

#[test]
fn a_session_opened_on_one_fixture_is_served_by_the_other() {
    let Ok(url) = std::env::var("RCIP_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the PostgreSQL tests"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped: the fixtures on PostgreSQL (RCIP_TEST_POSTGRES_URL not set)"
        );
        return;
    };
    let schema = Schema {
        name: format!("rcip_fixture_{}", std::process::id()),
        url: url.clone(),
    };
    execute(&url, &format!("CREATE SCHEMA {}", schema.name));
    let separator = if url.contains('?') { '&' } else { '?' };
    let database = format!("{url}{separator}options=-c%20search_path%3D{}", schema.name);
    let (one, two) = (start(&database), start(&database));
    let (status, head, _) = post(
        &one.address,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(status, 200, "{head}");
    let session = header(&head, "mcp-session-id").unwrap().to_owned();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(&two.address, Some(&session), initialized).0, 202);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) = post(&two.address, Some(&session), list);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("test_simple_text"), "{body}");
    drop((one, two));
    drop(schema);
}
