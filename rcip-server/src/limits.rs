//! The limits every request meets, each answered with its own stable code:
//!
//! | limit | default | refusal | how |
//! | --- | --- | --- | --- |
//! | body size | 1 MiB | 413 `BODY_TOO_LARGE` | tower-http's `RequestBodyLimitLayer` (its own plain-text 413 reshaped into the error body) |
//! | JSON nesting | 128 levels | 400 `TOO_DEEP` | [`json_depth`] over the buffered bytes, before any parse (by hand: no layer knows JSON) |
//! | per-principal rate | burst 100, 50/s | 429 `RATE_LIMITED` + `Retry-After` | [`RateLimiter`], a token bucket per principal (by hand: tower's `RateLimit` is one bucket for every caller) |
//! | request time | 30 s | 504 `TIMEOUT` | tower's `TimeoutLayer` |
//! | concurrent requests | 512 | 503 `OVERLOADED` | tower's `GlobalConcurrencyLimitLayer` behind `LoadShedLayer` (refused at once, never queued) |
//! | concurrent requests per principal | 64 | 429 `CONCURRENCY_LIMITED` + `Retry-After` | [`PrincipalSlots`](self), a count per principal, after authentication (by hand: tower's limits count every caller together) |
//! | body arrival | 10 s | 408 `BODY_TIMEOUT` | `tokio::time::timeout` around the body read |
//! | failed authentications per client address | burst 50, 10/s | 429 `RATE_LIMITED` + `Retry-After` | a token bucket per IP address, checked before any credential, drawn by each refusal |

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};
use rcip_records::PrincipalKind;
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
/// The default number of requests one principal may have in flight at once.
pub const DEFAULT_MAX_CONCURRENT_PER_PRINCIPAL: usize = 64;
/// The default time a request body may take to arrive once its head has.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(10);
/// The keys (principals, addresses) whose buckets are remembered before idle (full) ones
/// are forgotten.
const MAX_TRACKED_KEYS: usize = 10_000;

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
    /// How many requests one principal may have in flight at once; one more is refused (429
    /// `CONCURRENCY_LIMITED`), so one agent's slow or numerous requests cannot hold the
    /// global capacity (at least 1).
    pub max_concurrent_per_principal: usize,
    /// How long a request body may take to arrive (408 `BODY_TIMEOUT`): a client that
    /// declares a body and sends it slowly holds its slot this long at most.
    pub body_timeout: Duration,
    /// The token bucket each client address draws from when its request's credential is
    /// refused (or missing); checked before any credential is looked at, so an address that
    /// floods the server with bad credentials is answered 429 `RATE_LIMITED` without costing
    /// a token lookup. Authenticated requests draw nothing. Needs the client's address
    /// ([`serve`](crate::serve) provides it; with `axum::serve`, use
    /// `into_make_service_with_connect_info::<SocketAddr>()`). `None`: no such limit.
    pub unauthenticated_rate_limit: Option<RateLimit>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            json_depth_limit: DEFAULT_JSON_DEPTH_LIMIT,
            rate_limit: Some(RateLimit::per_second(50, 100)),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            max_concurrent_per_principal: DEFAULT_MAX_CONCURRENT_PER_PRINCIPAL,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            unauthenticated_rate_limit: Some(RateLimit::per_second(10, 50)),
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

/// What a request's `Content-Type` says of its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContentType {
    /// `application/json`, UTF-8 (no `charset`, or `charset=utf-8`).
    Json,
    /// `application/json` in another character set: JSON is UTF-8 here (RFC 8259, 8.1).
    JsonNotUtf8,
    /// Several `Content-Type` headers: which one the body is in is ambiguous.
    Several,
    /// Anything else, or none.
    Other,
}

