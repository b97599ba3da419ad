//! `/mcp` over real HTTP on 127.0.0.1 with rmcp's client, in both revisions (2025-11-25
//! with `initialize`, 2026-07-28 with `server/discover`): the registry's operations as
//! tools (dots as underscores, reads read-only), a read, a command, a 409 as `isError` with
//! the platform's code, the credential's workspace, 401 with the metadata of the `/mcp`
//! resource, and sessions that answer only the credential that opened them.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::start;
use rcip_platform::{operations, tool_name};
use rcip_server::Limits;
use rcip_test_support::RawAnswer;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

async fn client(base: &str, token: &str, modern: bool) -> Client {
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp")).auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    if modern {
        ().serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap()
    } else {
        ().serve(transport).await.unwrap()
    }
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

/// The structured content of a result that must not be an error.
fn content(result: &CallToolResult) -> &Value {
    assert_eq!(result.is_error, Some(false), "{result:?}");
    result.structured_content.as_ref().unwrap()
}

/// The platform's code of an `isError` result. Its one text block (no `structuredContent`,
/// which the tool's output schema would not admit) is `EXECUTION_FAILED: message`: the
/// runtime reports a failed invocation whose public message starts with the platform's code.
fn platform_code(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert!(result.structured_content.is_none(), "{result:?}");
    let [block] = result.content.as_slice() else {
        panic!("not one text block: {result:?}")
    };
    let text = &block.as_text().unwrap().text;
    let message = text
        .strip_prefix("EXECUTION_FAILED: ")
        .unwrap_or_else(|| panic!("{text}"));
    let (code, _) = message
        .split_once(": ")
        .unwrap_or_else(|| panic!("{message}"));
    code.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_over_mcp_in_both_revisions() {
    let s = start(Limits::default()).await;
    s.world().await;
    let note = s.note("ada", "r1").await;
    let record_id = note["id"].as_str().unwrap().to_owned();
    for (round, modern) in [false, true].into_iter().enumerate() {
        let mcp = client(&s.base, "bot", modern).await;
        let tools = mcp.list_all_tools().await.unwrap();
        let names: Vec<String> = tools.iter().map(|tool| tool.name.to_string()).collect();
        let expected: Vec<String> = operations()
            .iter()
            .map(|spec| tool_name(spec.name))
            .collect();
        assert_eq!(names, expected, "modern: {modern}");
        let get = tools.iter().find(|tool| tool.name == "record_get").unwrap();
        assert_eq!(get.annotations.as_ref().unwrap().read_only_hint, Some(true));
        let execute = tools
            .iter()
            .find(|tool| tool.name == "command_execute")
            .unwrap();
        assert_ne!(
            execute.annotations.as_ref().unwrap().read_only_hint,
            Some(true)
        );

        let read = mcp
            .call_tool(call(
                "record_get",
                json!({"workspace_id": "acme", "record_id": record_id}),
            ))
            .await
            .unwrap();
        assert_eq!(content(&read)["data"]["text"], "hello");
        let revision = content(&read)["revision"].as_u64().unwrap();
        // A stale revision: the platform's 409, as a tool error with its code.
        let stale = mcp
            .call_tool(call(
                "record_update",
                json!({"workspace_id": "acme", "record_id": record_id,
                "expected_revision": revision + 5, "patch": {"set": {"text": "late"}},
                "idempotency_key": format!("stale-{round}")}),
            ))
            .await
            .unwrap();
        assert_eq!(platform_code(&stale), "STALE_REVISION");
        mcp.cancel().await.unwrap();
    }
    // A command, executed by the agent over MCP, as the change feed records it.
    let mcp = client(&s.base, "bot", true).await;
    let closed = mcp
        .call_tool(call(
            "command_execute",
            json!({"workspace_id": "acme", "record_id": record_id,
            "command": "close", "expected_revision": 1, "idempotency_key": "x1"}),
        ))
        .await
        .unwrap();
    assert_eq!(content(&closed)["state"], "closed");
    let history = s
        .ok(
            "ada",
            "record.history",
            json!({"workspace_id": "acme", "record_id": record_id}),
        )
        .await;
    let last = history["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["actor"]["id"], "bot", "{last:#}");
    mcp.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_credential_decides_over_mcp_as_over_rest() {
    let s = start(Limits::default()).await;
    s.world().await;
    s.bot_in_other().await;
    // The credential limited to acme reaches no other workspace, member or not.
    let limited = client(&s.base, "bot-acme", true).await;
    let other = limited
        .call_tool(call("record_search", json!({"workspace_id": "other"})))
        .await
        .unwrap();
    assert_eq!(platform_code(&other), "WORKSPACE_NOT_FOUND");
    let acme = limited
        .call_tool(call("record_search", json!({"workspace_id": "acme"})))
        .await
        .unwrap();
    content(&acme);
    limited.cancel().await.unwrap();
    // The scopes are the credential's.
    let reader = client(&s.base, "bot-read", true).await;
    let refused = reader
        .call_tool(call(
            "record_create",
            json!({"workspace_id": "acme", "collection_id": "open",
            "namespace": "notes", "version": 1, "type": "note", "data": {"text": "no"},
            "idempotency_key": "n1"}),
        ))
        .await
        .unwrap();
    assert_eq!(platform_code(&refused), "INSUFFICIENT_SCOPE");
    reader.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unauthenticated_mcp_request_is_told_where_the_mcp_metadata_is() {
    let s = start(Limits::default()).await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    for token in [None, Some("forged")] {
        let mut request = s
            .client
            .post(s.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 401);
        let challenge = response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            challenge.starts_with(&format!(
                "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                s.base
            )),
            "{challenge}"
        );
        let body: Value = response.json().await.unwrap();
        assert!(body["error"]["code"].is_string(), "{body}");
    }
}

#[tokio::test]
async fn mcp_and_rest_draw_from_one_bucket_per_principal() {
    let s = start(Limits {
        rate_limit: Some(rcip_server::RateLimit {
            burst: 2,
            refill_every: std::time::Duration::from_secs(3600),
        }),
        ..Limits::default()
    })
    .await;
    assert_eq!(s.call("bot", "workspace.list", json!({})).await.status, 200);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    let post = || {
        s.client
            .post(s.url("/mcp"))
            .bearer_auth("bot")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.to_string())
            .send()
    };
    assert_eq!(post().await.unwrap().status().as_u16(), 200);
    let refused = post().await.unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "RATE_LIMITED");
}

/// A request on `/mcp` carrying `session`, with `token`: `post` (2025-11-25 `tools/list`),
/// `post-2026` (a 2026-07-28 `tools/list`), `get` (the event stream) or `delete`.
fn session_request(
    s: &common::TestServer,
    kind: &str,
    session: &str,
    token: &str,
) -> reqwest::RequestBuilder {
    let url = s.url("/mcp");
    let request = match kind {
        "post" => s
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()),
        "post-2026" => s
            .client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .body(
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}}}})
                .to_string(),
            ),
        "get" => s
            .client
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25"),
        "delete" => s
            .client
            .delete(url)
            .header("mcp-protocol-version", "2025-11-25"),
        other => panic!("no such request: {other}"),
    };
    request.header("mcp-session-id", session).bearer_auth(token)
}

