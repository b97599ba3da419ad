//! `tools/call` over loopback streamable HTTP, rcip-mcp against rmcp, side by side in one
//! interleaved run: the conformance fixture (`test_simple_text`) and the polls example
//! (23 tools, `polls.list`) against a minimal rmcp 3.11 server written here with
//! `#[tool_router]` (the same `test_simple_text`), both MCP revisions, 1 and 32 clients.
//! Every server runs in a process of its own on tokio's multi-threaded runtime; the clients
//! are rmcp's own (reqwest, `TCP_NODELAY`), the same for every server.
//!
//! ```text
//! cargo build --release -p rcip-examples --example polls --example mcp_conformance --example mcp_bench
//! target/release/examples/mcp_bench [--rounds 5] [--calls 400]
//! ```
//!
//! Prints p50, p99 and calls per second for each server, then each rcip server's ratios to
//! rmcp's (the targets: p50 at most 1.5 times rmcp's, calls per second at least two thirds).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_router};

/// The peer: a minimal rmcp server, as its README writes one.
#[derive(Clone)]
struct Peer;

#[tool_router(server_handler)]
impl Peer {
    #[tool(
        name = "test_simple_text",
        description = "Returns a simple text response."
    )]
    fn test_simple_text(&self) -> String {
        "This is a simple text response for testing.".to_owned()
    }
}

/// `mcp_bench serve-rmcp ADDR`: the peer over streamable HTTP at `http://ADDR/mcp`.
fn serve_rmcp(addr: SocketAddr) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let service = StreamableHttpService::new(
            || Ok(Peer),
            LocalSessionManager::default().into(),
            StreamableHttpServerConfig::default(),
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        // As rcip-mcp does: without it, a response written in two parts waits for the
        // client's delayed ACK (about 40 ms), and the comparison would measure that.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await.unwrap();
    });
}

struct Server {
    name: &'static str,
    tool: &'static str,
    uri: String,
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

fn start(
    name: &'static str,
    tool: &'static str,
    program: &Path,
    args: &[&str],
    addr: SocketAddr,
) -> Server {
    let child = Command::new(program)
        .args(args)
        .arg(addr.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "{name} did not listen on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
    Server {
        name,
        tool,
        uri: format!("http://{addr}/mcp"),
        child,
    }
}

/// Latencies and busy time of one server at one setting, over every round.
#[derive(Default)]
struct Sample {
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Sample {
    fn p(&mut self, q: f64) -> Duration {
        self.latencies.sort_unstable();
        let last = self.latencies.len().saturating_sub(1) as f64;
        self.latencies[(last * q).round() as usize]
    }

    fn per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64()
    }
}

/// `clients` clients each making `calls` calls of `tool`; their latencies and the wall time.
async fn run(uri: &str, tool: &str, modern: bool, clients: usize, calls: usize) -> Sample {
    let mut connected = Vec::new();
    for _ in 0..clients {
        let transport = StreamableHttpClientTransport::from_uri(uri.to_owned());
        let lifecycle = if modern {
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }
        } else {
            ClientLifecycleMode::Initialize
        };
        connected.push(().serve_with_lifecycle(transport, lifecycle).await.unwrap());
    }
    // One call each before the clock starts: connections open, caches warm.
    for client in &connected {
        let result = client
            .call_tool(CallToolRequestParams::new(tool.to_owned()))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true), "{tool} failed: {result:?}");
    }
    let start = Instant::now();
    let mut tasks = Vec::new();
    for client in connected {
        let tool = tool.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(calls);
            for _ in 0..calls {
                let t = Instant::now();
                let result = client
                    .call_tool(CallToolRequestParams::new(tool.clone()))
                    .await
                    .unwrap();
                latencies.push(t.elapsed());
                assert_ne!(result.is_error, Some(true));
            }
            let _ = client.cancel().await;
            latencies
        }));
    }
    let mut sample = Sample::default();
    for task in tasks {
        sample.latencies.extend(task.await.unwrap());
    }
    sample.wall = start.elapsed();
    sample
}

fn sibling(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.with_file_name(name);
    if !path.exists() {
        eprintln!(
            "mcp_bench: {} is missing; build it first:\n  cargo build --release -p rcip-examples \
             --example polls --example mcp_conformance --example mcp_bench",
            path.display()
        );
        std::process::exit(2);
    }
    path
}

fn flag(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve-rmcp") {
        serve_rmcp(args[1].parse().unwrap());
        return;
    }
    if cfg!(debug_assertions) {
        eprintln!("mcp_bench: a debug build measures nothing useful; run it with --release");
    }
    let rounds = flag(&args, "--rounds", 5);
    let calls = flag(&args, "--calls", 400);
    let me = std::env::current_exe().unwrap();
    let servers = [
        start(
            "rmcp",
            "test_simple_text",
            &me,
            &["serve-rmcp"],
            free_addr(),
        ),
        start(
            "rcip fixture",
            "test_simple_text",
            &sibling("mcp_conformance"),
            &[],
            free_addr(),
        ),
        start(
            "rcip polls",
            "polls.list",
            &sibling("polls"),
            &["mcp-http"],
            free_addr(),
        ),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "tools/call over loopback HTTP, {rounds} interleaved rounds, {calls} calls per round \
         (split among the clients)\n"
    );
    println!(
        "{:<11} {:>7}  {:<13} {:>10} {:>10} {:>10}   {:>9} {:>9}",
        "revision", "clients", "server", "p50", "p99", "calls/s", "p50/rmcp", "rate/rmcp"
    );
    let mut met = true;
    for modern in [false, true] {
        let revision = if modern { "2026-07-28" } else { "2025-11-25" };
        for clients in [1, 32] {
            let per_client = (calls / clients).max(5);
            let mut samples: Vec<Sample> = servers.iter().map(|_| Sample::default()).collect();
            for round in 0..rounds {
                // A different server first in each round.
                for k in 0..servers.len() {
                    let i = (round + k) % servers.len();
                    let server = &servers[i];
                    let sample = runtime.block_on(run(
                        &server.uri,
                        server.tool,
                        modern,
                        clients,
                        per_client,
                    ));
                    samples[i].latencies.extend(sample.latencies);
                    samples[i].wall += sample.wall;
                }
            }
            let rmcp_p50 = samples[0].p(0.5);
            let rmcp_rate = samples[0].per_second();
            for (server, sample) in servers.iter().zip(&mut samples) {
                let (p50, p99, rate) = (sample.p(0.5), sample.p(0.99), sample.per_second());
                let ratios = if server.name == "rmcp" {
                    String::new()
                } else {
                    let slower = p50.as_secs_f64() / rmcp_p50.as_secs_f64();
                    let share = rate / rmcp_rate;
                    met &= slower <= 1.5 && share >= 2.0 / 3.0;
                    format!("   {slower:>9.2} {share:>9.2}")
                };
                println!(
                    "{revision:<11} {clients:>7}  {:<13} {:>10.2?} {:>10.2?} {rate:>10.0}{ratios}",
                    server.name, p50, p99
                );
            }
        }
    }
    println!(
        "\ntargets (p50 <= 1.5x rmcp, calls/s >= 2/3 of rmcp) {}",
        if met { "met" } else { "NOT met" }
    );
}
