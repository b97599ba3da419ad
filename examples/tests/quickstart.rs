//! The README's quick start is `examples/quickstart.rs`, word for word, and does what the
//! README says: rmcp's client on stdio, in both MCP revisions, lists three tools, reads,
//! writes (the policy allows it), and deletes once the human approves in the elicitation
//! form; declined, nothing is deleted. (tests/interop/quickstart.sh builds the same code as
//! a new crate from the README's `Cargo.toml` lines and drives it with the Python SDK.)
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};

/// The rust block after "`src/main.rs`:" in the README.
fn readme_quick_start() -> String {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("`src/main.rs`:\n\n```rust,no_run\n")
        .expect("the README's quick start");
    let code = &readme[start..];
    let code = &code[code.find('\n').unwrap() + 2..];
    let code = &code[code.find('\n').unwrap() + 1..];
    code[..code.find("```\n").unwrap()].to_owned()
}

#[test]
fn the_readme_quick_start_is_the_example() {
    assert_eq!(readme_quick_start(), include_str!("../quickstart.rs"));
}

/// `target/<profile>/examples/quickstart`, next to this test's `target/<profile>/deps/`.
fn example_binary() -> PathBuf {
    let test_binary = std::env::current_exe().unwrap();
    let profile_dir = test_binary.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir
        .join("examples")
        .join(format!("quickstart{}", std::env::consts::EXE_SUFFIX))
}

/// The human at the client: approves or declines every form, and remembers being asked.
#[derive(Clone, Default)]
struct Human {
    approve: Arc<AtomicBool>,
    asked: Arc<AtomicBool>,
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("quickstart-test", "0.0.1"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.store(true, Ordering::SeqCst);
        Ok(if self.approve.load(Ordering::SeqCst) {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true}))
        } else {
            ElicitResult::new(ElicitationAction::Decline)
        })
    }
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// The structured result, unwrapped from 2025-11-25's `{"result": ...}` when it was wrapped.
fn structured(result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let value = result.structured_content.clone().unwrap();
    match value.get("result") {
        Some(inner) if value.as_object().unwrap().len() == 1 => inner.clone(),
        _ => value,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quick_start_serves_an_agent_on_stdio() {
    let binary = example_binary();
    assert!(binary.exists(), "{} was not built", binary.display());
    for modern in [false, true] {
        let (transport, _) = TokioChildProcess::builder(tokio::process::Command::new(&binary))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let human = Human::default();
        let lifecycle = if modern {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }
        } else {
            ClientLifecycleMode::Initialize
        };
        let client = human
            .clone()
            .serve_with_lifecycle(transport, lifecycle)
            .await
            .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["tasks.list", "tasks.add", "tasks.delete"]);
        let delete = tools.iter().find(|t| t.name == "tasks.delete").unwrap();
        let annotations = delete.annotations.as_ref().unwrap();
        assert_eq!(annotations.destructive_hint, Some(true));

        let list = client
            .call_tool(call("tasks.list", json!({})))
            .await
            .unwrap();
        assert_eq!(structured(&list), json!([]));
        // A write: the policy lets it run without asking anyone.
        let add = client
            .call_tool(call("tasks.add", json!({"title": "Water the plants"})))
            .await
            .unwrap();
        assert_eq!(
            structured(&add),
            json!({"number": 1, "title": "Water the plants"})
        );
        assert!(!human.asked.load(Ordering::SeqCst));
        // Destructive, declined: asked, nothing deleted.
        let declined = client
            .call_tool(call("tasks.delete", json!({"number": 1})))
            .await
            .unwrap();
        assert_eq!(declined.is_error, Some(true), "{declined:?}");
        assert!(human.asked.swap(false, Ordering::SeqCst));
        // Approved: deleted.
        human.approve.store(true, Ordering::SeqCst);
        let deleted = client
            .call_tool(call("tasks.delete", json!({"number": 1})))
            .await
            .unwrap();
        assert_eq!(
            structured(&deleted),
            json!({"number": 1, "title": "Water the plants"})
        );
        assert!(human.asked.load(Ordering::SeqCst));
        let list = client
            .call_tool(call("tasks.list", json!({})))
            .await
            .unwrap();
        assert_eq!(structured(&list), json!([]));
        client.cancel().await.unwrap();
    }
}
