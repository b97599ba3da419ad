//! The conformance fixture's long-running capabilities: the tools the suite's `tasks-*`
//! scenarios (MCP's tasks extension, SEP-2663, 2026-07-28) call by name. A client that
//! declared the extension gets a task for each of them once its handler has started; the
//! others run inline, except the ones declared `long_running = "required"`, which refuse a
//! client without the extension (`-32021`).

use std::time::Duration;

use rcip_mcp::{ElicitAnswer, McpElicitor};
use rcip_runtime::{CancellationSignal, HandlerError, NoInput, capability, catalog};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// What the suite sends `greet`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GreetInput {
    /// Who to greet.
    pub name: String,
}

/// Greet.
///
/// Greets by name, at once: never a task (scenarios tasks-lifecycle, tasks-request-headers,
/// tasks-dispatch-and-envelope).
#[capability(effect = "read", id = "greet")]
fn greet(input: GreetInput) -> String {
    format!("Hello, {}!", input.name)
}

/// What the suite sends `slow_compute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowComputeInput {
    /// How long to compute, in seconds.
    pub seconds: u32,
    /// A label for the result.
    #[serde(default)]
    pub label: Option<String>,
}

/// Waits `duration`, or until the call is cancelled (`false`).
async fn work(duration: Duration, cancellation: &CancellationSignal) -> bool {
    tokio::select! {
        () = tokio::time::sleep(duration) => true,
        () = cancellation.cancelled() => false,
    }
}

/// Slow compute.
///
/// Computes for the given number of seconds, then answers; cancelling the task stops it
/// (scenarios tasks-lifecycle, tasks-wire-fields, tasks-request-state-removal, ...).
#[capability(effect = "read", id = "slow_compute", long_running)]
async fn slow_compute(
    input: SlowComputeInput,
    cancellation: CancellationSignal,
) -> Result<String, HandlerError> {
    if !work(Duration::from_secs(input.seconds.into()), &cancellation).await {
        return Err(HandlerError::aborted());
    }
    let label = input.label.unwrap_or_else(|| "compute".to_owned());
    Ok(format!("{label}: done after {} seconds", input.seconds))
}

/// Failing job.
///
/// Works for a second, then fails as a tool: the task completes with an isError result;
/// only as a task (scenarios tasks-lifecycle, tasks-required-task-error).
#[capability(effect = "read", id = "failing_job", long_running = "required")]
async fn failing_job(
    _input: NoInput,
    cancellation: CancellationSignal,
) -> Result<String, HandlerError> {
    work(Duration::from_secs(1), &cancellation).await;
    Err(HandlerError::public(
        "JOB_FAILED",
        "The job failed, as this job always does.",
        Vec::new(),
    ))
}

/// The client capability no client declares: `protocol_error_job` needs it.
pub const NEVER_DECLARED: &str = "io.rcip.conformance/never-declared";

/// Protocol error job.
///
/// Works half a second, then needs a client capability no client declares: the task fails
/// with the protocol error -32021 (scenario tasks-lifecycle, check
/// sep-2663-tasks-get-status-failed).
#[capability(effect = "read", id = "protocol_error_job", long_running)]
async fn protocol_error_job(
    _input: NoInput,
    elicitor: McpElicitor,
    cancellation: CancellationSignal,
) -> Result<String, HandlerError> {
    work(Duration::from_millis(500), &cancellation).await;
    elicitor.require_client_capability(NEVER_DECLARED)?;
    Ok("The client declared it.".to_owned())
}

/// A yes/no form under `field`.
fn confirm_form() -> Value {
    json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Confirm"}},
        "required": ["confirm"]
    })
}

fn confirmed(answer: &ElicitAnswer) -> bool {
    answer
        .content()
        .and_then(|c| c.get("confirm"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// What the suite sends `confirm_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfirmDeleteInput {
    /// The file to delete.
    pub filename: String,
}

/// Confirm delete.
///
/// Looks the file up, then asks the user to confirm while the task waits in input_required
/// (scenario tasks-mrtr-input). Deletes nothing: a fixture.
#[capability(effect = "read", id = "confirm_delete", long_running = "required")]
async fn confirm_delete(
    input: ConfirmDeleteInput,
    elicitor: McpElicitor,
    cancellation: CancellationSignal,
) -> Result<String, HandlerError> {
    work(Duration::from_millis(200), &cancellation).await;
    let answer = elicitor
        .ask(
            "confirm",
            format!("Delete {}?", input.filename),
            confirm_form(),
        )
        .await?;
    Ok(if confirmed(&answer) {
        format!("Deleted {}.", input.filename)
    } else {
        format!("Kept {}.", input.filename)
    })
}

/// Multi input.
///
/// Asks two questions at once while the task waits; answered one at a time, it completes
/// when both are (scenario tasks-mrtr-input, check tasks-mrtr-partial-fulfillment).
#[capability(effect = "read", id = "multi_input", long_running = "required")]
async fn multi_input(
    _input: NoInput,
    elicitor: McpElicitor,
    cancellation: CancellationSignal,
) -> Result<String, HandlerError> {
    work(Duration::from_millis(200), &cancellation).await;
    let form = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}},
        "required": ["name"]
    });
    let (first, second) = tokio::join!(
        elicitor.ask("input-a", "First input", form.clone()),
        elicitor.ask("input-b", "Second input", form),
    );
    let name = |answer: &ElicitAnswer| {
        answer
            .content()
            .and_then(|c| c.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    Ok(format!(
        "Received {} and {}.",
        name(&first?),
        name(&second?)
    ))
}

/// Tool with task.
///
/// Asks the user's name first (an input_required round, before any task), then works in a
/// task and greets them (scenario tasks-mrtr-composition).
#[capability(effect = "read", id = "test_tool_with_task", long_running = "required")]
async fn test_tool_with_task(
    _input: NoInput,
    elicitor: McpElicitor,
    cancellation: CancellationSignal,
) -> Result<String, HandlerError> {
    let form = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    });
    let answer = elicitor
        .ask("user_name", "What is your name?", form)
        .await?;
    if !work(Duration::from_millis(500), &cancellation).await {
        return Err(HandlerError::aborted());
    }
    let name = answer
        .content()
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("stranger");
    Ok(format!("Hello, {name}! (async)"))
}

catalog! {
    /// The fixture's long-running capabilities (and `greet`, their synchronous peer).
    pub struct ConformanceTasks {
        id = "mcp-conformance-tasks",
        name = "MCP conformance tasks",
        description = "The tools the tasks extension's scenarios call by name.",
        version = "1.0.0",
        capabilities = [
            greet,
            slow_compute,
            failing_job,
            protocol_error_job,
            confirm_delete,
            multi_input,
            test_tool_with_task,
        ],
    }
}
