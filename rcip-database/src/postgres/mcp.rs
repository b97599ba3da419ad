//! rcip-mcp's state in PostgreSQL, shared by the instances on one database schema: tasks
//! ([`TaskStore`]: a task started through one instance is polled, fetched and cancelled
//! through any), 2025-11-25 sessions ([`SessionStore`]: a session opened through one
//! instance is served by any, for its owner only) and their stream events (rmcp's
//! [`EventStore`]: a client reconnecting with `Last-Event-ID` to any instance gets what it
//! missed).

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use deadpool_postgres::{Object, Pool};
use rcip_mcp::rmcp::model::ServerJsonRpcMessage;
use rcip_mcp::rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rcip_mcp::rmcp::transport::streamable_http_server::session::store::{
    EventId, EventStore, EventStoreError, EventStream,
};
use rcip_mcp::{
    SessionOwner, SessionStore, SessionStoreError, TaskRecord, TaskState, TaskStore,
    TaskStoreError, ends_stream,
};
use rcip_runtime::__private::shared::lock;
use rcip_runtime::{BoxFuture, Clock, SystemClock};
use serde_json::Value;
use tokio_postgres::Row;

/// How many expired tasks one `create` forgets at most (a bounded piece of work per call,
/// however many expired while nobody created one).
const SWEEP: i64 = 100;

const TASK_COLUMNS: &str =
    "id, owner, capability_id, state, detail, created_at, updated_at, ttl_ms, lease_until";

/// The database server's clock in epoch milliseconds: leases are given and judged by it, so
/// the instances' own clocks need not agree.
/// (`statement_timestamp()`: stable within the statement, so the sweep's bound can use the
/// index on `lease_until`.)
const DB_NOW_MS: &str = "(extract(epoch FROM statement_timestamp()) * 1000)::bigint";

/// The state names a finished task has, as `state` stores them.
const FINISHED: [&str; 3] = ["completed", "failed", "cancelled"];

/// Tasks in the `rcip_mcp_tasks` table, on a [`PostgresStore`](crate::PostgresStore)'s pool
/// ([`PostgresStore::mcp_tasks`](crate::PostgresStore::mcp_tasks)). Every statement is
/// prepared once per connection. A finished task never changes again, whichever instance
/// tries (one conditional `UPDATE` decides), and is forgotten `ttl_ms` after it finished.
///
/// The instance running a task holds a lease on it ([`TASK_LEASE`], renewed every third of
/// it): a task whose lease ran out, its instance killed or cut off, is failed for every
/// instance that reads it, never left working for ever nor run again. The renewal also
/// finds the tasks another instance cancelled, and tells the bridge (`TaskStore::watch`),
/// so their handlers stop here.
///
/// ```no_run
/// use std::sync::Arc;
/// use rcip_database::PostgresStore;
/// use rcip_mcp::McpBridge;
///
/// async fn bridge(runtime: &rcip_runtime::Runtime) -> Result<McpBridge, Box<dyn std::error::Error>> {
///     let store = PostgresStore::open("postgres://postgres@127.0.0.1:5432/test").await?;
///     let bridge = McpBridge::for_runtime(runtime)
///         .task_store(Arc::new(store.mcp_tasks()))
///         .build()?;
///     Ok(bridge)
/// }
/// ```
#[derive(Clone)]
pub struct PostgresTaskStore {
    pool: Pool,
    lease: Duration,
    here: Arc<Here>,
}

/// The tasks this store started and has not seen finish, and who hears of the ones another
/// instance finished.
#[derive(Default)]
struct Here {
    running: Mutex<HashSet<String>>,
    ended: Mutex<Option<Ended>>,
    renewing: OnceLock<()>,
}

type Ended = Arc<dyn Fn(&str) + Send + Sync>;

impl fmt::Debug for PostgresTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresTaskStore")
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

/// How long a running task's lease lasts by default.
pub const TASK_LEASE: Duration = Duration::from_secs(30);

