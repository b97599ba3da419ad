//! The tasks extension (SEP-2663, 2026-07-28) with rmcp's client: a long-running capability
//! called by a client that declared the extension becomes a task, polled, answered,
//! cancelled; confirmation comes first; results expire.
#![allow(clippy::unwrap_used, clippy::panic)]

mod duplex;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use duplex::connect;
use rcip_mcp::rmcp::ClientHandler;
use rcip_mcp::rmcp::ErrorData;
use rcip_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, GetTaskParams, Implementation,
    InputResponses, ProtocolVersion, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rcip_mcp::rmcp::service::{RequestContext, RoleClient, RunningService, ServiceError};
use rcip_mcp::{HostBroker, McpBridge, McpElicitor};
use rcip_runtime::*;
use serde_json::{Value, json};

/// A 2026-07-28 client with (or without) the tasks extension; it approves confirmations.
#[derive(Clone)]
struct Agent {
    tasks: bool,
    asked: Arc<AtomicUsize>,
}

impl Agent {
    fn new(tasks: bool) -> Self {
        Self {
            tasks,
            asked: Arc::default(),
        }
    }
}

impl ClientHandler for Agent {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder().enable_elicitation().build();
        if self.tasks {
            capabilities.extensions = ClientCapabilities::builder()
                .enable_tasks()
                .build()
                .extensions;
        }
        ClientConfig::new(capabilities, Implementation::new("agent", "0.0.1"))
            .with_protocol_version(ProtocolVersion::V_2026_07_28)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"confirm": true})))
    }
}

type Client = RunningService<RoleClient, Agent>;

struct App {
    runtime: Runtime,
    /// Handler runs started, and cancellations the handler saw.
    runs: Arc<AtomicUsize>,
    cancelled: Arc<AtomicUsize>,
    /// What `reports.ask` was answered.
    answers: Arc<Mutex<Vec<String>>>,
}

