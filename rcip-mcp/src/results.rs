//! What a finished invocation answers over MCP: a `CallToolResult` for a tool call, and the
//! stored state of a task that ends.

use std::sync::Arc;

use rcip_core::InvocationOutcome;
use rcip_export::Export;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::bridge::Inner;
use crate::content;
use crate::elicit::{self, McpElicitor};
use crate::tasks::TaskState;

/// The MCP result of a finished outcome (succeeded, failed or denied). A pending
/// confirmation never reaches here: [`confirm::finish`](crate::confirm::finish) handles it.
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

/// How a call that became a task ends: its elicitation's failure (a capability the client
/// lacks), else the tool result of its outcome, stored for `tasks/result`.
pub(crate) fn task_state(
    inner: Arc<Inner>,
) -> impl FnOnce(InvocationOutcome, &McpElicitor) -> TaskState + Send + 'static {
    move |outcome, elicitor| {
        if let Some(Err(error)) = elicit::finish_request(&inner.codec, || None, elicitor) {
            return TaskState::Failed(serde_json::to_value(&error).unwrap_or_default());
        }
        match inner.view() {
            Ok(view) => {
                let result = outcome_result(&inner, view.export(true), outcome);
                TaskState::Completed(serde_json::to_value(&result).unwrap_or_default())
            }
            Err(_) => TaskState::Failed(
                serde_json::to_value(McpError::internal_error(
                    "The application's tools could not be listed.",
                    None,
                ))
                .unwrap_or_default(),
            ),
        }
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