/// An agent's session answers only its credential: another workspace's agent, and the same
/// agent under a credential for every workspace, carrying its session id, get exactly the
/// answer an unknown session id gets (`404 Not Found: Session not found`) on `POST`, `GET`
/// (the event stream), `DELETE` and a 2026-07-28 `POST`; the owner's session works after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_answers_only_the_credential_that_opened_it() {
    let s = start(Limits::default()).await;
    s.world().await;
    s.bot_in_other().await;
    let post = |session: Option<&str>, body: Value| {
        let request = s
            .client
            .post(s.url("/mcp"))
            .bearer_auth("bot-acme")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        match session {
            Some(session) => request
                .header("mcp-protocol-version", "2025-11-25")
                .header("mcp-session-id", session),
            None => request,
        }
        .send()
    };
    let opened = post(
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
    )
    .await
    .unwrap();
    assert_eq!(opened.status().as_u16(), 200);
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    opened.bytes().await.unwrap();
    let initialized = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    assert!(initialized.status().is_success());

    let unknown = RawAnswer::of(session_request(&s, "post", "no-such-session", "rival")).await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    // rmcp's plain-text answer, in the service's one error body.
    assert_eq!(
        unknown.body,
        r#"{"error":{"code":"NOT_FOUND","message":"Not Found: Session not found"}}"#
    );
    for kind in ["post", "post-2026", "get", "delete"] {
        assert_eq!(
            RawAnswer::of(session_request(&s, kind, "no-such-session", "rival")).await,
            unknown,
            "{kind}"
        );
        for token in ["rival", "bot"] {
            let foreign = RawAnswer::of(session_request(&s, kind, &session, token)).await;
            assert_eq!(foreign, unknown, "{kind} with {token}");
        }
    }

    // The owner's session is whole: a request, its event stream, its end.
    let listed = session_request(&s, "post", &session, "bot-acme")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status().as_u16(), 200);
    let body = listed.text().await.unwrap();
    assert!(body.contains("record_get"), "{body}");
    let stream = session_request(&s, "get", &session, "bot-acme")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    drop(stream);
    let ended = session_request(&s, "delete", &session, "bot-acme")
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status().as_u16(), 204);
    assert_eq!(
        RawAnswer::of(session_request(&s, "post", &session, "bot-acme")).await,
        unknown
    );
}