impl ContentType {
    /// The `Content-Type` of `headers`.
    pub(crate) fn of(headers: &http::HeaderMap) -> Self {
        let mut values = headers.get_all(header::CONTENT_TYPE).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return if headers.contains_key(header::CONTENT_TYPE) {
                Self::Several
            } else {
                Self::Other
            };
        };
        let Ok(value) = value.to_str() else {
            return Self::Other;
        };
        let mut parts = value.split(';');
        let mime = parts.next().unwrap_or_default().trim();
        if !mime.eq_ignore_ascii_case("application/json") {
            return Self::Other;
        }
        let utf8 = parts.all(|parameter| match parameter.split_once('=') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("charset") => {
                let value = value.trim();
                let value = value
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .unwrap_or(value);
                value.eq_ignore_ascii_case("utf-8") || value.eq_ignore_ascii_case("utf8")
            }
            _ => true,
        });
        if utf8 { Self::Json } else { Self::JsonNotUtf8 }
    }

    /// The refusal of a body this server will not read (`None` for JSON and other types:
    /// the route decides what it takes).
    pub(crate) fn refusal(self) -> Option<ApiError> {
        match self {
            Self::JsonNotUtf8 => Some(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
                "JSON bodies are read as UTF-8 only: send Content-Type: application/json (charset=utf-8 or none)",
            )),
            Self::Several => Some(ApiError::new(
                StatusCode::BAD_REQUEST,
                "AMBIGUOUS_REQUEST",
                "the request has several Content-Type headers; send one",
            )),
            Self::Json | Self::Other => None,
        }
    }
}

/// What the JSON guard of a door enforces.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyRules {
    pub(crate) depth_limit: usize,
    pub(crate) timeout: Duration,
}

/// Buffers a JSON body (within the body limit and its arrival time) and refuses one
/// nesting too deep before anything parses it; refuses a JSON body in another character set
/// and a request with several `Content-Type`s; other bodies pass untouched (their route
/// refuses them). A JSON body it passes is also in the request's extensions, as
/// [`CheckedJson`].
pub(crate) async fn json_guard(
    State(rules): State<BodyRules>,
    request: Request,
    next: Next,
) -> Response {
    let kind = ContentType::of(request.headers());
    if let Some(refusal) = kind.refusal() {
        return refusal.into_response();
    }
    if kind != ContentType::Json {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let bytes = match read_body(body, rules.timeout).await {
        Ok(bytes) => bytes,
        Err(error) => return error.into_response(),
    };
    let limit = rules.depth_limit;
    if json_depth(&bytes, limit).is_err() {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "TOO_DEEP",
            format!("the body nests {limit} or more levels of arrays and objects"),
        )
        .into_response();
    }
    // The REST door's extractor takes the checked bytes from here (no second read or
    // check); MCP reads the body, which holds the same bytes.
    parts.extensions.insert(CheckedJson(bytes.clone()));
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// A JSON body the guard read and checked (UTF-8 `application/json`, within the size, time
/// and depth limits).
#[derive(Debug, Clone)]
pub(crate) struct CheckedJson(pub(crate) Bytes);

/// The whole body, or 413 `BODY_TOO_LARGE` when the body limit cut it, or 408
/// `BODY_TIMEOUT` when it did not arrive within `timeout`.
pub(crate) async fn read_body(body: Body, timeout: Duration) -> Result<Bytes, ApiError> {
    let read = tokio::time::timeout(timeout, axum::body::to_bytes(body, usize::MAX))
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "BODY_TIMEOUT",
                format!(
                    "the request body did not arrive within {} s",
                    timeout.as_secs_f64()
                ),
            )
        })?;
    read.map_err(|error| {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
        while let Some(cause) = source {
            if cause.is::<http_body_util::LengthLimitError>() {
                return too_large();
            }
            source = cause.source();
        }
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "BODY_UNREADABLE",
            "the request body could not be read",
        )
    })
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "BODY_TOO_LARGE",
        "the request body is larger than this server accepts",
    )
}

