//! The credential rules over real HTTP on 127.0.0.1: a small app with [`Credentials`] as a
//! middleware in front of an echo route (REST and MCP doors), beside the console routes,
//! on a SQLite token store; a real HTTP client.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rcip_database::SqliteTokenStore;
use rcip_records::DelegatedScope;
use rcip_server::tokens::{self, NewToken, TokenStore};
use rcip_server::{Authenticate, Authenticated, Door};
use rcip_server::{Credentials, CredentialsConfig, console_router};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{ISSUER, TempDb, b64, fixture, sign};

const ORIGIN: &str = "https://app.example";
const RESOURCE: &str = "https://rcip.example";
/// The audience of `/mcp`, a resource of its own: this resource followed by `/mcp`.
const MCP_AUDIENCE: &str = "https://rcip.example/mcp";

fn config(secure_cookie: bool) -> CredentialsConfig {
    let mut config = CredentialsConfig::new(RESOURCE);
    config.allowed_origins = vec![ORIGIN.into()];
    config.issuers = vec![support::issuer()];
    config.secure_cookie = secure_cookie;
    config
}

async fn guard(
    State((credentials, door)): State<(Credentials, Door)>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    match credentials.authenticate(&parts, door).await {
        Ok(authenticated) => {
            parts.extensions.insert(authenticated);
            next.run(Request::from_parts(parts, body)).await
        }
        Err(refusal) => (
            refusal.status,
            axum::Json(json!({"error": {"code": refusal.code, "message": refusal.message}})),
        )
            .into_response(),
    }
}

async fn echo(request: Request) -> axum::Json<Value> {
    let authenticated = request.extensions().get::<Authenticated>().unwrap();
    let caller = &authenticated.caller;
    axum::Json(json!({
        "principal": caller.id(),
        "kind": caller.kind.as_str(),
        "scopes": caller.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "workspace": authenticated.workspace,
    }))
}

/// One instance: the echo behind the credentials on both doors, and the console.
struct Instance {
    base: String,
    credentials: Credentials,
}