/// The error a task whose lease ran out ends with: its instance stopped (crashed, killed,
/// cut off from the database) before it finished.
fn instance_gone() -> Value {
    serde_json::json!({
        "code": -32603,
        "message": "The instance running the task stopped before it finished."
    })
}

/// Milliseconds since the Unix epoch (the unit of every task time), by the runtime's clock.
fn now_ms() -> u64 {
    SystemClock.now_ms()
}

fn failed(error: impl fmt::Display) -> TaskStoreError {
    TaskStoreError(format!("postgres: {error}"))
}

fn int(value: u64) -> Result<i64, TaskStoreError> {
    i64::try_from(value).map_err(|_| failed(format!("{value} does not fit a BIGINT")))
}

fn unsigned(row: &Row, index: usize) -> Result<u64, TaskStoreError> {
    let value: i64 = row.try_get(index).map_err(failed)?;
    u64::try_from(value).map_err(|_| failed(format!("a stored {value} below 0")))
}

/// A state as its name and its JSON detail.
fn columns(state: &TaskState) -> Result<(&'static str, Option<String>), TaskStoreError> {
    let text = |value: &Value| serde_json::to_string(value).map_err(failed);
    Ok(match state {
        TaskState::Working => ("working", None),
        TaskState::InputRequired(requests) => ("input_required", Some(text(requests)?)),
        TaskState::Completed(result) => ("completed", Some(text(result)?)),
        TaskState::Failed(error) => ("failed", Some(text(error)?)),
        TaskState::Cancelled => ("cancelled", None),
    })
}

fn state_of(name: &str, detail: Option<&str>) -> Result<TaskState, TaskStoreError> {
    let value = || -> Result<Value, TaskStoreError> {
        let detail = detail.ok_or_else(|| failed(format!("a {name} task without its detail")))?;
        serde_json::from_str(detail).map_err(failed)
    };
    Ok(match name {
        "working" => TaskState::Working,
        "input_required" => TaskState::InputRequired(value()?),
        "completed" => TaskState::Completed(value()?),
        "failed" => TaskState::Failed(value()?),
        "cancelled" => TaskState::Cancelled,
        other => return Err(failed(format!("an unknown task state {other:?}"))),
    })
}

fn record_of(row: &Row) -> Result<TaskRecord, TaskStoreError> {
    let state: String = row.try_get(3).map_err(failed)?;
    let detail: Option<String> = row.try_get(4).map_err(failed)?;
    Ok(TaskRecord {
        id: row.try_get(0).map_err(failed)?,
        owner: row.try_get(1).map_err(failed)?,
        capability_id: row.try_get(2).map_err(failed)?,
        state: state_of(&state, detail.as_deref())?,
        created_at: unsigned(row, 5)?,
        updated_at: unsigned(row, 6)?,
        ttl_ms: unsigned(row, 7)?,
    })
}

impl PostgresTaskStore {
    pub(crate) fn on(pool: Pool) -> Self {
        Self {
            pool,
            lease: TASK_LEASE,
            here: Arc::default(),
        }
    }

