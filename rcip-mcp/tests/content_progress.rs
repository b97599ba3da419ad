//! Content blocks from outputs and progress from handlers, seen by rmcp's client in both
//! revisions (in-process duplex) and over streamable HTTP.
#![allow(clippy::unwrap_used)]

mod duplex;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use duplex::connect;
use rcip_mcp::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation,
    ProgressNotificationParam, ProgressToken, ProtocolVersion,
};
use rcip_mcp::rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RoleClient,
};
use rcip_mcp::rmcp::transport::StreamableHttpClientTransport;
use rcip_mcp::rmcp::{ClientHandler, ServiceExt};
use rcip_mcp::{HttpOptions, McpBridge, McpProgress, content_field};
use rcip_runtime::*;
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct Watcher {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("watcher", "0.0.1"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }
}

struct App {
    _runtime: Runtime,
    _guards: Vec<BindingGuard>,
    bridge: McpBridge,
}

const PNG: &str = "iVBORw0KGgo=";

fn app() -> App {
    let definition = ApplicationDefinition::new("media", "Media", "Media for tests.")
        .capability(
            CapabilityDefinition::new(
                "media.picture",
                Effect::Read,
                "Picture",
                "A caption and a picture.",
            )
            .output_schema(json!({"type": "object"})),
        )
        .capability(
            CapabilityDefinition::new(
                "media.plain",
                Effect::Read,
                "Plain",
                "An output no mapping applies to.",
            )
            .output_schema(json!({"type": "object"})),
        )
        .capability(
            CapabilityDefinition::new(
                "media.work",
                Effect::Read,
                "Work",
                "Reports progress while it works.",
            )
            .output_schema(json!({"type": "object"})),
        );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    let host = runtime.host();
    let guards = vec![
        host.bind(
            "media.picture",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!({"content": [
                    {"type": "text", "text": "A picture:"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "r"}},
                ]}))
            }),
        )
        .unwrap(),
        host.bind(
            "media.plain",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!({"content": "not blocks"}))
            }),
        )
        .unwrap(),
        host.bind(
            "media.work",
            Binding::new(|_input: Value, ctx: InvocationContext| async move {
                let progress = ctx.extensions().get::<McpProgress>().cloned();
                let mut sent = Vec::new();
                if let Some(progress) = &progress {
                    for (value, message) in [(0.0, "start"), (50.0, "half"), (25.0, "back"), (100.0, "done")] {
                        sent.push(progress.report(value, Some(100.0), Some(message)).await);
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
                Ok::<_, HandlerError>(json!({"reporter": progress.is_some(), "sent": sent}))
            }),
        )
        .unwrap(),
    ];
    let bridge = McpBridge::builder(runtime.client())
        .content(|id, output| {
            (id == "media.picture" || id == "media.plain")
                .then(|| content_field(output))
                .flatten()
        })
        .build()
        .unwrap();
    App {
        _runtime: runtime,
        _guards: guards,
        bridge,
    }
}

/// A call with no arguments (rmcp's client puts a `_meta.progressToken` of its own on it).
fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(Default::default())
}

#[tokio::test]
async fn mapped_outputs_become_content_blocks_and_keep_structured_content() {
    let app = app();
    for modern in [false, true] {
        let client = connect(&app.bridge, Watcher::default(), modern).await;
        let result = client.call_tool(call("media.picture")).await.unwrap();
        assert_eq!(result.is_error, Some(false), "{result:?}");
        assert_eq!(result.content.len(), 3, "{result:?}");
        assert_eq!(result.content[0].as_text().unwrap().text, "A picture:");
        let ContentBlock::Image(image) = &result.content[1] else {
            panic!("{result:?}")
        };
        assert_eq!(image.data, PNG);
        assert_eq!(image.mime_type, "image/png");
        assert!(matches!(result.content[2], ContentBlock::Resource(_)));
        let wire = serde_json::to_value(&result.content[2]).unwrap();
        assert_eq!(wire["resource"]["uri"], "test://r");
        // structuredContent is the output, as without a mapping.
        assert_eq!(
            result.structured_content.as_ref().unwrap()["content"][1]["mimeType"],
            "image/png"
        );

        // The mapping does not apply: the text block with the structured output's JSON stays.
        let plain = client.call_tool(call("media.plain")).await.unwrap();
        assert_eq!(plain.content.len(), 1);
        let text = &plain.content[0].as_text().unwrap().text;
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            json!({"content": "not blocks"})
        );
        client.cancel().await.unwrap();
    }
}

