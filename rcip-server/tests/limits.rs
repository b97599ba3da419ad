//! The limits over real HTTP on 127.0.0.1, each with its status, code and body: body size
//! (413 `BODY_TOO_LARGE`, by `Content-Length` and by a chunked body that grows past it),
//! JSON nesting (400 `TOO_DEEP`), the per-principal rate (429 `RATE_LIMITED` with
//! `Retry-After`), the request timeout (504 `TIMEOUT`) and the concurrency limit (503
//! `OVERLOADED`). Slow requests are made by an authenticator that waits at a gate the test
//! holds, so nothing depends on how fast the machine is.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{start, start_with, tokens};
use rcip_server::{
    AuthFuture, Authenticate, DEFAULT_MAX_BODY_BYTES, Door, Limits, RateLimit, StaticTokens,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};

/// A body of exactly `size` bytes: a valid envelope but for one padding member.
fn padded(size: usize) -> String {
    let head = r#"{"operation": "workspace.list", "arguments": {}, "pad": ""#;
    let tail = r#""}"#;
    format!("{head}{}{tail}", "x".repeat(size - head.len() - tail.len()))
}

/// Posts `body` as it is (as "ada") and answers the status and the error code ("" for none).
async fn send_raw(s: &common::TestServer, body: String) -> (u16, String) {
    let response = s
        .client
        .post(s.url("/v1/operations"))
        .bearer_auth("ada")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    (
        status,
        body["error"]["code"].as_str().unwrap_or("").to_owned(),
    )
}

#[tokio::test]
async fn a_body_over_one_mebibyte_is_refused_413() {
    let s = start(Limits::default()).await;
    let send = |body: String| send_raw(&s, body);
    // At the limit the body is read (and refused for its padding member).
    assert_eq!(
        send(padded(DEFAULT_MAX_BODY_BYTES)).await,
        (400, "INVALID_REQUEST".to_owned())
    );
    assert_eq!(
        send(padded(DEFAULT_MAX_BODY_BYTES + 1)).await,
        (413, "BODY_TOO_LARGE".to_owned())
    );
}

