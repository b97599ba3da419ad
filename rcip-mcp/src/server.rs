//! rmcp's `ServerHandler` for the bridge: discovery, calls, list changes.

use std::borrow::Cow;

use rcip_core::{InvocationOutcome, LongRunning};
use rcip_export::{ArgumentsError, Export};
use rcip_runtime::{InvocationRequest, RequestMetadata};
use rmcp::ErrorData as McpError;
use rmcp::ServerHandler;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    CustomRequest, CustomResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
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
use crate::bridge::{Inner, McpBridge};
use crate::confirm;
use crate::content;
use crate::context::{Call, is_modern, linked, principal_of, supports_tasks};
use crate::elicit;
use crate::logging::McpLog;
use crate::progress::McpProgress;
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
        if request.request_state.is_none() && !self.inner.awaiting.is_empty() {
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
        let elicitor = elicit::for_call(&self.inner, &call, &request, &ctx);
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
        let slot = confirm::waits_for_host(&self.inner, &ctx).then(Slot::default);
        if let Some(slot) = &slot {
            invocation = invocation.with_extension(slot.observer());
        }
        if let Some(setup) = &task {
            invocation = invocation.with_extension(setup.observer());
        }
        let invoked = self.inner.client.invoke(invocation);
        let outcome = match &task {
            Some(setup) => {
                match tasks::run(&self.inner, &call, setup, token.clone(), &ctx.ct, invoked).await {
                    Run::Task(created) => return Ok(created),
                    Run::Finished(outcome) => outcome,
                }
            }
            None => linked(&ctx.ct, &token, invoked).await,
        };
        let response = match elicit::finish(&self.inner, &call, &elicitor) {
            Some(answer) => answer,
            None => {
                let run = confirm::CallRun { token, slot, task };
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
        self.inner
            .tasks
            .update(
                &request.task_id,
                request.input_responses,
                principal.as_ref(),
            )
            .await
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

/// The MCP result of a finished outcome (succeeded, failed or denied). A pending
/// confirmation never reaches here: [`confirm::finish`] handles it.
pub(crate) fn outcome_result(
    inner: &Inner,
    export: &Export,
    outcome: InvocationOutcome,
) -> CallToolResult {
    match outcome {
        InvocationOutcome::Succeeded {
            capability_id,
            output,
            ..
        } => {
            let mapped = content::mapped(inner.content.as_deref(), &capability_id, &output);
            // A text output reads as itself; anything else as its JSON.
            let text = match &output {
                Value::String(text) => Some(text.clone()),
                _ => None,
            };
            let structured = export.structured_output(&capability_id, output);
            let blocks = mapped.unwrap_or_else(|| {
                vec![ContentBlock::text(text.unwrap_or_else(|| {
                    serde_json::to_string(&structured).unwrap_or_default()
                }))]
            });
            let mut result = CallToolResult::success(blocks);
            result.structured_content = Some(structured);
            result
        }
        InvocationOutcome::Failed { error, .. } | InvocationOutcome::Denied { error, .. } => {
            error_result(
                error.code.as_str(),
                &error.message,
                error.validation_issues.as_deref().unwrap_or_default(),
            )
        }
        InvocationOutcome::ConfirmationRequired { confirmation, .. } => {
            crate::approval::pending_result(&confirmation.title)
        }
    }
}

/// An `isError` result: one text block, `CODE: message` then a line per issue.
///
/// No `structuredContent`: when a tool declares an `outputSchema`, the spec wants structured
/// content to conform to it, and clients on the TypeScript SDK (1.32.2, the MCP Inspector's)
/// check it even on `isError` results, answering `-32602` in place of the tool error.
pub(crate) fn error_result(
    code: &str,
    message: &str,
    issues: &[rcip_core::ValidationIssue],
) -> CallToolResult {
    let mut text = format!("{code}: {message}");
    // The issues of `OUTPUT_INVALID` are about the capability's output, every other code's
    // about the caller's input.
    let root = if code == "OUTPUT_INVALID" {
        "the output"
    } else {
        "the input"
    };
    for issue in issues {
        let at = if issue.instance_path.is_empty() {
            root
        } else {
            &issue.instance_path
        };
        text.push_str(&format!(
            "\n- {at}: {} ({})",
            issue_text(issue),
            issue.keyword
        ));
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// An issue as the model reads it: naming the property when its params name one (Ajv's "must
/// NOT have additional properties" does not say which), else the issue's own message. The
/// names are the caller's own input, clipped by the validator; an `OUTPUT_INVALID` issue
/// carries no params, so nothing of the host's output is named.
fn issue_text(issue: &rcip_core::ValidationIssue) -> String {
    let named = |key: &str| issue.params.get(key).and_then(serde_json::Value::as_str);
    let property = match issue.keyword.as_str() {
        "additionalProperties" => named("additionalProperty").map(|name| ("unexpected", name)),
        "unevaluatedProperties" => named("unevaluatedProperty").map(|name| ("unexpected", name)),
        "required" => named("missingProperty").map(|name| ("missing", name)),
        _ => None,
    };
    match property {
        Some((what, name)) => format!("{what} property `{name}`"),
        None => issue.message.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_issue_with_a_property_in_its_params_names_it() {
        let text = |issues: &[rcip_core::ValidationIssue]| {
            error_result("INPUT_INVALID", "bad", issues).content[0]
                .as_text()
                .unwrap()
                .text
                .clone()
        };
        let extra = rcip_core::ValidationIssue::new(
            "",
            "additionalProperties",
            "must NOT have additional properties",
        )
        .with_param("additionalProperty", "extra");
        let missing = rcip_core::ValidationIssue::new(
            "/poll",
            "required",
            "must have required property 'options'",
        )
        .with_param("missingProperty", "options");
        let typed = rcip_core::ValidationIssue::new("/title", "type", "must be string")
            .with_param("type", "string");
        assert_eq!(
            text(&[extra, missing, typed]),
            "INPUT_INVALID: bad\n\
             - the input: unexpected property `extra` (additionalProperties)\n\
             - /poll: missing property `options` (required)\n\
             - /title: must be string (type)"
        );
    }

    #[test]
    fn a_root_issue_names_the_input_or_the_output() {
        let issue =
            rcip_core::ValidationIssue::new("", "required", "must have required property 'a'");
        let text = |result: CallToolResult| result.content[0].as_text().unwrap().text.clone();
        let input = text(error_result(
            "INPUT_INVALID",
            "bad",
            std::slice::from_ref(&issue),
        ));
        assert!(
            input.ends_with("- the input: must have required property 'a' (required)"),
            "{input}"
        );
        let output = text(error_result("OUTPUT_INVALID", "bad", &[issue]));
        assert!(
            output.ends_with("- the output: must have required property 'a' (required)"),
            "{output}"
        );
    }
}