/// Three reports, in order, all with one token (rmcp's client puts a token of its own on
/// every request, which the bridge must echo); returns it.
fn assert_progress(seen: &[ProgressNotificationParam]) -> ProgressToken {
    let values: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert_eq!(values, [0.0, 50.0, 100.0], "{seen:?}");
    let token = seen[0].progress_token.clone();
    for p in seen {
        assert_eq!(p.progress_token, token);
        assert_eq!(p.total, Some(100.0));
    }
    let messages: Vec<_> = seen.iter().map(|p| p.message.clone().unwrap()).collect();
    assert_eq!(messages, ["start", "half", "done"]);
    token
}

#[tokio::test]
async fn progress_arrives_in_order_with_the_requests_token() {
    let app = app();
    for modern in [false, true] {
        let watcher = Watcher::default();
        let client = connect(&app.bridge, watcher.clone(), modern).await;
        let mut tokens = Vec::new();
        for _ in 0..2 {
            let result = client.call_tool(call("media.work")).await.unwrap();
            // The decreasing report was dropped.
            assert_eq!(
                result.structured_content.unwrap(),
                json!({"reporter": true, "sent": [true, true, false, true]})
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
            tokens.push(assert_progress(&watcher.progress.lock().unwrap()));
            watcher.progress.lock().unwrap().clear();
        }
        // Each request its own token.
        assert_ne!(tokens[0], tokens[1]);
        client.cancel().await.unwrap();
    }
}

/// One raw 2026-07-28 `tools/call` over HTTP: every JSON-RPC message of the response.
async fn raw_call(addr: std::net::SocketAddr, token: Option<&str>) -> Vec<Value> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    });
    if let Some(token) = token {
        meta["progressToken"] = json!(token);
    }
    let body = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "media.work")
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "media.work", "arguments": {}, "_meta": meta}}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    match serde_json::from_str::<Value>(&body) {
        Ok(one) => vec![one],
        Err(_) => body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .collect(),
    }
}

#[tokio::test]
async fn progress_over_streamable_http_in_both_revisions() {
    let app = app();
    let router = rcip_mcp::http_router(app.bridge.clone(), HttpOptions::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    // rmcp's client, both revisions.
    for modern in [false, true] {
        let watcher = Watcher::default();
        let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
        let client = if modern {
            watcher
                .clone()
                .serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .unwrap()
        } else {
            watcher.clone().serve(transport).await.unwrap()
        };
        client.call_tool(call("media.work")).await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_progress(&watcher.progress.lock().unwrap());
        let _ = client.cancel().await;
    }
    // A raw 2026-07-28 request: the progress comes first on its own response stream, with
    // exactly the request's token.
    let messages = raw_call(addr, Some("raw-1")).await;
    let (result, notes) = messages.split_last().unwrap();
    assert_eq!(
        result["result"]["structuredContent"]["reporter"], true,
        "{messages:?}"
    );
    let progress: Vec<(&Value, &Value)> = notes
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| (&m["params"]["progressToken"], &m["params"]["progress"]))
        .collect();
    assert_eq!(
        progress,
        [
            (&json!("raw-1"), &json!(0.0)),
            (&json!("raw-1"), &json!(50.0)),
            (&json!("raw-1"), &json!(100.0))
        ]
    );
    // Without a token: no reporter, nothing but the result.
    let messages = raw_call(addr, None).await;
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(
        messages[0]["result"]["structuredContent"],
        json!({"reporter": false, "sent": []})
    );
}
