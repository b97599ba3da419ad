//! Two conformance fixtures (`mcp_conformance -- ADDR --database URL`) on one PostgreSQL
//! schema of this test's own (dropped at the end; skipped with one line without
//! `RCIP_TEST_POSTGRES_URL`): a 2025-11-25 session opened on one is served by the other.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use rcip_database::tokio_postgres::{self, NoTls};

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

/// A `POST /mcp` on a connection of its own: status, head and body (read to the close).
fn post(address: &str, session: Option<&str>, body: &str) -> (u16, String, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    let session = session.map_or_else(String::new, |id| {
        format!("mcp-session-id: {id}\r\nmcp-protocol-version: 2025-11-25\r\n")
    });
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         {session}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head[9..12].parse().unwrap(),
        head.to_owned(),
        body.to_owned(),
    )
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
    let session = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap();
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post(&two.address, Some(&session), initialized).0, 202);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, body) = post(&two.address, Some(&session), list);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("test_simple_text"), "{body}");
    drop((one, two));
    drop(schema);
}
