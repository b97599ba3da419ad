//! Every auth rule of the service end to end, on the real router: `Server::router` with the
//! service's [`Credentials`], merged with [`console_router`] (as `rcip serve` builds it),
//! over a platform in memory and a SQLite token store, served on 127.0.0.1 and called with
//! a real HTTP client. Sessions come from a real ticket (`GET /console/sign-in`, then
//! `GET /console/session` for the CSRF token); JWTs are signed with the committed test keys.
//!
//! Each refusal is checked for its status, its stable code and, for a 401, the
//! `WWW-Authenticate` challenge naming the metadata of the resource that was called.
#![allow(clippy::unwrap_used, clippy::panic)]

mod support;

use std::sync::Arc;

use jsonwebtoken::Algorithm;
use rcip_database::SqliteTokenStore;
use rcip_platform::{MemoryDirectory, Platform};
use rcip_records::{Actor, Caller, DelegatedScope, Engine};
use rcip_server::tokens::{self, NewToken};
use rcip_server::{Credentials, CredentialsConfig, Server, console_router};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use support::{ISSUER, TempDb, b64, sign};

/// The metadata path of RFC 9728, below the base URL (and, for `/mcp`, followed by `/mcp`).
const METADATA: &str = "/.well-known/oauth-protected-resource";

/// A browser origin the service does not allow.
const FOREIGN_ORIGIN: &str = "http://evil.example";

/// The service as `rcip serve` builds it, with `acme` (ada owns it, bot is an agent member
/// with every scope, collection `main`) and `other` (eve owns it, bot is an agent member
/// with records:read), made through the platform directly.
struct App {
    _db: TempDb,
    base: String,
    credentials: Credentials,
    client: reqwest::Client,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for App {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One answer: status, error code (empty on success), the body and the challenge.
#[derive(Debug)]
struct Answer {
    status: u16,
    body: Value,
    challenge: Option<String>,
}

impl Answer {
    fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    /// Asserts a refusal with `status` and `code`: the error body, and the challenge exactly
    /// on a 401.
    fn refused(&self, status: u16, code: &str) {
        assert_eq!(
            (self.status, self.code()),
            (status, code),
            "{:#}",
            self.body
        );
        assert!(
            self.body["error"]["message"].is_string(),
            "no message: {:#}",
            self.body
        );
        if status != 401 {
            assert_eq!(self.challenge, None, "a {status} with a challenge");
        }
    }

    /// Asserts a 401 with `code` whose challenge names `metadata`, and says the token was
    /// invalid when one was presented (RFC 6750: not when there was no credential).
    fn unauthenticated(&self, code: &str, metadata: &str, token_presented: bool) {
        self.refused(401, code);
        let invalid = if token_presented {
            ", error=\"invalid_token\""
        } else {
            ""
        };
        assert_eq!(
            self.challenge.as_deref(),
            Some(format!("Bearer resource_metadata=\"{metadata}\"{invalid}").as_str()),
            "{code}"
        );
    }

    fn ok(&self) -> &Value {
        assert_eq!(self.status, 200, "{:#}", self.body);
        &self.body["result"]
    }
}

/// A console session: the cookie pair and its CSRF token.
struct Session {
    cookie: String,
    csrf: String,
}

async fn app() -> App {
    let db = TempDb::new();
    let store = Arc::new(SqliteTokenStore::open(&db.path).unwrap());
    let platform = Arc::new(
        Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
            .await
            .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    // The console is served by the service itself: its origin is the base URL's.
    let mut config = CredentialsConfig::new(base.clone());
    config.allowed_origins = vec![base.clone()];
    config.issuers = vec![support::issuer()];
    config.secure_cookie = false;
    let credentials = Credentials::new(config, store);
    let router = Server::new(
        Arc::clone(&platform),
        Arc::new(credentials.clone()),
        base.clone(),
    )
    .authorization_servers([ISSUER])
    .router()
    .merge(console_router(credentials.clone()));
    let task = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });

    let ada = Caller::human(Actor::new("ada"));
    let eve = Caller::human(Actor::new("eve"));
    let every_scope = DelegatedScope::ALL.map(DelegatedScope::as_str);
    for (caller, operation, arguments) in [
        (
            &ada,
            "workspace.create",
            json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
        ),
        (
            &ada,
            "member.add",
            json!({"workspace_id": "acme", "principal_id": "bot", "kind": "agent",
                   "scopes": every_scope, "idempotency_key": "m1"}),
        ),
        (
            &ada,
            "collection.create",
            json!({"workspace_id": "acme", "collection_id": "main", "name": "Main",
                   "idempotency_key": "c1"}),
        ),
        (
            &eve,
            "workspace.create",
            json!({"workspace_id": "other", "name": "Other", "idempotency_key": "w1"}),
        ),
        (
            &eve,
            "member.add",
            json!({"workspace_id": "other", "principal_id": "bot", "kind": "agent",
                   "scopes": ["records:read"], "idempotency_key": "m1"}),
        ),
    ] {
        platform.call(caller, operation, arguments).await.unwrap();
    }
    App {
        _db: db,
        base,
        credentials,
        client: reqwest::Client::new(),
        task,
    }
}

impl App {
    /// The metadata URL a 401 on REST names.
    fn rest_metadata(&self) -> String {
        format!("{}{METADATA}", self.base)
    }

