//! The bridge over streamable HTTP on 127.0.0.1:0: rmcp's client in both revisions, raw
//! 2026-07-28 requests for the security cases, Origin and bearer checks.
#![allow(clippy::unwrap_used)]

mod common;
mod duplex;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use rcip_mcp::rmcp::ServiceExt;
use rcip_mcp::rmcp::model::{ProtocolVersion, SubscriptionFilter};
use rcip_mcp::rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rcip_mcp::rmcp::transport::StreamableHttpClientTransport;
use rcip_mcp::rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rcip_mcp::{AuthRejection, HttpOptions, SessionOwner, SessionStore, SessionStoreError};
use rcip_runtime::{BoxFuture, Principal};
use rcip_test_support::RawAnswer;
use serde_json::{Value, json};

/// The test's bearer tokens: ada, bob, ada with another scope (another principal).
fn with_tokens(options: HttpOptions) -> HttpOptions {
    options.bearer_auth(|parts| {
        match parts
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
        {
            None => Ok(None),
            Some("Bearer token-ada") => Ok(Some(Principal::new("ada"))),
            Some("Bearer token-bob") => Ok(Some(Principal::new("bob"))),
            // Ada again, with another scope: another principal.
            Some("Bearer token-ada-admin") => Ok(Some(Principal::new("ada").with_scope("admin"))),
            Some(_) => Err(AuthRejection::new().with_challenge("Bearer realm=\"notes\"")),
        }
    })
}

async fn serve(app: &Arc<App>) -> SocketAddr {
    serve_with(app, with_tokens(HttpOptions::new())).await
}

