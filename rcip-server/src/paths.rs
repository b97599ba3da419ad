//! The fixed paths the routes, the documents and the metrics labels share.

/// Where MCP is served.
pub(crate) const MCP_PATH: &str = "/mcp";

/// The well-known path of the metadata (RFC 9728 section 3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";
