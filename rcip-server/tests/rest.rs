//! `POST /v1/operations` over real HTTP on 127.0.0.1: every operation of the registry at
//! least once (humans and agents), every status the platform answers, the envelope's
//! refusals, authentication and the credential's workspace. Every request and answer is
//! checked against the served OpenAPI document (tests/common).
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use common::{notes, start};
use rcip_platform::operations;
use rcip_server::Limits;
use serde_json::{Value, json};

fn id(record: &Value) -> &str {
    record["id"].as_str().unwrap()
}

#[tokio::test]
async fn every_operation_of_the_registry_answers_through_rest() {
    let s = start(Limits::default()).await;
    s.world().await;
    let acme = json!({"workspace_id": "acme"});
    s.ok("ada", "capabilities.list", acme.clone()).await;
    let listed = s.ok("bot", "workspace.list", json!({})).await;
    assert_eq!(listed["items"][0]["workspace_id"], "acme");
    s.ok("bob", "workspace.get", acme.clone()).await;
    let members = s.ok("bot", "member.list", acme.clone()).await;
    assert_eq!(members["items"].as_array().unwrap().len(), 3);
    s.ok("bot", "collection.list", acme.clone()).await;
    s.ok("ada", "program.versions", acme.clone()).await;
    let program = s
        .ok(
            "bot",
            "program.get",
            json!({"workspace_id": "acme", "namespace": "notes", "version": 1}),
        )
        .await;
    assert_eq!(program["namespace"], "notes");
    s.ok("bot", "examples.list", json!({})).await;
    let draft = s
        .ok(
            "bot",
            "program.draft",
            json!({"workspace_id": "acme", "package": notes(2), "idempotency_key": "d1"}),
        )
        .await;
    assert_eq!(draft["version"], 2);
    // The agent creates, reads, searches, changes and closes a note.
    let note = s.note("bot", "r1").await;
    let link = s
        .ok("bot", "record.create", json!({"workspace_id": "acme", "collection_id": "open", "namespace": "notes",
            "version": 1, "type": "link", "data": {}, "roles": {"target": [id(&note)]}, "idempotency_key": "r2"}))
        .await;
    assert_eq!(link["participants"]["target"][0]["id"], note["id"]);
    let record = json!({"workspace_id": "acme", "record_id": id(&note)});
    let got = s.ok("bob", "record.get", record.clone()).await;
    assert_eq!(got["data"]["text"], "hello");
    s.ok(
        "bot",
        "record.search",
        json!({"workspace_id": "acme", "namespace": "notes"}),
    )
    .await;
    s.ok(
        "bot",
        "record.update",
        json!({"workspace_id": "acme", "record_id": id(&note), "expected_revision": 1,
        "patch": {"set": {"text": "changed"}}, "idempotency_key": "r3"}),
    )
    .await;
    let commands = s.ok("bot", "command.list", record.clone()).await;
    assert_eq!(commands["commands"][0]["command"], "close");
    let executed = s
        .ok(
            "bot",
            "command.execute",
            json!({"workspace_id": "acme", "record_id": id(&note), "command": "close",
            "expected_revision": 2, "idempotency_key": "r4"}),
        )
        .await;
    assert_eq!(executed["state"], "closed");
    s.ok(
        "ada",
        "record.archive",
        json!({"workspace_id": "acme", "record_id": id(&note), "expected_revision": 3,
        "idempotency_key": "r5"}),
    )
    .await;
    let history = s.ok("bot", "record.history", record).await;
    assert_eq!(history["items"].as_array().unwrap().len(), 4);
    let feed = s.ok("bot", "changes.feed", acme.clone()).await;
    assert!(feed["checkpoint"].is_string());
    s.ok(
        "ada",
        "collection.create",
        json!({"workspace_id": "acme", "collection_id": "secret", "name": "Secret",
        "visibility": "restricted", "idempotency_key": "c2"}),
    )
    .await;
    s.ok(
        "ada",
        "collection.grant",
        json!({"workspace_id": "acme", "collection_id": "secret", "principal_id": "bob",
        "access": "read", "idempotency_key": "g1"}),
    )
    .await;
    s.ok(
        "ada",
        "collection.revoke",
        json!({"workspace_id": "acme", "collection_id": "secret",
        "principal_id": "bob", "idempotency_key": "g2"}),
    )
    .await;
    s.ok(
        "bot",
        "program.activate",
        json!({"workspace_id": "acme", "draft_id": draft["draft_id"],
        "idempotency_key": "p2"}),
    )
    .await;
    s.ok(
        "ada",
        "member.remove",
        json!({"workspace_id": "acme", "principal_id": "bot", "idempotency_key": "m3"}),
    )
    .await;

    let seen = s.seen.lock().unwrap().clone();
    let all: BTreeSet<String> = operations()
        .iter()
        .map(|spec| spec.name.to_owned())
        .collect();
    assert_eq!(
        seen,
        all,
        "never answered: {:?}",
        all.difference(&seen).collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn the_platform_statuses_reach_the_caller_with_their_codes() {
    let s = start(Limits::default()).await;
    s.world().await;
    let note = s.note("ada", "r1").await;
    let get = json!({"workspace_id": "acme", "record_id": id(&note)});
    // 400
    assert_eq!(
        s.refused("ada", "record.delete", json!({})).await,
        (400, "UNKNOWN_OPERATION".into())
    );
    let answer = s
        .call(
            "ada",
            "record.get",
            json!({"workspace_id": "acme", "record_id": id(&note), "colour": "red"}),
        )
        .await;
    assert_eq!((answer.status, answer.code()), (400, "INVALID_ARGUMENTS"));
    assert_eq!(
        answer.body["error"]["issues"][0]["keyword"],
        "additionalProperties"
    );
    // 403
    assert_eq!(
        s.refused(
            "bot",
            "workspace.create",
            json!({"workspace_id": "botland", "name": "B", "idempotency_key": "k"})
        )
        .await,
        (403, "CONSOLE_ONLY".into())
    );
    assert_eq!(
        s.refused(
            "bot-read",
            "command.execute",
            json!({"workspace_id": "acme", "record_id": id(&note),
            "command": "close", "expected_revision": 1, "idempotency_key": "x1"})
        )
        .await,
        (403, "INSUFFICIENT_SCOPE".into())
    );
    // 404: a stranger learns nothing.
    assert_eq!(
        s.refused("eve", "record.get", get.clone()).await,
        (404, "WORKSPACE_NOT_FOUND".into())
    );
    assert_eq!(
        s.refused(
            "ada",
            "record.get",
            json!({"workspace_id": "acme", "record_id": uuid::Uuid::nil()})
        )
        .await,
        (404, "RECORD_NOT_FOUND".into())
    );
    // 409: a stale revision.
    assert_eq!(
        s.refused(
            "ada",
            "record.update",
            json!({"workspace_id": "acme", "record_id": id(&note), "expected_revision": 7,
            "patch": {"set": {"text": "late"}}, "idempotency_key": "u1"})
        )
        .await,
        (409, "STALE_REVISION".into())
    );
    // 422: data outside the type's schema, with its issues.
    let answer = s
        .call(
            "ada",
            "record.create",
            json!({"workspace_id": "acme", "collection_id": "open", "namespace": "notes",
            "version": 1, "type": "note", "data": {"text": ""}, "idempotency_key": "r9"}),
        )
        .await;
    assert_eq!(answer.status, 422, "{:#}", answer.body);
    assert!(
        !answer.body["error"]["issues"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_envelope_is_exactly_operation_and_arguments_as_json() {
    let s = start(Limits::default()).await;
    s.world().await;
    let post = |body: &'static str, content_type: &'static str| {
        let request = s
            .client
            .post(s.url("/v1/operations"))
            .bearer_auth("ada")
            .header("content-type", content_type)
            .body(body);
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };
    let (status, body) = post(
        r#"{"operation": "workspace.list", "arguments": {}}"#,
        "text/plain",
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (415, Some("UNSUPPORTED_MEDIA_TYPE"))
    );
    let (status, body) = post(
        r#"{"operation": "workspace.list", "arguments": {}}"#,
        "application/json; charset=utf-8",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(r#"{"operation": "workspace.list", "#, "application/json").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("MALFORMED_JSON"))
    );
    let (status, body) = post("[1, 2]", "application/json").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("INVALID_REQUEST"))
    );

    let answer = s
        .post(
            Some("ada"),
            &json!({"operation": "workspace.list", "arguments": {}, "colour": "red"}),
        )
        .await;
    assert_eq!((answer.status, answer.code()), (400, "INVALID_REQUEST"));
    assert_eq!(
        answer.body["error"]["issues"][0]["params"]["additionalProperty"],
        "colour"
    );
    let answer = s.post(Some("ada"), &json!({"operation": 7})).await;
    assert_eq!((answer.status, answer.code()), (400, "INVALID_REQUEST"));
    let keywords: BTreeSet<&str> = answer.body["error"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| issue["keyword"].as_str().unwrap())
        .collect();
    assert_eq!(keywords, BTreeSet::from(["required", "type"]));
    // Arguments that are not an object are the platform's to refuse.
    let answer = s
        .post(
            Some("ada"),
            &json!({"operation": "workspace.list", "arguments": []}),
        )
        .await;
    assert_eq!((answer.status, answer.code()), (400, "INVALID_ARGUMENTS"));
}

#[tokio::test]
async fn a_caller_without_an_accepted_credential_is_told_where_the_metadata_is() {
    let s = start(Limits::default()).await;
    let metadata = format!("{}/.well-known/oauth-protected-resource", s.base);
    let body = json!({"operation": "workspace.list", "arguments": {}});
    let answer = s.post(None, &body).await;
    assert_eq!((answer.status, answer.code()), (401, "UNAUTHENTICATED"));
    assert_eq!(
        answer.headers["www-authenticate"].to_str().unwrap(),
        format!("Bearer resource_metadata=\"{metadata}\"")
    );
    let answer = s.post(Some("forged"), &body).await;
    assert_eq!((answer.status, answer.code()), (401, "INVALID_TOKEN"));
    assert_eq!(
        answer.headers["www-authenticate"].to_str().unwrap(),
        format!("Bearer resource_metadata=\"{metadata}\", error=\"invalid_token\"")
    );
}

#[tokio::test]
async fn a_credential_limited_to_one_workspace_reaches_no_other() {
    let s = start(Limits::default()).await;
    s.world().await;
    s.bot_in_other().await;
    s.ok(
        "eve",
        "member.add",
        json!({"workspace_id": "other", "principal_id": "ada", "kind": "human",
        "idempotency_key": "m2"}),
    )
    .await;
    // The unlimited credential sees both workspaces; the limited one only its own.
    let all = s.ok("bot", "workspace.list", json!({})).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 2);
    let limited = s.ok("bot-acme", "workspace.list", json!({})).await;
    let names: Vec<&Value> = limited["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["workspace_id"])
        .collect();
    assert_eq!(names, [&json!("acme")]);
    // Another workspace, one the principal is a member of, is answered as an unreadable one.
    assert_eq!(
        s.refused(
            "bot-acme",
            "workspace.get",
            json!({"workspace_id": "other"})
        )
        .await,
        (404, "WORKSPACE_NOT_FOUND".into())
    );
    s.ok("bot-acme", "workspace.get", json!({"workspace_id": "acme"}))
        .await;
    assert_eq!(
        s.refused(
            "ada-other",
            "record.search",
            json!({"workspace_id": "acme"})
        )
        .await,
        (404, "WORKSPACE_NOT_FOUND".into())
    );
    s.ok(
        "ada-other",
        "record.search",
        json!({"workspace_id": "other"}),
    )
    .await;
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_in_the_error_shape() {
    let s = start(Limits::default()).await;
    let answer = s.get("/v2/nothing").await;
    assert_eq!(
        (answer.status, answer.body["error"]["code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    let answer = s.get("/v1/operations").await;
    assert_eq!(
        (answer.status, answer.body["error"]["code"].as_str()),
        (405, Some("METHOD_NOT_ALLOWED"))
    );
}

#[tokio::test]
async fn an_application_mounts_the_router_beside_its_own_routes() {
    let platform = std::sync::Arc::new(
        rcip_platform::Platform::open(
            rcip_records::Engine::in_memory(),
            std::sync::Arc::new(rcip_platform::MemoryDirectory::new()),
        )
        .await
        .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = rcip_server::Server::new(platform, std::sync::Arc::new(common::tokens()), &base);
    let app = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(server.router());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let client = reqwest::Client::new();
    // The application's route meets none of the server's layers (no credential needed).
    let health = client.get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    assert_eq!(health.text().await.unwrap(), "ok");
    let list = |token: Option<&str>| {
        let mut request = client
            .post(format!("{base}/v1/operations"))
            .header("content-type", "application/json")
            .body(r#"{"operation": "workspace.list", "arguments": {}}"#);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    assert_eq!(list(Some("ada")).await.unwrap().status().as_u16(), 200);
    let anonymous = list(None).await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
}
