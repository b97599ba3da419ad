//! `rcip serve --otlp-endpoint` (built with the `otel` feature): a call's spans reach an
//! OTLP/HTTP collector, here a listener of the test's that keeps every request, by the
//! time the process has exited after SIGTERM (the last batch is sent at shutdown).
#![cfg(all(unix, feature = "otel"))]
#![allow(clippy::unwrap_used, clippy::panic)]

mod serving;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use rcip_test_support::header;
use serde_json::json;
use serving::call_once;

/// One request a collector received: its head and body.
struct Received {
    head: String,
    body: Vec<u8>,
}

/// A collector on 127.0.0.1 answering every request 200; what it receives comes out of the
/// channel.
fn collector() -> (String, mpsc::Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (sent, received) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut reader = BufReader::new(stream);
            loop {
                let mut head = String::new();
                while !head.ends_with("\r\n\r\n") {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        break;
                    }
                    head.push_str(&line);
                }
                if head.is_empty() {
                    break;
                }
                let length = header(&head, "content-length").map_or(0, |v| v.parse().unwrap());
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                reader
                    .get_mut()
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\n\
                          content-length: 0\r\n\r\n",
                    )
                    .unwrap();
                let _ = sent.send(Received { head, body });
            }
        }
    });
    (address, received)
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

#[test]
fn a_calls_spans_reach_the_collector() {
    let (collector, received) = collector();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("otlp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let database = format!("sqlite:{}", dir.join("rcip.db").display());
    let endpoint = format!("http://{collector}/v1/traces");
    let mut server = serving::serve(&database, &["--otlp-endpoint".as_ref(), endpoint.as_ref()]);
    let (status, body) = call_once(
        &server.address,
        "workspace.create",
        json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
    );
    assert_eq!(status, 200, "{body}");
    server.terminate();
    assert!(server.child.wait().unwrap().success());
    let _ = std::fs::remove_dir_all(&dir);

    let exports: Vec<Received> = received.try_iter().collect();
    let export = exports
        .iter()
        .find(|r| contains(&r.body, "workspace.create"))
        .unwrap_or_else(|| panic!("{} exports, none with the operation's span", exports.len()));
    assert!(
        export.head.starts_with("POST /v1/traces "),
        "{}",
        export.head
    );
    assert!(
        export
            .head
            .to_ascii_lowercase()
            .contains("content-type: application/x-protobuf"),
        "{}",
        export.head
    );
    // The request's span, the operation's and the store's, in the service's resource.
    for name in ["POST /v1/operations", "directory.apply", "rcip"] {
        assert!(contains(&export.body, name), "no {name} in the export");
    }
}
