//! `tools/call` round trips over streamable HTTP on loopback, beside a direct `invoke` in
//! the same run: p50, p99 and calls per second at 1 and 32 concurrent clients, for both MCP
//! revisions. `cargo bench -p rcip-mcp --bench http_call` (`-- --quick` for fewer calls).
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use rcip_mcp::rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rcip_mcp::rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rcip_mcp::rmcp::transport::StreamableHttpClientTransport;
use rcip_mcp::{HttpOptions, McpBridge};
use rcip_runtime::*;
use serde_json::{Value, json};

fn runtime() -> Runtime {
    let definition = ApplicationDefinition::new("bench", "Bench", "A benchmark.").capability(
        CapabilityDefinition::new("bench.echo", Effect::Read, "Echo", "Echoes the text.")
            .input_schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string", "maxLength": 100}},
                "required": ["text"],
                "additionalProperties": false
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": false
            })),
    );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    runtime
        .host()
        .bind(
            "bench.echo",
            Binding::new(|input: Value, _ctx: InvocationContext| async move {
                Ok::<_, HandlerError>(json!({"text": input["text"]}))
            }),
        )
        .unwrap()
        .keep();
    runtime
}

struct Stats {
    p50: Duration,
    p99: Duration,
    per_second: f64,
}

fn stats(mut latencies: Vec<Duration>, wall: Duration) -> Stats {
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        p50: at(0.5),
        p99: at(0.99),
        per_second: latencies.len() as f64 / wall.as_secs_f64(),
    }
}

fn print(arm: &str, concurrency: usize, s: &Stats) {
    println!(
        "{arm:<28} {concurrency:>3} clients  p50 {:>9.1?}  p99 {:>9.1?}  {:>9.0} calls/s",
        s.p50, s.p99, s.per_second
    );
}

async fn direct(client: Arc<dyn RcipClient>, concurrency: usize, calls: usize) -> Stats {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(calls);
            for _ in 0..calls {
                let t = Instant::now();
                let outcome = client
                    .invoke(InvocationRequest::new(
                        "bench.echo",
                        json!({"text": "hello"}),
                    ))
                    .await;
                assert_eq!(outcome.status(), OutcomeStatus::Succeeded);
                latencies.push(t.elapsed());
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    stats(all, start.elapsed())
}

async fn over_http(uri: &str, modern: bool, concurrency: usize, calls: usize) -> Stats {
    let mut clients = Vec::new();
    for _ in 0..concurrency {
        let transport = StreamableHttpClientTransport::from_uri(uri.to_owned());
        let lifecycle = if modern {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }
        } else {
            ClientLifecycleMode::Initialize
        };
        clients.push(().serve_with_lifecycle(transport, lifecycle).await.unwrap());
    }
    let Value::Object(arguments) = json!({"text": "hello"}) else {
        unreachable!()
    };
    let start = Instant::now();
    let mut tasks = Vec::new();
    for client in clients {
        let arguments = arguments.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(calls);
            for _ in 0..calls {
                let t = Instant::now();
                let result = client
                    .call_tool(
                        CallToolRequestParams::new("bench.echo").with_arguments(arguments.clone()),
                    )
                    .await
                    .unwrap();
                assert_eq!(result.is_error, Some(false));
                latencies.push(t.elapsed());
            }
            let _ = client.cancel().await;
            latencies
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    stats(all, start.elapsed())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let calls = if quick { 50 } else { 500 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let runtime = runtime();
        let bridge = McpBridge::builder(runtime.client()).build().unwrap();
        let router = rcip_mcp::http_router(bridge, HttpOptions::new());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        for concurrency in [1, 32] {
            let per_client = (calls / concurrency).max(10);
            print(
                "invoke (direct)",
                concurrency,
                &direct(runtime.client(), concurrency, per_client * 10).await,
            );
            print(
                "tools/call http 2025-11-25",
                concurrency,
                &over_http(&uri, false, concurrency, per_client).await,
            );
            print(
                "tools/call http 2026-07-28",
                concurrency,
                &over_http(&uri, true, concurrency, per_client).await,
            );
        }
    });
}