/// `reports.build` (long-running, a write: confirmed first) works for `ms` milliseconds;
/// `reports.slow` (long-running) works until cancelled; `reports.only` must be a task;
/// `reports.ask` works, then asks the user.
fn app() -> App {
    let output = json!({"type": "object", "properties": {"pages": {"type": "integer"}}, "required": ["pages"], "additionalProperties": false});
    let input = json!({"type": "object", "properties": {"ms": {"type": "integer"}}, "required": ["ms"], "additionalProperties": false});
    let definition = ApplicationDefinition::new("reports", "Reports", "Builds reports.")
        .capability(
            CapabilityDefinition::new("reports.build", Effect::Write, "Build", "Builds one.")
                .long_running(LongRunning::Optional)
                .input_schema(input.clone())
                .output_schema(output.clone()),
        )
        .capability(
            CapabilityDefinition::new("reports.slow", Effect::Read, "Slow", "Never ends.")
                .long_running(LongRunning::Optional)
                .output_schema(output.clone()),
        )
        .capability(
            CapabilityDefinition::new("reports.only", Effect::Read, "Only", "Only a task.")
                .long_running(LongRunning::Required)
                .output_schema(output.clone()),
        )
        .capability(
            CapabilityDefinition::new("reports.ask", Effect::Read, "Ask", "Asks midway.")
                .long_running(LongRunning::Optional)
                .output_schema(output),
        );
    let policy = policy_fn(|ctx| match ctx.capability().effect {
        Effect::Read => PolicyDecision::Allow,
        _ if ctx.confirmed() => PolicyDecision::Allow,
        _ => PolicyDecision::Confirm { reason: None },
    });
    let runtime = Runtime::new(definition, RuntimeOptions::default().policy(policy)).unwrap();
    let host = runtime.host();
    let runs = Arc::new(AtomicUsize::new(0));
    let cancelled = Arc::new(AtomicUsize::new(0));
    let answers = Arc::new(Mutex::new(Vec::new()));
    let (r, c) = (runs.clone(), cancelled.clone());
    let work = move |ms: u64| {
        let (runs, cancelled) = (r.clone(), c.clone());
        move |ctx: InvocationContext| {
            let (runs, cancelled) = (runs.clone(), cancelled.clone());
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let signal = ctx.cancellation().clone();
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => Ok::<_, HandlerError>(json!({"pages": 3})),
                    () = signal.cancelled() => {
                        cancelled.fetch_add(1, Ordering::SeqCst);
                        Err(HandlerError::aborted())
                    }
                }
            }
        }
    };
    let (r, c) = (runs.clone(), cancelled.clone());
    host.bind(
        "reports.build",
        Binding::new(move |input: Value, ctx: InvocationContext| {
            let ms = input["ms"].as_u64().unwrap_or(0);
            let (runs, cancelled) = (r.clone(), c.clone());
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                let signal = ctx.cancellation().clone();
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => Ok::<_, HandlerError>(json!({"pages": 3})),
                    () = signal.cancelled() => {
                        cancelled.fetch_add(1, Ordering::SeqCst);
                        Err(HandlerError::aborted())
                    }
                }
            }
        }),
    )
    .unwrap()
    .keep();
    let slow = work(60_000);
    host.bind(
        "reports.slow",
        Binding::new(move |_input: Value, ctx| slow(ctx)),
    )
    .unwrap()
    .keep();
    let only = work(300);
    host.bind(
        "reports.only",
        Binding::new(move |_input: Value, ctx| only(ctx)),
    )
    .unwrap()
    .keep();
    let told = answers.clone();
    host.bind(
        "reports.ask",
        Binding::new(move |_input: Value, ctx: InvocationContext| {
            let told = told.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let elicitor = McpElicitor::from_context(&ctx).unwrap();
                let form = json!({"type": "object", "properties": {"title": {"type": "string"}}});
                let (a, b) = tokio::join!(
                    elicitor.ask("title", "The title?", form.clone()),
                    elicitor.ask("author", "The author?", form),
                );
                for answer in [a?, b?] {
                    let title = answer
                        .content()
                        .and_then(|c| c["title"].as_str())
                        .unwrap_or("?");
                    told.lock().unwrap().push(title.to_owned());
                }
                Ok::<_, HandlerError>(json!({"pages": 1}))
            }
        }),
    )
    .unwrap()
    .keep();
    App {
        runtime,
        runs,
        cancelled,
        answers,
    }
}

