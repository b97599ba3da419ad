//! A server on a SQLite file of its own, driven through its router without a socket
//! (`mod on_sqlite;`, beside `mod common;` for the tokens).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use rcip_database::SqliteStore;
use rcip_platform::Platform;
use rcip_records::Engine;
use rcip_server::Server;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::common::tokens;

/// A SQLite file of its own, removed when dropped.
pub struct Database(pub PathBuf);

impl Database {
    pub fn new(name: &str) -> Self {
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("sqlite-{name}-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&path);
        Self(path)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub async fn router(database: &Database) -> axum::Router {
    let open = || SqliteStore::open(&database.0).unwrap();
    let platform = Platform::open(Engine::new(open()), Arc::new(open()))
        .await
        .unwrap();
    Server::new(
        Arc::new(platform),
        Arc::new(tokens()),
        "http://127.0.0.1:8080",
    )
    .router()
}

/// One request through the router (no socket): status and JSON body.
pub async fn send(router: &axum::Router, request: http::Request<Body>) -> (u16, Value) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

pub async fn call(router: &axum::Router, token: &str, operation: &str, arguments: Value) -> Value {
    let request = http::Request::post("/v1/operations")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"operation": operation, "arguments": arguments}).to_string(),
        ))
        .unwrap();
    let (status, body) = send(router, request).await;
    assert_eq!(status, 200, "{operation}: {body}");
    body["result"].clone()
}
