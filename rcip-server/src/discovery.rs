//! RFC 9728 protected-resource metadata: where a client learns which authorization servers
//! issue tokens for this resource and which scopes it understands. `/mcp` is a resource of
//! its own (its metadata at the well-known path with `/mcp` appended), as MCP clients look
//! it up from the URL they connect to.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use http::StatusCode;
use rcip_records::DelegatedScope;
use serde_json::{Value, json};

use crate::error::json_response;
use crate::paths::MCP_PATH;
use crate::shared::Shared;

/// The metadata of `resource` (an absolute URL).
pub(crate) fn metadata(shared: &Shared, resource: &str) -> Value {
    let mut document = json!({
        "resource": resource,
        "bearer_methods_supported": ["header"],
        "scopes_supported": DelegatedScope::ALL.map(DelegatedScope::as_str),
        "resource_name": "rcip Relationship Protocol platform",
        "resource_documentation": format!("{}/v1/openapi.json", shared.base_url),
    });
    // RFC 9728 makes the member optional; an empty list would tell a client that no
    // server issues tokens, when the operator simply configured none.
    if !shared.authorization_servers.is_empty() {
        document["authorization_servers"] = json!(shared.authorization_servers);
    }
    document
}

pub(crate) async fn rest(State(shared): State<Arc<Shared>>) -> Response {
    json_response(StatusCode::OK, &metadata(&shared, &shared.base_url))
}

pub(crate) async fn mcp(State(shared): State<Arc<Shared>>) -> Response {
    let resource = format!("{}{MCP_PATH}", shared.base_url);
    json_response(StatusCode::OK, &metadata(&shared, &resource))
}