async fn serve(config: CredentialsConfig, store: Arc<dyn TokenStore>) -> Instance {
    let credentials = Credentials::new(config, store);
    let door = |path: &str, door: Door| {
        Router::new()
            .route(path, any(echo))
            .route_layer(middleware::from_fn_with_state(
                (credentials.clone(), door),
                guard,
            ))
    };
    let app = Router::new()
        .merge(door("/v1/echo", Door::Rest))
        .merge(door("/mcp", Door::Mcp))
        .merge(console_router(credentials.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Instance { base, credentials }
}

struct Fixture {
    _db: TempDb,
    one: Instance,
    client: reqwest::Client,
}

async fn fixture_app(secure_cookie: bool) -> Fixture {
    let db = TempDb::new();
    let store = Arc::new(SqliteTokenStore::open(&db.path).unwrap());
    Fixture {
        one: serve(config(secure_cookie), store).await,
        _db: db,
        client: reqwest::Client::new(),
    }
}

async fn body(response: reqwest::Response) -> (StatusCode, Value) {
    let status = response.status();
    (status, response.json().await.unwrap())
}

fn code(value: &Value) -> &str {
    value["error"]["code"].as_str().unwrap_or("(none)")
}

async fn get_with(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut request = client.get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    body(request.send().await.unwrap()).await
}

fn now() -> i64 {
    tokens::now()
}

fn claims() -> Value {
    json!({
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "agent-jwt",
        "exp": now() + 600,
        "nbf": now() - 10,
        "scope": "records:read openid commands:execute",
    })
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

#[tokio::test]
async fn no_credentials_is_401() {
    let f = fixture_app(false).await;
    for door in ["v1/echo", "mcp"] {
        let (status, value) = get_with(&f.client, &format!("{}/{door}", f.one.base), &[]).await;
        assert_eq!(status, 401, "{door}");
        assert_eq!(code(&value), "UNAUTHENTICATED");
    }
    let (status, value) = get_with(
        &f.client,
        &format!("{}/v1/echo", f.one.base),
        &[("authorization", "Basic YWRhOnB3")],
    )
    .await;
    assert_eq!(
        (status.as_u16(), code(&value)),
        (401, "UNSUPPORTED_AUTHORIZATION")
    );
}

#[tokio::test]
async fn opaque_token_until_revoked() {
    let f = fixture_app(false).await;
    let store = f.one.credentials.store().as_ref();
    let created = tokens::create_token(
        store,
        NewToken {
            principal: "agent-7".into(),
            workspace: "acme".into(),
            scopes: vec![DelegatedScope::RecordsRead],
            label: None,
        },
    )
    .await
    .unwrap();
    let bearer = format!("Bearer {}", created.secret);
    for door in ["v1/echo", "mcp"] {
        let (status, value) = get_with(
            &f.client,
            &format!("{}/{door}", f.one.base),
            &[("authorization", &bearer)],
        )
        .await;
        assert_eq!(status, 200, "{door}: {value}");
        assert_eq!(
            value,
            json!({"principal": "agent-7", "kind": "agent", "scopes": ["records:read"],
                   "workspace": "acme"})
        );
    }
    let unknown = format!("Bearer rcip_{}", "x".repeat(43));
    let (status, value) = get_with(
        &f.client,
        &format!("{}/v1/echo", f.one.base),
        &[("authorization", &unknown)],
    )
    .await;
    assert_eq!((status.as_u16(), code(&value)), (401, "INVALID_TOKEN"));

    assert!(tokens::revoke_token(store, &created.info.id).await.unwrap());
    let (status, value) = get_with(
        &f.client,
        &format!("{}/v1/echo", f.one.base),
        &[("authorization", &bearer)],
    )
    .await;
    assert_eq!((status.as_u16(), code(&value)), (401, "INVALID_TOKEN"));
}

#[tokio::test]
async fn jwts_from_the_configured_issuer() {
    let f = fixture_app(false).await;
    let get = |door: &'static str, token: String| {
        let url = format!("{}/{door}", f.one.base);
        let client = f.client.clone();
        async move {
            get_with(
                &client,
                &url,
                &[("authorization", &format!("Bearer {token}"))],
            )
            .await
        }
    };
    let doors = [("v1/echo", RESOURCE), ("mcp", MCP_AUDIENCE)];
    for (alg, key, kid) in [
        (Algorithm::RS256, "rsa-private.pem", "rsa-1"),
        (Algorithm::ES256, "ec-private.pem", "ec-1"),
        (Algorithm::EdDSA, "ed25519-private.pem", "ed-1"),
    ] {
        for (door, audience) in doors {
            let claims = with(claims(), "aud", json!(audience));
            let (status, value) = get(door, sign(alg, key, Some(kid), &claims)).await;
            assert_eq!(status, 200, "{alg:?} on {door}: {value}");
            // `openid` is not a scope of this service: ignored, the others delegated.
            assert_eq!(
                value,
                json!({"principal": "agent-jwt", "kind": "agent",
                       "scopes": ["records:read", "commands:execute"], "workspace": null})
            );
        }
    }
    let rsa = |claims: &Value| sign(Algorithm::RS256, "rsa-private.pem", Some("rsa-1"), claims);
    // An audience list naming the door's resource is fine too; the other door's is not.
    for (door, audience) in doors {
        let listed = with(claims(), "aud", json!(["https://other.example", audience]));
        assert_eq!(get(door, rsa(&listed)).await.0, 200, "{door}");
    }
    for (door, audience) in [("v1/echo", MCP_AUDIENCE), ("mcp", RESOURCE)] {
        let (status, value) = get(door, rsa(&with(claims(), "aud", json!(audience)))).await;
        assert_eq!(
            (status.as_u16(), code(&value)),
            (401, "TOKEN_AUDIENCE_INVALID"),
            "{door}"
        );
    }
}

#[tokio::test]
async fn bad_jwts_are_401_with_distinct_codes() {
    let f = fixture_app(false).await;
    let url = format!("{}/v1/echo", f.one.base);
    let rsa = |claims: &Value| sign(Algorithm::RS256, "rsa-private.pem", Some("rsa-1"), claims);
    let header = |value: Value| b64(value.to_string().as_bytes());
    let payload = b64(claims().to_string().as_bytes());
    // HMAC keyed by the RSA key's public modulus: the classic key-confusion forgery.
    let jwks: Value = serde_json::from_str(&fixture("issuer-jwks.json")).unwrap();
    let modulus = jwks["keys"][0]["n"].as_str().unwrap().to_owned();
    let mut hs_header = Header::new(Algorithm::HS256);
    hs_header.kid = Some("rsa-1".into());
    let confused = jsonwebtoken::encode(
        &hs_header,
        &claims(),
        &EncodingKey::from_secret(modulus.as_bytes()).unwrap(),
    )
    .unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "forged signature",
            sign(
                Algorithm::RS256,
                "rsa-other-private.pem",
                Some("rsa-1"),
                &claims(),
            ),
            "TOKEN_SIGNATURE_INVALID",
        ),
        (
            "expired",
            rsa(&with(claims(), "exp", json!(now() - 3600))),
            "TOKEN_EXPIRED",
        ),
        (
            "not yet valid",
            rsa(&with(claims(), "nbf", json!(now() + 3600))),
            "TOKEN_NOT_YET_VALID",
        ),
        (
            "wrong audience",
            rsa(&with(claims(), "aud", json!("https://other.example"))),
            "TOKEN_AUDIENCE_INVALID",
        ),
        (
            "wrong issuer",
            rsa(&with(claims(), "iss", json!("https://evil.example"))),
            "TOKEN_ISSUER_UNKNOWN",
        ),
        (
            "unknown kid",
            sign(
                Algorithm::RS256,
                "rsa-private.pem",
                Some("rsa-9"),
                &claims(),
            ),
            "TOKEN_KEY_UNKNOWN",
        ),
        (
            "no kid with several keys",
            sign(Algorithm::RS256, "rsa-private.pem", None, &claims()),
            "TOKEN_KEY_UNKNOWN",
        ),
        (
            "alg none",
            format!(
                "{}.{payload}.",
                header(json!({"alg": "none", "typ": "JWT"}))
            ),
            "TOKEN_ALGORITHM_REFUSED",
        ),
        (
            "HS256 with the RSA key",
            confused,
            "TOKEN_ALGORITHM_REFUSED",
        ),
        (
            "ES256 signature named for the RSA key",
            sign(Algorithm::ES256, "ec-private.pem", Some("rsa-1"), &claims()),
            "TOKEN_ALGORITHM_REFUSED",
        ),
        (
            "no subject",
            rsa(&{
                let mut c = claims();
                c.as_object_mut().unwrap().remove("sub");
                c
            }),
            "INVALID_TOKEN",
        ),
        ("not a JWT", "abc.def".into(), "INVALID_TOKEN"),
    ];
    for (what, token, expected) in cases {
        let (status, value) = get_with(
            &f.client,
            &url,
            &[("authorization", &format!("Bearer {token}"))],
        )
        .await;
        assert_eq!(status, 401, "{what}: {value}");
        assert_eq!(code(&value), expected, "{what}");
    }
}

