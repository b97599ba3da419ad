//! `GET /healthz` and `GET /readyz`, for a load balancer or an orchestrator: outside
//! authentication and outside every limit (a probe must not be shed, rate-limited or
//! queued behind the callers it is checking on).

use http::StatusCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use rcip_platform::DirectoryStore;
use serde_json::json;
use tokio::sync::Mutex;

use crate::error::ApiError;

/// How long the readiness probe waits for the database before it answers 503.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Liveness: the process answers HTTP. Always `200 {"status": "ok"}`.
pub(crate) async fn healthz() -> Response {
    Json(json!({"status": "ok"})).into_response()
}

/// What the readiness probe checks, and its last answer: the database is asked at most
/// once per [`READY_FOR`], however many callers probe (the probe needs no credential, so
/// it must not let anyone turn requests into database statements at will).
pub(crate) struct Readiness {
    directory: Arc<dyn DirectoryStore>,
    last: Mutex<Option<(Instant, bool)>>,
}

/// How long one answer of the database stands for the probe.
const READY_FOR: Duration = Duration::from_secs(1);

impl Readiness {
    pub(crate) fn new(directory: Arc<dyn DirectoryStore>) -> Self {
        Self {
            directory,
            last: Mutex::new(None),
        }
    }

    /// The answer of at most [`READY_FOR`] ago, or the database's now (callers meanwhile
    /// wait for it and share it).
    async fn ready(&self) -> bool {
        let mut last = self.last.lock().await;
        if let Some((at, ready)) = *last
            && at.elapsed() < READY_FOR
        {
            return ready;
        }
        let cause = match tokio::time::timeout(READY_TIMEOUT, self.directory.ready()).await {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(error.to_string()),
            Err(_) => Some(format!(
                "the database did not answer within {READY_TIMEOUT:?}"
            )),
        };
        if let Some(cause) = &cause {
            tracing::warn!(target: "rcip::server", %cause, "not ready");
        }
        *last = Some((Instant::now(), cause.is_none()));
        cause.is_none()
    }
}

/// Readiness: the directory's database answers one statement within two seconds and holds
/// this build's schema (`200 {"status": "ready"}`); otherwise `503 NOT_READY` in the one
/// error body, the cause in the log only (it may name hosts and schemas). An answer stands
/// for a second.
pub(crate) async fn readyz(State(readiness): State<Arc<Readiness>>) -> Response {
    if readiness.ready().await {
        return Json(json!({"status": "ready"})).into_response();
    }
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "NOT_READY",
        "the service cannot serve requests now",
    )
    .into_response()
}