    /// Another lease for the tasks this store runs (default [`TASK_LEASE`]; at least 30
    /// ms). The store renews it every third of its length while a task runs; a task whose
    /// lease ran out (its instance stopped) is read as failed, by any instance, from then on.
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(30));
        self
    }

    fn lease_ms(&self) -> u64 {
        u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX)
    }

    async fn client(&self) -> Result<Object, TaskStoreError> {
        self.pool.get().await.map_err(failed)
    }

    /// Starts renewing the leases of the tasks running here, once: a task of its own,
    /// which ends with the store.
    fn renew_leases(&self) {
        if self.here.renewing.set(()).is_err() {
            return;
        }
        let (pool, lease, here) = (self.pool.clone(), self.lease, Arc::downgrade(&self.here));
        tokio::spawn(renew(pool, lease, here));
    }

    async fn create_task(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let client = self.client().await?;
        let (state, detail) = columns(&record.state)?;
        let finished_until = record
            .state
            .is_terminal()
            .then(|| int(record.updated_at.saturating_add(record.ttl_ms)))
            .transpose()?;
        let now = int(now_ms())?;
        let lease = int(self.lease_ms())?;
        let sweep = client
            .prepare_cached(&format!(
                "DELETE FROM rcip_mcp_tasks WHERE id IN (\
                 (SELECT id FROM rcip_mcp_tasks WHERE finished_until < $1 LIMIT $2) UNION ALL \
                 (SELECT id FROM rcip_mcp_tasks WHERE finished_until IS NULL \
                 AND lease_until < {DB_NOW_MS} AND lease_until + ttl_ms < {DB_NOW_MS} \
                 LIMIT $2))"
            ))
            .await
            .map_err(failed)?;
        client
            .execute(&sweep, &[&now, &SWEEP])
            .await
            .map_err(failed)?;
        let insert = client
            .prepare_cached(&format!(
                "INSERT INTO rcip_mcp_tasks ({TASK_COLUMNS}, finished_until) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, {DB_NOW_MS} + $9, $10)"
            ))
            .await
            .map_err(failed)?;
        client
            .execute(
                &insert,
                &[
                    &record.id,
                    &record.owner,
                    &record.capability_id,
                    &state,
                    &detail,
                    &int(record.created_at)?,
                    &int(record.updated_at)?,
                    &int(record.ttl_ms)?,
                    &lease,
                    &finished_until,
                ],
            )
            .await
            .map_err(failed)?;
        if !record.state.is_terminal() {
            lock(&self.here.running).insert(record.id);
            self.renew_leases();
        }
        Ok(())
    }

    async fn get_task(&self, id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(&format!(
                "SELECT {TASK_COLUMNS}, {DB_NOW_MS} FROM rcip_mcp_tasks WHERE id = $1"
            ))
            .await
            .map_err(failed)?;
        let Some(row) = client.query_opt(&select, &[&id]).await.map_err(failed)? else {
            return Ok(None);
        };
        let now = now_ms();
        let record = record_of(&row)?;
        let lease_until = unsigned(&row, 8)?;
        let database_now = unsigned(&row, 9)?;
        if record.state.is_terminal() || lease_until >= database_now {
            return Ok(Some(record).filter(|record| !record.expired(now)));
        }
        // Its instance stopped renewing the lease: the task failed. Written once (whoever
        // reads first), unless its instance finished it meanwhile; then read again.
        drop(client);
        // This instance's own task (its renewal came too late): its handler must stop too.
        let here = lock(&self.here.running).contains(id);
        let failed_now = self
            .set_task_state(id, TaskState::Failed(instance_gone()), now)
            .await?;
        if here && failed_now {
            let watcher = lock(&self.here.ended).clone();
            if let Some(watcher) = watcher {
                watcher(id);
            }
        }
        Box::pin(self.get_task(id)).await
    }

    async fn set_task_state(
        &self,
        id: &str,
        state: TaskState,
        now: u64,
    ) -> Result<bool, TaskStoreError> {
        let finished = state.is_terminal();
        if finished {
            // No longer renewed, whatever comes of the write: a task whose last write failed
            // then fails for everyone when its lease runs out, rather than stay working.
            lock(&self.here.running).remove(id);
        }
        let client = self.client().await?;
        let (name, detail) = columns(&state)?;
        // One statement decides: whichever instance's change comes first moves a running task
        // on; a finished one stays as it is.
        let update = client
            .prepare_cached(
                "UPDATE rcip_mcp_tasks SET state = $2, detail = $3, updated_at = $4, \
                 finished_until = CASE WHEN $5 THEN $4 + ttl_ms END \
                 WHERE id = $1 AND state <> ALL($6::text[])",
            )
            .await
            .map_err(failed)?;
        let changed = client
            .execute(
                &update,
                &[&id, &name, &detail, &int(now)?, &finished, &&FINISHED[..]],
            )
            .await
            .map_err(failed)?;
        Ok(changed == 1)
    }
}

