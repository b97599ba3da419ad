//! A server on 127.0.0.1 (port 0) over a platform in memory, a real HTTP client, bearer
//! tokens for humans and agents, and every answer checked against the served OpenAPI
//! document (each request body against `OperationRequest`, each 200 against
//! `OperationResponse`, each refusal against `Error`).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use rcip_platform::{MemoryDirectory, Platform};
use rcip_records::{Actor, Caller, DelegatedScope, Engine};
use rcip_server::{Authenticate, Authenticated, ConnectionLimits, Limits, Server, StaticTokens};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

/// The notes program (v1; v2 adds a tag): an entity with a lifecycle and a relationship.
pub fn notes(version: u64) -> Value {
    let mut properties = json!({"text": {"type": "string", "minLength": 1, "maxLength": 200}});
    if version > 1 {
        properties["tag"] = json!({"type": "string", "maxLength": 20});
    }
    json!({
        "protocol": "relationship/v1", "namespace": "notes", "version": version,
        "types": {
            "note": {
                "kind": "entity",
                "schema": {"type": "object", "properties": properties, "required": ["text"],
                           "additionalProperties": false},
                "lifecycle": {"initial": "open", "states": ["open", "closed"]},
                "commands": {"close": {
                    "input": {"type": "object", "properties": {}, "required": [],
                              "additionalProperties": false},
                    "from": ["open"], "to": "closed"}}
            },
            "link": {
                "kind": "relationship",
                "schema": {"type": "object", "properties": {}, "required": [],
                           "additionalProperties": false},
                "roles": {"target": {"min": 1, "max": 1, "types": ["notes/note"]}}
            }
        }
    })
}

fn who(caller: Caller, workspace: Option<&str>) -> Authenticated {
    Authenticated {
        caller,
        workspace: workspace.map(str::to_owned),
    }
}

/// The tokens: `ada`, `bob`, `eve` (humans), `bot` (an agent whose credential delegates
/// every scope), `bot-read` (records:read only), `bot-acme` (every scope, workspace `acme`
/// only), `ada-other` (ada, limited to workspace `other`), `rival` (another agent, every
/// scope, workspace `other` only).
pub fn tokens() -> StaticTokens {
    StaticTokens::new()
        .token("ada", who(Caller::human(Actor::new("ada")), None))
        .token("bob", who(Caller::human(Actor::new("bob")), None))
        .token("eve", who(Caller::human(Actor::new("eve")), None))
        .token(
            "bot",
            who(Caller::agent(Actor::new("bot"), DelegatedScope::ALL), None),
        )
        .token(
            "bot-read",
            who(
                Caller::agent(Actor::new("bot"), [DelegatedScope::RecordsRead]),
                None,
            ),
        )
        .token(
            "bot-acme",
            who(
                Caller::agent(Actor::new("bot"), DelegatedScope::ALL),
                Some("acme"),
            ),
        )
        .token(
            "ada-other",
            who(Caller::human(Actor::new("ada")), Some("other")),
        )
        .token(
            "rival",
            who(
                Caller::agent(Actor::new("rival"), DelegatedScope::ALL),
                Some("other"),
            ),
        )
}

/// One answer: status, body, headers.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub headers: HeaderMap,
}

impl Answer {
    /// The error code of a refusal.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    pub fn result(&self) -> &Value {
        assert_eq!(self.status, 200, "{:#}", self.body);
        &self.body["result"]
    }
}

