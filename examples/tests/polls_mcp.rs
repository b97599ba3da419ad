//! `polls -- mcp` and `polls -- mcp-http ADDR` with rmcp's own client, a client no one here
//! wrote: tools with annotations, a read, a write approved through the client's elicitation,
//! a destructive one declined, invalid input with its issues; both MCP revisions.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient, RunningService,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};

/// `target/<profile>/examples/polls`, next to this test's `target/<profile>/deps/` binary.
fn example_binary() -> PathBuf {
    let test_binary = std::env::current_exe().unwrap();
    let profile_dir = test_binary.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir
        .join("examples")
        .join(format!("polls{}", std::env::consts::EXE_SUFFIX))
}

/// The human at the client: approves everything but closing a poll.
#[derive(Clone)]
struct Human;

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("polls-mcp-test", "0.0.1"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        Ok(if message.contains("Close a poll") {
            ElicitResult::new(ElicitationAction::Decline)
        } else {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}))
        })
    }
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("not an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

fn code(result: &CallToolResult) -> &str {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    result.structured_content.as_ref().unwrap()["code"]
        .as_str()
        .unwrap()
}

async fn story(client: RunningService<RoleClient, Human>, modern: bool) {
    let tools = client.list_all_tools().await.unwrap();
    let close = tools.iter().find(|t| t.name == "polls.close").unwrap();
    assert_eq!(
        close.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    let list = tools.iter().find(|t| t.name == "polls.list").unwrap();
    assert_eq!(
        list.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );

    let listed = client
        .call_tool(call("polls.list", json!({})))
        .await
        .unwrap();
    let expected = if modern {
        json!([])
    } else {
        json!({"result": []})
    };
    assert_eq!(listed.structured_content, Some(expected));

    let created = client
        .call_tool(call(
            "polls.create",
            json!({"question": "Lunch?", "options": ["pizza", "sushi"]}),
        ))
        .await
        .unwrap();
    assert_eq!(
        created.structured_content,
        Some(json!({"pollId": "p1"})),
        "{created:?}"
    );

    let closed = client
        .call_tool(call("polls.close", json!({"pollId": "p1"})))
        .await
        .unwrap();
    assert_eq!(code(&closed), "CONFIRMATION_DECLINED");

    let invalid = client
        .call_tool(call(
            "polls.create",
            json!({"question": "Lunch?", "options": ["pizza"]}),
        ))
        .await
        .unwrap();
    assert_eq!(code(&invalid), "INPUT_INVALID");
    let issues = &invalid.structured_content.as_ref().unwrap()["issues"];
    assert_eq!(issues[0]["instancePath"], "/options", "{issues}");
    client.cancel().await.unwrap();
}

fn lifecycle(modern: bool) -> ClientLifecycleMode {
    if modern {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        }
    } else {
        ClientLifecycleMode::Initialize
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polls_over_mcp_on_stdio() {
    let binary = example_binary();
    assert!(binary.exists(), "{} was not built", binary.display());
    for modern in [false, true] {
        let mut command = tokio::process::Command::new(&binary);
        command.arg("mcp");
        let transport = TokioChildProcess::new(command).unwrap();
        let client = Human
            .serve_with_lifecycle(transport, lifecycle(modern))
            .await
            .unwrap();
        story(client, modern).await;
    }
}

/// Ends the server process however the test ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polls_over_mcp_on_http() {
    let binary = example_binary();
    for modern in [false, true] {
        // A free loopback port (bound and released; the example binds it again).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let server = std::process::Command::new(&binary)
            .args(["mcp-http", &format!("127.0.0.1:{port}")])
            .stderr(std::process::Stdio::null())
            .spawn()
            .map(Server)
            .unwrap();
        let uri = format!("http://127.0.0.1:{port}/mcp");
        let mut up = false;
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                up = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(up, "polls -- mcp-http did not listen");
        let transport = StreamableHttpClientTransport::from_uri(uri);
        let client = Human
            .serve_with_lifecycle(transport, lifecycle(modern))
            .await
            .unwrap();
        story(client, modern).await;
        drop(server);
    }
}
