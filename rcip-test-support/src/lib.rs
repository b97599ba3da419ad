//! Test helpers shared by the rcip crates' tests: a dev-dependency only, never published.
//!
//! The deep-value tests build values with `rcip_core::depth::nested_arrays` (public API:
//! it documents what the depth limits are about) and run here, on a small stack.
#![deny(missing_docs)]

/// A SQLite file path of its own under the system's temporary directory, removed with its
/// journal files (`-wal`, `-shm`) when dropped, so also when the test panics.
///
/// ```
/// let db = rcip_test_support::TempDb::new();
/// std::fs::write(&db.path, b"x").unwrap();
/// let path = db.path.clone();
/// drop(db);
/// assert!(!path.exists());
/// ```
#[derive(Debug)]
pub struct TempDb {
    /// The file's path (nothing is there until a test makes it).
    pub path: std::path::PathBuf,
}

impl TempDb {
    /// A path no other `TempDb` of any process has at the same time: the process id, a
    /// counter and the clock's nanoseconds.
    #[must_use]
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("rcip-test-{}-{count}-{nanos}.db", std::process::id());
        Self {
            path: std::env::temp_dir().join(name),
        }
    }
}

impl Default for TempDb {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.path.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The stack the deep-value tests run on: 2 MiB, a tokio worker thread's, where a value
/// walked by recursion would overflow long before 100,000 levels.
pub const SMALL_STACK: usize = 2 << 20;

/// Runs `check` on a thread with a [`SMALL_STACK`], and fails if it panicked. (A stack
/// overflow aborts the whole test binary instead: that is the failure these tests catch.)
///
/// ```
/// rcip_test_support::on_small_stack(|| assert_eq!(1 + 1, 2));
/// ```
///
/// # Panics
///
/// When the thread cannot be spawned, or `check` panicked.
pub fn on_small_stack(check: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(check)
        .expect("a thread");
    assert!(thread.join().is_ok(), "the check panicked");
}

/// The value of the header `name` (any case) in an HTTP/1.1 head read by hand, trimmed.
///
/// ```
/// let head = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nmcp-session-id: a1\r\n";
/// assert_eq!(rcip_test_support::header(head, "content-length"), Some("12"));
/// assert_eq!(rcip_test_support::header(head, "MCP-Session-Id"), Some("a1"));
/// assert_eq!(rcip_test_support::header(head, "host"), None);
/// ```
#[must_use]
pub fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then_some(value.trim())
    })
}

