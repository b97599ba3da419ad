//! `polls -- mcp` and `polls -- mcp-http ADDR` with rmcp's own client, a client no one here
//! wrote: tools with annotations, a read, a write approved through the client's elicitation,
//! a destructive one declined, invalid input with its issues, a slow call (`polls.wait`)
//! cancelled, then the host's maintenance switch (`SIGUSR1`): `list_changed`, the writes gone
//! from `tools/list` and a call to one `CAPABILITY_UNBOUND`, and back; both MCP revisions.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation, ProtocolVersion, SubscriptionFilter,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, NotificationContext,
    RequestContext, RoleClient, RunningService, Subscription,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Value, json};
use tokio::sync::watch;

/// `target/<profile>/examples/polls`, next to this test's `target/<profile>/deps/` binary.
fn example_binary() -> PathBuf {
    let test_binary = std::env::current_exe().unwrap();
    let profile_dir = test_binary.parent().and_then(|deps| deps.parent()).unwrap();
    profile_dir
        .join("examples")
        .join(format!("polls{}", std::env::consts::EXE_SUFFIX))
}

/// The human at the client: approves everything but closing a poll. Counts 2025-11-25
/// `list_changed` notifications (2026-07-28 ones come on a listen stream instead).
#[derive(Clone, Default)]
struct Human {
    list_changed: Arc<watch::Sender<u64>>,
}

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

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.send_modify(|n| *n += 1);
    }
}

/// Where a session hears `notifications/tools/list_changed`.
enum Changes {
    /// 2025-11-25: the client handler's count.
    Legacy(watch::Receiver<u64>),
    /// 2026-07-28: a `subscriptions/listen` stream.
    Modern(Box<Subscription>),
}

impl Changes {
    async fn open(client: &RunningService<RoleClient, Human>, human: &Human, modern: bool) -> Self {
        if !modern {
            return Changes::Legacy(human.list_changed.subscribe());
        }
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        Changes::Modern(Box::new(client.peer().listen(filter).await.unwrap()))
    }

    /// The next `list_changed` within `within`, if any.
    async fn within(&mut self, within: Duration) -> Option<()> {
        match self {
            Changes::Legacy(count) => {
                let changed = tokio::time::timeout(within, count.changed()).await.ok()?;
                changed.unwrap();
            }
            Changes::Modern(subscription) => {
                let notification = tokio::time::timeout(within, subscription.next())
                    .await
                    .ok()?
                    .unwrap()
                    .unwrap();
                let wire = serde_json::to_value(&notification).unwrap();
                assert_eq!(wire["method"], "notifications/tools/list_changed", "{wire}");
            }
        }
        Some(())
    }

    /// The next `list_changed` (a generous bound: the bridge debounces for 50 ms).
    async fn next(&mut self) {
        let heard = self.within(Duration::from_secs(10)).await;
        assert!(heard.is_some(), "no list_changed");
    }

    /// Lets earlier changes' notifications arrive (creating the first poll made `polls.close`
    /// available: a change of the listing), so the next one heard is the host's.
    async fn settle(&mut self) {
        while self.within(Duration::from_millis(300)).await.is_some() {}
    }
}

