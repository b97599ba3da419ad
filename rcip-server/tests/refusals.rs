//! Requests that are ambiguous or unreadable, over raw HTTP/1.1 on 127.0.0.1 (a client
//! library would refuse to send most of them), each answered in the one error body with a
//! stable code: bytes outside ASCII in `Authorization`, a JSON body in another character
//! set (REST and MCP), two `Content-Type` headers, a member named twice, and rmcp's own
//! plain-text refusals on `/mcp`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::start;
use rcip_server::Limits;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends `head` (without the blank line) and `body`, answers status and JSON body (the
/// connection is closed after: `Connection: close`).
async fn exchange(base: &str, head: &[u8], body: &[u8]) -> (u16, Value) {
    let address = base.strip_prefix("http://").unwrap();
    let mut stream = TcpStream::connect(address).await.unwrap();
    let mut request = head.to_vec();
    request.extend_from_slice(
        format!(
            "\r\nconnection: close\r\ncontent-length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    request.extend_from_slice(body);
    stream.write_all(&request).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer: {text:?}"));
    let body = serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {text}"));
    (head[9..12].parse().unwrap(), body)
}

const LIST: &[u8] = br#"{"operation": "workspace.list", "arguments": {}}"#;

fn code(body: &Value) -> &str {
    body["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("not the error body: {body}"))
}

#[tokio::test]
async fn bytes_outside_ascii_in_authorization_are_answered_in_the_error_body() {
    let s = start(Limits::default()).await;
    let head = |value: &[u8]| {
        let mut head = b"POST /v1/operations HTTP/1.1\r\nhost: rcip\r\n\
                         content-type: application/json\r\nauthorization: "
            .to_vec();
        head.extend_from_slice(value);
        head
    };
    // Bytes over 0x7f reach the authenticator, which takes no such token.
    let (status, body) = exchange(&s.base, &head(b"Bearer \xc3\xa9t\xe9"), LIST).await;
    assert_eq!(
        (status, code(&body)),
        (401, "UNSUPPORTED_AUTHORIZATION"),
        "{body}"
    );
    // Control bytes are refused by the HTTP parser itself, before any route: still the one
    // error body (hyper's own answer has an empty body).
    for value in [&b"Bearer \x01"[..], b"Bearer \x7f", b"Bearer a\x00b"] {
        let (status, body) = exchange(&s.base, &head(value), LIST).await;
        assert_eq!((status, code(&body)), (400, "MALFORMED_REQUEST"), "{body}");
    }
}

#[tokio::test]
async fn a_json_body_in_another_charset_is_415_on_both_doors() {
    let s = start(Limits::default()).await;
    let rest = b"POST /v1/operations HTTP/1.1\r\nhost: rcip\r\nauthorization: Bearer ada\r\n\
                 content-type: application/json; charset=utf-16";
    let utf16: Vec<u8> = String::from_utf8_lossy(LIST)
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let (status, body) = exchange(&s.base, rest, &utf16).await;
    assert_eq!(
        (status, code(&body)),
        (415, "UNSUPPORTED_MEDIA_TYPE"),
        "{body}"
    );
    // UTF-8 named as such is read.
    let named = b"POST /v1/operations HTTP/1.1\r\nhost: rcip\r\nauthorization: Bearer ada\r\n\
                  content-type: application/json; charset=\"UTF-8\"";
    assert_eq!(exchange(&s.base, named, LIST).await.0, 200);
    let mcp = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer bot\r\n\
                accept: application/json, text/event-stream\r\n\
                content-type: application/json; charset=utf-16";
    let (status, body) = exchange(&s.base, mcp, &utf16).await;
    assert_eq!(
        (status, code(&body)),
        (415, "UNSUPPORTED_MEDIA_TYPE"),
        "{body}"
    );
}

#[tokio::test]
async fn two_content_types_are_ambiguous() {
    let s = start(Limits::default()).await;
    for (first, second) in [
        ("application/json", "text/plain"),
        ("text/plain", "application/json"),
        ("application/json", "application/json"),
    ] {
        let head = format!(
            "POST /v1/operations HTTP/1.1\r\nhost: rcip\r\nauthorization: Bearer ada\r\n\
             content-type: {first}\r\ncontent-type: {second}"
        );
        let (status, body) = exchange(&s.base, head.as_bytes(), LIST).await;
        assert_eq!((status, code(&body)), (400, "AMBIGUOUS_REQUEST"), "{body}");
    }
}

#[tokio::test]
async fn a_member_named_twice_is_ambiguous_wherever_it_is() {
    let s = start(Limits::default()).await;
    let head = b"POST /v1/operations HTTP/1.1\r\nhost: rcip\r\nauthorization: Bearer ada\r\n\
                 content-type: application/json";
    for body in [
        r#"{"operation": "workspace.get", "operation": "workspace.list", "arguments": {}}"#,
        r#"{"operation": "workspace.list", "arguments": {}, "arguments": {}}"#,
        r#"{"operation": "workspace.list", "arguments": {"limit": 1, "limit": 2}}"#,
        r#"{"operation": "workspace.list", "arguments": {"x": [{"a": 1, "a": 1}]}}"#,
    ] {
        let (status, answer) = exchange(&s.base, head, body.as_bytes()).await;
        assert_eq!(
            (status, code(&answer)),
            (400, "AMBIGUOUS_REQUEST"),
            "{body}: {answer}"
        );
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("appears twice"),
            "{answer}"
        );
    }
    // Malformed JSON stays MALFORMED_JSON; the same member in two objects is fine.
    let (status, answer) = exchange(&s.base, head, br#"{"operation": "#).await;
    assert_eq!((status, code(&answer)), (400, "MALFORMED_JSON"), "{answer}");
    let fine = br#"{"operation": "workspace.list", "arguments": {}}"#;
    assert_eq!(exchange(&s.base, head, fine).await.0, 200);
}

#[tokio::test]
async fn rmcps_plain_text_refusals_come_in_the_error_body() {
    let s = start(Limits::default()).await;
    // No `Accept` of both JSON and SSE: rmcp answers 406 in plain text.
    let head = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer bot\r\n\
                 accept: application/json\r\ncontent-type: application/json";
    let initialize = br#"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}"#;
    let (status, body) = exchange(&s.base, head, initialize).await;
    assert_eq!((status, code(&body)), (406, "NOT_ACCEPTABLE"), "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Not Acceptable"),
        "{body}"
    );
    // An unknown session: 404 in the error body.
    let head = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer bot\r\n\
                 accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n\
                 mcp-session-id: no-such-session\r\nmcp-protocol-version: 2025-11-25";
    let ping = br#"{"jsonrpc": "2.0", "id": 2, "method": "ping"}"#;
    let (status, body) = exchange(&s.base, head, ping).await;
    assert_eq!((status, code(&body)), (404, "NOT_FOUND"), "{body}");
}
