//! MCP prompts composed beside the bridge's tools: trusted host code hands the builder a
//! [`PromptProvider`]; the bridge answers `prompts/list`, `prompts/get` and
//! `completion/complete` for a prompt's arguments through it.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, PromptsCapability,
    ServerCapabilities,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::bridge::{Inner, McpBridgeBuilder};
use crate::context::{is_modern, principal_of, state_binding};
use crate::elicit;
use crate::providers::{PromptProvider, ProviderContext};

/// Domain separation for a prompt's sealed elicitation state (never opens as a tool's).
const PROMPT_BINDING_LABEL: &str = "rcip-mcp/prompt-elicitation/v1";

impl McpBridgeBuilder {
    /// Offers the provider's MCP prompts beside the tools: `prompts` is advertised, and
    /// `completions`.
    #[must_use]
    pub fn prompts(mut self, provider: Arc<dyn PromptProvider>) -> Self {
        self.prompts = Some(provider);
        self
    }
}

/// Adds the prompts capability when a provider is set.
pub(crate) fn advertise(inner: &Inner, capabilities: &mut ServerCapabilities) {
    if inner.prompts.is_some() {
        capabilities.prompts = Some(PromptsCapability::default());
    }
}

pub(crate) async fn list(
    inner: &Inner,
    ctx: RequestContext<RoleServer>,
) -> Result<ListPromptsResult, McpError> {
    let provider = inner
        .prompts
        .as_ref()
        .ok_or_else(McpError::method_not_found::<rmcp::model::ListPromptsRequestMethod>)?;
    let prompts = provider.list(ProviderContext::of(&ctx)).await?;
    Ok(ListPromptsResult::with_all_items(prompts))
}

pub(crate) async fn get(
    inner: &Inner,
    request: GetPromptRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<GetPromptResponse, McpError> {
    let provider = inner
        .prompts
        .as_ref()
        .ok_or_else(McpError::method_not_found::<rmcp::model::GetPromptRequestMethod>)?;
    let name = request.name;
    let arguments = request.arguments.unwrap_or_default();
    // A question the provider asks is sealed to this prompt, these arguments and the caller.
    let binding = state_binding(
        PROMPT_BINDING_LABEL,
        &name,
        &Value::Object(arguments.clone()),
        principal_of(&ctx).as_ref(),
    );
    let elicitor = elicit::for_request(
        &inner.codec,
        || binding.clone(),
        request.request_state.as_deref(),
        request.input_responses.as_ref(),
        &ctx,
    );
    // A prompt has no confirmations: a state that does not open as this prompt's is refused.
    if request.request_state.is_some() && is_modern(&ctx) && !elicitor.has_state() {
        return Err(crate::confirm::refused());
    }
    let cx = ProviderContext::of(&ctx).with_elicitor(elicitor.clone());
    let got = provider.get(name.clone(), arguments, cx).await;
    if let Some(answer) = elicit::finish_request(&inner.codec, || binding, &elicitor) {
        return answer.map(Into::into);
    }
    match got? {
        Some(result) => Ok(result.into()),
        None => Err(McpError::invalid_params(
            format!("Unknown prompt: {name}"),
            Some(json!({ "name": name })),
        )),
    }
}