async fn serve_with(app: &Arc<App>, options: HttpOptions) -> SocketAddr {
    let router = rcip_mcp::http_router(app.bridge.clone(), options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    addr
}

async fn http_client(addr: SocketAddr, human: Human, era: Era, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("http://{addr}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    match era {
        Era::Legacy => human.serve(transport).await.unwrap(),
        Era::Modern => human
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notes_app_over_http_in_both_eras() {
    for era in ERAS {
        let app = App::new();
        let addr = serve(&app).await;
        let human = Human::new(Answer::Approve);
        let client = http_client(addr, human.clone(), era, Some("token-ada")).await;
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 6, "{era:?}");
        assert_eq!(
            tools[2].annotations.as_ref().unwrap().destructive_hint,
            Some(true)
        );
        let read = client
            .call_tool(call("notes.list", json!({})))
            .await
            .unwrap();
        assert_eq!(read.structured_content, Some(json!({"notes": ["first"]})));
        // A write approved through the elicitation handler; the principal reached the handler.
        let added = client
            .call_tool(call("notes.add", json!({"text": "over http"})))
            .await
            .unwrap();
        assert_eq!(added.is_error, Some(false), "{era:?}: {added:?}");
        assert_eq!(human.asked(), 1);
        assert_eq!(app.last_principal.lock().unwrap().as_deref(), Some("ada"));
        // A destructive one declined.
        human.set(Answer::Decline);
        let declined = client
            .call_tool(call("notes.delete", json!({"text": "first"})))
            .await
            .unwrap();
        assert_eq!(code(&declined), "CONFIRMATION_DECLINED");
        // Invalid input.
        let invalid = client
            .call_tool(call("notes.add", json!({"text": 3})))
            .await
            .unwrap();
        assert_eq!(code(&invalid), "INPUT_INVALID");
        // The whole text: the code, the public message, one line per issue.
        assert_eq!(
            text(&invalid),
            "INPUT_INVALID: The capability input does not match its declared schema.\n\
             - /text: must be string (type)"
        );
        // An unbound capability.
        let unbound = client
            .call_tool(call("notes.archive", json!({})))
            .await
            .unwrap();
        assert_eq!(code(&unbound), "CAPABILITY_UNBOUND");
        // A handler's own text never reaches the result.
        let failed = client
            .call_tool(call("notes.fail", json!({})))
            .await
            .unwrap();
        assert!(!serde_json::to_string(&failed).unwrap().contains("hunter2"));
        // A slow call cancelled: the handler sees it.
        let seen = app.slow_cancelled.notified();
        let slow = tokio::time::timeout(
            Duration::from_millis(300),
            client.call_tool_once(call("notes.slow", json!({}))),
        )
        .await;
        assert!(slow.is_err());
        tokio::time::timeout(Duration::from_secs(5), seen)
            .await
            .unwrap();
        assert_eq!(app.notes(), ["first", "over http"]);
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_over_http() {
    // 2026-07-28: a listen stream.
    let app = App::new();
    let addr = serve(&app).await;
    let client = http_client(addr, Human::new(Answer::Approve), Era::Modern, None).await;
    let mut subscription = client
        .peer()
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    client
        .call_tool(call("notes.list", json!({})))
        .await
        .unwrap();
    let quiet = tokio::time::timeout(Duration::from_millis(300), subscription.next()).await;
    assert!(quiet.is_err(), "{quiet:?}");
    app.unbind("notes.list");
    let notification = tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let wire = serde_json::to_value(&notification).unwrap();
    assert_eq!(wire["method"], "notifications/tools/list_changed");
    client.cancel().await.unwrap();

    // 2025-11-25: the session's stream.
    let human = Human::new(Answer::Approve);
    let client = http_client(addr, human.clone(), Era::Legacy, None).await;
    client.list_all_tools().await.unwrap();
    // Give the client time to open its standalone stream.
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.unbind("notes.count");
    tokio::time::timeout(Duration::from_secs(5), human.list_changed_notify.notified())
        .await
        .unwrap();
    client.cancel().await.unwrap();
}

/// One raw 2026-07-28 `tools/call`: the JSON-RPC response as JSON.
async fn raw_call(
    addr: SocketAddr,
    token: &str,
    id: u64,
    params: Value,
) -> (reqwest::StatusCode, Value) {
    let name = params["name"].as_str().unwrap().to_owned();
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
    });
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .header("authorization", format!("Bearer {token}"))
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body = response.text().await.unwrap();
    let json = serde_json::from_str(&body).unwrap_or_else(|_| {
        // An SSE stream: the last data line is the response.
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .next_back()
            .unwrap_or(Value::Null)
    });
    (status, json)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_is_bound_to_its_principal() {
    let app = App::new();
    let addr = serve(&app).await;
    let arguments = json!({"text": "ada's"});
    let (_, first) = raw_call(
        addr,
        "token-ada",
        1,
        json!({"name": "notes.add", "arguments": arguments}),
    )
    .await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    assert!(first["result"]["inputRequests"]["confirm"].is_object());
    let retry = || {
        json!({
            "name": "notes.add",
            "arguments": arguments,
            "requestState": state,
            "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}
        })
    };
    // Bob replays ada's state: refused, nothing runs.
    let (_, bob) = raw_call(addr, "token-bob", 2, retry()).await;
    assert_eq!(bob["error"]["code"], -32602, "{bob}");
    assert_eq!(app.notes(), ["first"]);
    // Ada's own retry runs it.
    let (_, ada) = raw_call(addr, "token-ada", 3, retry()).await;
    assert_eq!(
        ada["result"]["structuredContent"],
        json!({"added": "ada's"}),
        "{ada}"
    );
    assert_eq!(app.last_principal.lock().unwrap().as_deref(), Some("ada"));
    // And only once.
    let (_, again) = raw_call(addr, "token-ada", 4, retry()).await;
    assert_eq!(again["error"]["code"], -32602, "{again}");
    assert_eq!(app.notes(), ["first", "ada's"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_origin_is_403_and_a_bad_token_401() {
    let app = App::new();
    let addr = serve(&app).await;
    let post = |origin: Option<&'static str>, token: Option<&'static str>| async move {
        let mut request = reqwest::Client::new()
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"}
                }
            }));
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(token) = token {
            request = request.header("authorization", token);
        }
        request.send().await.unwrap()
    };
    let evil = post(Some("http://evil.example"), None).await;
    assert_eq!(evil.status(), reqwest::StatusCode::FORBIDDEN);
    let local = post(Some("http://localhost:5173"), None).await;
    assert_eq!(local.status(), reqwest::StatusCode::OK);
    let none = post(None, None).await;
    assert_eq!(none.status(), reqwest::StatusCode::OK);
    let bad = post(None, Some("Bearer nope")).await;
    assert_eq!(bad.status(), reqwest::StatusCode::UNAUTHORIZED);
    assert_eq!(
        bad.headers().get("www-authenticate").unwrap(),
        "Bearer realm=\"notes\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_that_are_not_an_object_are_invalid_params() {
    let app = App::new();
    let addr = serve(&app).await;
    let (_, response) = raw_call(
        addr,
        "token-ada",
        1,
        json!({"name": "notes.list", "arguments": 5}),
    )
    .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    let (_, unknown) = raw_call(addr, "token-ada", 2, json!({"name": "notes.none"})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(unknown["error"]["message"], "Unknown tool: notes.none");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_disconnect_cancels_a_2026_call() {
    let app = App::new();
    let addr = serve(&app).await;
    let seen = app.slow_cancelled.notified();
    // The response never comes; dropping the request closes the connection.
    let call = tokio::time::timeout(
        Duration::from_millis(300),
        raw_call(
            addr,
            "token-ada",
            1,
            json!({"name": "notes.slow", "arguments": {}}),
        ),
    )
    .await;
    assert!(call.is_err());
    tokio::time::timeout(Duration::from_secs(5), seen)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_names_exactly_the_two_revisions() {
    let app = App::new();
    let addr = serve(&app).await;
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "server/discover",
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }}
        }))
        .send()
        .await
        .unwrap();
    let body: Value = response.json().await.unwrap();
    let result = &body["result"];
    assert_eq!(
        result["supportedVersions"],
        json!(["2025-11-25", "2026-07-28"]),
        "{body}"
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "notes-test"
    );
}

/// A 2025-11-25 session ended with `DELETE` is answered 204 (the Python SDK's client takes
/// 200 or 204 as a clean end; rmcp's own answer is 202) and is gone afterwards.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_session_is_204_and_gone() {
    let app = App::new();
    let addr = serve(&app).await;
    let http = reqwest::Client::new();
    let post = |session: Option<&str>, body: Value| {
        let mut request = http
            .post(format!("http://{addr}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", "Bearer token-ada")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send()
    };
    let initialized = post(
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await
    .unwrap();
    assert!(initialized.status().is_success());
    let session = initialized.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let deleted = http
        .delete(format!("http://{addr}/mcp"))
        .header("mcp-session-id", &session)
        .header("authorization", "Bearer token-ada")
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), reqwest::StatusCode::NO_CONTENT);
    let after = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await
    .unwrap();
    assert_eq!(after.status(), reqwest::StatusCode::NOT_FOUND);
}

