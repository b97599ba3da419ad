//! rmcp's `ServerHandler` for the bridge: discovery, calls, list changes.

use std::borrow::Cow;

use rcip_core::LongRunning;
use rcip_export::ArgumentsError;
use rcip_runtime::{InvocationRequest, RequestMetadata};
use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult,
    Implementation, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::model::{
    CancelTaskParams, ClientCapabilities, GetTaskParams, GetTaskResult, UpdateTaskParams,
};
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{Found, Slot};
use crate::bridge::McpBridge;
use crate::confirm;
use crate::context::{Call, is_modern, linked, principal_of, supports_tasks};
use crate::elicit;
use crate::logging::McpLog;
use crate::progress::McpProgress;
use crate::results::{self, outcome_result};
use crate::tasks::{self, Run, TaskSetup};

/// The two MCP revisions the bridge speaks.
const SUPPORTED: &[ProtocolVersion] =
    &[ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

impl ServerHandler for McpBridge {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_tasks()
            .build();
        crate::logging::advertise(&mut capabilities);
        crate::resources::advertise(&self.inner, &mut capabilities);
        crate::prompts::advertise(&self.inner, &mut capabilities);
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                self.inner.server_name.clone(),
                self.inner.server_version.clone(),
            ))
            .with_instructions(self.inner.instructions.clone())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(SUPPORTED)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.inner.ensure_watcher();
        let view = self.inner.view().map_err(internal)?;
        let modern = is_modern(&ctx);
        let result = ListToolsResult::with_all_items(view.tools(modern).to_vec());
        // 2026-07-28 caching directives: the listing is live, and may depend on who asks.
        Ok(if modern {
            result.with_ttl_ms(0).with_cache_scope(CacheScope::Private)
        } else {
            result
        })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let view = self.inner.view().ok()?;
        view.tool(name, true).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.inner.ensure_watcher();
        let modern = is_modern(&ctx);
        let view = self.inner.view().map_err(internal)?;
        let export = view.export(modern);
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let (capability_id, input) = export
            .arguments_to_input(&name, arguments.clone())
            .map_err(|e| match e {
                ArgumentsError::NotAnObject(_) => {
                    McpError::invalid_params("The tool arguments must be a JSON object.", None)
                }
                _ => McpError::invalid_params(format!("Unknown tool: {name}"), None),
            })?;
        let call = Call {
            tool: name,
            capability_id,
            arguments,
            principal: principal_of(&ctx),
        };
        // A call that waited for the host's approval before: its outcome, once, or the same
        // answer while it still waits (nothing runs twice).
        // (Shared confirmations: the runtime finds it, on any instance.)
        let shared = self
            .inner
            .broker
            .as_ref()
            .is_some_and(|broker| broker.shares_confirmations());
        if !shared && request.request_state.is_none() && !self.inner.awaiting.is_empty() {
            match self.inner.awaiting.find(&call) {
                Some(Found::Outcome(outcome)) => {
                    return Ok(outcome_result(&self.inner, export, outcome).into());
                }
                Some(Found::Pending(result)) => return Ok(result.into()),
                None => {}
            }
        }
        // A long-running capability becomes a task for a client with the tasks extension;
        // one that must be a task refuses any other client.
        let tasks_ok = modern && supports_tasks(&ctx);
        let long_running = view.long_running(&call.capability_id);
        if long_running == Some(LongRunning::Required) && !tasks_ok {
            return Err(McpError::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ));
        }
        let elicitor = elicit::for_call(&self.inner.codec, &call, &request, &ctx);
        if modern
            && !elicitor.has_state()
            && let Some(state) = request.request_state.as_deref()
        {
            return confirm::retry(&self.inner, export, &call, state, &request, &ctx).await;
        }
        let task = (tasks_ok && long_running.is_some()).then(|| TaskSetup::new(elicitor.clone()));
        let token = CancellationToken::new();
        let mut metadata = RequestMetadata::new("mcp").with_request_id(ctx.id.to_string());
        if let Some(client) = ctx.client_info() {
            metadata = metadata.with_client(client.name);
        }
        let mut invocation = InvocationRequest::new(call.capability_id.clone(), input)
            .with_cancellation(token.clone())
            .with_extension(metadata)
            .with_extension(elicitor.clone());
        if let Some(principal) = &call.principal {
            invocation = invocation.with_extension(principal.clone());
        }
        let progress = McpProgress::from_request(&ctx);
        if let Some(progress) = &progress {
            invocation = invocation.with_extension(progress.clone());
        }
        invocation = invocation.with_extension(McpLog::for_request(&self.inner.logging, &ctx));
        // A confirmation this client cannot ask for waits for the host; the slot hears how
        // the host answered.
        let waits = confirm::waits_for_host(&self.inner, &ctx);
        let slot = (waits && !shared).then(Slot::default);
        if let Some(slot) = &slot {
            invocation = invocation.with_extension(slot.observer());
        }
        if waits
            && shared
            && let Some(key) = crate::approval::shared_key(&call)
        {
            invocation = invocation.with_extension(key);
        }
        if let Some(setup) = &task {
            invocation = invocation.with_extension(setup.observer());
        }
        let invoked = self.inner.client.invoke(invocation);
        let outcome = match &task {
            Some(setup) => {
                let complete = results::task_state(self.inner.clone());
                let run = tasks::run(
                    &self.inner.tasks,
                    &call,
                    setup,
                    token.clone(),
                    &ctx.ct,
                    invoked,
                    complete,
                );
                match run.await {
                    Run::Task(created) => return Ok(created),
                    Run::Finished(outcome) => outcome,
                }
            }
            None => linked(&ctx.ct, &token, invoked).await,
        };
        let response = match elicit::finish(&self.inner.codec, &call, &elicitor) {
            Some(answer) => answer,
            None => {
                let run = confirm::CallRun {
                    token,
                    waits,
                    slot,
                    task,
                };
                confirm::finish(&self.inner, export, &call, outcome, run, &ctx).await
            }
        };
        if let Some(progress) = progress {
            progress.finish().await;
        }
        response
    }

    #[allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577)
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if is_modern(&ctx) {
            return Err(McpError::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
        self.inner.logging.set(request.level, &ctx);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let principal = principal_of(&ctx);
        self.inner
            .tasks
            .get(&request.task_id, principal.as_ref())
            .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = principal_of(&ctx);
        let elsewhere = self
            .inner
            .tasks
            .update(
                &request.task_id,
                request.input_responses,
                principal.as_ref(),
            )
            .await?;
        // Another instance runs the task: the answers go there.
        if let Some(responses) = elsewhere
            && let Some(relay) = self.inner.relay.get()
        {
            crate::relay::publish_task_answers(&**relay, &request.task_id, &responses).await;
        }
        Ok(())
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = principal_of(&ctx);
        self.inner
            .tasks
            .cancel(&request.task_id, principal.as_ref())
            .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        crate::resources::list(&self.inner, ctx).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        crate::resources::templates(&self.inner, ctx).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        crate::resources::read(&self.inner, request, ctx).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::resources::subscribe(&self.inner, request, ctx).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        crate::resources::unsubscribe(&self.inner, request, ctx).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        crate::prompts::list(&self.inner, ctx).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        crate::prompts::get(&self.inner, request, ctx).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        crate::resources::complete(&self.inner, request, ctx).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        // rmcp hands over a known method whose params it could not read (arguments that
        // are not an object, a missing name): that is -32602, not an unknown method.
        if matches!(request.method.as_str(), "tools/call" | "tools/list") {
            return Err(McpError::invalid_params(
                format!(
                    "Invalid {} params (a tools/call needs a string name and object arguments).",
                    request.method
                ),
                None,
            ));
        }
        Err(McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            request.method,
            None,
        ))
    }

    async fn on_initialized(&self, ctx: NotificationContext<RoleServer>) {
        self.inner.ensure_watcher();
        self.inner.add_legacy_peer(ctx.peer);
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        Some(accepted)
    }

    async fn listen(&self, ctx: SubscriptionContext) -> Result<(), McpError> {
        self.inner.ensure_watcher();
        let mut versions = self.inner.tools_version.subscribe();
        versions.mark_unchanged();
        let wants_tools = ctx.accepted().tools_list_changed == Some(true);
        loop {
            tokio::select! {
                () = ctx.cancelled() => return Ok(()),
                changed = versions.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    if wants_tools && ctx.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

fn internal(error: impl std::fmt::Display) -> McpError {
    tracing::error!(%error, "rcip-mcp could not list the catalog's tools");
    McpError::internal_error("The application's tools could not be listed.", None)
}
