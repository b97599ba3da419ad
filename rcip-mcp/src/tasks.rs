//! The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`, MCP 2026-07-28): a call of
//! a long-running capability from a client that declared the extension becomes a task once
//! its handler has started, and the client polls it (`tasks/get`), answers its questions
//! (`tasks/update`) or cancels it (`tasks/cancel`).
//!
//! What a task is stays in a [`TaskStore`] ([`MemoryTaskStore`] by default); what only the
//! instance running it can do (cancel the handler, hand it an answer) stays here, in
//! [`Tasks::running`].

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_core::{ErrorCode, InvocationOutcome, RcipError};
use rcip_runtime::{BoxFuture, Principal, StartObserver};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CreateTaskResult, DetailedTask, GetTaskResult, InputRequest, InputRequests,
    InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::Value;
use tokio::sync::{Notify, oneshot};
use tokio_util::sync::CancellationToken;

use crate::context::lock;
use crate::context::{Call, now_ms};
use crate::elicit::{McpElicitor, TaskQuestions};

/// How long a started handler may still end the call by itself (an answer, or a question
/// asked before any work: an ordinary `input_required` round) before the call becomes a task.
const SETTLE: Duration = Duration::from_millis(20);

/// How long a cancelled task's handler has to end by itself before it is aborted.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// At most this many tasks are kept by a [`MemoryTaskStore`] (finished ones go first).
const MEMORY_STORE_LIMIT: usize = 10_000;

/// How often a client is told to poll.
const POLL_INTERVAL_MS: u64 = 500;

/// By default a finished task's result is kept this long.
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);

/// By default a principal has at most this many tasks running in this process at once.
pub(crate) const DEFAULT_RUNNING_LIMIT: usize = 64;

/// What a task has come to.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskState {
    /// The handler runs.
    Working,
    /// The handler waits for answers: the `inputRequests` object, by key.
    InputRequired(Value),
    /// Done: the `CallToolResult` (a tool error is `isError: true` here, as for any call).
    Completed(Value),
    /// A protocol error ended it: the JSON-RPC error object (`code`, `message`, `data`).
    Failed(Value),
    /// Cancelled by the client.
    Cancelled,
}

impl TaskState {
    /// Whether the task has finished (completed, failed or cancelled): its state no longer
    /// changes.
    #[must_use]
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TaskState::Completed(_) | TaskState::Failed(_) | TaskState::Cancelled
        )
    }
}

/// One task as a [`TaskStore`] keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task id (random, unguessable).
    pub id: String,
    /// The principal that started it (`None`: anonymous); only it can see the task.
    pub owner: Option<String>,
    /// The capability it runs.
    pub capability_id: String,
    /// What it has come to.
    pub state: TaskState,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: u64,
    /// When its state last changed, likewise.
    pub updated_at: u64,
    /// How long it is kept once finished, in milliseconds.
    pub ttl_ms: u64,
}

impl TaskRecord {
    /// Whether a store may forget it at `now`: finished, `ttl_ms` ago.
    #[must_use]
    pub fn expired(&self, now: u64) -> bool {
        self.state.is_terminal() && self.updated_at.saturating_add(self.ttl_ms) < now
    }
}

/// Why a task store failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("task store: {0}")]
pub struct TaskStoreError(pub String);

/// Where tasks live: in this process ([`MemoryTaskStore`]), or in a database shared by the
/// instances of a deployment.
///
/// A store keeps records as given; the bridge decides the transitions. Two rules are the
/// store's: [`set_state`](Self::set_state) never changes a finished task (so a late result
/// cannot undo a cancellation), and a record that [`expired`](TaskRecord::expired) is
/// answered as absent and may be forgotten.
pub trait TaskStore: Send + Sync {
    /// Stores a new task.
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>>;
    /// The task `id`, unless it does not exist or expired.
    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>>;
    /// Sets the state of task `id` at `now`, unless it is finished or absent: whether it
    /// changed.
    fn set_state(
        &self,
        id: &str,
        state: TaskState,
        now: u64,
    ) -> BoxFuture<Result<bool, TaskStoreError>>;

    /// Tells `ended` the id of every task this store started (through
    /// [`create`](Self::create)) and another instance of the deployment then finished: a
    /// `tasks/cancel` that reached another instance, so the handler running here stops. A
    /// store of one process has nothing to tell (the default): every cancellation happens
    /// where the task runs.
    fn watch(&self, ended: Arc<dyn Fn(&str) + Send + Sync>) {
        let _ = ended;
    }
}

