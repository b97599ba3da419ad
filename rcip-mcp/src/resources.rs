//! MCP resources (and resource templates) composed beside the bridge's tools: trusted host
//! code hands the builder a [`ResourceProvider`]; the bridge answers `resources/list`,
//! `resources/templates/list`, `resources/read`, `resources/subscribe` and
//! `resources/unsubscribe` (2025-11-25) and `completion/complete` for a template through it.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ListResourceTemplatesResult,
    ListResourcesResult, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, ResourcesCapability, ServerCapabilities, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

use crate::bridge::{Inner, McpBridgeBuilder};
use crate::providers::{ProviderContext, ResourceProvider};

impl McpBridgeBuilder {
    /// Offers the provider's MCP resources beside the tools: `resources` is advertised (with
    /// `subscribe` when [`ResourceProvider::subscribable`]), and `completions`.
    #[must_use]
    pub fn resources(mut self, provider: Arc<dyn ResourceProvider>) -> Self {
        self.resources = Some(provider);
        self
    }
}

/// Adds the resource and completion capabilities when a provider is set.
pub(crate) fn advertise(inner: &Inner, capabilities: &mut ServerCapabilities) {
    if let Some(provider) = &inner.resources {
        let mut resources = ResourcesCapability::default();
        if provider.subscribable() {
            resources.subscribe = Some(true);
        }
        capabilities.resources = Some(resources);
    }
    if inner.resources.is_some() || inner.prompts.is_some() {
        capabilities.completions = Some(serde_json::Map::new());
    }
}

fn provider(inner: &Inner) -> Result<&Arc<dyn ResourceProvider>, McpError> {
    inner
        .resources
        .as_ref()
        .ok_or_else(McpError::method_not_found::<rmcp::model::ListResourcesRequestMethod>)
}

pub(crate) async fn list(
    inner: &Inner,
    ctx: RequestContext<RoleServer>,
) -> Result<ListResourcesResult, McpError> {
    let resources = provider(inner)?.list(ProviderContext::of(&ctx)).await?;
    Ok(ListResourcesResult::with_all_items(resources))
}

pub(crate) async fn templates(
    inner: &Inner,
    ctx: RequestContext<RoleServer>,
) -> Result<ListResourceTemplatesResult, McpError> {
    let templates = provider(inner)?
        .templates(ProviderContext::of(&ctx))
        .await?;
    Ok(ListResourceTemplatesResult::with_all_items(templates))
}

pub(crate) async fn read(
    inner: &Inner,
    request: ReadResourceRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<ReadResourceResponse, McpError> {
    let provider = inner
        .resources
        .as_ref()
        .ok_or_else(McpError::method_not_found::<rmcp::model::ReadResourceRequestMethod>)?;
    let uri = request.uri;
    match provider
        .read(uri.clone(), ProviderContext::of(&ctx))
        .await?
    {
        // An empty contents array is not an answer for a resource (SEP-2164).
        Some(contents) if !contents.is_empty() => Ok(ReadResourceResult::new(contents).into()),
        // -32002 here; rmcp sends it as -32602 to 2026-07-28 requests.
        _ => Err(McpError::resource_not_found(
            format!("Resource not found: {uri}"),
            Some(json!({ "uri": uri })),
        )),
    }
}

fn subscriber(inner: &Inner) -> Result<&Arc<dyn ResourceProvider>, McpError> {
    inner
        .resources
        .as_ref()
        .filter(|p| p.subscribable())
        .ok_or_else(McpError::method_not_found::<rmcp::model::SubscribeRequestMethod>)
}

pub(crate) async fn subscribe(
    inner: &Inner,
    request: SubscribeRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<(), McpError> {
    subscriber(inner)?
        .subscribe(request.uri, ProviderContext::of(&ctx))
        .await
}

pub(crate) async fn unsubscribe(
    inner: &Inner,
    request: UnsubscribeRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<(), McpError> {
    subscriber(inner)?
        .unsubscribe(request.uri, ProviderContext::of(&ctx))
        .await
}

/// `completion/complete`: a prompt's argument goes to the prompt provider, a template's to
/// the resource provider; without the provider the reference names, no values.
pub(crate) async fn complete(
    inner: &Inner,
    request: CompleteRequestParams,
    ctx: RequestContext<RoleServer>,
) -> Result<CompleteResult, McpError> {
    if inner.resources.is_none() && inner.prompts.is_none() {
        return Err(McpError::method_not_found::<
            rmcp::model::CompleteRequestMethod,
        >());
    }
    let cx = ProviderContext::of(&ctx);
    let values = match request.r#ref {
        Reference::Prompt(prompt) => match &inner.prompts {
            Some(p) => {
                p.complete(prompt.name, request.argument, request.context, cx)
                    .await?
            }
            None => Vec::new(),
        },
        Reference::Resource(template) => match &inner.resources {
            Some(p) => {
                p.complete(template.uri, request.argument, request.context, cx)
                    .await?
            }
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    Ok(CompleteResult::new(completion_info(values)))
}

/// At most 100 values (the spec's limit), with `total` and `hasMore`.
fn completion_info(mut values: Vec<String>) -> CompletionInfo {
    let total = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let more = values.len() > CompletionInfo::MAX_VALUES;
    values.truncate(CompletionInfo::MAX_VALUES);
    CompletionInfo::with_pagination(values, Some(total), more).unwrap_or_default()
}
