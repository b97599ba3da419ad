//! Serving a router on a TCP listener with connection hygiene: a head timeout, an idle
//! keep-alive timeout, a cap on open connections, the client's address in every request,
//! and a graceful stop.
//!
//! Written on hyper directly (not `axum::serve`) because `axum::serve` sets no timer, so a
//! connection that sends nothing, or one header byte every few seconds, is kept for ever.
//! hyper's own `header_read_timeout` is not enough either: its clock starts whenever the
//! connection waits for a head, so it cuts idle keep-alive connections as soon as slow
//! heads, and a load balancer's pooled connections need a much longer idle time than a
//! head needs to arrive (a backend that closes first races the balancer's next request).
//! No maintained crate separates the two, hence the small watchdog below.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::ConnectInfo;
use http_body::Frame;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore, watch};
use tokio::time::Instant;
use tower::ServiceExt;

/// The default time a connection has to deliver a whole request head: from its opening for
/// its first request, from the first byte of any later one.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a keep-alive connection may wait, between requests, for the next one.
/// Longer than the usual load balancer's pooled-connection idle time (60 s), so that the
/// balancer, not this server, closes an idle connection first.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(75);
/// The default cap on open connections (kept under the process's descriptor limit: see
/// [`ConnectionLimits::default`]).
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Descriptors left for everything that is not a client connection (database, files, the
/// listener) when the cap is derived from the descriptor limit.
const RESERVED_DESCRIPTORS: usize = 64;

/// How [`serve`] accepts and keeps connections.
///
/// ```
/// use std::time::Duration;
/// use rcip_server::ConnectionLimits;
/// let limits = ConnectionLimits { header_timeout: Duration::from_secs(5), ..ConnectionLimits::default() };
/// assert!(limits.max_connections >= 1);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a new connection has to send its first request head, and any connection
    /// to finish a head once its first byte arrived; then it is closed unanswered.
    pub header_timeout: Duration,
    /// How long a keep-alive connection may stay silent between requests; then it is
    /// closed.
    pub idle_timeout: Duration,
    /// Connections open at once; while this many are open, new ones wait in the listen
    /// backlog until one closes.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    /// The timeouts above, and [`DEFAULT_MAX_CONNECTIONS`] lowered, where the process's
    /// open-file limit is known (Linux), to what that limit leaves after a reserve for the
    /// database and files: a server at its cap still has descriptors to answer with.
    fn default() -> Self {
        let max_connections = descriptor_limit()
            .map_or(DEFAULT_MAX_CONNECTIONS, |limit| {
                DEFAULT_MAX_CONNECTIONS.min(limit.saturating_sub(RESERVED_DESCRIPTORS))
            })
            .max(1);
        Self {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections,
        }
    }
}

/// The soft limit on open files, read from `/proc/self/limits` (no `unsafe` call needed;
/// `None` elsewhere or when unlimited).
fn descriptor_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting, lets every
/// connection finish the request it is answering (idle ones close at once) and returns
/// when all are closed. Each request carries the client's address as
/// [`ConnectInfo<SocketAddr>`](axum::extract::ConnectInfo) (the per-address limit of
/// [`Server`](crate::Server) reads it). HTTP/1.1.
///
/// ```no_run
/// # async fn demo(app: axum::Router) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let stop = std::future::pending::<()>(); // or: async { let _ = tokio::signal::ctrl_c().await; }
/// rcip_server::serve(listener, app, rcip_server::ConnectionLimits::default(), stop).await
/// # }
/// ```
///
/// # Errors
///
/// Never for a failed connection (it is logged and dropped); the listener's own failures
/// are retried, so this returns `Ok` after the stop.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let (stop, stopped) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let max = limits.max_connections.max(1);
    let open = Arc::new(Semaphore::new(max));
    let mut watch_stop = stopped.clone();
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&open).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            () = stop_signal(&mut watch_stop) => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors, or a connection reset before it was accepted:
                    // neither ends the server. A short pause lets descriptors come back.
                    tracing::warn!(target: "rcip::server", %error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = stop_signal(&mut watch_stop) => break,
        };
        let _ = stream.set_nodelay(true);
        let (app, stopped) = (app.clone(), stopped.clone());
        let open_gauge = metrics::gauge!("rcip_http_connections_open");
        open_gauge.increment(1.0);
        tokio::spawn(async move {
            connection(stream, peer, app, limits, stopped).await;
            open_gauge.decrement(1.0);
            drop(permit);
        });
    }
    drop(listener);
    // Every connection holds a permit until it is closed.
    #[allow(clippy::cast_possible_truncation)] // Capped below.
    let all = max.min(u32::MAX as usize) as u32;
    let _ = open.acquire_many(all).await;
    Ok(())
}