/// Tasks in this process's memory, forgotten when they expire; at most 10,000, the finished
/// task that changed longest ago going first (a store full of running tasks refuses a new
/// one, and the call then runs inline).
///
/// ```
/// use rcip_mcp::{MemoryTaskStore, TaskRecord, TaskState, TaskStore};
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
/// let now = u64::try_from(now.as_millis()).unwrap();
/// let store = MemoryTaskStore::new();
/// let record = TaskRecord {
///     id: "t1".into(), owner: None, capability_id: "reports.build".into(),
///     state: TaskState::Working, created_at: now, updated_at: now, ttl_ms: 60_000,
/// };
/// store.create(record).await.unwrap();
/// assert!(store.set_state("t1", TaskState::Cancelled, now + 10).await.unwrap());
/// // A finished task does not change.
/// assert!(!store.set_state("t1", TaskState::Working, now + 20).await.unwrap());
/// assert_eq!(store.get("t1").await.unwrap().unwrap().state, TaskState::Cancelled);
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        let now = now_ms();
        let mut tasks = lock(&self.tasks);
        if tasks.len() >= MEMORY_STORE_LIMIT {
            tasks.retain(|_, task| !task.expired(now));
        }
        if tasks.len() >= MEMORY_STORE_LIMIT {
            // The finished task that changed longest ago goes; running ones never do.
            let oldest = tasks
                .values()
                .filter(|task| task.state.is_terminal())
                .min_by_key(|task| task.updated_at)
                .map(|task| task.id.clone());
            match oldest {
                Some(id) => {
                    tasks.remove(&id);
                }
                None => {
                    return Box::pin(std::future::ready(Err(TaskStoreError(
                        "the memory task store is full of running tasks".to_owned(),
                    ))));
                }
            }
        }
        tasks.insert(record.id.clone(), record);
        Box::pin(std::future::ready(Ok(())))
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let now = now_ms();
        let found = lock(&self.tasks)
            .get(id)
            .filter(|task| !task.expired(now))
            .cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn set_state(
        &self,
        id: &str,
        state: TaskState,
        now: u64,
    ) -> BoxFuture<Result<bool, TaskStoreError>> {
        let mut tasks = lock(&self.tasks);
        let changed = match tasks.get_mut(id) {
            Some(task) if !task.state.is_terminal() => {
                task.state = state;
                task.updated_at = now;
                true
            }
            _ => false,
        };
        Box::pin(std::future::ready(Ok(changed)))
    }
}

/// The bridge's tasks: the store, and what this instance runs.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    ttl_ms: u64,
    /// How many tasks one principal may have running here at once.
    limit: usize,
    running: Mutex<HashMap<String, Running>>,
}

/// A task this instance runs.
struct Running {
    /// The principal that started it.
    owner: Option<String>,
    /// The invocation's token: cancelling the task cancels the handler.
    cancel: CancellationToken,
    /// Ends the invocation outright, for a handler that ignores its cancellation.
    abort: Option<tokio::task::AbortHandle>,
    /// The questions the handler waits on, with where their answers go.
    questions: BTreeMap<String, (InputRequest, oneshot::Sender<Value>)>,
    /// Serialises the task's state writes, so the store sees them in the order they happen.
    writes: Arc<tokio::sync::Mutex<()>>,
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tasks")
            .field("ttl_ms", &self.ttl_ms)
            .finish_non_exhaustive()
    }
}

/// The task a call became, as its elicitor sees it.
#[derive(Clone)]
pub(crate) struct TaskLink {
    id: String,
    tasks: Arc<Tasks>,
}

/// What a task-eligible call needs before it is invoked: the signal that its handler
/// started, and its elicitor (the one the handler asks through).
#[derive(Clone)]
pub(crate) struct TaskSetup {
    started: Arc<Notify>,
    elicitor: McpElicitor,
}

impl TaskSetup {
    pub(crate) fn new(elicitor: McpElicitor) -> Self {
        Self {
            started: Arc::new(Notify::new()),
            elicitor,
        }
    }

    /// The observer to put into the invocation's extensions.
    pub(crate) fn observer(&self) -> StartObserver {
        let started = self.started.clone();
        StartObserver::new(move || started.notify_one())
    }
}

/// What a task-eligible call came to.
pub(crate) enum Run {
    /// It ended before becoming a task: answer it as any call.
    Finished(InvocationOutcome),
    /// It became a task: the `CreateTaskResult`.
    Task(CallToolResponse),
}