/// Every refusal in the one error body: an answer of 400 or more that is not JSON (tower-http's
/// plain-text 413, rmcp's plain-text refusals on `/mcp`: unknown session, wrong `Accept`,
/// ...) becomes `{"error": {"code", "message"}}` with its status, its text as the message and
/// a code named after the status; its other headers (`WWW-Authenticate`, `Allow`,
/// `Retry-After`) are kept. JSON answers (this server's own, JSON-RPC errors) pass as they
/// are.
pub(crate) async fn reshape_refusal(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if status.as_u16() < 400 {
        return response;
    }
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    if json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let error = if status == StatusCode::PAYLOAD_TOO_LARGE {
        too_large()
    } else {
        // The inner answers are short texts; a long or binary one is not echoed.
        let text = axum::body::to_bytes(body, 512)
            .await
            .ok()
            .and_then(|bytes| String::from_utf8(bytes.to_vec()).ok())
            .map(|text| text.trim().to_owned())
            .filter(|text| !text.is_empty() && !text.chars().any(char::is_control));
        let message = text.unwrap_or_else(|| {
            status
                .canonical_reason()
                .unwrap_or("the request was refused")
                .to_owned()
        });
        ApiError::new(status, status_code_name(status), message)
    };
    let mut reshaped = error.into_response();
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    for (name, value) in &parts.headers {
        if !reshaped.headers().contains_key(name) {
            reshaped.headers_mut().insert(name.clone(), value.clone());
        }
    }
    reshaped
}

/// The code of a refusal known by its status only.
fn status_code_name(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "BAD_REQUEST",
        401 => "UNAUTHENTICATED",
        403 => "FORBIDDEN",
        404 => "NOT_FOUND",
        405 => "METHOD_NOT_ALLOWED",
        406 => "NOT_ACCEPTABLE",
        408 => "TIMEOUT",
        409 => "CONFLICT",
        413 => "BODY_TOO_LARGE",
        415 => "UNSUPPORTED_MEDIA_TYPE",
        422 => "UNPROCESSABLE",
        429 => "RATE_LIMITED",
        503 => "UNAVAILABLE",
        504 => "TIMEOUT",
        _ if status.is_client_error() => "REFUSED",
        _ => "INTERNAL",
    }
}

/// The answer of a limit layer that failed the request: the timeout (504 `TIMEOUT`) or the
/// load shedder (503 `OVERLOADED`).
pub(crate) async fn layer_error(error: BoxError) -> Response {
    if error.is::<tower::timeout::error::Elapsed>() {
        return ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "TIMEOUT",
            "the request took too long and was abandoned",
        )
        .into_response();
    }
    if error.is::<tower::load_shed::error::Overloaded>() {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "OVERLOADED",
            "the server is serving as many requests as it can; try again shortly",
        )
        .into_response();
    }
    tracing::warn!(target: "rcip::server", %error, "a request failed in a layer");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "INTERNAL",
        "the server failed",
    )
    .into_response()
}

/// Token buckets, one per principal (kind and id: a human and an agent of one id are two).
#[derive(Debug)]
pub struct RateLimiter {
    buckets: Buckets<(PrincipalKind, String)>,
}

impl RateLimiter {
    /// Buckets of `limit`, all full.
    #[must_use]
    pub fn new(limit: RateLimit) -> Self {
        Self {
            buckets: Buckets::new(limit),
        }
    }

    /// Takes one token from `kind`/`id`'s bucket, or says how many whole seconds until one
    /// is back.
    ///
    /// # Errors
    ///
    /// The seconds to wait (at least 1) when the bucket is empty.
    pub fn take(&self, kind: PrincipalKind, id: &str) -> Result<(), u64> {
        self.buckets
            .draw((kind, id.to_owned()), Instant::now(), true)
    }
}