/// One connection: hyper's HTTP/1.1 with the watchdog beside it.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: ConnectionLimits,
    mut stopped: watch::Receiver<bool>,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched::new(stream, Arc::clone(&activity)));
    let service = {
        let activity = Arc::clone(&activity);
        hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
            let busy = Busy::begin(&activity);
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(ConnectInfo(peer));
            let answer = app.clone().oneshot(request);
            async move {
                let response = answer
                    .await
                    .unwrap_or_else(|never: Infallible| match never {});
                // The connection stays busy until the answer's body is sent (or dropped).
                Ok::<_, Infallible>(response.map(|body| Body::new(Tracked { body, _busy: busy })))
            }
        })
    };
    let mut conn = pin!(
        hyper::server::conn::http1::Builder::new()
            .keep_alive(true)
            .serve_connection(io, service)
    );
    let mut stopping = false;
    // One timer for the connection's life, moved only when the deadline moves (a new
    // timer per request would register and cancel one in tokio's wheel each time).
    let mut timer = pin!(tokio::time::sleep_until(
        Instant::now() + limits.header_timeout
    ));
    let mut armed = None;
    loop {
        let deadline = activity.deadline(&limits);
        if let Some(at) = deadline
            && armed != Some(at)
        {
            timer.as_mut().reset(at);
            armed = Some(at);
        }
        let changed = activity.changed.notified();
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(error) = served {
                    tracing::debug!(target: "rcip::server", %error, "connection ended");
                }
                return;
            }
            () = timer.as_mut(), if deadline.is_some() => {
                armed = None;
                if activity.deadline(&limits).is_some_and(|at| at <= Instant::now()) {
                    // Nothing is being answered: the connection is dropped unanswered.
                    if activity.awaiting_head() {
                        crate::observe::refused_connection("header_timeout");
                    }
                    tracing::debug!(target: "rcip::server", %peer, "connection timed out");
                    return;
                }
            }
            () = changed => {}
            () = stop_signal(&mut stopped), if !stopping => {
                stopping = true;
                // Idle: closed now; busy: closed once the answer is sent.
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Completes once the stop is signalled (the watch's guard is not held across the wait:
/// it is not `Send`).
async fn stop_signal(stopped: &mut watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await.map(|_| ());
}

/// What a connection is doing, for its watchdog.
#[derive(Debug)]
struct Activity {
    phase: Mutex<Phase>,
    /// Woken when a request is answered, so the watchdog takes up the idle deadline.
    changed: Notify,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request head since `since`; `first_byte` once one started arriving.
    Waiting {
        since: Instant,
        first_byte: Option<Instant>,
        first_request: bool,
    },
    /// Answering this many requests.
    Busy(usize),
}

impl Activity {
    fn new() -> Self {
        Self {
            phase: Mutex::new(Phase::Waiting {
                since: Instant::now(),
                first_byte: None,
                first_request: true,
            }),
            changed: Notify::new(),
        }
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.phase
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// When the connection is to be closed if nothing changes (`None` while answering: the
    /// request's own timeouts apply).
    fn deadline(&self, limits: &ConnectionLimits) -> Option<Instant> {
        match *self.phase() {
            Phase::Waiting {
                since,
                first_request: true,
                ..
            } => Some(since + limits.header_timeout),
            Phase::Waiting {
                first_byte: Some(at),
                ..
            } => Some(at + limits.header_timeout),
            Phase::Waiting { since, .. } => Some(since + limits.idle_timeout),
            Phase::Busy(_) => None,
        }
    }

    /// Whether the connection owes a request head (its first, or one begun): a close now
    /// is the header timeout's, not a keep-alive's idle end.
    fn awaiting_head(&self) -> bool {
        matches!(
            *self.phase(),
            Phase::Waiting {
                first_request: true,
                ..
            } | Phase::Waiting {
                first_byte: Some(_),
                ..
            }
        )
    }

    fn read(&self) {
        if let Phase::Waiting { first_byte, .. } = &mut *self.phase()
            && first_byte.is_none()
        {
            *first_byte = Some(Instant::now());
        }
    }
}

/// A request being answered: the connection is busy until it is dropped (with the
/// answer's body, or with the request's future when the client went away).
#[derive(Debug)]
struct Busy(Arc<Activity>);

impl Busy {
    fn begin(activity: &Arc<Activity>) -> Self {
        let mut phase = activity.phase();
        *phase = match *phase {
            Phase::Busy(n) => Phase::Busy(n + 1),
            Phase::Waiting { .. } => Phase::Busy(1),
        };
        drop(phase);
        Self(Arc::clone(activity))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut phase = self.0.phase();
        *phase = match *phase {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Waiting {
                since: Instant::now(),
                first_byte: None,
                first_request: false,
            },
        };
        drop(phase);
        self.0.changed.notify_one();
    }
}

/// An answer's body that keeps its connection busy while it is being sent.
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// The TCP stream, telling the watchdog when bytes arrive, and giving hyper's own refusals
/// the service's error body.
///
/// hyper answers a request it cannot parse (a control byte in a header, a malformed request
/// line, a head too large) itself, before any service runs, with an empty body and no hook
/// to change it. Every answer of 400 or more the service writes has a body (the server's
/// refusals are reshaped into the error body), so an answer of 400 or more with
/// `content-length: 0` is hyper's: it is written instead as the same status with the one
/// error body (`{"error": {"code": "MALFORMED_REQUEST", ...}}`).
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
    /// A rewritten answer being written: its bytes, how many are out, and how many bytes of
    /// hyper's it stands for.
    rewrite: Option<(Vec<u8>, usize, usize)>,
}

impl Watched {
    fn new(inner: TcpStream, activity: Arc<Activity>) -> Self {
        Self {
            inner,
            activity,
            rewrite: None,
        }
    }
}

/// hyper's own error answer in `bytes` (a whole head, status 400 or more, empty body): the
/// service's error body under the same status.
fn rewritten(bytes: &[u8]) -> Option<Vec<u8>> {
    let head = bytes.strip_suffix(b"\r\n\r\n")?;
    let head = std::str::from_utf8(head).ok()?;
    let status: u16 = head.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()?;
    let empty = head
        .lines()
        .any(|line| line.eq_ignore_ascii_case("content-length: 0"));
    if status < 400 || !empty {
        return None;
    }
    let reason = http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Error");
    let body = serde_json::json!({"error": {
        "code": "MALFORMED_REQUEST",
        "message": format!("the request could not be read as HTTP/1.1 ({status} {reason})"),
    }})
    .to_string();
    Some(
        format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n\
             cache-control: no-store\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.rewrite.is_none()
            && let Some(answer) = rewritten(buf)
        {
            this.rewrite = Some((answer, 0, buf.len()));
        }
        let Some((answer, written, stands_for)) = &mut this.rewrite else {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        };
        while *written < answer.len() {
            match Pin::new(&mut this.inner).poll_write(cx, &answer[*written..]) {
                Poll::Ready(Ok(n)) => *written += n,
                other => return other,
            }
        }
        let stands_for = *stands_for;
        this.rewrite = None;
        Poll::Ready(Ok(stands_for))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    // Not vectored: hyper then hands each answer's head to `poll_write` whole, where the
    // rewrite above can see it.
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_an_empty_error_answer_is_rewritten() {
        let hyper = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let answer = String::from_utf8(rewritten(hyper).unwrap()).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{answer}"
        );
        assert!(answer.ends_with(r#""code":"MALFORMED_REQUEST","message":"the request could not be read as HTTP/1.1 (400 Bad Request)"}}"#), "{answer}");
        let large = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n";
        assert!(rewritten(large).is_some());
        for kept in [
            &b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"[..],
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 10\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}",
            b"{\"result\": 1}",
        ] {
            assert!(rewritten(kept).is_none());
        }
    }

    #[test]
    fn the_descriptor_limit_is_read_where_the_system_tells_it() {
        if cfg!(target_os = "linux") {
            assert!(descriptor_limit().is_some_and(|limit| limit > 0));
        }
        assert!(ConnectionLimits::default().max_connections >= 1);
    }
}
