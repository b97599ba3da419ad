//! The SQLite store (feature `sqlite`): one file (or `:memory:`), one transaction per commit,
//! every call on Tokio's blocking pool.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use uuid::Uuid;

use super::record::{Actor, Record};
use super::store::{
    ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, RecordStore, ScanFilter,
    StoreError, StoreFuture,
};
use crate::Kind;
use rcip_runtime::__private::shared::lock;

/// Records, events and idempotency entries in SQLite (bundled with the crate); also the
/// platform's directory ([`DirectoryStore`](crate::DirectoryStore), in tables of the same
/// file, with idempotency keys of its own).
///
/// A commit is one `IMMEDIATE` transaction: the record, its events and its idempotency entry
/// are written together or not at all, and a process that reopens the file sees every commit
/// that returned.
///
/// ```
/// use rcip_relationship::{Engine, SqliteStore};
/// let engine = Engine::new(SqliteStore::in_memory().unwrap());
/// # let _ = engine;
/// ```
#[derive(Debug)]
pub struct SqliteStore {
    /// Shared with the blocking tasks that use it, one at a time.
    connection: Arc<Mutex<Connection>>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS records (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    version INTEGER NOT NULL,
    type_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    revision INTEGER NOT NULL,
    data TEXT NOT NULL,
    participants TEXT NOT NULL,
    state TEXT,
    archived INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_workspace ON records (workspace_id, position);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    actor TEXT NOT NULL,
    record_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_workspace ON events (workspace_id, id);
CREATE INDEX IF NOT EXISTS events_by_record ON events (record_id, id);
CREATE TABLE IF NOT EXISTS idempotency (
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);
";

const RECORD_COLUMNS: &str = "position, id, workspace_id, collection_id, namespace, version, \
    type_name, kind, revision, data, participants, state, archived, created_at, updated_at";

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path`.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or is not an rcip database.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::from_connection(Connection::open(path).map_err(sql)?)
    }

    /// A private database in memory (gone when dropped).
    ///
    /// # Errors
    ///
    /// SQLite could not start.
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::from_connection(Connection::open_in_memory().map_err(sql)?)
    }

    fn from_connection(connection: Connection) -> Result<Self, StoreError> {
        connection
            .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
            .map_err(sql)?;
        connection.execute_batch(SCHEMA).map_err(sql)?;
        connection
            .execute_batch(super::sqlite_directory::DIRECTORY_SCHEMA)
            .map_err(sql)?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
        })
    }
}

pub(crate) fn sql(error: rusqlite::Error) -> StoreError {
    StoreError(format!("sqlite: {error}"))
}

fn json_error(error: serde_json::Error) -> StoreError {
    StoreError(format!("JSON: {error}"))
}

/// A row of `records` (columns in `RECORD_COLUMNS` order) as a record and its position.
fn record_row(row: &Row<'_>) -> rusqlite::Result<(u64, Result<Record, StoreError>)> {
    let position: i64 = row.get(0)?;
    let id: String = row.get(1)?;
    let data: String = row.get(9)?;
    let participants: String = row.get(10)?;
    let kind: String = row.get(7)?;
    let version: i64 = row.get(5)?;
    let revision: i64 = row.get(8)?;
    let created_at: i64 = row.get(13)?;
    let updated_at: i64 = row.get(14)?;
    let record = (|| {
        Ok(Record {
            id: Uuid::parse_str(&id).map_err(|e| StoreError(format!("bad record id: {e}")))?,
            workspace_id: row.get(2).map_err(sql)?,
            collection_id: row.get(3).map_err(sql)?,
            namespace: row.get(4).map_err(sql)?,
            version: version.unsigned_abs(),
            type_name: row.get(6).map_err(sql)?,
            kind: match kind.as_str() {
                "entity" => Kind::Entity,
                "relationship" => Kind::Relationship,
                other => return Err(StoreError(format!("bad record kind {other:?}"))),
            },
            revision: revision.unsigned_abs(),
            data: serde_json::from_str(&data).map_err(json_error)?,
            participants: serde_json::from_str(&participants).map_err(json_error)?,
            state: row.get(11).map_err(sql)?,
            archived: row.get::<_, i64>(12).map_err(sql)? != 0,
            created_at: created_at.unsigned_abs(),
            updated_at: updated_at.unsigned_abs(),
        })
    })();
    Ok((position.unsigned_abs(), record))
}

fn event_row(row: &Row<'_>) -> rusqlite::Result<Result<ChangeEvent, StoreError>> {
    let id: i64 = row.get(0)?;
    let event_id: String = row.get(1)?;
    let workspace_id: String = row.get(2)?;
    let actor: String = row.get(3)?;
    let record_id: String = row.get(4)?;
    let revision: i64 = row.get(5)?;
    let kind: String = row.get(6)?;
    let at: String = row.get(7)?;
    let payload: String = row.get(8)?;
    Ok((|| {
        Ok(ChangeEvent {
            id: id.unsigned_abs(),
            event_id: Uuid::parse_str(&event_id).map_err(|e| StoreError(e.to_string()))?,
            workspace_id,
            actor: serde_json::from_str::<Actor>(&actor).map_err(json_error)?,
            record_id: Uuid::parse_str(&record_id).map_err(|e| StoreError(e.to_string()))?,
            revision: revision.unsigned_abs(),
            kind: EventKind::parse(&kind)
                .ok_or_else(|| StoreError(format!("bad event kind {kind:?}")))?,
            at,
            payload: serde_json::from_str(&payload).map_err(json_error)?,
        })
    })())
}

/// The entry remembered for `key` (inside a commit's transaction, or on its own).
fn read_idempotency(
    connection: &Connection,
    workspace_id: &str,
    key: &str,
) -> Result<Option<IdempotencyEntry>, StoreError> {
    connection
        .prepare_cached(
            "SELECT fingerprint, result FROM idempotency WHERE workspace_id = ?1 AND key = ?2",
        )
        .map_err(sql)?
        .query_row(params![workspace_id, key], |row| {
            Ok(IdempotencyEntry {
                workspace_id: workspace_id.to_owned(),
                key: key.to_owned(),
                fingerprint: row.get(0)?,
                result: row.get(1)?,
            })
        })
        .optional()
        .map_err(sql)
}

/// SQLite integers are signed: values beyond `i64::MAX` are refused rather than wrapped.
pub(crate) fn int(value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError(format!("{value} does not fit SQLite's integers")))
}

impl SqliteStore {
    /// Runs `work` on the connection on Tokio's blocking pool, so that SQLite's I/O and
    /// locking never hold an executor thread. Outside a Tokio runtime it runs at once on the
    /// caller's thread (the future is then already resolved).
    pub(crate) fn run<T, E>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    ) -> StoreFuture<'static, Result<T, E>>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let connection = Arc::clone(&self.connection);
        let work = move || work(&mut lock(&connection));
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let task = runtime.spawn_blocking(work);
                Box::pin(async move {
                    task.await.unwrap_or_else(|e| {
                        Err(StoreError(format!("sqlite: the blocking task failed: {e}")).into())
                    })
                })
            }
            Err(_) => Box::pin(std::future::ready(work())),
        }
    }
}

impl RecordStore for SqliteStore {
    fn get<'a>(
        &'a self,
        workspace_id: &'a str,
        id: Uuid,
    ) -> StoreFuture<'a, Result<Option<Record>, StoreError>> {
        let workspace_id = workspace_id.to_owned();
        self.run(move |connection| get(connection, &workspace_id, id))
    }

    fn scan<'a>(
        &'a self,
        workspace_id: &'a str,
        filter: &'a ScanFilter,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<(u64, Record)>, StoreError>> {
        let (workspace_id, filter) = (workspace_id.to_owned(), filter.clone());
        self.run(move |connection| scan(connection, &workspace_id, &filter, after, limit))
    }

    fn events<'a>(
        &'a self,
        workspace_id: &'a str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<ChangeEvent>, StoreError>> {
        let workspace_id = workspace_id.to_owned();
        self.run(move |connection| events(connection, &workspace_id, record, after, limit))
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        let (workspace_id, key) = (workspace_id.to_owned(), key.to_owned());
        self.run(move |connection| read_idempotency(connection, &workspace_id, &key))
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, Result<Vec<u64>, CommitError>> {
        self.run(move |connection| apply(connection, &commit))
    }
}

fn get(
    connection: &Connection,
    workspace_id: &str,
    id: Uuid,
) -> Result<Option<Record>, StoreError> {
    let row = connection
        .query_row(
            &format!("SELECT {RECORD_COLUMNS} FROM records WHERE id = ?1 AND workspace_id = ?2"),
            params![id.to_string(), workspace_id],
            record_row,
        )
        .optional()
        .map_err(sql)?;
    row.map(|(_, record)| record).transpose()
}

fn scan(
    connection: &Connection,
    workspace_id: &str,
    filter: &ScanFilter,
    after: u64,
    limit: usize,
) -> Result<Vec<(u64, Record)>, StoreError> {
    let mut statement = connection
        .prepare_cached(&format!(
            "SELECT {RECORD_COLUMNS} FROM records WHERE workspace_id = ?1 AND position > ?2 \
                 AND (?3 IS NULL OR namespace = ?3) AND (?4 IS NULL OR type_name = ?4) \
                 AND (?5 IS NULL OR state = ?5) AND (?6 IS NULL OR collection_id = ?6) \
                 AND (?7 OR archived = 0) AND (?9 IS NULL OR version = ?9) \
                 ORDER BY position LIMIT ?8"
        ))
        .map_err(sql)?;
    let rows = statement
        .query_map(
            params![
                workspace_id,
                int(after)?,
                filter.namespace,
                filter.type_name,
                filter.state,
                filter.collection_id,
                filter.include_archived,
                int(limit as u64)?,
                filter.version.map(int).transpose()?,
            ],
            record_row,
        )
        .map_err(sql)?;
    let mut records = Vec::new();
    for row in rows {
        let (position, record) = row.map_err(sql)?;
        records.push((position, record?));
    }
    Ok(records)
}

fn events(
    connection: &Connection,
    workspace_id: &str,
    record: Option<Uuid>,
    after: u64,
    limit: usize,
) -> Result<Vec<ChangeEvent>, StoreError> {
    let mut statement = connection
            .prepare_cached(
                "SELECT id, event_id, workspace_id, actor, record_id, revision, kind, at, payload \
                 FROM events WHERE workspace_id = ?1 AND id > ?2 AND (?3 IS NULL OR record_id = ?3) \
                 ORDER BY id LIMIT ?4",
            )
            .map_err(sql)?;
    let rows = statement
        .query_map(
            params![
                workspace_id,
                int(after)?,
                record.map(|r| r.to_string()),
                int(limit as u64)?
            ],
            event_row,
        )
        .map_err(sql)?;
    let mut events = Vec::new();
    for row in rows {
        events.push(row.map_err(sql)??);
    }
    Ok(events)
}

fn apply(connection: &mut Connection, commit: &Commit) -> Result<Vec<u64>, CommitError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql)?;
    let entry = &commit.idempotency;
    let existing = read_idempotency(&transaction, &entry.workspace_id, &entry.key)?;
    let record = &commit.record;
    let id = record.id.to_string();
    let current: Option<i64> = transaction
        .query_row(
            "SELECT revision FROM records WHERE id = ?1",
            params![id],
            |row| row.get(0),
        )
        .optional()
        .map_err(sql)?;
    commit.check(existing, current.map(i64::unsigned_abs))?;
    let data = serde_json::to_string(&record.data).map_err(json_error)?;
    let participants = serde_json::to_string(&record.participants).map_err(json_error)?;
    transaction
            .prepare_cached(
                "INSERT INTO records (id, workspace_id, collection_id, namespace, version, type_name, \
                 kind, revision, data, participants, state, archived, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
                 ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, data = excluded.data, \
                 participants = excluded.participants, state = excluded.state, \
                 archived = excluded.archived, updated_at = excluded.updated_at",
            )
            .map_err(sql)?
            .execute(params![
                    id,
                    record.workspace_id,
                    record.collection_id,
                    record.namespace,
                    int(record.version)?,
                    record.type_name,
                    record.kind.as_str(),
                    int(record.revision)?,
                    data,
                    participants,
                    record.state,
                    record.archived,
                    int(record.created_at)?,
                int(record.updated_at)?,
            ])
            .map_err(sql)?;
    let mut ids = Vec::with_capacity(commit.events.len());
    for event in &commit.events {
        transaction
                .prepare_cached(
                    "INSERT INTO events (event_id, workspace_id, actor, record_id, revision, kind, at, payload) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(sql)?
                .execute(params![
                        event.event_id.to_string(),
                        event.workspace_id,
                        serde_json::to_string(&event.actor).map_err(json_error)?,
                        event.record_id.to_string(),
                        int(event.revision)?,
                        event.kind.as_str(),
                        event.at,
                    event.payload.to_string(),
                ])
                .map_err(sql)?;
        ids.push(transaction.last_insert_rowid().unsigned_abs());
    }
    let entry = &commit.idempotency;
    transaction
            .prepare_cached(
                "INSERT INTO idempotency (workspace_id, key, fingerprint, result) VALUES (?1, ?2, ?3, ?4)",
            )
            .map_err(sql)?
            .execute(params![entry.workspace_id, entry.key, entry.fingerprint, entry.result])
            .map_err(sql)?;
    transaction.commit().map_err(sql)?;
    Ok(ids)
}