/// rmcp's own streamable HTTP service over the same bridge, without rcip-mcp's layers: what
/// rmcp itself answers for a session it does not know.
async fn serve_rmcp_alone(app: &Arc<App>) -> SocketAddr {
    use rcip_mcp::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rcip_mcp::rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let bridge = app.bridge.clone();
    let service = StreamableHttpService::new(
        move || Ok(bridge.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_json_response(true),
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    addr
}

/// The requests a session takes: `POST` (a 2025-11-25 `tools/list`, or a 2026-07-28 one),
/// `GET` (the session's event stream) and `DELETE`, with a session id and a token.
#[derive(Clone, Copy, Debug)]
enum SessionRequest {
    Post,
    PostModern,
    Get,
    Delete,
}

fn session_request(
    addr: SocketAddr,
    kind: SessionRequest,
    session: &str,
    token: Option<&str>,
) -> reqwest::RequestBuilder {
    let url = format!("http://{addr}/mcp");
    let http = reqwest::Client::new();
    let request = match kind {
        SessionRequest::Post => http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})),
        SessionRequest::PostModern => http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/list")
            .json(
                &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}
                }}}),
            ),
        SessionRequest::Get => http
            .get(url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2025-11-25"),
        SessionRequest::Delete => http
            .delete(url)
            .header("mcp-protocol-version", "2025-11-25"),
    };
    let request = request.header("mcp-session-id", session);
    match token {
        Some(token) => request.header("authorization", format!("Bearer {token}")),
        None => request,
    }
}