fn pending_requests(questions: &BTreeMap<String, (InputRequest, oneshot::Sender<Value>)>) -> Value {
    let requests: InputRequests = questions
        .iter()
        .map(|(key, (request, _))| (key.clone(), request.clone()))
        .collect();
    serde_json::to_value(requests).unwrap_or_default()
}

fn unknown(id: &str) -> McpError {
    McpError::invalid_params(
        format!("Unknown task: {id}"),
        Some(serde_json::json!({ "taskId": id })),
    )
}

fn store_failed(error: &TaskStoreError) -> McpError {
    tracing::error!(%error, "the task store failed");
    McpError::internal_error("The task could not be read or written.", None)
}

fn rfc3339(ms: u64) -> String {
    i64::try_from(ms)
        .ok()
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|at| at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

fn object(value: &Value) -> JsonObject {
    value.as_object().cloned().unwrap_or_default()
}

/// The task's wire form.
fn task_of(record: &TaskRecord) -> Task {
    let status = match record.state {
        TaskState::Working => TaskStatus::Working,
        TaskState::InputRequired(_) => TaskStatus::InputRequired,
        TaskState::Completed(_) => TaskStatus::Completed,
        TaskState::Failed(_) => TaskStatus::Failed,
        TaskState::Cancelled => TaskStatus::Cancelled,
    };
    Task::new(
        record.id.clone(),
        status,
        rfc3339(record.created_at),
        rfc3339(record.updated_at),
    )
    .with_ttl_ms(record.ttl_ms)
    .with_poll_interval_ms(POLL_INTERVAL_MS)
}

fn detailed(record: &TaskRecord) -> DetailedTask {
    let payload = match &record.state {
        TaskState::Working => TaskPayload::Working,
        TaskState::InputRequired(requests) => TaskPayload::InputRequired {
            input_requests: serde_json::from_value(requests.clone()).unwrap_or_default(),
        },
        TaskState::Completed(result) => TaskPayload::Completed {
            result: object(result),
        },
        TaskState::Failed(error) => TaskPayload::Failed {
            error: object(error),
        },
        TaskState::Cancelled => TaskPayload::Cancelled,
    };
    DetailedTask::new(task_of(record), payload)
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>, ttl: Duration, limit: usize) -> Self {
        Self {
            store,
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            limit,
            running: Mutex::new(HashMap::new()),
        }
    }

    /// Task `id` if `principal` may see it; `-32602` as for an unknown id otherwise.
    async fn visible(
        &self,
        id: &str,
        principal: Option<&Principal>,
    ) -> Result<TaskRecord, McpError> {
        let record = self
            .store
            .get(id)
            .await
            .map_err(|e| store_failed(&e))?
            .ok_or_else(|| unknown(id))?;
        if record.owner.as_deref() != principal.map(Principal::id) {
            return Err(unknown(id));
        }
        Ok(record)
    }

    /// The writes lock of running task `id`, if it runs here.
    fn writes(&self, id: &str) -> Option<Arc<tokio::sync::Mutex<()>>> {
        lock(&self.running).get(id).map(|r| r.writes.clone())
    }

    /// `tasks/get`.
    pub(crate) async fn get(
        &self,
        id: &str,
        principal: Option<&Principal>,
    ) -> Result<GetTaskResult, McpError> {
        let record = self.visible(id, principal).await?;
        Ok(GetTaskResult::new(detailed(&record)))
    }

    /// `tasks/update`: answers go to the questions they name; others are ignored. Returns
    /// the answers when the task is not finished and does not run here (another instance
    /// runs it: the caller relays them there).
    pub(crate) async fn update(
        &self,
        id: &str,
        responses: InputResponses,
        principal: Option<&Principal>,
    ) -> Result<Option<InputResponses>, McpError> {
        let record = self.visible(id, principal).await?;
        if record.state.is_terminal() {
            return Ok(None);
        }
        if self.writes(id).is_none() {
            return Ok(Some(responses));
        }
        self.answer(id, responses).await?;
        Ok(None)
    }

    /// Hands `responses` to the questions of task `id` if it runs here (whoever asked:
    /// `tasks/update` here, or another instance relaying it).
    pub(crate) async fn answer(&self, id: &str, responses: InputResponses) -> Result<(), McpError> {
        let Some(writes) = self.writes(id) else {
            // Finished, or not running here: nothing waits for these answers.
            return Ok(());
        };
        let _guard = writes.lock().await;
        let (answers, next) = {
            let mut running = lock(&self.running);
            let Some(task) = running.get_mut(id) else {
                return Ok(());
            };
            let answers: Vec<(oneshot::Sender<Value>, Value)> = responses
                .into_iter()
                .filter_map(|(key, value)| task.questions.remove(&key).map(|(_, tx)| (tx, value)))
                .collect();
            let next = if task.questions.is_empty() {
                TaskState::Working
            } else {
                TaskState::InputRequired(pending_requests(&task.questions))
            };
            (answers, next)
        };
        if !answers.is_empty() {
            let moved = self
                .store
                .set_state(id, next, now_ms())
                .await
                .map_err(|e| store_failed(&e))?;
            // Finished meanwhile (cancelled through another instance, say): the answers
            // reach nothing.
            if !moved {
                return Ok(());
            }
        }
        for (tx, value) in answers {
            let _ = tx.send(value);
        }
        Ok(())
    }

    /// `tasks/cancel`: a finished task is acknowledged as it is.
    pub(crate) async fn cancel(
        &self,
        id: &str,
        principal: Option<&Principal>,
    ) -> Result<(), McpError> {
        let record = self.visible(id, principal).await?;
        if record.state.is_terminal() {
            return Ok(());
        }
        let writes = self.writes(id);
        let _guard = match &writes {
            Some(writes) => Some(writes.lock().await),
            None => None,
        };
        self.store
            .set_state(id, TaskState::Cancelled, now_ms())
            .await
            .map_err(|e| store_failed(&e))?;
        self.stop(id);
        Ok(())
    }

    /// Stops task `id`'s handler if it runs here: its cancellation, its questions dropped,
    /// and after a grace period the invocation ended outright.
    fn stop(&self, id: &str) {
        if let Some(task) = lock(&self.running).get_mut(id) {
            task.cancel.cancel();
            task.questions.clear();
            // A handler that ignores its cancellation is ended after a grace period, so a
            // cancelled task never holds a slot of its principal's limit for ever.
            if let Some(abort) = task.abort.clone() {
                tokio::spawn(async move {
                    tokio::time::sleep(CANCEL_GRACE).await;
                    abort.abort();
                });
            }
        }
    }

    /// Has the store tell these tasks of the ones another instance finished, so their
    /// handlers stop here.
    pub(crate) fn watch(self: &Arc<Self>) {
        let tasks = Arc::downgrade(self);
        self.store.watch(Arc::new(move |id: &str| {
            if let Some(tasks) = tasks.upgrade() {
                tasks.stop(id);
            }
        }));
    }

    /// Records a new task for `call` and makes `elicitor` ask through it; `None` when the
    /// handler already asked a question of this round, or the principal has its limit of
    /// tasks running here (the call then ends as usual, holding its request: a client cannot
    /// leave unbounded work running behind it).
    async fn start(
        self: &Arc<Self>,
        call: &Call,
        token: &CancellationToken,
        elicitor: &McpElicitor,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let id = new_task_id();
        let now = now_ms();
        let owner = call.principal.as_ref().map(|p| p.id().to_owned());
        let record = TaskRecord {
            id: id.clone(),
            owner: owner.clone(),
            capability_id: call.capability_id.clone(),
            state: TaskState::Working,
            created_at: now,
            updated_at: now,
            ttl_ms: self.ttl_ms,
        };
        let writes = Arc::new(tokio::sync::Mutex::new(()));
        // Held until the record exists: a question the handler asks meanwhile waits for it.
        let guard = writes.clone().lock_owned().await;
        {
            let mut running = lock(&self.running);
            if running.values().filter(|r| r.owner == owner).count() >= self.limit {
                return Ok(None);
            }
            running.insert(
                id.clone(),
                Running {
                    owner,
                    cancel: token.clone(),
                    abort: None,
                    questions: BTreeMap::new(),
                    writes,
                },
            );
        }
        let link = TaskLink {
            id: id.clone(),
            tasks: self.clone(),
        };
        if !elicitor.begin_task(Arc::new(link)) {
            lock(&self.running).remove(&id);
            return Ok(None);
        }
        if let Err(error) = self.store.create(record.clone()).await {
            lock(&self.running).remove(&id);
            return Err(error);
        }
        drop(guard);
        Ok(Some(record))
    }

    /// Writes the end of task `id` (unless it already ended: a cancellation stays) and
    /// forgets it here.
    async fn finish(&self, id: &str, state: TaskState) {
        if let Some(writes) = self.writes(id) {
            let _guard = writes.lock().await;
            if let Err(error) = self.store.set_state(id, state, now_ms()).await {
                tracing::error!(%error, task = id, "the task's result could not be stored");
            }
        }
        lock(&self.running).remove(id);
    }
}