    /// The metadata URL a 401 on `/mcp` names.
    fn mcp_metadata(&self) -> String {
        format!("{}{METADATA}/mcp", self.base)
    }

    /// `POST /v1/operations` with `headers`.
    async fn call(&self, headers: &[(&str, &str)], operation: &str, arguments: Value) -> Answer {
        let mut request = self
            .client
            .post(format!("{}/v1/operations", self.base))
            .header("content-type", "application/json")
            .body(json!({"operation": operation, "arguments": arguments}).to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        answer(request.send().await.unwrap()).await
    }

    /// A raw JSON-RPC `initialize` on `/mcp` with `headers`.
    async fn mcp_initialize(&self, headers: &[(&str, &str)]) -> Answer {
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "auth-rules", "version": "1"}}});
        let mut request = self
            .client
            .post(format!("{}/mcp", self.base))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize.to_string());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let challenge = challenge(&response);
        let text = response.text().await.unwrap();
        // A refusal is the error body; a success is MCP's (JSON or an SSE event).
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Answer {
            status,
            body,
            challenge,
        }
    }

    /// Signs `principal` in with a fresh ticket and fetches the session's CSRF token.
    async fn session(&self, principal: &str) -> Session {
        let store = self.credentials.store().as_ref();
        let (cookie, _) = support::sign_in(&self.client, &self.base, store, principal).await;
        let csrf = support::csrf_of(&self.client, &self.base, &cookie).await;
        Session { cookie, csrf }
    }

    /// An opaque token for agent `principal` in `workspace` with `scopes`: its secret and id.
    async fn opaque(
        &self,
        principal: &str,
        workspace: &str,
        scopes: &[DelegatedScope],
    ) -> (String, String) {
        let created = tokens::create_token(
            self.credentials.store().as_ref(),
            NewToken {
                principal: principal.into(),
                workspace: workspace.into(),
                scopes: scopes.to_vec(),
                label: None,
            },
        )
        .await
        .unwrap();
        (created.secret, created.info.id)
    }

    /// The resource a metadata document names (the audience its clients ask tokens for).
    async fn resource_of(&self, metadata: &str) -> String {
        let response = self.client.get(metadata).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let document: Value = response.json().await.unwrap();
        assert_eq!(document["authorization_servers"], json!([ISSUER]));
        document["resource"].as_str().unwrap().to_owned()
    }
}

impl Session {
    /// The headers of a request of this session's page: cookie, Origin and CSRF token.
    fn headers<'a>(&'a self, origin: &'a str) -> Vec<(&'a str, &'a str)> {
        vec![
            ("cookie", &self.cookie),
            ("origin", origin),
            ("x-csrf-token", &self.csrf),
        ]
    }
}

fn challenge(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
}

async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let challenge = challenge(&response);
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("a {status} answer that is not JSON: {text:?}"));
    Answer {
        status,
        body,
        challenge,
    }
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// A JWT of the test issuer for agent `bot` with `scope`, for `audience`, expiring at `exp`.
fn jwt(key_file: &str, audience: &str, exp: i64, scope: &str) -> String {
    let now = tokens::now();
    sign(
        Algorithm::RS256,
        key_file,
        Some("rsa-1"),
        &json!({"iss": ISSUER, "aud": audience, "sub": "bot", "exp": exp, "nbf": now - 10,
                "scope": scope}),
    )
}