/// A 2025-11-25 session opened with `token` (`initialize`, then `initialized`): its id.
async fn open_session(addr: SocketAddr, token: Option<&str>) -> String {
    let http = reqwest::Client::new();
    let mut request = http
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let initialized = request.send().await.unwrap();
    assert!(initialized.status().is_success());
    let session = initialized.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = initialized.bytes().await.unwrap();
    let mut notify = http
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", &session)
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    if let Some(token) = token {
        notify = notify.header("authorization", format!("Bearer {token}"));
    }
    assert!(notify.send().await.unwrap().status().is_success());
    session
}

/// Ada's session answers only ada: bob, ada with other scopes, and an anonymous caller,
/// carrying her session id, each get exactly what an unknown session id gets (rmcp's own
/// `404 Not Found: Session not found`), on `POST`, `GET`, `DELETE` and a 2026-07-28 `POST`;
/// her session works after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let app = App::new();
    let addr = serve(&app).await;
    let alone = serve_rmcp_alone(&app).await;
    let session = open_session(addr, Some("token-ada")).await;
    let unknown = "no-such-session";
    // rmcp's own answer to an unknown session id, on POST and GET.
    let rmcp_post =
        RawAnswer::of(session_request(alone, SessionRequest::Post, unknown, None)).await;
    let rmcp_get = RawAnswer::of(session_request(alone, SessionRequest::Get, unknown, None)).await;
    assert_eq!(rmcp_post.status, 404, "{rmcp_post:?}");
    assert_eq!(rmcp_get, rmcp_post);
    for kind in [
        SessionRequest::Post,
        SessionRequest::PostModern,
        SessionRequest::Get,
        SessionRequest::Delete,
    ] {
        let unknown_here =
            RawAnswer::of(session_request(addr, kind, unknown, Some("token-bob"))).await;
        assert_eq!(unknown_here, rmcp_post, "{kind:?}");
        for token in [Some("token-bob"), Some("token-ada-admin"), None] {
            let foreign = RawAnswer::of(session_request(addr, kind, &session, token)).await;
            assert_eq!(foreign, rmcp_post, "{kind:?} with {token:?}");
        }
    }
    // Ada's session is whole: a request, its event stream, and its end.
    let listed = session_request(addr, SessionRequest::Post, &session, Some("token-ada"))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), reqwest::StatusCode::OK);
    let body = listed.text().await.unwrap();
    assert!(body.contains("notes.list"), "{body}");
    let stream = session_request(addr, SessionRequest::Get, &session, Some("token-ada"))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), reqwest::StatusCode::OK);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    drop(stream);
    let ended = session_request(addr, SessionRequest::Delete, &session, Some("token-ada"))
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), reqwest::StatusCode::NO_CONTENT);
    let after = RawAnswer::of(session_request(
        addr,
        SessionRequest::Post,
        &session,
        Some("token-ada"),
    ))
    .await;
    assert_eq!(after, rmcp_post);
}