/// Signs in at `instance` with a fresh ticket (see [`support::sign_in`]).
async fn sign_in(
    client: &reqwest::Client,
    instance: &Instance,
    principal: &str,
) -> (String, String) {
    let store = instance.credentials.store().as_ref();
    support::sign_in(client, &instance.base, store, principal).await
}

async fn csrf_of(client: &reqwest::Client, instance: &Instance, cookie: &str) -> String {
    support::csrf_of(client, &instance.base, cookie).await
}

#[tokio::test]
async fn a_ticket_signs_in_once() {
    let f = fixture_app(true).await;
    let store = f.one.credentials.store().as_ref();
    let ticket = tokens::issue_ticket(store, "ada", Duration::from_secs(60))
        .await
        .unwrap();
    let url = format!("{}{}", f.one.base, tokens::sign_in_path(&ticket));
    let first = f.client.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 200);
    let set_cookie = first.headers()["set-cookie"].to_str().unwrap();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Secure"] {
        assert!(
            set_cookie.split("; ").any(|a| a == attribute),
            "{attribute} missing: {set_cookie}"
        );
    }
    let (status, value) = body(f.client.get(&url).send().await.unwrap()).await;
    assert_eq!((status.as_u16(), code(&value)), (401, "TICKET_INVALID"));
    let (status, value) =
        get_with(&f.client, &format!("{}/console/sign-in", f.one.base), &[]).await;
    assert_eq!((status.as_u16(), code(&value)), (400, "TICKET_REQUIRED"));

    // An expired ticket, and text that is no ticket.
    let expired = "e".repeat(43);
    store
        .insert_ticket(
            tokens::SecretHash::of(&expired),
            "ada",
            now() - 1,
            now() - 100,
        )
        .await
        .unwrap();
    for ticket in [expired.as_str(), "abc"] {
        let (status, value) = body(
            f.client
                .get(format!("{}{}", f.one.base, tokens::sign_in_path(ticket)))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status.as_u16(), code(&value)),
            (401, "TICKET_INVALID"),
            "{ticket}"
        );
    }

    // A session past its expiry is refused like an unknown one.
    let secret = "s".repeat(43);
    store
        .insert_session(
            tokens::SecretHash::of(&secret),
            &tokens::Session {
                principal: "ada".into(),
                created_at: now() - 100,
                expires_at: now() - 1,
            },
        )
        .await
        .unwrap();
    let (status, value) = get_with(
        &f.client,
        &format!("{}/console/session", f.one.base),
        &[("cookie", &format!("rcip_session={secret}"))],
    )
    .await;
    assert_eq!((status.as_u16(), code(&value)), (401, "SESSION_INVALID"));

    // Without `Secure` when so configured (plain HTTP on loopback).
    let g = fixture_app(false).await;
    let (_, set_cookie) = sign_in(&g.client, &g.one, "ada").await;
    assert!(!set_cookie.contains("Secure"), "{set_cookie}");
}

