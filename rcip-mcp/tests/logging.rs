//! Log messages from handlers, seen by rmcp's client: filtered by the session's
//! `logging/setLevel` on 2025-11-25 and by the request's `_meta` logLevel on 2026-07-28,
//! and nothing at all when the client asked for no level.
#![allow(clippy::unwrap_used, deprecated)]

mod duplex;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use duplex::connect;
use rcip_mcp::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, LoggingLevel,
    LoggingMessageNotificationParam, RequestMetaObject, SetLevelRequestParams,
};
use rcip_mcp::rmcp::service::{NotificationContext, RoleClient, RunningService};
use rcip_mcp::rmcp::transport::StreamableHttpClientTransport;
use rcip_mcp::rmcp::{ClientHandler, ServiceExt};
use rcip_mcp::{HttpOptions, McpBridge, McpLog, McpLogLevel};
use rcip_runtime::*;
use serde_json::{Value, json};

#[derive(Clone, Default)]
struct Watcher {
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("watcher", "0.0.1"),
        )
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

impl Watcher {
    /// The levels and data received since the last take.
    async fn take(&self) -> Vec<(LoggingLevel, Value)> {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut logs = self.logs.lock().unwrap();
        for log in logs.iter() {
            assert_eq!(log.logger.as_deref(), Some("chatty"));
        }
        logs.drain(..).map(|l| (l.level, l.data)).collect()
    }
}

struct App {
    _runtime: Runtime,
    _guard: BindingGuard,
    bridge: McpBridge,
}

fn app() -> App {
    let definition = ApplicationDefinition::new("talk", "Talk", "Talks for tests.").capability(
        CapabilityDefinition::new(
            "talk.chatty",
            Effect::Read,
            "Chatty",
            "Logs at four levels.",
        )
        .output_schema(json!({"type": "object"})),
    );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    let guard = runtime
        .host()
        .bind(
            "talk.chatty",
            Binding::new(|_input: Value, ctx: InvocationContext| async move {
                let log = ctx.extensions().get::<McpLog>().cloned().unwrap();
                let mut sent = Vec::new();
                for level in [
                    McpLogLevel::Debug,
                    McpLogLevel::Info,
                    McpLogLevel::Warning,
                    McpLogLevel::Error,
                ] {
                    sent.push(
                        log.emit(level, Some("chatty"), json!(format!("{level:?}")))
                            .await,
                    );
                }
                Ok::<_, HandlerError>(json!({"sent": sent}))
            }),
        )
        .unwrap();
    let bridge = McpBridge::builder(runtime.client()).build().unwrap();
    App {
        _runtime: runtime,
        _guard: guard,
        bridge,
    }
}

fn call(level: Option<LoggingLevel>) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("talk.chatty").with_arguments(Default::default());
    if let Some(level) = level {
        let mut meta = RequestMetaObject::new();
        meta.set_log_level(level);
        params.meta = Some(meta);
    }
    params
}

async fn sent(client: &RunningService<RoleClient, Watcher>, level: Option<LoggingLevel>) -> Value {
    let result = client.call_tool(call(level)).await.unwrap();
    result.structured_content.unwrap()["sent"].clone()
}

fn levels(logs: &[(LoggingLevel, Value)]) -> Vec<LoggingLevel> {
    logs.iter().map(|(level, _)| *level).collect()
}

#[tokio::test]
async fn legacy_sessions_filter_by_the_level_they_set() {
    let app = app();
    let watcher = Watcher::default();
    let client = connect(&app.bridge, watcher.clone(), false).await;
    let logging = client.peer_info().unwrap().capabilities.logging.clone();
    assert_eq!(logging, Some(Default::default()));

    // No level set yet: nothing is sent.
    assert_eq!(
        sent(&client, None).await,
        json!([false, false, false, false])
    );
    assert!(watcher.take().await.is_empty());

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    assert_eq!(sent(&client, None).await, json!([false, false, true, true]));
    let logs = watcher.take().await;
    assert_eq!(levels(&logs), [LoggingLevel::Warning, LoggingLevel::Error]);
    assert_eq!(logs[0].1, json!("Warning"));

    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    assert_eq!(sent(&client, None).await, json!([true, true, true, true]));
    assert_eq!(watcher.take().await.len(), 4);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn modern_requests_log_only_at_the_level_their_meta_asks_for() {
    let app = app();
    let watcher = Watcher::default();
    let client = connect(&app.bridge, watcher.clone(), true).await;

    // No logLevel in `_meta`: nothing, whatever was asked before.
    assert_eq!(
        sent(&client, None).await,
        json!([false, false, false, false])
    );
    assert!(watcher.take().await.is_empty());

    assert_eq!(
        sent(&client, Some(LoggingLevel::Info)).await,
        json!([false, true, true, true])
    );
    let logs = watcher.take().await;
    assert_eq!(
        levels(&logs),
        [
            LoggingLevel::Info,
            LoggingLevel::Warning,
            LoggingLevel::Error
        ]
    );

    // The level is the request's, not remembered.
    assert_eq!(
        sent(&client, None).await,
        json!([false, false, false, false])
    );
    assert!(watcher.take().await.is_empty());
    // `logging/setLevel` is gone in 2026-07-28.
    assert!(
        client
            .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
            .await
            .is_err()
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn each_http_session_keeps_its_own_level() {
    let app = app();
    let router = rcip_mcp::http_router(app.bridge.clone(), HttpOptions::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let connect = |watcher: Watcher| async move {
        let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
        watcher.serve(transport).await.unwrap()
    };
    let (loud, quiet) = (Watcher::default(), Watcher::default());
    let loud_client = connect(loud.clone()).await;
    let quiet_client = connect(quiet.clone()).await;
    loud_client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Error))
        .await
        .unwrap();
    assert_eq!(
        sent(&loud_client, None).await,
        json!([false, false, false, true])
    );
    assert_eq!(levels(&loud.take().await), [LoggingLevel::Error]);
    // The other session set no level: nothing.
    assert_eq!(
        sent(&quiet_client, None).await,
        json!([false, false, false, false])
    );
    assert!(quiet.take().await.is_empty());
    let _ = loud_client.cancel().await;
    let _ = quiet_client.cancel().await;
}
