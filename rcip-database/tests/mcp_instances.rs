//! Two instances of one MCP application on one PostgreSQL schema (skipped with one line
//! without `RCIP_TEST_POSTGRES_URL`), each its own runtime and endpoint, sharing sessions and
//! stream events through the database: a client whose call runs on one instance loses the
//! call's stream, reconnects to the other with `Last-Event-ID`, and gets the result the
//! first instance wrote while it was away.
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use postgres_support::TestSchema;
use rcip_database::PostgresStore;
use rcip_mcp::{HttpOptions, McpBridge};
use rcip_runtime::testing::Gate;
use rcip_runtime::{
    ApplicationDefinition, Binding, CapabilityDefinition, Effect, HandlerError, Runtime,
    RuntimeOptions,
};
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

/// One instance: its endpoint on 127.0.0.1, sharing `store`'s sessions and events.
async fn instance(runtime: &Runtime, store: &PostgresStore) -> SocketAddr {
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    let options = HttpOptions::new()
        .session_store(Arc::new(store.mcp_sessions()))
        .event_store(Arc::new(store.mcp_events()));
    let router = rcip_mcp::http_router(bridge, options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_stream_resumes_on_the_other_instance() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (store_a, store_b) = tokio::join!(schema.open(), schema.open());
    let gate_a = Gate::closed();
    let (runtime_a, runtime_b) = (runtime(gate_a.clone()), runtime(Gate::closed()));
    let a = instance(&runtime_a, &store_a).await;
    let b = instance(&runtime_b, &store_b).await;
    let session = mcp_session(a, "{}").await;
    // The call runs on the first instance; its stream's first event (with an id) is read,
    // then the stream is lost.
    let mut stream = mcp_post(
        a,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "jobs.wait", "arguments": {}}})
        .to_string(),
    )
    .send()
    .await
    .unwrap();
    let last_id = read_stream_until(&mut stream, Duration::from_secs(5), first_event_id).await;
    drop(stream);
    // The result comes on the first instance while the client is away; the client comes
    // back to the second.
    gate_a.entered().await;
    gate_a.release();
    let resumed = reqwest::Client::new()
        .get(format!("http://{b}/mcp"))
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .header("last-event-id", &last_id)
        .send()
        .await
        .unwrap();
    assert!(resumed.status().is_success(), "{}", resumed.status());
    let mut resumed = resumed;
    let text = read_stream_until(&mut resumed, Duration::from_secs(10), |text| {
        text.contains("\"done\":true").then(|| text.to_owned())
    })
    .await;
    assert!(text.contains("\"id\":2"), "{text}");
    assert!(
        text.contains("\"structuredContent\":{\"done\":true}"),
        "{text}"
    );
}