impl TaskQuestions for TaskLink {
    fn ask(&self, key: String, request: InputRequest) -> BoxFuture<Option<Value>> {
        let link = self.clone();
        Box::pin(async move { link.wait_for(&key, request).await })
    }
}

impl TaskLink {
    /// A question from the handler: the task waits in `input_required` until `tasks/update`
    /// answers it, or is cancelled.
    async fn wait_for(&self, key: &str, request: InputRequest) -> Option<Value> {
        let (tx, rx) = oneshot::channel();
        let writes = self.tasks.writes(&self.id)?;
        let cancel = {
            let _guard = writes.lock().await;
            let (pending, cancel) = {
                let mut running = lock(&self.tasks.running);
                let task = running.get_mut(&self.id)?;
                task.questions.insert(key.to_owned(), (request, tx));
                (pending_requests(&task.questions), task.cancel.clone())
            };
            let stored = self
                .tasks
                .store
                .set_state(&self.id, TaskState::InputRequired(pending), now_ms())
                .await;
            if stored.is_err() {
                // Not asked after all: no question without a way to answer it.
                if let Some(task) = lock(&self.tasks.running).get_mut(&self.id) {
                    task.questions.remove(key);
                }
                return None;
            }
            cancel
        };
        tokio::select! {
            answer = rx => answer.ok(),
            () = cancel.cancelled() => None,
        }
    }
}