/// Without an authentication hook every caller is the same anonymous principal: a session
/// works as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anonymous_session_without_a_hook_works() {
    let app = App::new();
    let router = rcip_mcp::http_router(app.bridge.clone(), HttpOptions::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let session = open_session(addr, None).await;
    let listed = session_request(addr, SessionRequest::Post, &session, None)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), reqwest::StatusCode::OK);
    let ended = session_request(addr, SessionRequest::Delete, &session, None)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), reqwest::StatusCode::NO_CONTENT);
}

/// A call waiting for the host belongs to its principal: bob calling with ada's arguments
/// neither sees ada's outcome nor takes it; ada's retry gets it. Both revisions, clients
/// without elicitation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_awaited_outcome_goes_only_to_the_principal_that_called() {
    for era in [Era::Legacy, Era::Modern] {
        let app = App::new();
        let addr = serve(&app).await;
        let ada = http_client(addr, Human::without_elicitation(), era, Some("token-ada")).await;
        let bob = http_client(addr, Human::without_elicitation(), era, Some("token-bob")).await;
        let delete = || call("notes.delete", json!({"text": "first"}));
        let waiting = ada.call_tool(delete()).await.unwrap();
        assert_eq!(code(&waiting), rcip_mcp::APPROVAL_PENDING);
        let pending = app.runtime.host().pending_confirmations();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            pending[0].principal.as_ref().map(Principal::id),
            Some("ada")
        );
        app.runtime
            .host()
            .resolve_confirmation(&pending[0].confirmation.id, true)
            .await;
        // Bob, same tool, same arguments: a call of his own, waiting.
        let theirs = bob.call_tool(delete()).await.unwrap();
        assert_eq!(code(&theirs), rcip_mcp::APPROVAL_PENDING, "{era:?}");
        // Ada's outcome is still hers.
        let done = ada.call_tool(delete()).await.unwrap();
        assert_eq!(done.is_error, Some(false), "{era:?}: {done:?}");
        assert_eq!(done.structured_content, Some(json!({"deleted": "first"})));
        ada.cancel().await.unwrap();
        bob.cancel().await.unwrap();
    }
}

/// One stored session: its owner and its `initialize`, each once recorded.
type Stored = (Option<SessionOwner>, Option<Value>);

/// A deployment's shared sessions, in this test's memory, by id.
#[derive(Default)]
struct SharedSessions(std::sync::Mutex<HashMap<String, Stored>>);

impl SharedSessions {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Stored>) -> T) -> T {
        f(&mut self.0.lock().unwrap())
    }
}

impl SessionStore for SharedSessions {
    fn set_owner(&self, id: &str, owner: SessionOwner) -> BoxFuture<Result<(), SessionStoreError>> {
        self.with(|sessions| sessions.entry(id.to_owned()).or_default().0 = Some(owner));
        Box::pin(async { Ok(()) })
    }

    fn owner(&self, id: &str) -> BoxFuture<Result<Option<SessionOwner>, SessionStoreError>> {
        let owner = self.with(|sessions| sessions.get(id).and_then(|s| s.0.clone()));
        Box::pin(async move { Ok(owner) })
    }

    fn set_initialize(&self, id: &str, params: Value) -> BoxFuture<Result<(), SessionStoreError>> {
        self.with(|sessions| sessions.entry(id.to_owned()).or_default().1 = Some(params));
        Box::pin(async { Ok(()) })
    }

    fn initialize(&self, id: &str) -> BoxFuture<Result<Option<Value>, SessionStoreError>> {
        let params = self.with(|sessions| sessions.get(id).and_then(|s| s.1.clone()));
        Box::pin(async move { Ok(params) })
    }

    fn forget(&self, id: &str) -> BoxFuture<Result<(), SessionStoreError>> {
        self.with(|sessions| sessions.remove(id));
        Box::pin(async { Ok(()) })
    }
}