fn fresh_jwt(audience: &str, scope: &str) -> String {
    jwt("rsa-private.pem", audience, tokens::now() + 600, scope)
}

fn get(workspace: &str) -> Value {
    json!({"workspace_id": workspace})
}

#[tokio::test]
async fn cross_workspace_read_by_a_session_human_not_a_member_is_404() {
    let app = app().await;
    let ada = app.session("ada").await;
    let headers = ada.headers(&app.base);
    assert_eq!(
        app.call(&headers, "workspace.get", get("acme")).await.ok()["workspace_id"],
        "acme"
    );
    // eve's workspace answers as one that does not exist: ada learns nothing.
    for workspace in ["other", "nowhere"] {
        app.call(&headers, "workspace.get", get(workspace))
            .await
            .refused(404, "WORKSPACE_NOT_FOUND");
        app.call(&headers, "collection.list", get(workspace))
            .await
            .refused(404, "WORKSPACE_NOT_FOUND");
    }
    let listed = app.call(&headers, "workspace.list", json!({})).await;
    let ids: Vec<&str> = listed.ok()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["workspace_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["acme"]);
}

#[tokio::test]
async fn cross_workspace_read_with_an_opaque_token_of_another_workspace_is_404() {
    let app = app().await;
    let read = [DelegatedScope::RecordsRead];
    // bot is a member of both workspaces; the token reaches `acme` only.
    let (acme_token, _) = app.opaque("bot", "acme", &read).await;
    let auth = bearer(&acme_token);
    let headers = [("authorization", auth.as_str())];
    assert_eq!(
        app.call(&headers, "workspace.get", get("acme")).await.ok()["workspace_id"],
        "acme"
    );
    app.call(&headers, "workspace.get", get("other"))
        .await
        .refused(404, "WORKSPACE_NOT_FOUND");
    app.call(&headers, "collection.list", get("other"))
        .await
        .refused(404, "WORKSPACE_NOT_FOUND");
    // The membership is there: a token bound to `other` reads it.
    let (other_token, _) = app.opaque("bot", "other", &read).await;
    let auth = bearer(&other_token);
    let answer = app
        .call(
            &[("authorization", auth.as_str())],
            "workspace.get",
            get("other"),
        )
        .await;
    assert_eq!(answer.ok()["workspace_id"], "other");
}

#[tokio::test]
async fn a_session_request_with_a_missing_or_wrong_csrf_token_is_403() {
    let app = app().await;
    let ada = app.session("ada").await;
    let origin = app.base.as_str();
    assert_eq!(
        app.call(&ada.headers(origin), "workspace.get", get("acme"))
            .await
            .status,
        200
    );
    let without = [("cookie", ada.cookie.as_str()), ("origin", origin)];
    app.call(&without, "workspace.get", get("acme"))
        .await
        .refused(403, "CSRF_REQUIRED");
    // Another session's token, and text that is no token.
    let bob = app.session("bob").await;
    assert_ne!(bob.csrf, ada.csrf);
    for wrong in [bob.csrf.as_str(), "not-a-token"] {
        let headers = [
            ("cookie", ada.cookie.as_str()),
            ("origin", origin),
            ("x-csrf-token", wrong),
        ];
        app.call(&headers, "workspace.get", get("acme"))
            .await
            .refused(403, "CSRF_INVALID");
    }
    // Nothing ran: a refused write leaves no workspace behind.
    let create = json!({"workspace_id": "csrf", "name": "C", "idempotency_key": "k"});
    app.call(&without, "workspace.create", create.clone())
        .await
        .refused(403, "CSRF_REQUIRED");
    app.call(&ada.headers(origin), "workspace.get", get("csrf"))
        .await
        .refused(404, "WORKSPACE_NOT_FOUND");
}

#[tokio::test]
async fn a_session_request_from_a_wrong_origin_is_403() {
    let app = app().await;
    let ada = app.session("ada").await;
    assert_eq!(
        app.call(&ada.headers(&app.base), "workspace.get", get("acme"))
            .await
            .status,
        200
    );
    let trailing_slash = format!("{}/", app.base);
    for origin in [FOREIGN_ORIGIN, trailing_slash.as_str(), "null"] {
        app.call(&ada.headers(origin), "workspace.get", get("acme"))
            .await
            .refused(403, "ORIGIN_REFUSED");
    }
    // No Origin at all is refused too (a session request must say where it comes from).
    let headers = [
        ("cookie", ada.cookie.as_str()),
        ("x-csrf-token", ada.csrf.as_str()),
    ];
    app.call(&headers, "workspace.get", get("acme"))
        .await
        .refused(403, "ORIGIN_REFUSED");
}

#[tokio::test]
async fn no_credentials_is_401_with_the_metadata_header() {
    let app = app().await;
    app.call(&[], "workspace.list", json!({}))
        .await
        .unauthenticated("UNAUTHENTICATED", &app.rest_metadata(), false);
    app.mcp_initialize(&[])
        .await
        .unauthenticated("UNAUTHENTICATED", &app.mcp_metadata(), false);
    // The challenge leads to documents naming the resources and the issuer.
    assert_eq!(app.resource_of(&app.rest_metadata()).await, app.base);
    assert_eq!(
        app.resource_of(&app.mcp_metadata()).await,
        format!("{}/mcp", app.base)
    );
}

#[tokio::test]
async fn a_session_is_no_credential_on_mcp() {
    let app = app().await;
    let ada = app.session("ada").await;
    app.mcp_initialize(&ada.headers(&app.base))
        .await
        .unauthenticated("UNAUTHENTICATED", &app.mcp_metadata(), false);
}

#[tokio::test]
async fn forged_expired_and_wrong_audience_jwts_are_401() {
    let app = app().await;
    let audience = app.resource_of(&app.rest_metadata()).await;
    let good = fresh_jwt(&audience, "records:read");
    let auth = bearer(&good);
    assert_eq!(
        app.call(&[("authorization", &auth)], "workspace.get", get("acme"))
            .await
            .ok()["workspace_id"],
        "acme"
    );
    let now = tokens::now();
    let cases = [
        (
            "signed with a key the issuer does not have",
            jwt(
                "rsa-other-private.pem",
                &audience,
                now + 600,
                "records:read",
            ),
            "TOKEN_SIGNATURE_INVALID",
        ),
        (
            "a good signature over altered claims",
            {
                // The claims of `good` with another subject, its signature kept.
                let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
                let other = json!({"iss": ISSUER, "aud": audience, "sub": "eve",
                                   "exp": now + 600, "scope": "records:read"});
                parts[1] = b64(other.to_string().as_bytes());
                parts.join(".")
            },
            "TOKEN_SIGNATURE_INVALID",
        ),
        (
            "expired an hour ago",
            jwt("rsa-private.pem", &audience, now - 3600, "records:read"),
            "TOKEN_EXPIRED",
        ),
        (
            "for another resource",
            fresh_jwt("https://other.example", "records:read"),
            "TOKEN_AUDIENCE_INVALID",
        ),
        (
            "for /mcp, presented on REST",
            fresh_jwt(&format!("{audience}/mcp"), "records:read"),
            "TOKEN_AUDIENCE_INVALID",
        ),
        (
            "for no audience at all (no `aud`)",
            sign(
                Algorithm::RS256,
                "rsa-private.pem",
                Some("rsa-1"),
                &json!({"iss": ISSUER, "sub": "bot", "exp": now + 600, "nbf": now - 10,
                        "scope": "records:read"}),
            ),
            "TOKEN_AUDIENCE_INVALID",
        ),
    ];
    for (what, token, code) in cases {
        let auth = bearer(&token);
        let answer = app
            .call(&[("authorization", &auth)], "workspace.get", get("acme"))
            .await;
        assert_eq!(answer.code(), code, "{what}");
        answer.unauthenticated(code, &app.rest_metadata(), true);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jwt_on_mcp_must_carry_the_mcp_audience() {
    let app = app().await;
    let rest_audience = app.resource_of(&app.rest_metadata()).await;
    let mcp_audience = app.resource_of(&app.mcp_metadata()).await;
    assert_eq!(mcp_audience, format!("{rest_audience}/mcp"));

    let rest_jwt = bearer(&fresh_jwt(&rest_audience, "records:read"));
    app.mcp_initialize(&[("authorization", &rest_jwt)])
        .await
        .unauthenticated("TOKEN_AUDIENCE_INVALID", &app.mcp_metadata(), true);

    let mcp_jwt = fresh_jwt(&mcp_audience, "records:read");
    let auth = bearer(&mcp_jwt);
    let raw = app.mcp_initialize(&[("authorization", &auth)]).await;
    assert_eq!(raw.status, 200, "{:#}", raw.body);
    // And a whole session with rmcp's client: initialize, then a read as the JWT's agent.
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base))
        .auth_header(mcp_jwt);
    let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.unwrap();
    let Value::Object(arguments) = get("acme") else {
        unreachable!()
    };
    let read = client
        .call_tool(CallToolRequestParams::new("workspace_get").with_arguments(arguments))
        .await
        .unwrap();
    assert_ne!(read.is_error, Some(true), "{read:?}");
    assert_eq!(
        read.structured_content.as_ref().unwrap()["workspace_id"],
        "acme"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_revoked_token_is_401() {
    let app = app().await;
    let (secret, id) = app
        .opaque("bot", "acme", &[DelegatedScope::RecordsRead])
        .await;
    let auth = bearer(&secret);
    let headers = [("authorization", auth.as_str())];
    assert_eq!(
        app.call(&headers, "workspace.get", get("acme"))
            .await
            .status,
        200
    );
    assert_eq!(app.mcp_initialize(&headers).await.status, 200);
    assert!(
        tokens::revoke_token(app.credentials.store().as_ref(), &id)
            .await
            .unwrap()
    );
    app.call(&headers, "workspace.get", get("acme"))
        .await
        .unauthenticated("INVALID_TOKEN", &app.rest_metadata(), true);
    app.mcp_initialize(&headers)
        .await
        .unauthenticated("INVALID_TOKEN", &app.mcp_metadata(), true);
}

#[tokio::test]
async fn an_agent_without_the_scope_is_403() {
    let app = app().await;
    // bot's membership of acme delegates every scope; these credentials delegate reads only.
    let (secret, _) = app
        .opaque("bot", "acme", &[DelegatedScope::RecordsRead])
        .await;
    let opaque = bearer(&secret);
    let audience = app.resource_of(&app.rest_metadata()).await;
    let jwt = bearer(&fresh_jwt(&audience, "records:read"));
    for auth in [&opaque, &jwt] {
        let headers = [("authorization", auth.as_str())];
        assert_eq!(
            app.call(&headers, "collection.list", get("acme"))
                .await
                .status,
            200
        );
        let create = json!({"workspace_id": "acme", "collection_id": "more", "name": "More",
                            "idempotency_key": "c2"});
        let answer = app.call(&headers, "collection.create", create).await;
        answer.refused(403, "INSUFFICIENT_SCOPE");
        assert!(
            answer.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("collections:manage"),
            "{:#}",
            answer.body
        );
    }
}

#[tokio::test]
async fn a_human_only_operation_with_a_bearer_token_is_403() {
    let app = app().await;
    let every_scope = DelegatedScope::ALL;
    let (secret, _) = app.opaque("bot", "acme", &every_scope).await;
    let opaque = bearer(&secret);
    let audience = app.resource_of(&app.rest_metadata()).await;
    let scopes: Vec<&str> = every_scope.iter().map(|scope| scope.as_str()).collect();
    let jwt = bearer(&fresh_jwt(&audience, &scopes.join(" ")));
    // Console-only, whatever the scopes: creating a workspace, adding a human to one.
    for auth in [&opaque, &jwt] {
        let headers = [("authorization", auth.as_str())];
        app.call(
            &headers,
            "workspace.create",
            json!({"workspace_id": "botland", "name": "B", "idempotency_key": "k"}),
        )
        .await
        .refused(403, "CONSOLE_ONLY");
        app.call(
            &headers,
            "member.add",
            json!({"workspace_id": "acme", "principal_id": "mallory", "kind": "human",
                   "idempotency_key": "h1"}),
        )
        .await
        .refused(403, "CONSOLE_ONLY");
    }
    // A human signed in to the console may.
    let ada = app.session("ada").await;
    let created = app
        .call(
            &ada.headers(&app.base),
            "workspace.create",
            json!({"workspace_id": "botland", "name": "B", "idempotency_key": "k"}),
        )
        .await;
    assert_eq!(created.ok()["workspace_id"], "botland");
}
