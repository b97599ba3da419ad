//! The relay layer (`HttpOptions::relay`) as a client meets it, with a relay that records
//! what it is given: what a session's requests publish to the other instances, what they do
//! not, the refusals of bodies it cannot read, and what a notice from another instance does
//! here.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use rcip_mcp::{HttpOptions, McpBridge, Relay, SessionStoreError};
use rcip_runtime::{
    ApplicationDefinition, BoxFuture, CapabilityDefinition, Effect, Runtime, RuntimeOptions,
};
use rcip_test_support::{mcp_post, mcp_session};
use serde_json::{Value, json};

/// What the endpoint subscribed to hear notices with.
type Hear = Arc<dyn Fn(Value) + Send + Sync>;

/// Keeps what is published, and the hearer the endpoint subscribed.
#[derive(Default)]
struct Recorder {
    published: Mutex<Vec<Value>>,
    hear: Mutex<Option<Hear>>,
}

impl Relay for Recorder {
    fn publish(&self, notice: Value) -> BoxFuture<Result<(), SessionStoreError>> {
        self.published.lock().unwrap().push(notice);
        Box::pin(std::future::ready(Ok(())))
    }

    fn subscribe(&self, hear: Hear) {
        *self.hear.lock().unwrap() = Some(hear);
    }
}

async fn serve(relay: Arc<Recorder>) -> SocketAddr {
    let definition = ApplicationDefinition::new("notes", "Notes", "Keeps notes.").capability(
        CapabilityDefinition::new("notes.list", Effect::Read, "List", "Lists the notes."),
    );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    let router = rcip_mcp::http_router(bridge, HttpOptions::new().relay(relay));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    addr
}

/// The session still serves a request after a refusal.
async fn still_serves(addr: SocketAddr, id: &str) {
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let listed = mcp_post(addr, Some(id), list.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200);
}

#[tokio::test]
async fn what_a_session_publishes_and_what_it_does_not() {
    let relay = Arc::new(Recorder::default());
    let addr = serve(relay.clone()).await;
    let id = mcp_session(addr, "{}").await;
    let published = || relay.published.lock().unwrap().clone();
    assert!(published().is_empty(), "opening a session tells nothing");

    // An untagged answer (no instance of a relayed deployment asks with a bare id) is
    // answered as any answer, and not published.
    let untagged = json!({"jsonrpc": "2.0", "id": 0, "result": {"action": "decline"}});
    assert_eq!(
        mcp_post(addr, Some(&id), untagged.to_string())
            .send()
            .await
            .unwrap()
            .status(),
        202
    );
    assert!(published().is_empty(), "an untagged answer is nobody's");
    // A client's answer to another instance's request, a cancellation, a level: published.
    let answer =
        json!({"jsonrpc": "2.0", "id": "rcip.elsewhere.0", "result": {"action": "decline"}});
    assert_eq!(
        mcp_post(addr, Some(&id), answer.to_string())
            .send()
            .await
            .unwrap()
            .status(),
        202
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 9}});
    mcp_post(addr, Some(&id), cancel.to_string())
        .send()
        .await
        .unwrap();
    let level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
                       "params": {"level": "debug"}});
    assert_eq!(
        mcp_post(addr, Some(&id), level.to_string())
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // A request of its own is not.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let listed = mcp_post(addr, Some(&id), list.to_string())
        .send()
        .await
        .unwrap();
    // Served (so not refused before the layer could publish it), and not published.
    assert_eq!(listed.status(), 200);
    assert!(listed.text().await.unwrap().contains("\"tools\""));
    assert_eq!(
        published(),
        [
            json!({"session": id, "message": answer}),
            json!({"session": id, "message": cancel}),
            json!({"session": id, "level": "debug"}),
        ]
    );

    // An unknown session's answer is refused before it is published.
    let stranger = mcp_post(addr, Some("no-such-session"), answer.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(stranger.status(), 404);
    assert_eq!(published().len(), 3);

    // Ending the session tells every instance.
    let ended = reqwest::Client::new()
        .delete(format!("http://{addr}/mcp"))
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(ended.status().is_success(), "{}", ended.status());
    assert_eq!(
        published().last(),
        Some(&json!({"session": id, "ended": true}))
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_and_nothing_is_published() {
    let relay = Arc::new(Recorder::default());
    let addr = serve(relay.clone()).await;
    let id = mcp_session(addr, "{}").await;
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":0,"result":{{"pad":"{}"}}}}"#,
        "x".repeat(4 * 1024 * 1024)
    );
    let refused = mcp_post(addr, Some(&id), huge).send().await.unwrap();
    assert_eq!(refused.status(), 413);
    assert!(relay.published.lock().unwrap().is_empty());
    still_serves(addr, &id).await;
}

/// A body that breaks off (a chunk the connection cannot read) is refused `400`, as rmcp
/// refuses one, and nothing is published: the relay never guesses at a message.
#[tokio::test]
async fn a_body_that_cannot_be_read_is_refused_and_nothing_is_published() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let relay = Arc::new(Recorder::default());
    let addr = serve(relay.clone()).await;
    let id = mcp_session(addr, "{}").await;
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {}}).to_string();
    // A first chunk of the answer, then a chunk size that is not hexadecimal.
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n\
         mcp-session-id: {id}\r\ntransfer-encoding: chunked\r\n\r\n\
         {:x}\r\n{answer}\r\nzz\r\n",
        answer.len()
    );
    let mut connection = tokio::net::TcpStream::connect(addr).await.unwrap();
    connection.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        connection.read_to_end(&mut response),
    )
    .await
    .expect("an answer within 5 s");
    let response = String::from_utf8_lossy(&response);
    assert!(read.is_ok(), "{response}");
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
    assert!(relay.published.lock().unwrap().is_empty());
    still_serves(addr, &id).await;
}

/// A body that is not JSON reaches rmcp, which refuses it as it always does, and nothing is
/// published.
#[tokio::test]
async fn a_body_that_is_not_json_is_rmcp_s_to_refuse_and_nothing_is_published() {
    let relay = Arc::new(Recorder::default());
    let addr = serve(relay.clone()).await;
    let id = mcp_session(addr, "{}").await;
    let refused = mcp_post(
        addr,
        Some(&id),
        "{\"jsonrpc\": \"2.0\", \"id\": ".to_owned(),
    )
    .send()
    .await
    .unwrap();
    assert!(refused.status().is_client_error(), "{}", refused.status());
    assert!(relay.published.lock().unwrap().is_empty());
    still_serves(addr, &id).await;
}

#[tokio::test]
async fn a_notice_from_another_instance_acts_here() {
    let relay = Arc::new(Recorder::default());
    let addr = serve(relay.clone()).await;
    let id = mcp_session(addr, "{}").await;
    let hear = relay
        .hear
        .lock()
        .unwrap()
        .clone()
        .expect("the endpoint subscribed");
    // Malformed notices are ignored, whatever their shape.
    for junk in [
        json!(null),
        json!([1]),
        json!({"session": 7}),
        json!({"session": id, "level": "loud"}),
    ] {
        hear(junk);
    }
    // Another instance ended the session: it is gone here too.
    hear(json!({"session": id, "ended": true}));
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let mut status = 0;
    for _ in 0..50 {
        status = mcp_post(addr, Some(&id), list.to_string())
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        if status == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        status, 404,
        "the session another instance ended is unknown here"
    );
}
