//! Connection hygiene of [`rcip_server::serve`] over real TCP on 127.0.0.1, with short
//! timeouts so the tests are quick: a connection that sends nothing, or its head one byte at
//! a time, is closed at the head timeout; a keep-alive connection outlives the head timeout
//! and is closed at the idle timeout; past the connection cap a new connection is not served
//! until one closes; an address whose credentials keep being refused is answered 429 before
//! any credential is looked at; a body that does not arrive is answered 408; and one agent's
//! slow bodies hold only its own share of the capacity.
//!
//! A test waits for the server to close a connection with a read that gives up after 20 s:
//! without the timeouts (as with `axum::serve`) that read never sees the close, and the test
//! fails; with them, it returns after the configured fraction of a second.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::tokens;
use rcip_platform::{MemoryDirectory, Platform};
use rcip_records::Engine;
use rcip_server::{ConnectionLimits, Limits, RateLimit, Server};
use rcip_test_support::header;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a test waits for something the server must do by itself.
const PATIENCE: Duration = Duration::from_secs(20);

/// A server of the test tokens (`ada`, `bot`, ...) with these limits; its address.
async fn start(limits: Limits, connections: ConnectionLimits) -> SocketAddr {
    let platform = Arc::new(
        Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
            .await
            .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = Server::new(platform, Arc::new(tokens()), format!("http://{address}"))
        .limits(limits)
        .router();
    tokio::spawn(rcip_server::serve(
        listener,
        router,
        connections,
        std::future::pending(),
    ));
    address
}

fn quick() -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(1500),
        ..ConnectionLimits::default()
    }
}