/// A random task id.
fn new_task_id() -> String {
    rcip_runtime::__private::shared::random_id("task_")
}

/// The outcome of a joined invocation (a panic inside the spawned call is a failure of no
/// particular kind).
fn joined(
    result: Result<InvocationOutcome, tokio::task::JoinError>,
    call: &Call,
) -> InvocationOutcome {
    result.unwrap_or_else(|_| {
        InvocationOutcome::from_error(
            String::new(),
            call.capability_id.clone(),
            RcipError::new(
                ErrorCode::ExecutionFailed,
                "The capability failed while executing.",
            ),
        )
    })
}

/// Runs a task-eligible invocation: when its handler has started and not ended the call by
/// itself soon after, the call becomes a task (its result lands in the store when it ends),
/// and the client gets the task at once. Until then the request's cancellation `request`
/// cancels the invocation (`token`); afterwards only `tasks/cancel` does.
pub(crate) async fn run(
    tasks: &Arc<Tasks>,
    call: &Call,
    setup: &TaskSetup,
    token: CancellationToken,
    request: &CancellationToken,
    invocation: impl Future<Output = InvocationOutcome> + Send + 'static,
    complete: impl FnOnce(InvocationOutcome, &McpElicitor) -> TaskState + Send + 'static,
) -> Run {
    let mut handle = tokio::spawn(invocation);
    tokio::select! {
        biased;
        result = &mut handle => return Run::Finished(joined(result, call)),
        () = request.cancelled() => {
            token.cancel();
            return Run::Finished(joined(handle.await, call));
        }
        () = setup.started.notified() => {}
    }
    if let Ok(result) = tokio::time::timeout(SETTLE, &mut handle).await {
        return Run::Finished(joined(result, call));
    }
    let record = match tasks.start(call, &token, &setup.elicitor).await {
        Ok(Some(record)) => record,
        Ok(None) => {
            let outcome = crate::context::linked(request, &token, handle).await;
            return Run::Finished(joined(outcome, call));
        }
        Err(error) => {
            tracing::error!(%error, "a task could not be stored; the call runs to its end");
            let outcome = crate::context::linked(request, &token, handle).await;
            return Run::Finished(joined(outcome, call));
        }
    };
    if let Some(task) = lock(&tasks.running).get_mut(&record.id) {
        task.abort = Some(handle.abort_handle());
    }
    let created = CreateTaskResult::new(task_of(&record));
    let tasks = tasks.clone();
    let call = call.clone();
    let elicitor = setup.elicitor.clone();
    tokio::spawn(async move {
        let outcome = joined(handle.await, &call);
        let state = complete(outcome, &elicitor);
        tasks.finish(&record.id, state).await;
    });
    Run::Task(created.into())
}
