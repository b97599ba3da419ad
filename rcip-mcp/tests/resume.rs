//! Resumable streams (2025-11-25, SEP-1699): a client that lost a call's event stream
//! reconnects with `Last-Event-ID` and gets what it missed, the result included, although
//! the result came while it was away; with the default event store and with one given.
#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rcip_mcp::{HttpOptions, McpBridge, MemoryEventStore};
use rcip_runtime::testing::Gate;
use rcip_runtime::*;
use rcip_test_support::{first_event_id, mcp_post, mcp_session, read_stream_until};
use serde_json::json;

/// `jobs.wait` waits at `gate`, then answers `{"done": true}`.
fn runtime(gate: Arc<Gate>) -> Runtime {
    let definition = ApplicationDefinition::new("jobs", "Jobs", "Runs jobs.").capability(
        CapabilityDefinition::new("jobs.wait", Effect::Read, "Wait", "Waits for the test.")
            .output_schema(json!({
                "type": "object",
                "properties": {"done": {"type": "boolean"}},
                "required": ["done"],
                "additionalProperties": false
            })),
    );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    runtime
        .host()
        .bind(
            "jobs.wait",
            Binding::new(move |_input, _ctx| {
                let gate = gate.clone();
                async move {
                    gate.pass().await;
                    Ok::<_, HandlerError>(json!({"done": true}))
                }
            }),
        )
        .unwrap()
        .keep();
    runtime
}

async fn serve(runtime: &Runtime, options: HttpOptions) -> SocketAddr {
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    let router = rcip_mcp::http_router(bridge, options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    addr
}

async fn resumes(options: HttpOptions) {
    let gate = Gate::closed();
    let runtime = runtime(gate.clone());
    let addr = serve(&runtime, options).await;
    let session = mcp_session(addr, "{}").await;
    // The call's stream: read its first event (the priming event, with an id), then lose it.
    let mut stream = mcp_post(
        addr,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "jobs.wait", "arguments": {}}})
        .to_string(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(
        stream.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let last_id = read_stream_until(&mut stream, Duration::from_secs(5), first_event_id).await;
    drop(stream);
    // The result comes while the client is away.
    gate.entered().await;
    gate.release();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let resumed = reqwest::Client::new()
        .get(format!("http://{addr}/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .header("last-event-id", &last_id)
        .send()
        .await
        .unwrap();
    assert!(resumed.status().is_success(), "{}", resumed.status());
    let mut resumed = resumed;
    let text = read_stream_until(&mut resumed, Duration::from_secs(5), |text| {
        text.contains("\"done\":true").then(|| text.to_owned())
    })
    .await;
    assert!(text.contains("\"id\":2"), "{text}");
    assert!(
        text.contains("\"structuredContent\":{\"done\":true}"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_stream_resumes_with_the_result_from_the_default_store() {
    resumes(HttpOptions::new()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_stream_resumes_from_a_store_of_the_hosts() {
    let store = Arc::new(MemoryEventStore::with_limits(
        8,
        16,
        Duration::from_secs(60),
    ));
    resumes(HttpOptions::new().event_store(store)).await;
}
