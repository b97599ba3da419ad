//! What trusted host code implements to offer MCP resources and prompts beside the bridge's
//! tools, and what it is told about each request.

use std::fmt;

use rcip_runtime::{BoxFuture, Principal};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ArgumentInfo, CompletionContext, GetPromptResult, JsonObject, Prompt, ProtocolVersion,
    Resource, ResourceContents, ResourceTemplate,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use tokio_util::sync::CancellationToken;

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
/// ([`McpBridgeBuilder::resources`](crate::McpBridgeBuilder::resources)).
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

/// Trusted host code offering MCP prompts beside the bridge's tools
/// ([`McpBridgeBuilder::prompts`](crate::McpBridgeBuilder::prompts)).
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
