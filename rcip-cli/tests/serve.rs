//! `rcip serve` as a process: it installs the programs of its folder, answers REST on the
//! address it prints, and on SIGTERM stops accepting, answers the request in flight (here
//! one held back by the database's write lock, taken by the test as a slow store), then
//! exits 0; a restart on the same SQLite file finds the record that request committed.
#![cfg(all(unix, feature = "serve"))]
#![allow(clippy::unwrap_used, clippy::panic)]

mod serving;

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use serving::{Serving, call, connect, receive, send};

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
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
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
