//! A bridge and any rmcp client handler over an in-process duplex, in either era
//! (`mod duplex;`).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use rcip_mcp::McpBridge;
use rcip_mcp::rmcp::model::ProtocolVersion;
use rcip_mcp::rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rcip_mcp::rmcp::{ClientHandler, ServiceExt};

/// Serves `bridge` on one end of a duplex and connects `handler` on the other: the
/// 2025-11-25 `initialize` handshake, or (`modern`) 2026-07-28 discovery.
pub async fn connect<H: ClientHandler>(
    bridge: &McpBridge,
    handler: H,
    modern: bool,
) -> RunningService<RoleClient, H> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let bridge = bridge.clone();
    tokio::spawn(async move {
        if let Ok(running) = bridge.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    if modern {
        handler
            .serve_with_lifecycle(
                client_io,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap()
    } else {
        handler.serve(client_io).await.unwrap()
    }
}
