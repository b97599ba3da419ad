//! The limits every request meets, each answered with its own stable code:
//!
//! | limit | default | refusal | how |
//! | --- | --- | --- | --- |
//! | body size | 1 MiB | 413 `BODY_TOO_LARGE` | tower-http's `RequestBodyLimitLayer` (its own plain-text 413 reshaped into the error body) |
//! | JSON nesting | 128 levels | 400 `TOO_DEEP` | [`json_depth`] over the buffered bytes, before any parse (by hand: no layer knows JSON) |
//! | per-principal rate | burst 100, 50/s | 429 `RATE_LIMITED` + `Retry-After` | [`RateLimiter`], a token bucket per principal (by hand: tower's `RateLimit` is one bucket for every caller) |
//! | request time | 30 s | 504 `TIMEOUT` | tower's `TimeoutLayer` |
//! | concurrent requests | 512 | 503 `OVERLOADED` | tower's `GlobalConcurrencyLimitLayer` behind `LoadShedLayer` (refused at once, never queued) |

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use rcip_relationship::PrincipalKind;
use tower::BoxError;

use crate::authenticate::Authenticated;
use crate::error::ApiError;

/// The default largest request body: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1 << 20;
/// The default nesting (arrays and objects) at which a body is refused.
pub const DEFAULT_JSON_DEPTH_LIMIT: usize = 128;
/// The default time a request may take to be answered.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The default number of requests served at once.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 512;
/// The principals whose buckets are remembered before idle (full) ones are forgotten.
const MAX_TRACKED_PRINCIPALS: usize = 10_000;

/// The limits of a [`Server`](crate::Server).
///
/// ```
/// use std::time::Duration;
/// use rcip_server::{Limits, RateLimit};
/// let limits = Limits {
///     request_timeout: Duration::from_secs(5),
///     rate_limit: Some(RateLimit::per_second(10, 20)),
///     ..Limits::default()
/// };
/// assert_eq!(limits.max_body_bytes, 1 << 20);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// The largest request body, in bytes (413 `BODY_TOO_LARGE`).
    pub max_body_bytes: usize,
    /// A JSON body nesting this many levels of arrays and objects or more is refused (400
    /// `TOO_DEEP`). At most 128: the JSON parser itself stops there, and a body it could not
    /// read must be answered `TOO_DEEP`, not `MALFORMED_JSON`.
    pub json_depth_limit: usize,
    /// The token bucket each principal draws a request from (429 `RATE_LIMITED`); `None`:
    /// no rate limit.
    pub rate_limit: Option<RateLimit>,
    /// How long a request may take to be answered (504 `TIMEOUT`).
    pub request_timeout: Duration,
    /// How many requests are served at once; one more is refused (503 `OVERLOADED`).
    pub max_concurrent_requests: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            json_depth_limit: DEFAULT_JSON_DEPTH_LIMIT,
            rate_limit: Some(RateLimit::per_second(50, 100)),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
        }
    }
}

/// A token bucket: `burst` requests at once, then one more every `refill_every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// The bucket's size (at least 1).
    pub burst: u32,
    /// The time one request's token takes to come back.
    pub refill_every: Duration,
}

impl RateLimit {
    /// `per_second` requests a second on average, `burst` at once.
    #[must_use]
    pub fn per_second(per_second: u32, burst: u32) -> Self {
        Self {
            burst,
            refill_every: Duration::from_secs(1) / per_second.max(1),
        }
    }
}

/// The deepest nesting of arrays and objects in `bytes` read as JSON, counted without
/// parsing (strings are skipped, with their escapes), stopping as soon as it reaches
/// `limit`: `Err(())` when it does. Malformed text is counted as far as it goes; the parser
/// refuses it afterwards.
///
/// ```
/// use rcip_server::json_depth;
/// assert_eq!(json_depth(br#"{"a": [1, {"b": "[[["}]}"#, 128), Ok(3));
/// assert_eq!(json_depth(&[b'['; 200], 128), Err(()));
/// ```
///
/// # Errors
///
/// `Err(())` when the nesting reaches `limit`.
#[allow(clippy::result_unit_err)] // The one failure has nothing to say but its name.
pub fn json_depth(bytes: &[u8], limit: usize) -> Result<usize, ()> {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth >= limit {
                    return Err(());
                }
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(deepest)
}

/// Whether a request's `Content-Type` is `application/json` (parameters such as `charset`
/// allowed).
pub(crate) fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// Buffers a JSON body (within the body limit) and refuses one nesting too deep before
/// anything parses it; other bodies pass untouched (their route refuses them).
pub(crate) async fn json_guard(
    State(limit): State<usize>,
    request: Request,
    next: Next,
) -> Response {
    if !is_json(&request) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(error) => return error.into_response(),
    };
    if json_depth(&bytes, limit).is_err() {
        return ApiError::new(
            400,
            "TOO_DEEP",
            format!("the body nests {limit} or more levels of arrays and objects"),
        )
        .into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The whole body, or 413 `BODY_TOO_LARGE` when the body limit cut it.
pub(crate) async fn read_body(body: Body) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, usize::MAX)
        .await
        .map_err(|error| {
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
            while let Some(cause) = source {
                if cause.is::<http_body_util::LengthLimitError>() {
                    return too_large();
                }
                source = cause.source();
            }
            ApiError::new(400, "BODY_UNREADABLE", "the request body could not be read")
        })
}