/// What is sent, its headers, and the status and code expected.
type RefusedCase<'a> = (&'a str, Vec<(&'a str, &'a str)>, u16, &'a str);

#[tokio::test]
async fn session_requests_need_the_origin_and_csrf_token() {
    let f = fixture_app(false).await;
    let (cookie, _) = sign_in(&f.client, &f.one, "ada").await;
    let csrf = csrf_of(&f.client, &f.one, &cookie).await;
    let url = format!("{}/v1/echo", f.one.base);

    let post = |headers: &[(&str, &str)]| {
        let mut request = f.client.post(&url).body("{}");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let (status, value) = body(
        post(&[
            ("cookie", &cookie),
            ("origin", ORIGIN),
            ("x-csrf-token", &csrf),
        ])
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{value}");
    assert_eq!(
        value,
        json!({"principal": "ada", "kind": "human", "scopes": [], "workspace": null})
    );
    // Among other cookies, in one header.
    let among = format!("theme=dark; {cookie}; lang=en");
    let (status, value) = body(
        post(&[
            ("cookie", &among),
            ("origin", ORIGIN),
            ("x-csrf-token", &csrf),
        ])
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(
        (status.as_u16(), value["principal"].as_str()),
        (200, Some("ada"))
    );
    // GET too: every session request is checked, whatever its method.
    let (status, _) = get_with(
        &f.client,
        &url,
        &[
            ("cookie", &cookie),
            ("origin", ORIGIN),
            ("x-csrf-token", &csrf),
        ],
    )
    .await;
    assert_eq!(status, 200);

    let refused: Vec<RefusedCase<'_>> = vec![
        (
            "no Origin",
            vec![("cookie", &cookie), ("x-csrf-token", &csrf)],
            403,
            "ORIGIN_REFUSED",
        ),
        (
            "another Origin",
            vec![
                ("cookie", &cookie),
                ("origin", "https://app.example.evil"),
                ("x-csrf-token", &csrf),
            ],
            403,
            "ORIGIN_REFUSED",
        ),
        (
            "Origin with a trailing slash (not exact)",
            vec![
                ("cookie", &cookie),
                ("origin", "https://app.example/"),
                ("x-csrf-token", &csrf),
            ],
            403,
            "ORIGIN_REFUSED",
        ),
        (
            "no CSRF token",
            vec![("cookie", &cookie), ("origin", ORIGIN)],
            403,
            "CSRF_REQUIRED",
        ),
        (
            "a CSRF token of the wrong shape",
            vec![
                ("cookie", &cookie),
                ("origin", ORIGIN),
                ("x-csrf-token", "nope!"),
            ],
            403,
            "CSRF_INVALID",
        ),
    ];
    for (what, headers, status, expected) in refused {
        let (got, value) = body(post(&headers).await.unwrap()).await;
        assert_eq!((got.as_u16(), code(&value)), (status, expected), "{what}");
    }

    // Another session's CSRF token does not fit this one.
    let (other_cookie, _) = sign_in(&f.client, &f.one, "bob").await;
    let other_csrf = csrf_of(&f.client, &f.one, &other_cookie).await;
    assert_ne!(other_csrf, csrf);
    let (status, value) = body(
        post(&[
            ("cookie", &cookie),
            ("origin", ORIGIN),
            ("x-csrf-token", &other_csrf),
        ])
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((status.as_u16(), code(&value)), (403, "CSRF_INVALID"));

    // A session is not a credential on MCP.
    let (status, value) = get_with(
        &f.client,
        &format!("{}/mcp", f.one.base),
        &[
            ("cookie", &cookie),
            ("origin", ORIGIN),
            ("x-csrf-token", &csrf),
        ],
    )
    .await;
    assert_eq!((status.as_u16(), code(&value)), (401, "UNAUTHENTICATED"));

    // The session endpoint refuses a foreign Origin (it hands out the CSRF token).
    let (status, value) = get_with(
        &f.client,
        &format!("{}/console/session", f.one.base),
        &[("cookie", &cookie), ("origin", "https://evil.example")],
    )
    .await;
    assert_eq!((status.as_u16(), code(&value)), (403, "ORIGIN_REFUSED"));
    let (status, value) =
        get_with(&f.client, &format!("{}/console/session", f.one.base), &[]).await;
    assert_eq!((status.as_u16(), code(&value)), (401, "UNAUTHENTICATED"));
}

#[tokio::test]
async fn a_bearer_token_wins_over_the_cookie() {
    let f = fixture_app(false).await;
    let (cookie, _) = sign_in(&f.client, &f.one, "ada").await;
    let token = sign(
        Algorithm::RS256,
        "rsa-private.pem",
        Some("rsa-1"),
        &claims(),
    );
    let (status, value) = get_with(
        &f.client,
        &format!("{}/v1/echo", f.one.base),
        &[
            ("cookie", &cookie),
            ("authorization", &format!("Bearer {token}")),
        ],
    )
    .await;
    assert_eq!(status, 200, "{value}");
    assert_eq!(value["principal"], "agent-jwt");
    assert_eq!(value["kind"], "agent");
}

#[tokio::test]
async fn sessions_are_shared_by_instances_and_end_at_sign_out() {
    let db = TempDb::new();
    let one = serve(
        config(false),
        Arc::new(SqliteTokenStore::open(&db.path).unwrap()),
    )
    .await;
    let two = serve(
        config(false),
        Arc::new(SqliteTokenStore::open(&db.path).unwrap()),
    )
    .await;
    let client = reqwest::Client::new();
    let (cookie, _) = sign_in(&client, &one, "ada").await;
    // Signed in at one, known at two (the CSRF token too: it needs no shared key).
    let csrf = csrf_of(&client, &two, &cookie).await;
    assert_eq!(csrf, csrf_of(&client, &one, &cookie).await);
    let session_headers = [
        ("cookie", cookie.as_str()),
        ("origin", ORIGIN),
        ("x-csrf-token", csrf.as_str()),
    ];
    let (status, _) = get_with(&client, &format!("{}/v1/echo", two.base), &session_headers).await;
    assert_eq!(status, 200);

    // Sign-out needs the Origin and CSRF token like any session request.
    let sign_out = |base: &str, headers: &[(&str, &str)]| {
        let mut request = client.post(format!("{base}/console/sign-out"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let (status, value) = body(
        sign_out(&two.base, &[("cookie", &cookie), ("origin", ORIGIN)])
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status.as_u16(), code(&value)), (403, "CSRF_REQUIRED"));
    let response = sign_out(&two.base, &session_headers).await.unwrap();
    assert_eq!(response.status(), 200);
    let cleared = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        cleared.starts_with("rcip_session=;") && cleared.contains("Max-Age=0"),
        "{cleared}"
    );

    // Gone on both instances.
    for base in [&one.base, &two.base] {
        let (status, value) = get_with(&client, &format!("{base}/v1/echo"), &session_headers).await;
        assert_eq!(
            (status.as_u16(), code(&value)),
            (401, "SESSION_INVALID"),
            "{base}"
        );
    }
}

/// A token store whose every call fails, as a database that went away does.
#[derive(Debug)]
struct DownStore;

fn down<'a, T: Send + 'a>() -> tokens::TokenFuture<'a, T> {
    Box::pin(std::future::ready(Err(tokens::StoreError(
        "database went away: secret detail".into(),
    ))))
}

impl TokenStore for DownStore {
    fn insert_token<'a>(
        &'a self,
        _: &'a tokens::TokenInfo,
        _: tokens::SecretHash,
    ) -> tokens::TokenFuture<'a, ()> {
        down()
    }
    fn revoke_token<'a>(&'a self, _: &'a str, _: i64) -> tokens::TokenFuture<'a, bool> {
        down()
    }
    fn list_tokens(&self) -> tokens::TokenFuture<'_, Vec<tokens::TokenInfo>> {
        down()
    }
    fn find_token(
        &self,
        _: tokens::SecretHash,
    ) -> tokens::TokenFuture<'_, Option<tokens::TokenInfo>> {
        down()
    }
    fn insert_ticket<'a>(
        &'a self,
        _: tokens::SecretHash,
        _: &'a str,
        _: i64,
        _: i64,
    ) -> tokens::TokenFuture<'a, ()> {
        down()
    }
    fn consume_ticket(
        &self,
        _: tokens::SecretHash,
        _: i64,
    ) -> tokens::TokenFuture<'_, Option<String>> {
        down()
    }
    fn insert_session<'a>(
        &'a self,
        _: tokens::SecretHash,
        _: &'a tokens::Session,
    ) -> tokens::TokenFuture<'a, ()> {
        down()
    }
    fn find_session(
        &self,
        _: tokens::SecretHash,
        _: i64,
    ) -> tokens::TokenFuture<'_, Option<tokens::Session>> {
        down()
    }
    fn revoke_session(&self, _: tokens::SecretHash) -> tokens::TokenFuture<'_, bool> {
        down()
    }
}

#[tokio::test]
async fn a_failing_store_is_503_without_its_text() {
    let one = serve(config(false), Arc::new(DownStore)).await;
    // Shaped like a token (the prefix, 43 base64url characters), so the check reaches the
    // store.
    let client = reqwest::Client::new();
    for door in ["v1/echo", "mcp"] {
        let (status, value) = get_with(
            &client,
            &format!("{}/{door}", one.base),
            &[(
                "authorization",
                "Bearer rcip_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            )],
        )
        .await;
        assert_eq!(
            (status.as_u16(), code(&value)),
            (503, "CREDENTIALS_UNAVAILABLE"),
            "{door}"
        );
        assert!(!value.to_string().contains("secret detail"), "{value}");
    }
}