impl TaskStore for PostgresTaskStore {
    fn create(&self, record: TaskRecord) -> BoxFuture<Result<(), TaskStoreError>> {
        let store = self.clone();
        Box::pin(async move { store.create_task(record).await })
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let (store, id) = (self.clone(), id.to_owned());
        Box::pin(async move { store.get_task(&id).await })
    }

    fn set_state(
        &self,
        id: &str,
        state: TaskState,
        now: u64,
    ) -> BoxFuture<Result<bool, TaskStoreError>> {
        let (store, id) = (self.clone(), id.to_owned());
        Box::pin(async move { store.set_task_state(&id, state, now).await })
    }

    fn watch(&self, ended: Arc<dyn Fn(&str) + Send + Sync>) {
        *lock(&self.here.ended) = Some(ended);
    }
}

/// Renews, every third of `lease`, the leases of the tasks running here; a task found
/// finished meanwhile (another instance cancelled it) is told to the watcher, so its handler
/// stops. Ends when the store is gone.
async fn renew(pool: Pool, lease: Duration, here: Weak<Here>) {
    let lease_ms = u64::try_from(lease.as_millis()).unwrap_or(u64::MAX);
    loop {
        tokio::time::sleep(lease / 3).await;
        let Some(here) = here.upgrade() else {
            return;
        };
        let ids: Vec<String> = lock(&here.running).iter().cloned().collect();
        if ids.is_empty() {
            continue;
        }
        let renewed = async {
            let client = pool.get().await.map_err(failed)?;
            let lease = int(lease_ms)?;
            let update = client
                .prepare_cached(&format!(
                    "UPDATE rcip_mcp_tasks SET lease_until = {DB_NOW_MS} + $2 \
                     WHERE id = ANY($1) AND state <> ALL($3::text[]) RETURNING id"
                ))
                .await
                .map_err(failed)?;
            let rows = client
                .query(&update, &[&ids, &lease, &&FINISHED[..]])
                .await
                .map_err(failed)?;
            rows.iter()
                .map(|row| row.try_get::<_, String>(0).map_err(failed))
                .collect::<Result<HashSet<String>, TaskStoreError>>()
        };
        let renewed = match renewed.await {
            Ok(renewed) => renewed,
            Err(error) => {
                tracing::error!(%error, "the running tasks' leases could not be renewed");
                continue;
            }
        };
        let ended: Vec<String> = {
            let mut running = lock(&here.running);
            let ended: Vec<String> = ids
                .into_iter()
                .filter(|id| !renewed.contains(id) && running.contains(id))
                .collect();
            for id in &ended {
                running.remove(id);
            }
            ended
        };
        let watcher = lock(&here.ended).clone();
        if let Some(watcher) = watcher {
            for id in &ended {
                watcher(id);
            }
        }
    }
}

/// How long a session stays in the shared store after it was opened: a session its client
/// abandoned (never ended with `DELETE`) goes then.
const SESSION_LIFETIME_MS: u64 = 24 * 60 * 60 * 1000;

/// 2025-11-25 sessions in the `rcip_mcp_sessions` table, on a
/// [`PostgresStore`](crate::PostgresStore)'s pool
/// ([`PostgresStore::mcp_sessions`](crate::PostgresStore::mcp_sessions)): who opened each
/// and its `initialize`, for `HttpOptions::session_store`. A session is kept until its owner
/// ends it, and at most a day after it was opened; each new session forgets up to 100 older
/// ones.
pub struct PostgresSessionStore {
    pool: Pool,
}

impl fmt::Debug for PostgresSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresSessionStore")
            .finish_non_exhaustive()
    }
}

fn session_failed(error: impl fmt::Display) -> SessionStoreError {
    SessionStoreError(format!("postgres: {error}"))
}

