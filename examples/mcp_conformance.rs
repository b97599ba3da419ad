//! The MCP conformance fixture server: the tools the official conformance suite calls
//! (`rcip_examples::mcp_conformance`), served by rcip-mcp over streamable HTTP at
//! `http://ADDR/mcp`, both protocol revisions, confirmations answered through the client.
//! `tests/interop/mcp.sh` starts it and runs the suite against it:
//!
//! ```text
//! cargo run -p rcip-examples --example mcp_conformance -- 127.0.0.1:8001
//! ```

use std::net::SocketAddr;
use std::sync::Arc;

use rcip_examples::mcp_conformance::{CONTENT_TOOLS, ConformanceFixture};
use rcip_examples::mcp_conformance_resources::{ConformancePrompts, ConformanceResources};
use rcip_mcp::{HostBroker, HttpOptions, McpBridge, content_field, serve_http};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8001".to_owned())
        .parse()?;
    let fixture = ConformanceFixture::new()?;
    let bridge = McpBridge::builder(fixture.client())
        .confirmations(Arc::new(HostBroker::new(fixture.host())))
        .server_info("rcip-conformance", env!("CARGO_PKG_VERSION"))
        .content(|id, output| {
            CONTENT_TOOLS
                .contains(&id)
                .then(|| content_field(output))
                .flatten()
        })
        .resources(Arc::new(ConformanceResources))
        .prompts(Arc::new(ConformancePrompts))
        .build()?;
    eprintln!("serving the conformance fixture at http://{addr}/mcp");
    serve_http(bridge, addr, HttpOptions::new()).await?;
    Ok(())
}
