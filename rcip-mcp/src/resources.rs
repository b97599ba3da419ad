//! MCP resources (and resource templates) composed beside the bridge's tools: trusted host
//! code hands the builder a [`ResourceProvider`]; the bridge answers `resources/list`,
//! `resources/templates/list`, `resources/read`, `resources/subscribe` and
//! `resources/unsubscribe` (2025-11-25) and `completion/complete` for a template through it.

use std::fmt;
use std::sync::Arc;

use rcip_runtime::{BoxFuture, Principal};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompleteResult, CompletionContext, CompletionInfo,
    ListResourceTemplatesResult, ListResourcesResult, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Reference, Resource, ResourceContents,
    ResourceTemplate, ResourcesCapability, ServerCapabilities, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::bridge::{Inner, McpBridgeBuilder};
use crate::context::principal_of;
use crate::elicit::McpElicitor;

/// Who asks, and on which revision: what a [`ResourceProvider`] or
/// [`PromptProvider`](crate::PromptProvider) is told about each request.
#[derive(Debug, Clone)]
pub struct ProviderContext {
    principal: Option<Principal>,
    protocol_version: Option<ProtocolVersion>,
    cancellation: CancellationToken,
    peer: Peer<RoleServer>,
    elicitor: Option<McpElicitor>,
}

impl ProviderContext {
    pub(crate) fn of(ctx: &RequestContext<RoleServer>) -> Self {
        Self {
            principal: principal_of(ctx),
            protocol_version: ctx.protocol_version(),
            cancellation: ctx.ct.clone(),
            peer: ctx.peer.clone(),
            elicitor: None,
        }
    }

    pub(crate) fn with_elicitor(mut self, elicitor: McpElicitor) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// Asks the human for data while answering `prompts/get` (and only there): the same
    /// [`McpElicitor`] a capability gets, with the same two eras. On 2026-07-28 an unanswered
    /// [`ask`](McpElicitor::ask) returns [`ElicitError::InputRequired`](crate::ElicitError);
    /// propagate it with `?` and the bridge answers `input_required` with a `requestState`
    /// sealed to the prompt's name, its arguments and the principal; the retry calls
    /// [`get`](crate::PromptProvider::get) again, and `ask` finds its answer. Ask every
    /// question before anything else happens.
    #[must_use]
    pub fn elicitor(&self) -> Option<&McpElicitor> {
        self.elicitor.as_ref()
    }

    /// The caller the HTTP bearer hook established (never on stdio).
    #[must_use]
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// The request's MCP revision (`2025-11-25` or `2026-07-28`), when known.
    #[must_use]
    pub fn protocol_version(&self) -> Option<&ProtocolVersion> {
        self.protocol_version.as_ref()
    }

    /// Fires when the client cancelled the request (or an HTTP client went away).
    #[must_use]
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// The session's peer: a 2025-11-25 provider that accepted a `resources/subscribe` keeps
    /// it to send `notifications/resources/updated` later (`peer.notify_resource_updated`).
    #[must_use]
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }
}

/// Trusted host code offering MCP resources beside the bridge's tools
/// ([`McpBridgeBuilder::resources`]).
///
/// Every method gets the request's [`ProviderContext`]. Results use rmcp's model types
/// (re-exported as [`rcip_mcp::rmcp`](crate::rmcp)); on 2026-07-28 rmcp adds `ttlMs: 0` and
/// `cacheScope: "private"` to the list and read results. An `Err` is sent as the JSON-RPC
/// error it is; a resource [`read`](Self::read) does not know is `Ok(None)`, which the bridge
/// answers with the error the request's revision names (2025-11-25: `-32002`; 2026-07-28:
/// `-32602`, SEP-2164), with the URI in `data.uri`.
///
/// ```
/// use rcip_mcp::rmcp::ErrorData;
/// use rcip_mcp::rmcp::model::{Resource, ResourceContents};
/// use rcip_mcp::{ProviderContext, ResourceProvider};
/// use rcip_runtime::BoxFuture;
///
/// /// One read-only text resource.
/// #[derive(Debug)]
/// struct Readme;
///
/// impl ResourceProvider for Readme {
///     fn list(&self, _cx: ProviderContext) -> BoxFuture<Result<Vec<Resource>, ErrorData>> {
///         let readme = Resource::new("notes://readme", "readme").with_mime_type("text/plain");
///         Box::pin(async move { Ok(vec![readme]) })
///     }
///
///     fn read(
///         &self,
///         uri: String,
///         _cx: ProviderContext,
///     ) -> BoxFuture<Result<Option<Vec<ResourceContents>>, ErrorData>> {
///         Box::pin(async move {
///             Ok((uri == "notes://readme")
///                 .then(|| vec![ResourceContents::text("Keep notes short.", uri)]))
///         })
///     }
/// }
/// ```
pub trait ResourceProvider: Send + Sync + fmt::Debug + 'static {
    /// The direct resources (`resources/list`), all in one page.
    fn list(&self, cx: ProviderContext) -> BoxFuture<Result<Vec<Resource>, McpError>>;

    /// The resource templates (`resources/templates/list`). Default: none.
    fn templates(&self, cx: ProviderContext) -> BoxFuture<Result<Vec<ResourceTemplate>, McpError>> {
        let _ = cx;
        Box::pin(async { Ok(Vec::new()) })
    }

    /// The contents of `uri` (a listed resource or one a template matches), or `None` when
    /// there is no such resource.
    fn read(
        &self,
        uri: String,
        cx: ProviderContext,
    ) -> BoxFuture<Result<Option<Vec<ResourceContents>>, McpError>>;

    /// Whether the provider takes 2025-11-25 `resources/subscribe` requests (advertised as
    /// `resources.subscribe`). Default: `false`, and the requests are unknown methods.
    fn subscribable(&self) -> bool {
        false
    }

    /// A 2025-11-25 session subscribes to `uri`; keep [`ProviderContext::peer`] to announce
    /// its updates. Default: accepted, nothing kept.
    fn subscribe(&self, uri: String, cx: ProviderContext) -> BoxFuture<Result<(), McpError>> {
        let _ = (uri, cx);
        Box::pin(async { Ok(()) })
    }

    /// The session unsubscribes from `uri`. Default: accepted.
    fn unsubscribe(&self, uri: String, cx: ProviderContext) -> BoxFuture<Result<(), McpError>> {
        let _ = (uri, cx);
        Box::pin(async { Ok(()) })
    }

    /// Completion values for the argument of the template `uri_template`
    /// (`completion/complete` with a `ref/resource`); the bridge sends the first 100.
    /// Default: none.
    fn complete(
        &self,
        uri_template: String,
        argument: ArgumentInfo,
        context: Option<CompletionContext>,
        cx: ProviderContext,
    ) -> BoxFuture<Result<Vec<String>, McpError>> {
        let _ = (uri_template, argument, context, cx);
        Box::pin(async { Ok(Vec::new()) })
    }
}

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
