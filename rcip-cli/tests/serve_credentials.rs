//! `rcip serve` with the service's own credentials, as an operator runs it: an opaque token
//! made by `rcip token create` (printed once) works for its agent in its workspace only, and
//! is refused 401 once `rcip token revoke` revoked it; a human signs in through the link
//! `rcip console ticket` prints, and the session's calls need the exact Origin and the
//! session's CSRF token.
#![cfg(all(unix, feature = "serve"))]
#![allow(clippy::unwrap_used, clippy::panic)]

mod serving;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{Value, json};
use serving::call_once;

const ORIGIN: &str = "http://console.test";

fn rcip(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rcip"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// One HTTP/1.1 request on a connection of its own: status, head and body.
fn request(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nhost: rcip\r\nconnection: close\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (
        head[9..12].parse().unwrap(),
        head.to_owned(),
        body.to_owned(),
    )
}

fn operation(
    address: &str,
    headers: &[(&str, &str)],
    operation: &str,
    arguments: Value,
) -> (u16, String, Value) {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let body = json!({"operation": operation, "arguments": arguments}).to_string();
    let (status, head, body) = request(address, "POST", "/v1/operations", &all, &body);
    (
        status,
        head,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn tokens_and_console_sessions_made_by_the_operator() {
    let dir = TempDir(
        PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("serve-credentials-{}", std::process::id())),
    );
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let database = format!("sqlite:{}", dir.0.join("rcip.db").display());

    // The operator makes a token before the service runs: printed once, on standard output.
    let made = rcip(&[
        "token",
        "create",
        "--database",
        &database,
        "--workspace",
        "acme",
        "--principal",
        "bot",
        "--scope",
        "records:read",
        "--label",
        "triage",
    ]);
    let secret = stdout(&made).trim().to_owned();
    assert!(secret.starts_with("rcip_"), "{secret}");
    let listed = stdout(&rcip(&["token", "list", "--database", &database]));
    assert!(!listed.contains(&secret), "a listing shows a secret");
    let id = listed.split('\t').next().unwrap().to_owned();
    assert!(
        listed.contains("\tactive\tbot\tacme\trecords:read\ttriage"),
        "{listed}"
    );
    // An unknown scope is refused by the command line.
    let refused = rcip(&[
        "token",
        "create",
        "--database",
        &database,
        "--workspace",
        "acme",
        "--principal",
        "bot",
        "--scope",
        "records:delete",
    ]);
    assert_eq!(refused.status.code(), Some(2));

    let server = serving::serve(&database, &["--origin".as_ref(), ORIGIN.as_ref()]);
    let address = server.address.as_str();
    for (operation, arguments) in [
        (
            "workspace.create",
            json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
        ),
        (
            "workspace.create",
            json!({"workspace_id": "other", "name": "Other", "idempotency_key": "w2"}),
        ),
        (
            "member.add",
            json!({"workspace_id": "acme", "principal_id": "bot", "kind": "agent",
            "scopes": ["records:read"], "idempotency_key": "m1"}),
        ),
        (
            "member.add",
            json!({"workspace_id": "other", "principal_id": "bot", "kind": "agent",
            "scopes": ["records:read"], "idempotency_key": "m2"}),
        ),
    ] {
        let (status, body) = call_once(address, operation, arguments);
        assert_eq!(status, 200, "{operation}: {body}");
    }

    let bearer = format!("Bearer {secret}");
    let agent = [("authorization", bearer.as_str())];
    let (status, _, body) = operation(
        address,
        &agent,
        "workspace.get",
        json!({"workspace_id": "acme"}),
    );
    assert_eq!(status, 200, "{body}");
    // Its workspace only, though the agent is a member of the other one too.
    let (status, _, body) = operation(
        address,
        &agent,
        "workspace.get",
        json!({"workspace_id": "other"}),
    );
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("WORKSPACE_NOT_FOUND")),
        "{body}"
    );
    // A scope the token does not delegate.
    let (status, _, body) = operation(
        address,
        &agent,
        "collection.create",
        json!({"workspace_id": "acme", "collection_id": "c", "name": "C", "idempotency_key": "c1"}),
    );
    assert_eq!(status, 403, "{body}");

    let revoked = rcip(&["token", "revoke", "--database", &database, &id]);
    assert!(revoked.status.success());
    assert_eq!(
        rcip(&["token", "revoke", "--database", &database, &id])
            .status
            .code(),
        Some(1)
    );
    let (status, head, body) = operation(
        address,
        &agent,
        "workspace.get",
        json!({"workspace_id": "acme"}),
    );
    assert_eq!(
        (status, &body["error"]["code"]),
        (401, &json!("INVALID_TOKEN")),
        "{body}"
    );
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer resource_metadata=\""),
        "{head}"
    );

    // A human: the one-time link, then the session's cookie and CSRF token.
    let base = format!("http://{address}");
    let link = stdout(&rcip(&[
        "console",
        "ticket",
        "--database",
        &database,
        "--principal",
        "ada",
        "--base-url",
        &base,
    ]));
    let path = link.trim().strip_prefix(&base).unwrap().to_owned();
    let (status, head, _) = request(address, "GET", &path, &[], "");
    assert_eq!(status, 200, "{head}");
    let cookie = head
        .lines()
        .find_map(|line| line.strip_prefix("set-cookie: "))
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    assert!(cookie.starts_with("rcip_session="), "{cookie}");
    let (status, _, _) = request(address, "GET", &path, &[], "");
    assert_ne!(status, 200, "a ticket signed in twice");
    let (status, _, session) = request(
        address,
        "GET",
        "/console/session",
        &[("cookie", &cookie)],
        "",
    );
    assert_eq!(status, 200, "{session}");
    let session: Value = serde_json::from_str(&session).unwrap();
    let csrf = session["csrf_token"].as_str().unwrap().to_owned();

    let get = json!({"workspace_id": "acme"});
    let browser = [
        ("cookie", cookie.as_str()),
        ("origin", ORIGIN),
        ("x-csrf-token", csrf.as_str()),
    ];
    let (status, _, body) = operation(address, &browser, "workspace.get", get.clone());
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = operation(address, &browser[..2], "workspace.get", get.clone());
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("CSRF_REQUIRED")),
        "{body}"
    );
    let wrong = [
        ("cookie", cookie.as_str()),
        ("origin", "http://evil.test"),
        ("x-csrf-token", csrf.as_str()),
    ];
    let (status, _, body) = operation(address, &wrong, "workspace.get", get.clone());
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("ORIGIN_REFUSED")),
        "{body}"
    );
    // No credential at all.
    let (status, head, _) = operation(address, &[], "workspace.get", get);
    assert_eq!(status, 401);
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{head}"
    );
}
