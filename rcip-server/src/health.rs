//! `GET /healthz` and `GET /readyz`, for a load balancer or an orchestrator: outside
//! authentication and outside every limit (a probe must not be shed, rate-limited or
//! queued behind the callers it is checking on).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::error::ApiError;
use crate::server::Shared;

/// How long the readiness probe waits for the database before it answers 503.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Liveness: the process answers HTTP. Always `200 {"status": "ok"}`.
pub(crate) async fn healthz() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

/// Readiness: the directory's database answers one statement within two seconds and holds
/// this build's schema (`200 {"status": "ready"}`); otherwise `503 NOT_READY` in the one
/// error body, the cause in the log only (it may name hosts and schemas).
pub(crate) async fn readyz(State(shared): State<Arc<Shared>>) -> Response {
    let cause = match tokio::time::timeout(READY_TIMEOUT, shared.directory.ready()).await {
        Ok(Ok(())) => return Json(json!({"status": "ready"})).into_response(),
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("the database did not answer within {READY_TIMEOUT:?}"),
    };
    tracing::warn!(target: "rcip::server", %cause, "not ready");
    ApiError::new(503, "NOT_READY", "the service cannot serve requests now").into_response()
}