/// Two instances of one application sharing a session store: a session ada opened on one is
/// served by the other (rmcp restores it from the stored `initialize`), for ada only; ended
/// through the second, it is gone from the store. An instance without the store does not
/// know it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_on_one_instance_is_served_by_another() {
    let shared = Arc::new(SharedSessions::default());
    let sharing = || with_tokens(HttpOptions::new().session_store(shared.clone()));
    let apps = [App::new(), App::new(), App::new(), App::new()];
    let a = serve_with(&apps[0], sharing()).await;
    let b = serve_with(&apps[1], sharing()).await;
    let alone = serve(&apps[2]).await;
    let session = open_session(a, Some("token-ada")).await;
    let stored = shared
        .with(|sessions| sessions.get(&session).cloned())
        .unwrap();
    assert_eq!(
        stored.0,
        Some(SessionOwner::of(Some(&Principal::new("ada"))))
    );
    assert!(stored.1.is_some(), "the initialize is stored for a restore");

    let unknown = RawAnswer::of(session_request(b, SessionRequest::Post, "no-such", None)).await;
    assert_eq!(unknown.status, 404);
    // Another principal on the other instance: exactly an unknown session's answer.
    for token in [Some("token-bob"), Some("token-ada-admin"), None] {
        let foreign =
            RawAnswer::of(session_request(b, SessionRequest::Post, &session, token)).await;
        assert_eq!(foreign, unknown, "{token:?}");
    }
    let listed = session_request(b, SessionRequest::Post, &session, Some("token-ada"))
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), reqwest::StatusCode::OK);
    let body = listed.text().await.unwrap();
    assert!(body.contains("notes.list"), "{body}");
    // An instance that does not share sessions does not know it.
    let elsewhere = RawAnswer::of(session_request(
        alone,
        SessionRequest::Post,
        &session,
        Some("token-ada"),
    ))
    .await;
    assert_eq!(elsewhere.status, 404);

    let ended = session_request(b, SessionRequest::Delete, &session, Some("token-ada"))
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), reqwest::StatusCode::NO_CONTENT);
    assert!(shared.with(|sessions| !sessions.contains_key(&session)));
    let third = serve_with(&apps[3], sharing()).await;
    let after = RawAnswer::of(session_request(
        third,
        SessionRequest::Post,
        &session,
        Some("token-ada"),
    ))
    .await;
    assert_eq!(after, unknown);
}

/// A session store that fails every call (its database is down).
struct DownSessions;

impl SessionStore for DownSessions {
    fn set_owner(&self, _: &str, _: SessionOwner) -> BoxFuture<Result<(), SessionStoreError>> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }

    fn owner(&self, _: &str) -> BoxFuture<Result<Option<SessionOwner>, SessionStoreError>> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }

    fn set_initialize(&self, _: &str, _: Value) -> BoxFuture<Result<(), SessionStoreError>> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }

    fn initialize(&self, _: &str) -> BoxFuture<Result<Option<Value>, SessionStoreError>> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }

    fn forget(&self, _: &str) -> BoxFuture<Result<(), SessionStoreError>> {
        Box::pin(async { Err(SessionStoreError("down".into())) })
    }
}

/// With the shared store down, an instance still serves the sessions it opened itself, and
/// answers a session it cannot look up exactly as an unknown one: nothing is let through
/// unchecked, nothing crashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_session_store_refuses_what_it_cannot_check() {
    let apps = [App::new(), App::new()];
    let down = || with_tokens(HttpOptions::new().session_store(Arc::new(DownSessions)));
    let a = serve_with(&apps[0], down()).await;
    let b = serve_with(&apps[1], down()).await;
    let session = open_session(a, Some("token-ada")).await;
    let here = session_request(a, SessionRequest::Post, &session, Some("token-ada"))
        .send()
        .await
        .unwrap();
    assert_eq!(here.status(), reqwest::StatusCode::OK);
    let unknown = RawAnswer::of(session_request(a, SessionRequest::Post, "no-such", None)).await;
    let elsewhere = RawAnswer::of(session_request(
        b,
        SessionRequest::Post,
        &session,
        Some("token-ada"),
    ))
    .await;
    assert_eq!(elsewhere, unknown);
    assert_eq!(elsewhere.status, 404);
}

