//! rcip-mcp's [`TaskStore`] in PostgreSQL: a task started through one instance is polled,
//! fetched and cancelled through any instance on the same database schema.

use std::fmt;

use deadpool_postgres::{Object, Pool};
use rcip_mcp::{TaskRecord, TaskState, TaskStore, TaskStoreError};
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