impl PostgresSessionStore {
    pub(crate) fn on(pool: Pool) -> Self {
        Self { pool }
    }

    async fn client(&self) -> Result<Object, SessionStoreError> {
        self.pool.get().await.map_err(session_failed)
    }

    /// The oldest opening time a live session has now.
    fn oldest() -> Result<i64, SessionStoreError> {
        i64::try_from(now_ms().saturating_sub(SESSION_LIFETIME_MS)).map_err(session_failed)
    }

    /// Sets one JSON column of session `id`, making its row if it has none yet.
    async fn set(&self, id: &str, column: Column, value: String) -> Result<(), SessionStoreError> {
        let client = self.client().await?;
        let now = i64::try_from(now_ms()).map_err(session_failed)?;
        if column == Column::Owner {
            let sweep = client
                .prepare_cached(
                    "DELETE FROM rcip_mcp_sessions WHERE id IN (SELECT id FROM \
                     rcip_mcp_sessions WHERE created_at < $1 LIMIT $2)",
                )
                .await
                .map_err(session_failed)?;
            client
                .execute(&sweep, &[&Self::oldest()?, &SWEEP])
                .await
                .map_err(session_failed)?;
        }
        let upsert = client
            .prepare_cached(column.upsert())
            .await
            .map_err(session_failed)?;
        client
            .execute(&upsert, &[&id, &value, &now])
            .await
            .map_err(session_failed)?;
        Ok(())
    }

    /// One JSON column of session `id`, if the session is live and the column was set.
    async fn get(&self, id: &str, column: Column) -> Result<Option<Value>, SessionStoreError> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(column.select())
            .await
            .map_err(session_failed)?;
        let row = client
            .query_opt(&select, &[&id, &Self::oldest()?])
            .await
            .map_err(session_failed)?;
        let Some(text) = row
            .map(|row| row.try_get::<_, Option<String>>(0))
            .transpose()
            .map_err(session_failed)?
            .flatten()
        else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(session_failed)
    }

    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        let client = self.client().await?;
        let delete = client
            .prepare_cached("DELETE FROM rcip_mcp_sessions WHERE id = $1")
            .await
            .map_err(session_failed)?;
        client
            .execute(&delete, &[&id])
            .await
            .map_err(session_failed)?;
        Ok(())
    }
}

/// The session columns set apart: the owner (by the session guard) and the `initialize`
/// (by rmcp after the handshake), in whichever order they come.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    Owner,
    Initialize,
}

impl Column {
    const fn upsert(self) -> &'static str {
        match self {
            Self::Owner => {
                "INSERT INTO rcip_mcp_sessions (id, owner, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner"
            }
            Self::Initialize => {
                "INSERT INTO rcip_mcp_sessions (id, initialize, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET initialize = EXCLUDED.initialize"
            }
        }
    }

    const fn select(self) -> &'static str {
        match self {
            Self::Owner => "SELECT owner FROM rcip_mcp_sessions WHERE id = $1 AND created_at >= $2",
            Self::Initialize => {
                "SELECT initialize FROM rcip_mcp_sessions WHERE id = $1 AND created_at >= $2"
            }
        }
    }
}

impl SessionStore for PostgresSessionStore {
    fn set_owner(&self, id: &str, owner: SessionOwner) -> BoxFuture<Result<(), SessionStoreError>> {
        let (store, id) = (Self::on(self.pool.clone()), id.to_owned());
        Box::pin(async move {
            let owner = serde_json::to_string(&owner).map_err(session_failed)?;
            store.set(&id, Column::Owner, owner).await
        })
    }

    fn owner(&self, id: &str) -> BoxFuture<Result<Option<SessionOwner>, SessionStoreError>> {
        let (store, id) = (Self::on(self.pool.clone()), id.to_owned());
        Box::pin(async move {
            store
                .get(&id, Column::Owner)
                .await?
                .map(|owner| serde_json::from_value(owner).map_err(session_failed))
                .transpose()
        })
    }