/// Sends `SIGUSR1` to the server process: its host's maintenance switch.
fn toggle_maintenance(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-USR1", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -USR1 {pid}: {status}");
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("not an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// The text of an `isError` result: `CODE: message`, then `- path: message (keyword)` per
/// issue, and no `structuredContent`.
fn error_text(result: &CallToolResult) -> &str {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(result.structured_content.is_none(), "{result:?}");
    match result.content.as_slice() {
        [block] => &block.as_text().unwrap().text,
        _ => panic!("not one text block: {result:?}"),
    }
}

fn code(result: &CallToolResult) -> &str {
    let text = error_text(result);
    text.split_once(": ")
        .unwrap_or_else(|| panic!("no `CODE: ` in {text:?}"))
        .0
}

/// The `watchers` of poll `p1` in `polls.list`.
async fn watchers(client: &RunningService<RoleClient, Human>, modern: bool) -> u64 {
    let listed = client
        .call_tool(call("polls.list", json!({})))
        .await
        .unwrap();
    let listed = listed.structured_content.unwrap();
    let polls = if modern { &listed } else { &listed["result"] };
    polls[0]["watchers"].as_u64().unwrap()
}

/// Asks `polls.list` until `p1` has `expected` watchers (a bounded number of times).
async fn until_watchers(client: &RunningService<RoleClient, Human>, modern: bool, expected: u64) {
    let mut seen = u64::MAX;
    for _ in 0..200 {
        seen = watchers(client, modern).await;
        if seen == expected {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("p1 has {seen} watchers, not {expected}");
}

async fn tool_names(client: &RunningService<RoleClient, Human>) -> Vec<String> {
    let tools = client.list_all_tools().await.unwrap();
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

async fn story(client: RunningService<RoleClient, Human>, human: Human, modern: bool, pid: u32) {
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
    let issues: Vec<&str> = error_text(&invalid).lines().skip(1).collect();
    assert!(issues[0].starts_with("- /options: "), "{issues:?}");

    // A slow read, cancelled: dropping the request future sends notifications/cancelled, and
    // the wait ends in the application (its watcher is gone from polls.list).
    assert_eq!(watchers(&client, modern).await, 0);
    let waiting = client.call_tool_once(call("polls.wait", json!({"pollId": "p1", "votes": 5})));
    let mut waiting = Box::pin(waiting);
    let early = tokio::time::timeout(Duration::from_millis(50), &mut waiting).await;
    assert!(early.is_err(), "polls.wait returned: {early:?}");
    until_watchers(&client, modern, 1).await;
    drop(waiting);
    until_watchers(&client, modern, 0).await;

    // The host's maintenance switch unbinds the writes: list_changed, and they are gone.
    let mut changes = Changes::open(&client, &human, modern).await;
    changes.settle().await;
    assert!(tool_names(&client).await.contains(&"poll.vote".to_owned()));
    toggle_maintenance(pid);
    changes.next().await;
    let names = tool_names(&client).await;
    for write in ["polls.create", "poll.rename", "poll.vote", "polls.close"] {
        assert!(!names.iter().any(|n| n == write), "{write} in {names:?}");
    }
    assert!(names.iter().any(|n| n == "polls.wait"), "{names:?}");
    // In the catalog, but not bound: the runtime answers.
    let unbound = client
        .call_tool(call("poll.vote", json!({"pollId": "p1", "option": 0})))
        .await
        .unwrap();
    assert_eq!(code(&unbound), "CAPABILITY_UNBOUND");
    // And bound again.
    toggle_maintenance(pid);
    changes.next().await;
    assert!(tool_names(&client).await.contains(&"poll.vote".to_owned()));
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
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = transport.id().unwrap();
        let human = Human::default();
        let client = human
            .clone()
            .serve_with_lifecycle(transport, lifecycle(modern))
            .await
            .unwrap();
        story(client, human, modern, pid).await;
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

/// `polls -- mcp-http 127.0.0.1:PORT ARGS...` on a free loopback port, listening.
async fn serve_http(args: &[&str]) -> (Server, String) {
    // A free loopback port (bound and released; the example binds it again).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = std::process::Command::new(example_binary())
        .arg("mcp-http")
        .arg(format!("127.0.0.1:{port}"))
        .args(args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(Server)
        .unwrap();
    let mut up = false;
    for _ in 0..200 {
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
    (server, format!("http://127.0.0.1:{port}/mcp"))
}

/// A client of `uri` in the revision asked for. A connection refused or reset at the very
/// first request (the server process still starting behind its socket on a loaded machine)
/// is tried again, a few times; any other failure, or a server that never answers, fails the
/// test.
async fn connect(uri: &str, human: &Human, modern: bool) -> RunningService<RoleClient, Human> {
    let mut attempts = 0;
    loop {
        let transport = StreamableHttpClientTransport::from_uri(uri.to_owned());
        match human
            .clone()
            .serve_with_lifecycle(transport, lifecycle(modern))
            .await
        {
            Ok(client) => return client,
            Err(ClientInitializeError::TransportError { .. }) if attempts < 5 => {
                attempts += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("initialize failed: {error}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polls_over_mcp_on_http() {
    for modern in [false, true] {
        let (server, uri) = serve_http(&[]).await;
        let human = Human::default();
        let client = connect(&uri, &human, modern).await;
        let pid = server.0.id();
        story(client, human, modern, pid).await;
        drop(server);
    }
}

/// Two instances, `polls -- mcp-http ADDR --database URL`, on one PostgreSQL schema of this
/// test's own (skipped with one line without `RCIP_TEST_POSTGRES_URL`): a poll created
/// through one is listed, voted on and read through the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_database_serve_the_same_polls() {
    let Ok(url) = std::env::var("RCIP_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the PostgreSQL tests"
        );
        eprintln!("skipped: polls on PostgreSQL (RCIP_TEST_POSTGRES_URL not set)");
        return;
    };
    let schema = format!("rcip_polls_{}", std::process::id());
    let admin = |sql: String| {
        let url = url.clone();
        async move {
            let (client, connection) =
                rcip_database::tokio_postgres::connect(&url, rcip_database::tokio_postgres::NoTls)
                    .await
                    .unwrap();
            tokio::spawn(connection);
            client.batch_execute(&sql).await.unwrap();
        }
    };
    admin(format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .await;
    let separator = if url.contains('?') { '&' } else { '?' };
    let database = format!("{url}{separator}options=-c%20search_path%3D{schema}");
    let (one, uri_one) = serve_http(&["--database", &database]).await;
    let (two, uri_two) = serve_http(&["--database", &database]).await;
    let human = Human::default();
    let (a, b) = (
        connect(&uri_one, &human, false).await,
        connect(&uri_two, &human, true).await,
    );

    let created = a
        .call_tool(call(
            "polls.create",
            json!({"question": "Lunch?", "options": ["Pizza", "Sushi"]}),
        ))
        .await
        .unwrap();
    assert_eq!(created.structured_content, Some(json!({"pollId": "p1"})));
    let listed = b.call_tool(call("polls.list", json!({}))).await.unwrap();
    assert_eq!(
        listed.structured_content,
        Some(json!([{"id": "p1", "question": "Lunch?", "closed": false, "watchers": 0}])),
        "listed through the other instance"
    );
    let voted = b
        .call_tool(call("poll.vote", json!({"pollId": "p1", "option": 1})))
        .await
        .unwrap();
    assert_eq!(
        voted.structured_content,
        Some(json!({"pollId": "p1", "votes": [0, 1]}))
    );
    let read = a
        .call_tool(call("poll.results", json!({"pollId": "p1"})))
        .await
        .unwrap();
    assert_eq!(
        read.structured_content,
        Some(json!({"pollId": "p1", "votes": [0, 1]})),
        "the vote made through the other instance"
    );
    drop((a, b, one, two));
    admin(format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
}