/// A `workspace.list` request as `token`, kept alive.
fn request(token: &str) -> Vec<u8> {
    let body = r#"{"operation": "workspace.list", "arguments": {}}"#;
    format!(
        "POST /v1/operations HTTP/1.1\r\nhost: rcip\r\nauthorization: Bearer {token}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// A connection whose request as `token` declares a 100,000-byte body and sends only `{`.
async fn slow_body(address: SocketAddr, token: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /v1/operations HTTP/1.1\r\nhost: rcip\r\nauthorization: Bearer {token}\r\n\
         content-type: application/json\r\ncontent-length: 100000\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// Reads one answer: its status and body text.
async fn answer(stream: &mut TcpStream) -> (u16, String) {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = header(head, "content-length").map_or(0, |v| v.parse().unwrap());
            if body.len() >= length {
                return (head[9..12].parse().unwrap(), body.to_owned());
            }
        }
        let read = tokio::time::timeout(PATIENCE, stream.read(&mut chunk))
            .await
            .expect("no answer in time")
            .unwrap();
        assert!(read > 0, "closed before answering: {text}");
        bytes.extend_from_slice(&chunk[..read]);
    }
}

/// Waits for the server to close `stream` (end of stream or reset), failing after
/// [`PATIENCE`].
async fn closed_by_server(stream: &mut TcpStream) {
    let mut chunk = [0u8; 256];
    loop {
        match tokio::time::timeout(PATIENCE, stream.read(&mut chunk)).await {
            Err(_) => panic!("the server kept the connection open"),
            Ok(Ok(0) | Err(_)) => return,
            Ok(Ok(_)) => {} // An answer (none is expected), then the close.
        }
    }
}

#[tokio::test]
async fn a_silent_connection_is_closed_at_the_head_timeout() {
    let address = start(Limits::default(), quick()).await;
    let mut silent = TcpStream::connect(address).await.unwrap();
    closed_by_server(&mut silent).await;
}

#[tokio::test]
async fn a_head_sent_a_byte_at_a_time_is_cut_off() {
    let address = start(Limits::default(), quick()).await;
    let mut slow = TcpStream::connect(address).await.unwrap();
    let head = request("ada");
    let mut cut = false;
    for byte in head.iter().take(200) {
        if slow.write_all(&[*byte]).await.is_err() {
            cut = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // 200 bytes at 50 ms take 10 s: the 300 ms head timeout closed the connection long
    // before (a write may still succeed into the socket buffer; the read sees the close).
    if !cut {
        closed_by_server(&mut slow).await;
    }
}

#[tokio::test]
async fn a_keep_alive_connection_outlives_the_head_timeout_and_ends_when_idle() {
    let address = start(Limits::default(), quick()).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    stream.write_all(&request("ada")).await.unwrap();
    assert_eq!(answer(&mut stream).await.0, 200);
    // Idle for twice the head timeout, well within the idle timeout: still served.
    tokio::time::sleep(Duration::from_millis(600)).await;
    stream.write_all(&request("ada")).await.unwrap();
    assert_eq!(answer(&mut stream).await.0, 200);
    closed_by_server(&mut stream).await;
}

#[tokio::test]
async fn past_the_connection_cap_a_new_connection_waits_for_one_to_close() {
    let connections = ConnectionLimits {
        max_connections: 2,
        ..ConnectionLimits::default()
    };
    let address = start(Limits::default(), connections).await;
    let mut first = TcpStream::connect(address).await.unwrap();
    first.write_all(&request("ada")).await.unwrap();
    assert_eq!(answer(&mut first).await.0, 200);
    let mut second = TcpStream::connect(address).await.unwrap();
    second.write_all(&request("ada")).await.unwrap();
    assert_eq!(answer(&mut second).await.0, 200);
    // The third is accepted by the kernel's backlog, not by the server: no answer.
    let mut third = TcpStream::connect(address).await.unwrap();
    third.write_all(&request("ada")).await.unwrap();
    let mut byte = [0u8];
    let waited = tokio::time::timeout(Duration::from_millis(500), third.read(&mut byte)).await;
    assert!(waited.is_err(), "served past the cap: {waited:?}");
    drop(first);
    assert_eq!(answer(&mut third).await.0, 200);
}

#[tokio::test]
async fn an_address_whose_credentials_keep_failing_is_refused_before_any_is_checked() {
    let limits = Limits {
        unauthenticated_rate_limit: Some(RateLimit {
            burst: 3,
            refill_every: Duration::from_secs(3600),
        }),
        ..Limits::default()
    };
    let address = start(limits, ConnectionLimits::default()).await;
    let mut stream = TcpStream::connect(address).await.unwrap();
    // Authenticated requests draw nothing from the address's bucket.
    for _ in 0..10 {
        stream.write_all(&request("ada")).await.unwrap();
        assert_eq!(answer(&mut stream).await.0, 200);
    }
    for _ in 0..3 {
        stream.write_all(&request("forged")).await.unwrap();
        let (status, body) = answer(&mut stream).await;
        assert_eq!(status, 401, "{body}");
        assert!(body.contains("INVALID_TOKEN"), "{body}");
    }
    // The bucket is empty: refused before the credential is looked at, good one or not.
    for token in ["forged", "ada"] {
        stream.write_all(&request(token)).await.unwrap();
        let (status, body) = answer(&mut stream).await;
        assert_eq!(status, 429, "{body}");
        assert!(body.contains("\"RATE_LIMITED\""), "{body}");
    }
}

#[tokio::test]
async fn a_body_that_does_not_arrive_is_answered_408() {
    let limits = Limits {
        body_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    let address = start(limits, ConnectionLimits::default()).await;
    let mut stream = slow_body(address, "ada").await;
    let (status, body) = answer(&mut stream).await;
    assert_eq!(status, 408, "{body}");
    assert!(body.contains("\"BODY_TIMEOUT\""), "{body}");
}

/// The default limits against one agent that opens more requests than the server has
/// slots, each declaring a 100,000-byte body and sending only `{`: it gets its share (64
/// requests in flight), the rest of its requests are refused at once, and another
/// principal's calls are all served meanwhile. Before the per-principal limit, the agent's
/// requests held every one of the 512 global slots until the timeout and the other
/// principal was answered 503 `OVERLOADED`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agents_slow_bodies_hold_only_its_share_and_others_are_served() {
    const SLOW: usize = 600;
    let limits = Limits::default();
    assert!(SLOW > limits.max_concurrent_requests);
    let share = limits.max_concurrent_per_principal;
    let address = start(limits, ConnectionLimits::default()).await;
    let (answers, mut answered) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..SLOW {
        let answers = answers.clone();
        let mut stream = slow_body(address, "bot").await;
        tokio::spawn(async move {
            let _ = answers.send(answer(&mut stream).await);
        });
    }
    // Everything past the agent's share is refused at once.
    for _ in 0..SLOW - share {
        let (status, body) = answered.recv().await.unwrap();
        assert_eq!(status, 429, "{body}");
        assert!(body.contains("\"CONCURRENCY_LIMITED\""), "{body}");
    }
    // While the agent holds its share, another principal is served every time.
    let mut other = TcpStream::connect(address).await.unwrap();
    for _ in 0..30 {
        other.write_all(&request("ada")).await.unwrap();
        let (status, body) = answer(&mut other).await;
        assert_eq!(status, 200, "{body}");
    }
    // The held requests end when their bodies fail to arrive in time.
    for _ in 0..share {
        let (status, body) = answered.recv().await.unwrap();
        assert_eq!(status, 408, "{body}");
    }
}