    fn set_initialize(&self, id: &str, params: Value) -> BoxFuture<Result<(), SessionStoreError>> {
        let (store, id) = (Self::on(self.pool.clone()), id.to_owned());
        Box::pin(async move {
            let params = serde_json::to_string(&params).map_err(session_failed)?;
            store.set(&id, Column::Initialize, params).await
        })
    }

    fn initialize(&self, id: &str) -> BoxFuture<Result<Option<Value>, SessionStoreError>> {
        let (store, id) = (Self::on(self.pool.clone()), id.to_owned());
        Box::pin(async move { store.get(&id, Column::Initialize).await })
    }

    fn forget(&self, id: &str) -> BoxFuture<Result<(), SessionStoreError>> {
        let (store, id) = (Self::on(self.pool.clone()), id.to_owned());
        Box::pin(async move { store.delete(&id).await })
    }
}

/// How long a stream is kept after its last event (a client reconnects within seconds).
const STREAM_IDLE_MS: u64 = 5 * 60 * 1000;

/// How soon a replay of an open stream looks again for the events another instance wrote:
/// at first, and after each event.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);

/// The longest a replay waits between looks: each look that finds nothing doubles the wait
/// up to this, so replays of streams whose call never answers (its instance died) cost the
/// shared pool a read a second each, not twenty.
const FOLLOW_AT_MOST: Duration = Duration::from_secs(1);

/// One in how many stored events also sweeps idle streams (a bounded piece each time).
const SWEEP_EVERY: u64 = 64;

/// The most events a stream keeps (the oldest go first, as in rcip-mcp's memory store);
/// trimmed every [`TRIM_EVERY`] events past it, so a stream holds at most the sum.
const STREAM_EVENTS: i64 = 256;
const TRIM_EVERY: i64 = 64;

/// The events of 2025-11-25 event streams in the `rcip_mcp_streams` and `rcip_mcp_events`
/// tables, on a [`PostgresStore`](crate::PostgresStore)'s pool
/// ([`PostgresStore::mcp_events`](crate::PostgresStore::mcp_events)), for
/// `HttpOptions::event_store`: a client reconnecting with `Last-Event-ID` to any instance of
/// the deployment gets the events it missed, the call's answer included.
///
/// An event's id is its stream's secret (128 random bits) and its number: rmcp replays by
/// id alone, whoever asks, so only a client that was sent an id can name its stream. A
/// replay of a stream whose answer has not come yet follows it, looking for what the
/// instance running the call writes (after 50 ms, then less often while nothing comes, at
/// least once a second), until the answer or until the stream has been idle for 5 minutes;
/// a stream idle that long is forgotten with its events.
pub struct PostgresEventStore {
    pool: Pool,
    stored: AtomicU64,
}

impl fmt::Debug for PostgresEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresEventStore").finish_non_exhaustive()
    }
}

fn event_failed(error: impl fmt::Display) -> EventStoreError {
    EventStoreError::from(format!("postgres: {error}"))
}

/// An event as stored: its JSON-RPC message (none for a priming event) and its retry hint.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    message: Option<Arc<ServerJsonRpcMessage>>,
    retry_ms: Option<u64>,
}

fn event_text(event: &ServerSseMessage) -> Result<String, EventStoreError> {
    let stored = Stored {
        message: event.message.clone(),
        retry_ms: event
            .retry
            .map(|retry| u64::try_from(retry.as_millis()).unwrap_or(u64::MAX)),
    };
    serde_json::to_string(&stored).map_err(event_failed)
}

fn event_of(id: String, text: &str) -> Result<ServerSseMessage, EventStoreError> {
    let stored: Stored = serde_json::from_str(text).map_err(event_failed)?;
    // rmcp's type is non-exhaustive: built from a constructor, then given every field.
    let mut event = ServerSseMessage::retry(Duration::ZERO);
    event.event_id = Some(id);
    event.message = stored.message;
    event.retry = stored.retry_ms.map(Duration::from_millis);
    Ok(event)
}