fn too_large() -> ApiError {
    ApiError::new(
        413,
        "BODY_TOO_LARGE",
        "the request body is larger than this server accepts",
    )
}

/// tower-http's body limit answers a `Content-Length` over the limit itself, in plain text:
/// that answer becomes the one error body.
pub(crate) async fn reshape_too_large<B>(response: http::Response<B>) -> Response
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/plain"));
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE && plain {
        return too_large().into_response();
    }
    response.map(Body::new)
}

/// The answer of a limit layer that failed the request: the timeout (504 `TIMEOUT`) or the
/// load shedder (503 `OVERLOADED`).
pub(crate) async fn layer_error(error: BoxError) -> Response {
    if error.is::<tower::timeout::error::Elapsed>() {
        return ApiError::new(
            504,
            "TIMEOUT",
            "the request took too long and was abandoned",
        )
        .into_response();
    }
    if error.is::<tower::load_shed::error::Overloaded>() {
        return ApiError::new(
            503,
            "OVERLOADED",
            "the server is serving as many requests as it can; try again shortly",
        )
        .into_response();
    }
    tracing::warn!(target: "rcip::server", %error, "a request failed in a layer");
    ApiError::new(500, "INTERNAL", "the server failed").into_response()
}

/// Token buckets, one per principal (kind and id: a human and an agent of one id are two).
#[derive(Debug)]
pub struct RateLimiter {
    limit: RateLimit,
    buckets: Mutex<HashMap<(PrincipalKind, String), Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// Buckets of `limit`, all full.
    #[must_use]
    pub fn new(limit: RateLimit) -> Self {
        Self {
            limit,
            buckets: Mutex::default(),
        }
    }

    /// Takes one token from `kind`/`id`'s bucket, or says how many whole seconds until one
    /// is back.
    ///
    /// # Errors
    ///
    /// The seconds to wait (at least 1) when the bucket is empty.
    pub fn take(&self, kind: PrincipalKind, id: &str) -> Result<(), u64> {
        self.take_at(kind, id, Instant::now())
    }

    fn take_at(&self, kind: PrincipalKind, id: &str, now: Instant) -> Result<(), u64> {
        let burst = f64::from(self.limit.burst.max(1));
        let every = self.limit.refill_every.as_secs_f64();
        let refill = |bucket: &Bucket| {
            let earned = if every > 0.0 {
                now.saturating_duration_since(bucket.at).as_secs_f64() / every
            } else {
                burst
            };
            (bucket.tokens + earned).min(burst)
        };
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_TRACKED_PRINCIPALS {
            // A full bucket is what a forgotten principal gets back: nothing is lost.
            buckets.retain(|_, bucket| refill(bucket) < burst);
        }
        let bucket = buckets.entry((kind, id.to_owned())).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let tokens = refill(bucket);
        *bucket = Bucket { tokens, at: now };
        if tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // Small, positive.
        let wait = ((1.0 - tokens) * every).ceil() as u64;
        Err(wait.max(1))
    }
}

/// Draws the authenticated principal's request from its bucket (429 `RATE_LIMITED` with
/// `Retry-After` when empty). Runs after authentication, which put the caller in the
/// extensions.
pub(crate) async fn rate_limit(
    State(limiter): State<Arc<RateLimiter>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(who) = request.extensions().get::<Authenticated>()
        && let Err(wait) = limiter.take(who.caller.kind, &who.caller.actor.id)
    {
        let mut error = ApiError::new(
            429,
            "RATE_LIMITED",
            format!("too many requests from this principal; try again in {wait} s"),
        );
        error.retry_after = Some(wait);
        return error.into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_refills_with_time_and_never_beyond_its_burst() {
        let limiter = RateLimiter::new(RateLimit {
            burst: 2,
            refill_every: Duration::from_secs(10),
        });
        let start = Instant::now();
        assert_eq!(limiter.take_at(PrincipalKind::Agent, "bot", start), Ok(()));
        assert_eq!(limiter.take_at(PrincipalKind::Agent, "bot", start), Ok(()));
        assert_eq!(limiter.take_at(PrincipalKind::Agent, "bot", start), Err(10));
        // Another principal, or the same id as another kind, has its own bucket.
        assert_eq!(limiter.take_at(PrincipalKind::Human, "bot", start), Ok(()));
        let later = start + Duration::from_secs(4);
        assert_eq!(limiter.take_at(PrincipalKind::Agent, "bot", later), Err(6));
        let refilled = start + Duration::from_secs(1000);
        assert_eq!(
            limiter.take_at(PrincipalKind::Agent, "bot", refilled),
            Ok(())
        );
        assert_eq!(
            limiter.take_at(PrincipalKind::Agent, "bot", refilled),
            Ok(())
        );
        assert!(
            limiter
                .take_at(PrincipalKind::Agent, "bot", refilled)
                .is_err()
        );
    }

    #[test]
    fn depth_skips_strings_and_escapes() {
        assert_eq!(json_depth(br#""\"[[[""#, 3), Ok(0));
        assert_eq!(json_depth(br#"[["\\"], {}]"#, 3), Ok(2));
        assert_eq!(json_depth(b"[[[]]]", 3), Err(()));
        assert_eq!(json_depth(b"[[]]", 3), Ok(2));
    }
}
