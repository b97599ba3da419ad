//! MCP prompts composed beside the bridge's tools: trusted host code hands the builder a
//! [`PromptProvider`]; the bridge answers `prompts/list`, `prompts/get` and
//! `completion/complete` for a prompt's arguments through it.

use std::fmt;
use std::sync::Arc;

use rcip_runtime::BoxFuture;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ArgumentInfo, CompletionContext, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    JsonObject, ListPromptsResult, Prompt, PromptsCapability, ServerCapabilities,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

use crate::bridge::{Inner, McpBridgeBuilder};
use crate::context::{is_modern, principal_of, state_binding};
use crate::elicit;
use crate::resources::ProviderContext;

/// Domain separation for a prompt's sealed elicitation state (never opens as a tool's).
const PROMPT_BINDING_LABEL: &str = "rcip-mcp/prompt-elicitation/v1";

/// Trusted host code offering MCP prompts beside the bridge's tools
/// ([`McpBridgeBuilder::prompts`]).
///
/// Results use rmcp's model types (re-exported as [`rcip_mcp::rmcp`](crate::rmcp)). An `Err`
/// is sent as the JSON-RPC error it is (e.g. `ErrorData::invalid_params` for a missing
/// argument); a prompt [`get`](Self::get) does not know is `Ok(None)`, answered `-32602`
/// with the name in `data.name`.
///
/// ```
/// use rcip_mcp::rmcp::ErrorData;
/// use rcip_mcp::rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};
/// use rcip_mcp::{PromptProvider, ProviderContext};
/// use rcip_runtime::BoxFuture;
///
/// /// A prompt that asks for a summary of one topic.
/// #[derive(Debug)]
/// struct Summaries;
///
/// impl PromptProvider for Summaries {
///     fn list(&self, _cx: ProviderContext) -> BoxFuture<Result<Vec<Prompt>, ErrorData>> {
///         let topic = PromptArgument::new("topic").with_required(true);
///         let prompt = Prompt::new("summarize", Some("Summarize the notes on a topic."), Some(vec![topic]));
///         Box::pin(async move { Ok(vec![prompt]) })
///     }
///
///     fn get(
///         &self,
///         name: String,
///         arguments: JsonObject,
///         _cx: ProviderContext,
///     ) -> BoxFuture<Result<Option<GetPromptResult>, ErrorData>> {
///         Box::pin(async move {
///             if name != "summarize" {
///                 return Ok(None);
///             }
///             let Some(topic) = arguments.get("topic").and_then(|t| t.as_str()) else {
///                 return Err(ErrorData::invalid_params("summarize needs a topic", None));
///             };
///             let text = format!("Summarize my notes about {topic}.");
///             Ok(Some(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])))
///         })
///     }
/// }
/// ```
pub trait PromptProvider: Send + Sync + fmt::Debug + 'static {
    /// The prompts (`prompts/list`), all in one page.
    fn list(&self, cx: ProviderContext) -> BoxFuture<Result<Vec<Prompt>, McpError>>;

    /// The prompt `name` with `arguments` (an empty object when the client sent none), or
    /// `None` when there is no such prompt.
    fn get(
        &self,
        name: String,
        arguments: JsonObject,
        cx: ProviderContext,
    ) -> BoxFuture<Result<Option<GetPromptResult>, McpError>>;

    /// Completion values for an argument of the prompt `name` (`completion/complete` with a
    /// `ref/prompt`); the bridge sends the first 100. Default: none.
    fn complete(
        &self,
        name: String,
        argument: ArgumentInfo,
        context: Option<CompletionContext>,
        cx: ProviderContext,
    ) -> BoxFuture<Result<Vec<String>, McpError>> {
        let _ = (name, argument, context, cx);
        Box::pin(async { Ok(Vec::new()) })
    }
}

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
        inner,
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
    if let Some(answer) = elicit::finish_request(inner, || binding, &elicitor) {
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