pub struct TestServer {
    pub base: String,
    pub client: reqwest::Client,
    pub platform: Arc<Platform>,
    /// The served document's validators: request, 200 body, error body.
    validators: Option<[jsonschema::Validator; 3]>,
    /// Operations answered 200 so far.
    pub seen: Mutex<BTreeSet<String>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A validator of `component` inside the whole `document` (its `$ref`s resolve there).
pub fn component_validator(document: &Value, component: &str) -> jsonschema::Validator {
    let mut root = document.clone();
    root["$ref"] = json!(format!("#/components/schemas/{component}"));
    jsonschema::validator_for(&root).unwrap()
}

pub async fn start(limits: Limits) -> TestServer {
    start_with(limits, Arc::new(tokens())).await
}

pub async fn start_with(limits: Limits, auth: Arc<dyn Authenticate>) -> TestServer {
    let platform = Arc::new(
        Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
            .await
            .unwrap(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = Server::new(Arc::clone(&platform), auth, base.clone())
        .limits(limits)
        .authorization_servers(["https://issuer.example"])
        .router();
    let task = tokio::spawn(async move {
        let never = std::future::pending::<()>();
        rcip_server::serve(listener, router, ConnectionLimits::default(), never)
            .await
            .unwrap();
    });
    let mut server = TestServer {
        base,
        client: reqwest::Client::new(),
        platform,
        validators: None,
        seen: Mutex::default(),
        task,
    };
    let document = server.get("/v1/openapi.json").await;
    assert_eq!(document.status, 200);
    server.validators = Some([
        component_validator(&document.body, "OperationRequest"),
        component_validator(&document.body, "OperationResponse"),
        component_validator(&document.body, "Error"),
    ]);
    server
}

fn problems(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str) -> Answer {
        answer(self.client.get(self.url(path)).send().await.unwrap()).await
    }

    /// Sends `body` as JSON to `POST /v1/operations` with `token` (none: no header).
    pub async fn post(&self, token: Option<&str>, body: &Value) -> Answer {
        let mut request = self
            .client
            .post(self.url("/v1/operations"))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let answer = answer(request.send().await.unwrap()).await;
        self.check_answer(&answer);
        answer
    }

    /// Every answer of the API is in the document: a 200 as `OperationResponse`, anything
    /// else as `Error`.
    pub fn check_answer(&self, answer: &Answer) {
        let [_, ok, error] = self.validators.as_ref().unwrap();
        let (validator, what) = if answer.status == 200 {
            (ok, "OperationResponse")
        } else {
            (error, "Error")
        };
        let problems = problems(validator, &answer.body);
        assert!(
            problems.is_empty(),
            "a {} answer outside {what}: {problems:?}\n{:#}",
            answer.status,
            answer.body
        );
    }

    /// Calls `operation` through REST. The document and the server agree on the request: one
    /// outside `OperationRequest` is answered 400, and one inside it is never refused as an
    /// unknown operation or for arguments the schema admits (the rules across arguments,
    /// which the schemas leave out, excepted).
    pub async fn call(&self, token: &str, operation: &str, arguments: Value) -> Answer {
        let body = json!({"operation": operation, "arguments": arguments});
        let [request, _, _] = self.validators.as_ref().unwrap();
        let problems = problems(request, &body);
        let answer = self.post(Some(token), &body).await;
        if problems.is_empty() {
            assert!(
                !matches!(answer.code(), "UNKNOWN_OPERATION" | "INVALID_REQUEST"),
                "{operation}: a request the document admits was refused: {:#}",
                answer.body
            );
        } else {
            assert_eq!(
                answer.status, 400,
                "{operation}: outside the document ({problems:?}) but {:#}",
                answer.body
            );
        }
        if answer.status == 200 {
            self.seen.lock().unwrap().insert(operation.to_owned());
        }
        answer
    }

    /// Calls and expects 200: the result.
    pub async fn ok(&self, token: &str, operation: &str, arguments: Value) -> Value {
        let answer = self.call(token, operation, arguments).await;
        assert_eq!(answer.status, 200, "{operation}: {:#}", answer.body);
        answer.body["result"].clone()
    }

    /// Calls and expects a refusal: its status and code.
    pub async fn refused(&self, token: &str, operation: &str, arguments: Value) -> (u16, String) {
        let answer = self.call(token, operation, arguments).await;
        assert_ne!(
            answer.status, 200,
            "{operation} succeeded: {:#}",
            answer.body
        );
        (answer.status, answer.code().to_owned())
    }

    /// `acme`: ada owns it, bob is a member, bot an agent member with every scope;
    /// collection `open`; `notes` v1 active. `other`: eve's workspace.
    pub async fn world(&self) {
        self.ok(
            "ada",
            "workspace.create",
            json!({"workspace_id": "acme", "name": "Acme", "idempotency_key": "w1"}),
        )
        .await;
        self.ok(
            "eve",
            "workspace.create",
            json!({"workspace_id": "other", "name": "Other", "idempotency_key": "w1"}),
        )
        .await;
        self.ok("ada", "member.add", json!({"workspace_id": "acme", "principal_id": "bob", "kind": "human", "idempotency_key": "m1"})).await;
        self.ok(
            "ada",
            "member.add",
            json!({"workspace_id": "acme", "principal_id": "bot", "kind": "agent",
            "scopes": DelegatedScope::ALL.map(DelegatedScope::as_str), "idempotency_key": "m2"}),
        )
        .await;
        self.ok("ada", "collection.create", json!({"workspace_id": "acme", "collection_id": "open", "name": "Open", "idempotency_key": "c1"})).await;
        self.ok(
            "ada",
            "program.activate",
            json!({"workspace_id": "acme", "package": notes(1), "idempotency_key": "p1"}),
        )
        .await;
    }

    /// bot also an agent member of eve's `other` (records:read).
    pub async fn bot_in_other(&self) {
        self.ok(
            "eve",
            "member.add",
            json!({"workspace_id": "other", "principal_id": "bot",
            "kind": "agent", "scopes": ["records:read"], "idempotency_key": "m1"}),
        )
        .await;
    }

    /// A note in `acme`/`open`, created by `token` under `key`.
    pub async fn note(&self, token: &str, key: &str) -> Value {
        self.ok(
            token,
            "record.create",
            json!({"workspace_id": "acme", "collection_id": "open",
            "namespace": "notes", "version": 1, "type": "note", "data": {"text": "hello"},
            "idempotency_key": key}),
        )
        .await
    }
}

async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("a {status} answer that is not JSON: {text:?}"));
    Answer {
        status,
        body,
        headers,
    }
}