/// What an endpoint subscribed to hear notices with.
type Hear = Arc<dyn Fn(Value) + Send + Sync>;

/// Two instances' relays joined in this test's memory: what one publishes, the others hear.
#[derive(Default)]
struct Bus(std::sync::Mutex<Vec<(usize, Hear)>>);

/// One instance's end of a [`Bus`].
struct OnBus(Arc<Bus>, usize);

impl rcip_mcp::Relay for OnBus {
    fn publish(&self, notice: Value) -> BoxFuture<Result<(), SessionStoreError>> {
        let hearers: Vec<_> = self.0.0.lock().unwrap().clone();
        for (instance, hear) in hearers {
            if instance != self.1 {
                hear(notice.clone());
            }
        }
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self, hear: Hear) {
        self.0.0.lock().unwrap().push((self.1, hear));
    }
}

/// The capabilities of a raw client that answers elicitation forms.
const ELICITING: &str = r#"{"elicitation": {"form": {}}}"#;

/// An event stream read until `found` finds what it looks for in one event's data; the
/// stream stays readable.
async fn read_until<T>(stream: &mut reqwest::Response, found: impl Fn(&Value) -> Option<T>) -> T {
    let mut read = 0;
    rcip_test_support::read_stream_until(stream, Duration::from_secs(10), |text| {
        while let Some(end) = text[read..].find("\n\n") {
            let event = &text[read..read + end];
            read += end + 2;
            let data = event
                .lines()
                .find_map(|line| line.strip_prefix("data: "))
                .and_then(|data| serde_json::from_str::<Value>(data).ok());
            if let Some(value) = data.as_ref().and_then(&found) {
                return Some(value);
            }
        }
        None
    })
    .await
}

