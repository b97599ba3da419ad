//! A per-request round-robin HTTP proxy, for testing several instances behind a balancer
//! without affinity: request n goes to backend n mod k, whatever session, cookie or stream it
//! belongs to. Bodies (server-sent event streams included) pass through as they stream; each
//! response carries `x-backend: I`, the index of the backend that served it.
//!
//! ```text
//! cargo run -p rcip-examples --example round_robin -- 127.0.0.1:8000 127.0.0.1:8001 127.0.0.1:8002
//! ```
//!
//! The first address is the proxy's; the others are the backends'. Loopback only: this is a
//! test tool, not a balancer to deploy.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

struct Proxy {
    backends: Vec<SocketAddr>,
    next: AtomicUsize,
    client: Client<HttpConnector, Body>,
}

async fn forward(State(proxy): State<Arc<Proxy>>, mut request: Request) -> Response {
    let index = proxy.next.fetch_add(1, Ordering::Relaxed) % proxy.backends.len();
    let backend = proxy.backends[index];
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let Ok(uri) = format!("http://{backend}{path}").parse::<Uri>() else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    *request.uri_mut() = uri;
    // The backend's own authority, as a balancer sends it (rmcp checks the Host header).
    if let Ok(host) = HeaderValue::from_str(&backend.to_string()) {
        request.headers_mut().insert(axum::http::header::HOST, host);
    }
    let method = request.method().clone();
    match proxy.client.request(request).await {
        Ok(response) => {
            let mut response = response.map(Body::new);
            response
                .headers_mut()
                .insert("x-backend", HeaderValue::from(index));
            eprintln!("{method} {path} -> {index} {}", response.status().as_u16());
            response
        }
        Err(error) => {
            eprintln!("{method} {path} -> {index} failed: {error}");
            (StatusCode::BAD_GATEWAY, format!("backend {index}: {error}")).into_response()
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: round_robin PROXY_ADDR BACKEND_ADDR...";
    let addr: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let backends = args
        .map(|a| a.parse::<SocketAddr>())
        .collect::<Result<Vec<_>, _>>()?;
    if backends.is_empty()
        || !addr.ip().is_loopback()
        || backends.iter().any(|b| !b.ip().is_loopback())
    {
        return Err(format!("{usage} (loopback addresses only)").into());
    }
    let proxy = Arc::new(Proxy {
        backends,
        next: AtomicUsize::new(0),
        client: Client::builder(TokioExecutor::new()).build_http(),
    });
    let app = axum::Router::new().fallback(forward).with_state(proxy);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    eprintln!("round-robin proxy at http://{addr}");
    axum::serve(listener, app).await?;
    Ok(())
}
