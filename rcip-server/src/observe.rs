//! What an operator watches: the request's span (tower-http's trace layer), the operation's
//! span, and the metrics, recorded through the `metrics` facade (the application installs
//! the exporter; without one every record is a no-op).
//!
//! The metrics and their labels are listed in the crate's documentation ("Operations").
//!
//! `limit` is one of `body_size`, `json_depth`, `body_timeout`, `request_timeout`,
//! `concurrency` (the global limit shed the request), `principal_concurrency`, `rate`
//! (a principal's or an address's bucket) and `header_timeout` (a connection closed
//! before it sent a whole request head).

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Span;

use crate::authenticate::Door;
use crate::error::RefusalCode;

/// The limit a refusal's code stands for, if it is a limit's.
fn limit_of(code: &str) -> Option<&'static str> {
    Some(match code {
        "BODY_TOO_LARGE" => "body_size",
        "TOO_DEEP" => "json_depth",
        "BODY_TIMEOUT" => "body_timeout",
        "TIMEOUT" => "request_timeout",
        "OVERLOADED" => "concurrency",
        "CONCURRENCY_LIMITED" => "principal_concurrency",
        "RATE_LIMITED" => "rate",
        _ => return None,
    })
}

/// Counts a connection closed by a limit of the connection layer.
pub(crate) fn refused_connection(limit: &'static str) {
    metrics::counter!("rcip_requests_refused_total", "limit" => limit).increment(1);
}

/// The door a path belongs to (a metric label: a fixed set).
fn door_of(path: &str) -> &'static str {
    match path {
        "/v1/operations" => "rest",
        crate::paths::MCP_PATH => "mcp",
        _ => "public",
    }
}

/// A door's label.
pub(crate) fn door_label(door: Door) -> &'static str {
    match door {
        Door::Rest => "rest",
        Door::Mcp => "mcp",
    }
}

/// The span of one request: named after its route (a fixed set, never the raw path), with
/// the OpenTelemetry HTTP attributes; the status is recorded when the head is answered.
pub(crate) fn request_span(request: &Request) -> Span {
    let path = request.uri().path();
    let route = match path {
        "/v1/operations"
        | crate::paths::MCP_PATH
        | "/"
        | "/healthz"
        | "/readyz"
        | "/v1/openapi.json" => path,
        _ => "",
    };
    let method = request.method().as_str();
    tracing::info_span!(
        target: "rcip::http",
        "http.request",
        otel.name = %SpanName(method, route),
        otel.kind = "server",
        http.request.method = method,
        url.path = path,
        http.route = route,
        http.response.status_code = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    )
}

/// `GET /mcp`, or the method alone off the known routes.
struct SpanName<'a>(&'a str, &'a str);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            "" => f.write_str(self.0),
            route => write!(f, "{} {route}", self.0),
        }
    }
}

/// Records the answer's status on the request's span.
pub(crate) fn record_status<B>(
    response: &http::Response<B>,
    _latency: std::time::Duration,
    span: &Span,
) {
    let status = response.status();
    span.record("http.response.status_code", status.as_u16());
    if status.is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
}

/// Counts the request in flight, then its answer by door and status, its time to the
/// answer's head and, for a refusal by a limit, the limit.
pub(crate) async fn measure(request: Request, next: Next) -> Response {
    let door = door_of(request.uri().path());
    let in_flight = InFlight::new(door);
    let started = Instant::now();
    let response = next.run(request).await;
    drop(in_flight);
    metrics::histogram!("rcip_http_request_duration_seconds", "door" => door)
        .record(started.elapsed().as_secs_f64());
    metrics::counter!(
        "rcip_http_requests_total",
        "door" => door,
        "status" => status_label(response.status().as_u16()),
    )
    .increment(1);
    if let Some(limit) = response
        .extensions()
        .get::<RefusalCode>()
        .and_then(|code| limit_of(code.0))
    {
        metrics::counter!("rcip_requests_refused_total", "limit" => limit).increment(1);
    }
    response
}

/// One request in the `rcip_http_requests_in_flight` gauge, counted off when dropped, so
/// also when the request's future is dropped unanswered (an HTTP/2 stream reset under a
/// server that serves this router so, the grace's end at shutdown).
struct InFlight(metrics::Gauge);

impl InFlight {
    fn new(door: &'static str) -> Self {
        let gauge = metrics::gauge!("rcip_http_requests_in_flight", "door" => door);
        gauge.increment(1.0);
        Self(gauge)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// A status as a label without an allocation for the common ones.
pub(crate) fn status_label(status: u16) -> metrics::SharedString {
    match status {
        200 => "200".into(),
        400 => "400".into(),
        401 => "401".into(),
        403 => "403".into(),
        404 => "404".into(),
        409 => "409".into(),
        422 => "422".into(),
        429 => "429".into(),
        other => other.to_string().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_code_is_named_and_others_are_not() {
        for (code, limit) in [
            ("BODY_TOO_LARGE", "body_size"),
            ("TOO_DEEP", "json_depth"),
            ("BODY_TIMEOUT", "body_timeout"),
            ("TIMEOUT", "request_timeout"),
            ("OVERLOADED", "concurrency"),
            ("CONCURRENCY_LIMITED", "principal_concurrency"),
            ("RATE_LIMITED", "rate"),
        ] {
            assert_eq!(limit_of(code), Some(limit));
        }
        assert_eq!(limit_of("RECORD_NOT_FOUND"), None);
        assert_eq!(door_of("/v1/operations"), "rest");
        assert_eq!(door_of("/mcp"), "mcp");
        assert_eq!(door_of("/anything"), "public");
    }
}