fn bridge(app: &App, ttl: Duration) -> McpBridge {
    McpBridge::builder(app.runtime.client())
        .confirmations(Arc::new(HostBroker::new(app.runtime.host())))
        .task_ttl(ttl)
        .build()
        .unwrap()
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!()
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

async fn status(client: &Client, id: &str) -> (TaskStatus, TaskPayload) {
    let task = client
        .get_task(GetTaskParams::new(id.to_owned()))
        .await
        .unwrap()
        .task;
    (task.status(), task.payload)
}

/// Polls until the task is no longer working (or five seconds pass).
async fn settled(client: &Client, id: &str) -> (TaskStatus, TaskPayload) {
    for _ in 0..100 {
        let (status, payload) = status(client, id).await;
        if status != TaskStatus::Working {
            return (status, payload);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} still working")
}

/// Waits (two seconds at most) until `done` holds.
async fn until(done: impl Fn() -> bool) {
    for _ in 0..100 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn task_id(response: CallToolResponse) -> String {
    match response {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("not a task: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmation_first_then_a_task_polled_to_its_result() {
    let app = app();
    let bridge = bridge(&app, Duration::from_secs(60));
    let agent = Agent::new(true);
    let client = connect(&bridge, agent.clone(), true).await;
    // The write needs approval: the first answer is the question, and nothing runs.
    let first = client
        .call_tool_once(call("reports.build", json!({"ms": 400})))
        .await
        .unwrap();
    let CallToolResponse::InputRequired(round) = first else {
        panic!("{first:?}")
    };
    assert_eq!(
        app.runs.load(Ordering::SeqCst),
        0,
        "no task before approval"
    );
    // Approved: the handler starts and the call becomes a task.
    let mut responses = InputResponses::new();
    responses.insert(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let retry = call("reports.build", json!({"ms": 400}))
        .with_input_responses(responses)
        .with_request_state(round.request_state.unwrap());
    let id = task_id(client.call_tool_once(retry).await.unwrap());
    assert_eq!(status(&client, &id).await.0, TaskStatus::Working);
    let (status, payload) = settled(&client, &id).await;
    assert_eq!(status, TaskStatus::Completed);
    let TaskPayload::Completed { result } = payload else {
        panic!("{payload:?}")
    };
    assert_eq!(result["structuredContent"], json!({"pages": 3}));
    assert_eq!(result["isError"], json!(false));
    assert_eq!(app.runs.load(Ordering::SeqCst), 1);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_cancels_its_handler() {
    let app = app();
    let bridge = bridge(&app, Duration::from_secs(60));
    let client = connect(&bridge, Agent::new(true), true).await;
    let id = task_id(
        client
            .call_tool_once(call("reports.slow", json!({})))
            .await
            .unwrap(),
    );
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(status(&client, &id).await.0, TaskStatus::Cancelled);
    until(|| app.cancelled.load(Ordering::SeqCst) == 1).await;
    assert_eq!(
        app.cancelled.load(Ordering::SeqCst),
        1,
        "the handler saw it"
    );
    // Cancelling again: the same acknowledgement; the status stays.
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(status(&client, &id).await.0, TaskStatus::Cancelled);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_asks_and_waits_for_its_answers() {
    let app = app();
    let bridge = bridge(&app, Duration::from_secs(60));
    let client = connect(&bridge, Agent::new(true), true).await;
    let id = task_id(
        client
            .call_tool_once(call("reports.ask", json!({})))
            .await
            .unwrap(),
    );
    let (status, payload) = settled(&client, &id).await;
    assert_eq!(status, TaskStatus::InputRequired);
    let TaskPayload::InputRequired { input_requests } = payload else {
        panic!("{payload:?}")
    };
    let mut keys: Vec<&String> = input_requests.keys().collect();
    keys.sort();
    assert_eq!(keys, ["author", "title"]);
    // One answer at a time; an unknown key is ignored.
    let answer = |title: &str| json!({"action": "accept", "content": {"title": title}});
    let mut first = InputResponses::new();
    first.insert("title".to_owned(), answer("Q3"));
    first.insert("unknown".to_owned(), json!({"ignored": true}));
    client
        .update_task(UpdateTaskParams::new(id.clone(), first))
        .await
        .unwrap();
    let (status, payload) = self::status(&client, &id).await;
    assert_eq!(status, TaskStatus::InputRequired);
    let TaskPayload::InputRequired { input_requests } = payload else {
        panic!()
    };
    assert_eq!(input_requests.keys().collect::<Vec<_>>(), ["author"]);
    let mut second = InputResponses::new();
    second.insert("author".to_owned(), answer("Ada"));
    client
        .update_task(UpdateTaskParams::new(id.clone(), second))
        .await
        .unwrap();
    let (status, _) = settled(&client, &id).await;
    assert_eq!(status, TaskStatus::Completed);
    assert_eq!(*app.answers.lock().unwrap(), ["Q3", "Ada"]);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_extension_it_runs_inline_and_a_required_task_is_refused() {
    let app = app();
    let bridge = bridge(&app, Duration::from_secs(60));
    for modern in [false, true] {
        let client = connect(&bridge, Agent::new(false), modern).await;
        let response = client
            .call_tool_once(call("reports.build", json!({"ms": 50})))
            .await;
        // Approved through the client (2025-11-25 elicitation), or asked (2026-07-28): no task.
        match response.unwrap() {
            CallToolResponse::Complete(result) => {
                assert_eq!(result.structured_content, Some(json!({"pages": 3})));
            }
            CallToolResponse::InputRequired(_) => assert!(modern),
            other => panic!("{other:?}"),
        }
        let error = client
            .call_tool_once(call("reports.only", json!({})))
            .await
            .unwrap_err();
        let ServiceError::McpError(error) = error else {
            panic!("{error:?}")
        };
        assert_eq!(error.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_tasks_result_expires_and_an_unknown_task_is_invalid_params() {
    let app = app();
    let bridge = bridge(&app, Duration::from_millis(300));
    let client = connect(&bridge, Agent::new(true), true).await;
    let id = task_id(
        client
            .call_tool_once(call("reports.only", json!({})))
            .await
            .unwrap(),
    );
    assert_eq!(settled(&client, &id).await.0, TaskStatus::Completed);
    tokio::time::sleep(Duration::from_millis(500)).await;
    for id in [id.as_str(), "task_unknown"] {
        let error = client
            .get_task(GetTaskParams::new(id.to_owned()))
            .await
            .unwrap_err();
        let ServiceError::McpError(error) = error else {
            panic!("{error:?}")
        };
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{id}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_its_task_limit_a_principal_waits_inline() {
    let app = app();
    let bridge = McpBridge::builder(app.runtime.client())
        .task_limit(1)
        .build()
        .unwrap();
    let client = connect(&bridge, Agent::new(true), true).await;
    let first = task_id(
        client
            .call_tool_once(call("reports.slow", json!({})))
            .await
            .unwrap(),
    );
    // One task runs: the next long call holds its request and answers inline.
    let second = client
        .call_tool_once(call("reports.only", json!({})))
        .await
        .unwrap();
    let CallToolResponse::Complete(result) = second else {
        panic!("{second:?}")
    };
    assert_eq!(result.structured_content, Some(json!({"pages": 3})));
    // The first one ended: tasks again.
    client
        .cancel_task(CancelTaskParams::new(first.clone()))
        .await
        .unwrap();
    until(|| app.cancelled.load(Ordering::SeqCst) == 1).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let third = client
        .call_tool_once(call("reports.only", json!({})))
        .await
        .unwrap();
    assert!(matches!(third, CallToolResponse::Task(_)), "{third:?}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_handler_that_ignores_it_is_aborted_and_frees_its_slot() {
    let definition = ApplicationDefinition::new("jobs", "Jobs", "Runs jobs.").capability(
        CapabilityDefinition::new("jobs.stubborn", Effect::Read, "Stubborn", "Ignores cancel.")
            .long_running(LongRunning::Optional),
    );
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    runtime
        .host()
        .bind(
            "jobs.stubborn",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok::<_, HandlerError>(Value::Null)
            }),
        )
        .unwrap()
        .keep();
    let bridge = McpBridge::builder(runtime.client())
        .task_limit(1)
        .build()
        .unwrap();
    let client = connect(&bridge, Agent::new(true), true).await;
    let first = task_id(
        client
            .call_tool_once(call("jobs.stubborn", json!({})))
            .await
            .unwrap(),
    );
    client
        .cancel_task(CancelTaskParams::new(first.clone()))
        .await
        .unwrap();
    assert_eq!(status(&client, &first).await.0, TaskStatus::Cancelled);
    // After the grace period the handler is aborted and the slot is free: a new call is a
    // task again (it would otherwise run inline, for 60 s).
    tokio::time::sleep(Duration::from_millis(5_300)).await;
    let again = tokio::time::timeout(
        Duration::from_secs(5),
        client.call_tool_once(call("jobs.stubborn", json!({}))),
    )
    .await
    .expect("the slot was freed")
    .unwrap();
    assert!(matches!(again, CallToolResponse::Task(_)), "{again:?}");
    client.cancel().await.unwrap();
}

/// Who hears of the tasks another instance finished.
type Watcher = Arc<dyn Fn(&str) + Send + Sync>;

/// One instance's view of a task store shared by a deployment, in this test's memory: it
/// tells its watcher of the tasks it started that another instance finished, as a database
/// store finds them when it renews its leases.
struct Instance {
    shared: Arc<rcip_mcp::MemoryTaskStore>,
    started: Mutex<Vec<String>>,
    watcher: Mutex<Option<Watcher>>,
    others: Mutex<Vec<Arc<Instance>>>,
}

impl Instance {
    fn new(shared: &Arc<rcip_mcp::MemoryTaskStore>) -> Arc<Self> {
        Arc::new(Self {
            shared: Arc::clone(shared),
            started: Mutex::default(),
            watcher: Mutex::default(),
            others: Mutex::default(),
        })
    }

    fn ended_elsewhere(&self, id: &str) {
        if self
            .started
            .lock()
            .unwrap()
            .iter()
            .any(|started| started == id)
        {
            let watcher = self.watcher.lock().unwrap().clone();
            if let Some(watcher) = watcher {
                watcher(id);
            }
        }
    }
}

impl rcip_mcp::TaskStore for Instance {
    fn create(
        &self,
        record: rcip_mcp::TaskRecord,
    ) -> BoxFuture<Result<(), rcip_mcp::TaskStoreError>> {
        self.started.lock().unwrap().push(record.id.clone());
        self.shared.create(record)
    }

    fn get(
        &self,
        id: &str,
    ) -> BoxFuture<Result<Option<rcip_mcp::TaskRecord>, rcip_mcp::TaskStoreError>> {
        self.shared.get(id)
    }

    fn set_state(
        &self,
        id: &str,
        state: rcip_mcp::TaskState,
        now: u64,
    ) -> BoxFuture<Result<bool, rcip_mcp::TaskStoreError>> {
        let finished = state.is_terminal();
        let changed = self.shared.set_state(id, state, now);
        let others: Vec<Arc<Instance>> = self.others.lock().unwrap().clone();
        let id = id.to_owned();
        Box::pin(async move {
            let changed = changed.await?;
            if changed && finished {
                for other in others {
                    other.ended_elsewhere(&id);
                }
            }
            Ok(changed)
        })
    }

    fn watch(&self, ended: Arc<dyn Fn(&str) + Send + Sync>) {
        *self.watcher.lock().unwrap() = Some(ended);
    }
}

/// A task started through one instance and cancelled through another: the cancellation
/// reaches the handler where it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_cancelled_through_another_instance_stops_where_it_runs() {
    let app = app();
    let shared = Arc::new(rcip_mcp::MemoryTaskStore::new());
    let (one, two) = (Instance::new(&shared), Instance::new(&shared));
    one.others.lock().unwrap().push(Arc::clone(&two));
    two.others.lock().unwrap().push(Arc::clone(&one));
    let bridge_on = |instance: &Arc<Instance>| {
        McpBridge::builder(app.runtime.client())
            .task_store(Arc::clone(instance) as Arc<dyn rcip_mcp::TaskStore>)
            .build()
            .unwrap()
    };
    let (first, second) = (bridge_on(&one), bridge_on(&two));
    let starts = connect(&first, Agent::new(true), true).await;
    let cancels = connect(&second, Agent::new(true), true).await;
    let id = task_id(
        starts
            .call_tool_once(call("reports.slow", json!({})))
            .await
            .unwrap(),
    );
    assert_eq!(status(&cancels, &id).await.0, TaskStatus::Working);
    cancels
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    until(|| app.cancelled.load(Ordering::SeqCst) == 1).await;
    assert_eq!(
        app.cancelled.load(Ordering::SeqCst),
        1,
        "the handler saw it"
    );
    assert_eq!(status(&starts, &id).await.0, TaskStatus::Cancelled);
    starts.cancel().await.unwrap();
    cancels.cancel().await.unwrap();
}