/// Token buckets by key, all of one size; at [`MAX_TRACKED_KEYS`] keys the full ones are
/// forgotten (a full bucket is what a forgotten key gets back: nothing is lost).
#[derive(Debug)]
struct Buckets<K> {
    limit: RateLimit,
    buckets: Mutex<HashMap<K, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl<K: Hash + Eq> Buckets<K> {
    fn new(limit: RateLimit) -> Self {
        Self {
            limit,
            buckets: Mutex::default(),
        }
    }

    /// Whether `key`'s bucket holds a token at `now`, taking it when `take`; else the whole
    /// seconds until one is back (at least 1).
    fn draw(&self, key: K, now: Instant, take: bool) -> Result<(), u64> {
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
        if buckets.len() >= MAX_TRACKED_KEYS {
            buckets.retain(|_, bucket| refill(bucket) < burst);
        }
        let bucket = buckets.entry(key).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let tokens = refill(bucket);
        *bucket = Bucket { tokens, at: now };
        if tokens >= 1.0 {
            if take {
                bucket.tokens -= 1.0;
            }
            return Ok(());
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // Small, positive.
        let wait = ((1.0 - tokens) * every).ceil() as u64;
        Err(wait.max(1))
    }
}

/// 429 `RATE_LIMITED` with `Retry-After`.
fn rate_limited(whose: &str, wait: u64) -> Response {
    let mut error = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "RATE_LIMITED",
        format!("too many requests from this {whose}; try again in {wait} s"),
    );
    error.retry_after = Some(wait);
    error.into_response()
}

/// Draws the authenticated principal's request from its bucket: 429 `RATE_LIMITED` with
/// `Retry-After` when it is empty.
pub(crate) fn principal_rate(limiter: &RateLimiter, who: &Authenticated) -> Option<Response> {
    limiter
        .take(who.caller.kind, &who.caller.actor.id)
        .err()
        .map(|wait| rate_limited("principal", wait))
}

/// The buckets of client addresses whose credentials were refused.
#[derive(Debug)]
pub(crate) struct AddressLimiter {
    buckets: Buckets<IpAddr>,
}

impl AddressLimiter {
    pub(crate) fn new(limit: RateLimit) -> Self {
        Self {
            buckets: Buckets::new(limit),
        }
    }

    /// The client address of a request, when the server that accepted it said.
    pub(crate) fn address(extensions: &http::Extensions) -> Option<IpAddr> {
        extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(peer)| peer.ip())
    }

    /// 429 when `address` has no token left: checked before any credential is looked at.
    pub(crate) fn check(&self, address: IpAddr) -> Option<Response> {
        self.buckets
            .draw(address, Instant::now(), false)
            .err()
            .map(|wait| rate_limited("address", wait))
    }

    /// A refused credential costs its address a token.
    pub(crate) fn charge(&self, address: IpAddr) {
        let _ = self.buckets.draw(address, Instant::now(), true);
    }
}

/// The requests each principal has in flight.
#[derive(Debug)]
pub(crate) struct PrincipalSlots {
    max: usize,
    held: Mutex<HashMap<(PrincipalKind, String), usize>>,
}

/// One request's place among its principal's; given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    slots: Arc<PrincipalSlots>,
    key: (PrincipalKind, String),
}

impl PrincipalSlots {
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            held: Mutex::default(),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<(PrincipalKind, String), usize>> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take(self: &Arc<Self>, kind: PrincipalKind, id: &str) -> Option<Slot> {
        let key = (kind, id.to_owned());
        let mut held = self.held();
        let count = held.entry(key.clone()).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        drop(held);
        Some(Slot {
            slots: Arc::clone(self),
            key,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.slots.held();
        if let Some(count) = held.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.key);
            }
        }
    }
}

/// One of the authenticated principal's slots, held while its request is served, or
/// `None` when it has none left ([`concurrency_limited`]): one principal's slow or
/// numerous requests take at most its share of the global capacity.
pub(crate) fn principal_slot(slots: &Arc<PrincipalSlots>, who: &Authenticated) -> Option<Slot> {
    slots.take(who.caller.kind, &who.caller.actor.id)
}