impl PostgresEventStore {
    pub(crate) fn on(pool: Pool) -> Self {
        Self {
            pool,
            stored: AtomicU64::new(0),
        }
    }

    async fn client(pool: &Pool) -> Result<Object, EventStoreError> {
        pool.get().await.map_err(event_failed)
    }

    fn now() -> Result<i64, EventStoreError> {
        i64::try_from(now_ms()).map_err(event_failed)
    }

    /// Forgets up to 100 streams idle beyond the limit, with their events.
    async fn sweep(client: &Object) -> Result<(), EventStoreError> {
        let oldest = Self::now()?.saturating_sub(i64::try_from(STREAM_IDLE_MS).unwrap_or(0));
        let sweep = client
            .prepare_cached(
                "DELETE FROM rcip_mcp_streams WHERE stream_id IN (SELECT stream_id FROM \
                 rcip_mcp_streams WHERE touched_at < $1 LIMIT $2)",
            )
            .await
            .map_err(event_failed)?;
        client
            .execute(&sweep, &[&oldest, &SWEEP])
            .await
            .map_err(event_failed)?;
        Ok(())
    }

    /// The events of `stream` after `after`, in order, at most 100, with their ids.
    async fn events_after(
        pool: &Pool,
        stream: &str,
        secret: &str,
        after: i64,
    ) -> Result<Vec<(i64, ServerSseMessage)>, EventStoreError> {
        let client = Self::client(pool).await?;
        let select = client
            .prepare_cached(
                "SELECT seq, event FROM rcip_mcp_events WHERE stream_id = $1 AND seq > $2 \
                 ORDER BY seq LIMIT 100",
            )
            .await
            .map_err(event_failed)?;
        let rows = client
            .query(&select, &[&stream, &after])
            .await
            .map_err(event_failed)?;
        rows.iter()
            .map(|row| {
                let seq: i64 = row.try_get(0).map_err(event_failed)?;
                let text: String = row.try_get(1).map_err(event_failed)?;
                Ok((seq, event_of(format!("{secret}-{seq}"), &text)?))
            })
            .collect()
    }

    /// Whether `stream` has its answer, and the last time it changed; `None` when it is
    /// gone.
    async fn state(pool: &Pool, stream: &str) -> Result<Option<(bool, i64)>, EventStoreError> {
        let client = Self::client(pool).await?;
        let select = client
            .prepare_cached("SELECT closed, touched_at FROM rcip_mcp_streams WHERE stream_id = $1")
            .await
            .map_err(event_failed)?;
        let row = client
            .query_opt(&select, &[&stream])
            .await
            .map_err(event_failed)?;
        row.map(|row| {
            Ok((
                row.try_get(0).map_err(event_failed)?,
                row.try_get(1).map_err(event_failed)?,
            ))
        })
        .transpose()
    }