/// The value of the Prometheus sample whose name and labels are `series` exactly (as the
/// text format renders them), or `None` when the scrape has no such line.
///
/// ```
/// let scrape = "# TYPE hits counter\nhits{door=\"rest\"} 3\nhits{door=\"mcp\"} 1\n";
/// assert_eq!(rcip_test_support::prometheus_sample(scrape, r#"hits{door="rest"}"#), Some(3.0));
/// assert_eq!(rcip_test_support::prometheus_sample(scrape, "hits"), None);
/// ```
#[must_use]
pub fn prometheus_sample(scrape: &str, series: &str) -> Option<f64> {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// One HTTP answer byte for byte, to tell whether two answers are the same: the status, the
/// headers in order but `date` (the clock's), the body. The answers compared are text; a
/// header or body that is not UTF-8 fails the test.
#[cfg(feature = "http")]
#[derive(Debug, PartialEq, Eq)]
pub struct RawAnswer {
    /// The status code.
    pub status: u16,
    /// The headers, names lowercase, `date` left out.
    pub headers: Vec<(String, String)>,
    /// The whole body.
    pub body: String,
}

#[cfg(feature = "http")]
impl RawAnswer {
    /// Sends `request` and reads its whole answer (not for a stream that never ends).
    ///
    /// # Panics
    ///
    /// When the request fails, or a header or the body is not UTF-8.
    pub async fn of(request: reqwest::RequestBuilder) -> Self {
        let response = request.send().await.expect("an answer");
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter(|(name, _)| *name != "date")
            .map(|(name, value)| {
                let value = value.to_str().expect("a text header");
                (name.to_string(), value.to_owned())
            })
            .collect();
        let body = response.bytes().await.expect("a body");
        let body = String::from_utf8(body.to_vec()).expect("a text body");
        Self {
            status,
            headers,
            body,
        }
    }
}

/// The events of one log target, each kept as a line of text: its level, then `name=value `
/// per field (`message` first). Install it as a thread's subscriber with
/// `tracing::subscriber::with_default`; a test binary with one such test keeps other
/// threads from settling tracing's cached interest in the callsites first.
///
/// ```
/// let log = rcip_test_support::LogCapture::new("app::audit");
/// tracing::subscriber::with_default(log.clone(), || {
///     tracing::warn!(target: "app::audit", user = "ada", "signed in");
///     tracing::warn!(target: "elsewhere", "not kept");
/// });
/// assert_eq!(log.lines(), ["WARN message=signed in user=\"ada\" "]);
/// ```
#[cfg(feature = "log")]
#[derive(Debug, Clone)]
pub struct LogCapture {
    target: &'static str,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

#[cfg(feature = "log")]
impl LogCapture {
    /// Keeps the events whose target is `target`.
    #[must_use]
    pub fn new(target: &'static str) -> Self {
        Self {
            target,
            lines: std::sync::Arc::default(),
        }
    }

    /// The lines kept so far.
    ///
    /// # Panics
    ///
    /// When a thread panicked while recording.
    #[must_use]
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("the log").clone()
    }
}

#[cfg(feature = "log")]
struct Fields(String);

#[cfg(feature = "log")]
impl tracing::field::Visit for Fields {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(&format!("message={value} "));
        } else {
            self.0.push_str(&format!("{}={value:?} ", field.name()));
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

#[cfg(feature = "log")]
impl tracing::Subscriber for LogCapture {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        metadata.target() == self.target
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = Fields(format!("{} ", event.metadata().level()));
        event.record(&mut fields);
        self.lines.lock().expect("the log").push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A 2025-11-25 MCP `POST` to `http://{addr}/mcp` with the JSON text `body`, accepting JSON
/// and event streams, in session `session` when given.
#[cfg(feature = "http")]
pub fn mcp_post(
    addr: std::net::SocketAddr,
    session: Option<&str>,
    body: String,
) -> reqwest::RequestBuilder {
    let request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body);
    match session {
        Some(session) => request.header("mcp-session-id", session),
        None => request,
    }
}

/// Opens a 2025-11-25 MCP session on `addr` for a client declaring `capabilities` (JSON
/// text, such as `{}` or `{"elicitation": {"form": {}}}`), and sends `initialized`: the
/// session's id.
///
/// # Panics
///
/// When the server opens no session or refuses `initialized`.
#[cfg(feature = "http")]
pub async fn mcp_session(addr: std::net::SocketAddr, capabilities: &str) -> String {
    let initialize = format!(
        r#"{{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {{
            "protocolVersion": "2025-11-25", "capabilities": {capabilities},
            "clientInfo": {{"name": "raw", "version": "1"}}}}}}"#
    );
    let opened = mcp_post(addr, None, initialize)
        .send()
        .await
        .expect("the server answers");
    let session = opened
        .headers()
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
        .expect("a session id")
        .to_owned();
    let _ = opened.bytes().await;
    let initialized = r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#;
    let status = mcp_post(addr, Some(&session), initialized.to_owned())
        .send()
        .await
        .expect("the server answers")
        .status();
    assert_eq!(status, 202, "initialized");
    session
}

/// Reads a response's body (an event stream) until `found` finds what it looks for in the
/// text read so far, waiting at most `wait` for each piece; the response stays readable.
///
/// # Panics
///
/// When a piece takes longer than `wait`, or the body ends or fails first.
#[cfg(feature = "http")]
pub async fn read_stream_until<T>(
    stream: &mut reqwest::Response,
    wait: std::time::Duration,
    mut found: impl FnMut(&str) -> Option<T>,
) -> T {
    let mut text = String::new();
    loop {
        if let Some(value) = found(&text) {
            return value;
        }
        let chunk = tokio::time::timeout(wait, stream.chunk())
            .await
            .unwrap_or_else(|_| panic!("nothing more within {wait:?} after {text:?}"))
            .expect("the body reads")
            .unwrap_or_else(|| panic!("the body ended after {text:?}"));
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
}

/// The `id:` of the first event of an event stream's text, once that whole event arrived.
///
/// ```
/// use rcip_test_support::first_event_id;
/// assert_eq!(first_event_id("id: s-1\ndata: {}\n\n"), Some("s-1".to_owned()));
/// assert_eq!(first_event_id("id: s-1\ndata: {}\n"), None, "not whole yet");
/// ```
#[must_use]
pub fn first_event_id(text: &str) -> Option<String> {
    let event = text
        .split("\n\n")
        .next()
        .filter(|_| text.contains("\n\n"))?;
    event
        .lines()
        .find_map(|line| line.strip_prefix("id:"))
        .map(|id| id.trim().to_owned())
}

/// A `POST /mcp` to `address` on a connection of its own (HTTP/1.1, `connection: close`),
/// read to the close: the status, the head and the body. `headers` are further header
/// lines, each ending in `\r\n`; a 2025-11-25 `session` adds its id and the protocol
/// version. For processes a test starts, where no HTTP client is at hand.
///
/// # Panics
///
/// When `address` does not answer with an HTTP status line.
#[must_use]
pub fn raw_mcp_post(
    address: &str,
    headers: &str,
    session: Option<&str>,
    body: &str,
) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).expect("the server answers");
    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(30)));
    let session = session.map_or_else(String::new, |id| {
        format!("mcp-session-id: {id}\r\nmcp-protocol-version: 2025-11-25\r\n")
    });
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n{headers}\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         {session}content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("the request is sent");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .expect("an HTTP status line");
    (status, head.to_owned(), body.to_owned())
}
