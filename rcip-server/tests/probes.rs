//! The probes: `/healthz` answers while the process runs, `/readyz` while the database
//! holds this build's schema, both without credentials.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
mod on_sqlite;

use axum::body::Body;
use on_sqlite::{Database, router, send};
use serde_json::json;

#[tokio::test]
async fn the_probes_answer_without_credentials_and_readiness_follows_the_schema() {
    let database = Database::new("probes");
    let router = router(&database).await;
    let get = |path: &str| http::Request::get(path).body(Body::empty()).unwrap();
    assert_eq!(
        send(&router, get("/healthz")).await,
        (200, json!({"status": "ok"}))
    );
    assert_eq!(
        send(&router, get("/readyz")).await,
        (200, json!({"status": "ready"}))
    );
    // The schema gone from under the service: not ready (in the one error body), still
    // alive.
    rusqlite::Connection::open(&database.0)
        .unwrap()
        .execute_batch("DROP TABLE workspaces")
        .unwrap();
    // The probe's last answer stands for a second: within it, no statement is run.
    assert_eq!(send(&router, get("/readyz")).await.0, 200);
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let (status, body) = send(&router, get("/readyz")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "NOT_READY");
    assert_eq!(send(&router, get("/healthz")).await.0, 200);
}