    /// Sends `stream`'s events after `after` into `to` until its answer, until it has been
    /// idle beyond the limit, or until nobody reads them any more.
    async fn follow(
        pool: Pool,
        stream: String,
        secret: String,
        mut after: i64,
        to: tokio::sync::mpsc::Sender<ServerSseMessage>,
    ) {
        // Set once the stream was seen answered: one more read takes an answer stored
        // between the last read and that look, then the replay ends.
        let mut last_look = false;
        let mut wait = FOLLOW_EVERY;
        loop {
            let events = match Self::events_after(&pool, &stream, &secret, after).await {
                Ok(events) => events,
                Err(error) => {
                    tracing::error!(%error, "a stream's events could not be read");
                    return;
                }
            };
            let read = events.len();
            for (seq, event) in events {
                after = seq;
                let ends = ends_stream(&event);
                if to.send(event).await.is_err() || ends {
                    return;
                }
            }
            if read > 0 {
                wait = FOLLOW_EVERY;
                continue;
            }
            if last_look {
                return;
            }
            let idle_since = match Self::state(&pool, &stream).await {
                Ok(Some((false, touched))) => touched,
                Ok(Some((true, _))) => {
                    last_look = true;
                    continue;
                }
                _ => return,
            };
            let idle_for = Self::now().map_or(i64::MAX, |now| now.saturating_sub(idle_since));
            if idle_for > i64::try_from(STREAM_IDLE_MS).unwrap_or(i64::MAX) || to.is_closed() {
                return;
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(FOLLOW_AT_MOST);
        }
    }
}

#[async_trait::async_trait]
impl EventStore for PostgresEventStore {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        let client = Self::client(&self.pool).await?;
        if self
            .stored
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(SWEEP_EVERY)
        {
            Self::sweep(&client).await?;
        }
        let secret = rcip_runtime::__private::shared::random_id("");
        let closes = ends_stream(event);
        let text = event_text(event)?;
        // The stream's row (its secret made by the first event), then the event: one
        // statement, so the event's number and its stream's secret come back together.
        let store = client
            .prepare_cached(
                "WITH stream AS (\
                 INSERT INTO rcip_mcp_streams AS s (stream_id, secret, closed, touched_at, events) \
                 VALUES ($1, $2, $3, $4, 1) ON CONFLICT (stream_id) DO UPDATE \
                 SET closed = s.closed OR EXCLUDED.closed, touched_at = EXCLUDED.touched_at, \
                 events = s.events + 1 \
                 RETURNING secret, events), \
                 event AS (INSERT INTO rcip_mcp_events (stream_id, event) \
                 SELECT $1, $5 FROM stream RETURNING seq) \
                 SELECT stream.secret, event.seq, stream.events FROM stream, event",
            )
            .await
            .map_err(event_failed)?;
        let row = client
            .query_one(
                &store,
                &[&stream_id, &secret, &closes, &Self::now()?, &text],
            )
            .await
            .map_err(event_failed)?;
        let secret: String = row.try_get(0).map_err(event_failed)?;
        let seq: i64 = row.try_get(1).map_err(event_failed)?;
        let events: i64 = row.try_get(2).map_err(event_failed)?;
        if events > STREAM_EVENTS && events % TRIM_EVERY == 0 {
            let trim = client
                .prepare_cached(
                    "DELETE FROM rcip_mcp_events WHERE stream_id = $1 AND seq <= \
                     (SELECT seq FROM rcip_mcp_events WHERE stream_id = $1 \
                     ORDER BY seq DESC OFFSET $2 LIMIT 1)",
                )
                .await
                .map_err(event_failed)?;
            client
                .execute(&trim, &[&stream_id, &STREAM_EVENTS])
                .await
                .map_err(event_failed)?;
        }
        Ok(format!("{secret}-{seq}"))
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        let unknown = rcip_mcp::unknown_event;
        let (secret, after) = rcip_mcp::event_id_parts(last_event_id)?;
        let after = i64::try_from(after).map_err(|_| unknown())?;
        let client = Self::client(&self.pool).await?;
        let find = client
            .prepare_cached(
                "SELECT e.stream_id FROM rcip_mcp_events e JOIN rcip_mcp_streams s \
                 USING (stream_id) WHERE e.seq = $1 AND s.secret = $2",
            )
            .await
            .map_err(event_failed)?;
        let stream: String = client
            .query_opt(&find, &[&after, &secret])
            .await
            .map_err(event_failed)?
            .ok_or_else(unknown)?
            .try_get(0)
            .map_err(event_failed)?;
        drop(client);
        // A task reads, the stream hands over: rmcp's stream must be `Sync`, a database
        // read in flight is not.
        let (to, from) = tokio::sync::mpsc::channel(16);
        tokio::spawn(Self::follow(
            self.pool.clone(),
            stream,
            secret.to_owned(),
            after,
            to,
        ));
        Ok(Box::pin(futures_util::stream::unfold(
            from,
            |mut from| async move { from.recv().await.map(|event| (event, from)) },
        )))
    }
}
