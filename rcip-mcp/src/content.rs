//! Content blocks from a capability's output: the host's mapping from a succeeded output to
//! MCP `image`, `audio`, `resource` (and any other) content.
//!
//! By default a succeeded call answers one text block with the structured output's JSON. A
//! host that wants other content gives the builder a mapping
//! ([`McpBridgeBuilder::content`](crate::McpBridgeBuilder::content)): it sees the capability
//! id and the output as the handler returned it, and either returns the blocks, which
//! replace the text block, or `None` (or no blocks), which keeps the text block.
//! `structuredContent` and the tool's `outputSchema` are unchanged either way.
//!
//! One ready-made convention is [`content_field`]: an output object whose `content` field
//! is a list of MCP content blocks, in the wire form of the revision (`{"type": "image",
//! "data": ..., "mimeType": ...}`, `{"type": "resource", "resource": {...}}`, ...).
//!
//! ```
//! use rcip_mcp::{McpBridge, content_field};
//! # use rcip_runtime::*;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let definition = ApplicationDefinition::new("charts", "Charts", "Draws charts.");
//! # let runtime = Runtime::new(definition, RuntimeOptions::default())?;
//! let bridge = McpBridge::builder(runtime.client())
//!     // Every capability of the `charts.` family answers `{"content": [...blocks]}`.
//!     .content(|capability_id, output| {
//!         capability_id.starts_with("charts.").then(|| content_field(output)).flatten()
//!     })
//!     .build()?;
//! # let _ = bridge; Ok(()) }
//! ```

use rmcp::model::ContentBlock;
use serde_json::Value;

/// The host's mapping from a capability id and its succeeded output to content blocks.
pub(crate) type ContentMapper = dyn Fn(&str, &Value) -> Option<Vec<ContentBlock>> + Send + Sync;

/// The blocks of an output object's `content` field, when it is a non-empty list in which
/// every element is an MCP content block; `None` otherwise (the bridge then keeps its
/// text block).
///
/// ```
/// use rcip_mcp::content_field;
/// use rcip_mcp::rmcp::model::ContentBlock;
/// use serde_json::json;
///
/// let output = json!({"content": [
///     {"type": "text", "text": "A red pixel:"},
///     {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
/// ]});
/// let blocks = content_field(&output).unwrap();
/// assert_eq!(blocks.len(), 2);
/// assert!(matches!(blocks[1], ContentBlock::Image(_)));
/// assert!(content_field(&json!({"content": "not blocks"})).is_none());
/// assert!(content_field(&json!({"content": [{"type": "video"}]})).is_none());
/// ```
#[must_use]
pub fn content_field(output: &Value) -> Option<Vec<ContentBlock>> {
    let list = output.get("content")?.as_array()?;
    if list.is_empty() {
        return None;
    }
    list.iter()
        .map(|block| serde_json::from_value::<ContentBlock>(block.clone()).ok())
        .collect()
}

/// The blocks the host's mapping makes of a succeeded output, if it applies (`None`, or
/// no blocks, leaves the bridge's text block).
pub(crate) fn mapped(
    mapper: Option<&ContentMapper>,
    capability_id: &str,
    output: &Value,
) -> Option<Vec<ContentBlock>> {
    mapper
        .and_then(|map| map(capability_id, output))
        .filter(|blocks| !blocks.is_empty())
}