/// 429 `CONCURRENCY_LIMITED` with `Retry-After: 1`.
pub(crate) fn concurrency_limited(slots: &PrincipalSlots) -> Response {
    let mut error = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "CONCURRENCY_LIMITED",
        format!(
            "this principal already has {} requests in flight; try again when one is answered",
            slots.max
        ),
    );
    error.retry_after = Some(1);
    error.into_response()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_refills_with_time_and_never_beyond_its_burst() {
        let buckets = Buckets::new(RateLimit {
            burst: 2,
            refill_every: Duration::from_secs(10),
        });
        let limiter = Limiter(&buckets);
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

    /// The principal buckets' draw, taking a token, at a given time.
    struct Limiter<'a>(&'a Buckets<(PrincipalKind, String)>);

    impl Limiter<'_> {
        fn take_at(&self, kind: PrincipalKind, id: &str, now: Instant) -> Result<(), u64> {
            self.0.draw((kind, id.to_owned()), now, true)
        }
    }

    #[test]
    fn checking_an_address_takes_nothing_and_a_charge_does() {
        let limiter = AddressLimiter::new(RateLimit {
            burst: 2,
            refill_every: Duration::from_secs(60),
        });
        let (one, two): (IpAddr, IpAddr) = ([127, 0, 0, 1].into(), [127, 0, 0, 2].into());
        for _ in 0..10 {
            assert!(limiter.check(one).is_none());
        }
        limiter.charge(one);
        assert!(limiter.check(one).is_none());
        limiter.charge(one);
        let refused = limiter.check(one).unwrap();
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(
            limiter.check(two).is_none(),
            "another address has its own bucket"
        );
    }

    #[test]
    fn a_principal_holds_at_most_its_slots_and_gets_them_back() {
        let slots = Arc::new(PrincipalSlots::new(2));
        let a = slots.take(PrincipalKind::Agent, "bot").unwrap();
        let _b = slots.take(PrincipalKind::Agent, "bot").unwrap();
        assert!(slots.take(PrincipalKind::Agent, "bot").is_none());
        assert!(slots.take(PrincipalKind::Agent, "other").is_some());
        assert!(slots.take(PrincipalKind::Human, "bot").is_some());
        drop(a);
        assert!(slots.take(PrincipalKind::Agent, "bot").is_some());
        drop(_b);
        assert!(
            !slots
                .held()
                .contains_key(&(PrincipalKind::Agent, "bot".to_owned())),
            "a principal with nothing in flight is forgotten"
        );
    }

    #[test]
    fn content_types_json_in_utf8_only_and_once() {
        let of = |values: &[&str]| {
            let mut headers = http::HeaderMap::new();
            for value in values {
                headers.append(header::CONTENT_TYPE, value.parse().unwrap());
            }
            ContentType::of(&headers)
        };
        assert_eq!(of(&["application/json"]), ContentType::Json);
        assert_eq!(of(&["Application/JSON; charset=UTF-8"]), ContentType::Json);
        assert_eq!(
            of(&["application/json;charset=\"utf-8\""]),
            ContentType::Json
        );
        assert_eq!(
            of(&["application/json; charset=utf-16"]),
            ContentType::JsonNotUtf8
        );
        assert_eq!(
            of(&["application/json; charset=iso-8859-1"]),
            ContentType::JsonNotUtf8
        );
        assert_eq!(
            of(&["application/json", "text/plain"]),
            ContentType::Several
        );
        assert_eq!(of(&["text/plain"]), ContentType::Other);
        assert_eq!(of(&[]), ContentType::Other);
    }

    #[test]
    fn depth_skips_strings_and_escapes() {
        assert_eq!(json_depth(br#""\"[[[""#, 3), Ok(0));
        assert_eq!(json_depth(br#"[["\\"], {}]"#, 3), Ok(2));
        assert_eq!(json_depth(b"[[[]]]", 3), Err(()));
        assert_eq!(json_depth(b"[[]]", 3), Ok(2));
    }
}
