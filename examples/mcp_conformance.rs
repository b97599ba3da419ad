//! The MCP conformance fixture server: the tools the official conformance suite calls
//! (`rcip_examples::mcp_conformance`), served by rcip-mcp over streamable HTTP at
//! `http://ADDR/mcp`, both protocol revisions, confirmations answered through the client.
//! `tests/interop/mcp.sh` starts it and runs the suite against it; `tests/interop/
//! mcp-clients.sh` drives it with the Python SDK and the MCP Inspector CLI.
//!
//! ```text
//! cargo run -p rcip-examples --example mcp_conformance -- 127.0.0.1:8001
//! ```
//!
//! Beside `/mcp`, the trusted host's own approval interface, for clients that cannot show a
//! confirmation (no elicitation): `GET /host/confirmations` lists the pending ones, `POST
//! /host/confirmations/approve` approves them all. Loopback only, like the endpoint.

use std::net::SocketAddr;

use axum::Json;
use axum::extract::State;
use axum::routing::{get, post};
use rcip_examples::mcp_conformance::ConformanceFixture;
use rcip_mcp::{HttpOptions, http_router};
use rcip_runtime::Host;
use serde_json::{Value, json};

/// The pending confirmations, as the host's interface shows them.
async fn pending(State(host): State<Host>) -> Json<Value> {
    let pending: Vec<Value> = host
        .pending_confirmations()
        .into_iter()
        .map(|ticket| {
            json!({
                "id": ticket.confirmation.id,
                "capabilityId": ticket.capability_id,
                "title": ticket.confirmation.title,
                "input": ticket.input,
            })
        })
        .collect();
    Json(json!({ "pending": pending }))
}

/// The host approves every pending confirmation; each call's client gets the outcome when
/// it calls again.
async fn approve_all(State(host): State<Host>) -> Json<Value> {
    let mut approved = 0;
    for ticket in host.pending_confirmations() {
        host.resolve_confirmation(&ticket.confirmation.id, true)
            .await;
        approved += 1;
    }
    Json(json!({ "approved": approved }))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8001".to_owned())
        .parse()?;
    let fixture = ConformanceFixture::new()?;
    let bridge = fixture.bridge()?;
    let host_ui = axum::Router::new()
        .route("/host/confirmations", get(pending))
        .route("/host/confirmations/approve", post(approve_all))
        .with_state(fixture.host());
    let app = http_router(bridge, HttpOptions::new()).merge(host_ui);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    eprintln!("serving the conformance fixture at http://{addr}/mcp");
    axum::serve(listener, app).await?;
    Ok(())
}