/// Two instances serve one session, and each asks its client to confirm a call. rmcp numbers
/// each instance's requests from 0, so without tags both questions would be id 0, and an
/// answer to one, posted to the other instance, would be taken there as the answer to its
/// own: one human's refusal deciding the other call. Each question's id names its instance,
/// and each answer decides only its own question, wherever it is posted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_answer_decides_only_its_own_question_across_instances() {
    let shared = Arc::new(SharedSessions::default());
    let bus = Arc::new(Bus::default());
    let apps = [App::new(), App::new()];
    let instance = |n: usize| {
        HttpOptions::new()
            .session_store(shared.clone())
            .relay(Arc::new(OnBus(bus.clone(), n)))
    };
    let a = serve_with(&apps[0], instance(0)).await;
    let b = serve_with(&apps[1], instance(1)).await;
    let session = rcip_test_support::mcp_session(a, ELICITING).await;
    let post = |addr: SocketAddr, body: Value| {
        rcip_test_support::mcp_post(addr, Some(&session), body.to_string()).send()
    };

    let add = |id: u64, text: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "notes.add", "arguments": {"text": text}}})
    };
    let question =
        |event: &Value| (event["method"] == "elicitation/create").then(|| event["id"].clone());
    let approval = || json!({"action": "accept", "content": {"confirm": true}});
    let mut on_a = post(a, add(10, "from a")).await.unwrap();
    let asked_by_a = read_until(&mut on_a, question).await;
    let mut on_b = post(b, add(11, "from b")).await.unwrap();
    let asked_by_b = read_until(&mut on_b, question).await;
    assert_ne!(asked_by_a, asked_by_b, "one id per question");
    for id in [&asked_by_a, &asked_by_b] {
        assert!(
            id.as_str().is_some_and(|id| id.starts_with("rcip.")),
            "{id}"
        );
    }

    // rmcp's own number for B's question, approved with the bare id (as a client that
    // rewrote ids might): it decides nothing, here or anywhere.
    let number: u64 = asked_by_b
        .as_str()
        .and_then(|id| id.rsplit('.').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let answer = |id: &Value, result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    let bare = answer(&json!(number), approval());
    assert_eq!(post(b, bare).await.unwrap().status(), 202);
    // The same number tagged for an instance that is neither, posted to each: the instance
    // posted to publishes it, the other hears it as somebody else's answer, and it decides
    // nothing (B's question would run on the approval, A's would fail on the decline).
    let elsewhere = json!(format!("rcip.elsewhere.{number}"));
    assert_eq!(
        post(a, answer(&elsewhere, approval()))
            .await
            .unwrap()
            .status(),
        202
    );
    let refusal = answer(&elsewhere, json!({"action": "decline"}));
    assert_eq!(post(b, refusal).await.unwrap().status(), 202);

    // B's question declined, the answer posted to A; then A's approved, posted to B.
    let declined = answer(&asked_by_b, json!({"action": "decline"}));
    assert_eq!(post(a, declined).await.unwrap().status(), 202);
    let result = |id: u64| move |event: &Value| (event["id"] == id).then(|| event.clone());
    let b_done = read_until(&mut on_b, result(11)).await;
    assert_eq!(b_done["result"]["isError"], true, "{b_done}");
    let approved = answer(&asked_by_a, approval());
    assert_eq!(post(b, approved).await.unwrap().status(), 202);
    let a_done = read_until(&mut on_a, result(10)).await;
    assert_eq!(
        a_done["result"]["structuredContent"],
        json!({"added": "from a"}),
        "{a_done}"
    );
    assert!(apps[0].notes().contains(&"from a".to_owned()));
    assert!(!apps[1].notes().contains(&"from b".to_owned()));

    // The usual case: a question answered on the instance that asked it. Its next question
    // has the next number of its own.
    let mut again = post(b, add(12, "again")).await.unwrap();
    let asked_again = read_until(&mut again, question).await;
    assert_ne!(asked_again, asked_by_b);
    let approved = answer(&asked_again, approval());
    assert_eq!(post(b, approved).await.unwrap().status(), 202);
    let done = read_until(&mut again, result(12)).await;
    assert_eq!(
        done["result"]["structuredContent"],
        json!({"added": "again"}),
        "{done}"
    );
}

/// A client that answers the confirmation question with something other than an elicitation
/// result (another request's result, an error) approves nothing: the call is declined, its
/// handler does not run, and the session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_is_no_elicitation_result_declines() {
    let app = App::new();
    let addr = serve_with(&app, HttpOptions::new()).await;
    let session = rcip_test_support::mcp_session(addr, ELICITING).await;
    let post =
        |body: Value| rcip_test_support::mcp_post(addr, Some(&session), body.to_string()).send();

    let question =
        |event: &Value| (event["method"] == "elicitation/create").then(|| event["id"].clone());
    let answers = [
        json!({"result": {"roots": []}}),
        json!({"result": {}}),
        json!({"error": {"code": -32603, "message": "no form here"}}),
    ];
    for (n, reply) in (20u64..).zip(answers) {
        let text = format!("case {n}");
        let call = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                          "params": {"name": "notes.add", "arguments": {"text": text}}});
        let mut stream = post(call).await.unwrap();
        let asked = read_until(&mut stream, question).await;
        let mut answer = reply.clone();
        answer["jsonrpc"] = json!("2.0");
        answer["id"] = asked;
        assert_eq!(post(answer).await.unwrap().status(), 202, "{reply}");
        let result = read_until(&mut stream, |event: &Value| {
            (event["id"] == n).then(|| event.clone())
        })
        .await;
        assert_eq!(result["result"]["isError"], true, "{reply}: {result}");
        let said = result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            said.starts_with("CONFIRMATION_DECLINED: "),
            "{reply}: {result}"
        );
        assert!(!app.notes().contains(&text), "{reply}");
    }
}