/// Sends a chunked request of `body` (no `Content-Length`) over a raw connection and
/// answers the status line and the body.
async fn chunked(base: &str, body: &[u8]) -> (String, Value) {
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /v1/operations HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer ada\r\n\
         content-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    for chunk in body.chunks(4096) {
        // The server may answer and close before the whole body is sent.
        if stream
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await
            .is_err()
            || stream.write_all(chunk).await.is_err()
            || stream.write_all(b"\r\n").await.is_err()
        {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.lines().next().unwrap().to_owned();
    // The answer may itself be chunked: the JSON is between the first `{` and the last `}`.
    let json = &body[body.find('{').unwrap()..=body.rfind('}').unwrap()];
    (status, serde_json::from_str(json).unwrap())
}

#[tokio::test]
async fn a_chunked_body_that_grows_past_the_limit_is_refused_413() {
    let s = start(Limits {
        max_body_bytes: 10_000,
        ..Limits::default()
    })
    .await;
    let (status, body) = chunked(&s.base, padded(20_000).as_bytes()).await;
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    assert_eq!(body["error"]["code"], "BODY_TOO_LARGE");
    // Within the limit, the same way of sending is read whole.
    let (status, body) = chunked(
        &s.base,
        br#"{"operation": "workspace.list", "arguments": {}}"#,
    )
    .await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status} {body}");
}

#[tokio::test]
async fn a_body_nesting_128_levels_is_refused_before_it_is_parsed() {
    let s = start(Limits::default()).await;
    let nested = |levels: usize| {
        // The envelope and `arguments` are two levels; `deep` holds the rest as arrays.
        let inner = levels - 2;
        format!(
            r#"{{"operation": "workspace.list", "arguments": {{"deep": {}{}}}}}"#,
            "[".repeat(inner),
            "]".repeat(inner)
        )
    };
    let send = |body: String| send_raw(&s, body);
    assert_eq!(send(nested(128)).await, (400, "TOO_DEEP".to_owned()));
    assert_eq!(send(nested(5000)).await, (400, "TOO_DEEP".to_owned()));
    // 127 levels are parsed, and the platform refuses the unknown argument.
    assert_eq!(
        send(nested(127)).await,
        (400, "INVALID_ARGUMENTS".to_owned())
    );
    // Brackets inside strings are text, not nesting.
    let text = format!(
        r#"{{"operation": "workspace.list", "arguments": {{"deep": "{}"}}}}"#,
        "[".repeat(500)
    );
    assert_eq!(send(text).await, (400, "INVALID_ARGUMENTS".to_owned()));
}

#[tokio::test]
async fn each_principal_draws_from_its_own_bucket_and_is_told_when_to_come_back() {
    let s = start(Limits {
        // Two requests, then one more an hour: the third is refused, whatever the machine's speed.
        rate_limit: Some(RateLimit {
            burst: 2,
            refill_every: Duration::from_secs(3600),
        }),
        ..Limits::default()
    })
    .await;
    let list = json!({});
    assert_eq!(
        s.call("bot", "workspace.list", list.clone()).await.status,
        200
    );
    assert_eq!(
        s.call("bot", "workspace.list", list.clone()).await.status,
        200
    );
    let refused = s.call("bot", "workspace.list", list.clone()).await;
    assert_eq!((refused.status, refused.code()), (429, "RATE_LIMITED"));
    let wait: u64 = refused.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((3000..=3600).contains(&wait), "Retry-After {wait}");
    // Another principal is not held back.
    assert_eq!(
        s.call("eve", "workspace.list", list.clone()).await.status,
        200
    );
    // Another credential of the same principal draws from the same bucket.
    assert_eq!(
        s.call("bot-acme", "workspace.list", list).await.code(),
        "RATE_LIMITED"
    );
}

/// Accepts the usual tokens at once and `slow` (as ada) only after the test lets one
/// through: each slow request reports that it has started, then waits at the gate.
struct Gated {
    tokens: StaticTokens,
    started: mpsc::UnboundedSender<()>,
    gate: Arc<Semaphore>,
}

impl Authenticate for Gated {
    fn authenticate<'a>(&'a self, parts: &'a http::request::Parts, door: Door) -> AuthFuture<'a> {
        if rcip_server::bearer_token(parts) != Some("slow") {
            return self.tokens.authenticate(parts, door);
        }
        Box::pin(async move {
            let _ = self.started.send(());
            self.gate.acquire().await.unwrap().forget();
            let mut ada = parts.clone();
            ada.headers
                .insert("authorization", "Bearer ada".parse().unwrap());
            self.tokens.authenticate(&ada, door).await
        })
    }
}

fn gated() -> (Arc<Gated>, mpsc::UnboundedReceiver<()>, Arc<Semaphore>) {
    let (started, receiver) = mpsc::unbounded_channel();
    let gate = Arc::new(Semaphore::new(0));
    let auth = Gated {
        tokens: tokens(),
        started,
        gate: Arc::clone(&gate),
    };
    (Arc::new(auth), receiver, gate)
}

#[tokio::test]
async fn a_request_that_takes_too_long_is_answered_504() {
    let (auth, mut started, _gate) = gated();
    let s = start_with(
        Limits {
            request_timeout: Duration::from_millis(500),
            ..Limits::default()
        },
        auth,
    )
    .await;
    let body = json!({"operation": "workspace.list", "arguments": {}});
    // The gate is never opened: only the timeout ends the request.
    let answer = s.post(Some("slow"), &body).await;
    assert_eq!((answer.status, answer.code()), (504, "TIMEOUT"));
    assert!(started.try_recv().is_ok(), "the slow request never started");
    // The server goes on serving.
    assert_eq!(s.post(Some("ada"), &body).await.status, 200);
}

#[tokio::test]
async fn a_request_beyond_the_concurrency_limit_is_refused_503_at_once() {
    let (auth, mut started, gate) = gated();
    let s = Arc::new(
        start_with(
            Limits {
                max_concurrent_requests: 1,
                ..Limits::default()
            },
            auth,
        )
        .await,
    );
    let body = json!({"operation": "workspace.list", "arguments": {}});
    let slow = tokio::spawn({
        let (s, body) = (Arc::clone(&s), body.clone());
        async move { s.post(Some("slow"), &body).await.status }
    });
    started.recv().await.unwrap();
    // The one slot is taken: the next request is refused, not queued.
    let answer = s.post(Some("ada"), &body).await;
    assert_eq!((answer.status, answer.code()), (503, "OVERLOADED"));
    gate.add_permits(1);
    assert_eq!(slow.await.unwrap(), 200);
    // The slot is free again.
    assert_eq!(s.post(Some("ada"), &body).await.status, 200);
}

#[tokio::test]
async fn a_body_that_cannot_be_read_is_refused_400() {
    let s = start(Limits::default()).await;
    let address = s.base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    // A chunk size that is not hexadecimal: the body breaks off in a framing error, neither
    // too large nor JSON to judge.
    let request = format!(
        "POST /v1/operations HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer ada\r\n\
         content-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n\
         zz\r\n{{}}\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    let json = &body[body.find('{').unwrap()..=body.rfind('}').unwrap()];
    let body: Value = serde_json::from_str(json).unwrap();
    assert_eq!(body["error"]["code"], "BODY_UNREADABLE", "{body}");
}
