//! rcip-mcp's state in PostgreSQL, shared by the instances on one database schema: tasks
//! ([`TaskStore`]: a task started through one instance is polled, fetched and cancelled
//! through any) and 2025-11-25 sessions ([`SessionStore`]: a session opened through one
//! instance is served by any, for its owner only).

use std::fmt;

use deadpool_postgres::{Object, Pool};
use rcip_mcp::{
    SessionOwner, SessionStore, SessionStoreError, TaskRecord, TaskState, TaskStore, TaskStoreError,
};
use rcip_runtime::BoxFuture;
use serde_json::Value;
use tokio_postgres::Row;

/// How many expired tasks one `create` forgets at most (a bounded piece of work per call,
/// however many expired while nobody created one).
const SWEEP: i64 = 100;

const TASK_COLUMNS: &str =
    "id, owner, capability_id, state, detail, created_at, updated_at, ttl_ms";

/// The state names a finished task has, as `state` stores them.
const FINISHED: [&str; 3] = ["completed", "failed", "cancelled"];

/// Tasks in the `rcip_mcp_tasks` table, on a [`PostgresStore`](crate::PostgresStore)'s pool
/// ([`PostgresStore::mcp_tasks`](crate::PostgresStore::mcp_tasks)). Every statement is
/// prepared once per connection. A finished task never changes again, whichever instance
/// tries (one conditional `UPDATE` decides), and is forgotten `ttl_ms` after it finished.
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
pub struct PostgresTaskStore {
    pool: Pool,
}

impl fmt::Debug for PostgresTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresTaskStore").finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch (the unit of every task time).
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
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
        Self { pool }
    }

    async fn client(&self) -> Result<Object, TaskStoreError> {
        self.pool.get().await.map_err(failed)
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
        let sweep = client
            .prepare_cached(
                "DELETE FROM rcip_mcp_tasks WHERE id IN (SELECT id FROM rcip_mcp_tasks \
                 WHERE finished_until < $1 LIMIT $2)",
            )
            .await
            .map_err(failed)?;
        client
            .execute(&sweep, &[&now, &SWEEP])
            .await
            .map_err(failed)?;
        let insert = client
            .prepare_cached(&format!(
                "INSERT INTO rcip_mcp_tasks ({TASK_COLUMNS}, finished_until) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
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
                    &finished_until,
                ],
            )
            .await
            .map_err(failed)?;
        Ok(())
    }

    async fn get_task(&self, id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let client = self.client().await?;
        let select = client
            .prepare_cached(&format!(
                "SELECT {TASK_COLUMNS} FROM rcip_mcp_tasks WHERE id = $1"
            ))
            .await
            .map_err(failed)?;
        let row = client.query_opt(&select, &[&id]).await.map_err(failed)?;
        let now = now_ms();
        Ok(row
            .map(|row| record_of(&row))
            .transpose()?
            .filter(|record| !record.expired(now)))
    }

    async fn set_task_state(
        &self,
        id: &str,
        state: TaskState,
        now: u64,
    ) -> Result<bool, TaskStoreError> {
        let client = self.client().await?;
        let finished = state.is_terminal();
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
        let store = Self::on(self.pool.clone());
        Box::pin(async move { store.create_task(record).await })
    }

    fn get(&self, id: &str) -> BoxFuture<Result<Option<TaskRecord>, TaskStoreError>> {
        let (store, id) = (Self::on(self.pool.clone()), id.to_owned());
        Box::pin(async move { store.get_task(&id).await })
    }

    fn set_state(
        &self,
        id: &str,
        state: TaskState,
        now: u64,
    ) -> BoxFuture<Result<bool, TaskStoreError>> {
        let (store, id) = (Self::on(self.pool.clone()), id.to_owned());
        Box::pin(async move { store.set_task_state(&id, state, now).await })
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
