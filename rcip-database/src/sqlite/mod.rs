//! The SQLite store (feature `sqlite`): one file (or `:memory:`), one connection owned by a
//! thread of its own, which every call is sent to; commits queued together are written in one
//! transaction.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use rcip_runtime::__private::shared::random_128;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use tokio::sync::oneshot;
use uuid::Uuid;

mod directory;
pub(crate) mod tokens;

use crate::pause::{CommitPause, PauseSlot};
use crate::rows::KeyTable;
use crate::traced::traced;
use rcip_records::{
    Actor, ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, Record, RecordStore,
    ScanFilter, StoreError, StoreFuture,
};
use rcip_relationship::Kind;

/// Records, events and idempotency entries in SQLite (bundled with the crate); also the
/// platform's directory ([`DirectoryStore`](rcip_platform::DirectoryStore), in tables of the same
/// file, with idempotency keys of its own).
///
/// A commit is written in an `IMMEDIATE` transaction: the record, its events and its
/// idempotency entry are written together or not at all, and a process that reopens the file
/// sees every commit that returned.
///
/// The connection belongs to one thread of the store's own, and every call is a job sent to
/// it. SQLite writes one transaction at a time anyway; a lock shared by Tokio's blocking pool
/// instead made concurrent callers each take a blocking thread and hand the lock round them
/// (a thread wake-up per call). Commits that are queued when the thread takes one are written
/// together, each in a savepoint of one transaction: one `BEGIN`/`COMMIT` for the group, and
/// a commit refused by its checks (or failing) is rolled back to its savepoint without
/// touching the others. Each commit sees the ones before it in the group, exactly as if they
/// had been committed one after the other, and its caller hears of it only once the group's
/// `COMMIT` is done.
///
/// ```
/// use rcip_database::SqliteStore;
/// use rcip_records::Engine;
/// let engine = Engine::new(SqliteStore::in_memory().unwrap());
/// # let _ = engine;
/// ```
pub struct SqliteStore {
    /// Where the jobs go (`None` only while dropping, so the thread sees the end).
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    pause: Arc<PauseSlot>,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore").finish_non_exhaustive()
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // The thread ends once the channel is closed and the queue done; joined so that the
        // file is closed (and its WAL checkpointed) when the store is gone.
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Work for the store's thread.
enum Job {
    /// Anything on the connection (a read, a directory change); answers by itself.
    Run(Box<dyn FnOnce(&mut Connection) + Send>),
    /// A record commit, which may share a transaction with the commits queued behind it.
    Commit(Box<Commit>, oneshot::Sender<Result<Vec<u64>, CommitError>>),
}

/// At most this many commits share a transaction: a bound on how long the first of them waits
/// for the others to be written.
const MAX_GROUP: usize = 64;

/// The directory's tables (`SqliteStore::open` creates them). Packages are JSON text, read
/// back exactly as written; a member's scopes a JSON array.
const DIRECTORY_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS workspaces (
    workspace_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS members (
    workspace_id TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    role TEXT NOT NULL,
    scopes TEXT NOT NULL,
    PRIMARY KEY (workspace_id, principal_id)
);
CREATE INDEX IF NOT EXISTS members_by_principal ON members (principal_id, workspace_id);
CREATE TABLE IF NOT EXISTS collections (
    workspace_id TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    name TEXT NOT NULL,
    visibility TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, collection_id)
);
CREATE TABLE IF NOT EXISTS collection_grants (
    workspace_id TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    access TEXT NOT NULL,
    PRIMARY KEY (workspace_id, collection_id, principal_id)
);
CREATE TABLE IF NOT EXISTS program_drafts (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id TEXT NOT NULL,
    draft_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    version INTEGER NOT NULL,
    digest TEXT NOT NULL,
    package TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    UNIQUE (workspace_id, draft_id)
);
CREATE TABLE IF NOT EXISTS program_versions (
    workspace_id TEXT,
    namespace TEXT NOT NULL,
    version INTEGER NOT NULL,
    digest TEXT NOT NULL,
    package TEXT NOT NULL,
    activated_at INTEGER NOT NULL,
    activated_by TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS program_versions_of_workspace
    ON program_versions (workspace_id, namespace, version) WHERE workspace_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS program_versions_installed
    ON program_versions (namespace, version) WHERE workspace_id IS NULL;
CREATE TABLE IF NOT EXISTS directory_idempotency (
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);
CREATE TABLE IF NOT EXISTS secrets (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
";

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

    fn from_connection(mut connection: Connection) -> Result<Self, StoreError> {
        // WAL with `synchronous = NORMAL`: a commit that returned survives the process
        // crashing (the WAL is synced at checkpoints).
        connection
            .execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
            .map_err(sql)?;
        connection.execute_batch(SCHEMA).map_err(sql)?;
        connection.execute_batch(DIRECTORY_SCHEMA).map_err(sql)?;
        // The directory's statements and the records' together are more than the default 16.
        connection.set_prepared_statement_cache_capacity(64);
        let (jobs, queue) = mpsc::channel();
        let pause = Arc::new(PauseSlot::default());
        let thread = std::thread::Builder::new()
            .name("rcip-sqlite".into())
            .spawn({
                let pause = Arc::clone(&pause);
                move || serve(&mut connection, &queue, &pause)
            })
            .map_err(|e| StoreError(format!("sqlite: cannot start the store's thread: {e}")))?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
            pause,
        })
    }

    /// Test hook: the next commit of this store (with whatever commits share its transaction)
    /// stops after writing everything, before its `COMMIT`, holding SQLite's write lock, until
    /// the returned pause is released (or dropped). Lets a test commit out of order on purpose.
    #[doc(hidden)]
    pub fn pause_next_commit(&self) -> CommitPause {
        self.pause.arm()
    }

    fn send(&self, job: Job) -> Result<(), StoreError> {
        self.jobs
            .as_ref()
            .and_then(|jobs| jobs.send(job).ok())
            .ok_or_else(stopped)
    }
}

fn stopped() -> StoreError {
    StoreError("sqlite: the store's thread gave no answer (stopped, or the call panicked)".into())
}

/// The store's thread: jobs in the order they were sent, until the store is dropped. A commit
/// takes the commits queued right behind it into its transaction.
fn serve(connection: &mut Connection, queue: &mpsc::Receiver<Job>, pause: &PauseSlot) {
    let mut next = None;
    loop {
        let Some(job) = next.take().or_else(|| queue.recv().ok()) else {
            return;
        };
        match job {
            Job::Run(work) => {
                // A panicking job answers nothing (its caller hears the thread stopped) but
                // does not take the store down with it; its transaction, if any, was dropped
                // and rolled back.
                let _ = catch_unwind(AssertUnwindSafe(|| work(connection)));
            }
            Job::Commit(commit, answer) => {
                let mut group = vec![(commit, answer)];
                while group.len() < MAX_GROUP {
                    match queue.try_recv() {
                        Ok(Job::Commit(commit, answer)) => group.push((commit, answer)),
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let commits: Vec<&Commit> = group.iter().map(|(commit, _)| &**commit).collect();
                let outcomes = catch_unwind(AssertUnwindSafe(|| {
                    commit_group(connection, &commits, pause)
                }))
                .unwrap_or_else(|_| {
                    let failed = StoreError("sqlite: a commit panicked".into());
                    commits.iter().map(|_| Err(failed.clone().into())).collect()
                });
                for ((_, answer), outcome) in group.into_iter().zip(outcomes) {
                    let _ = answer.send(outcome);
                }
            }
        }
    }
}

/// Writes `commits` in one transaction, each after the ones before it; the outcome of each.
/// A commit refused or failing is rolled back to its savepoint; when the transaction itself
/// fails (`BEGIN`, `COMMIT`, or SQLite rolling it back), none is applied and every commit
/// answers that failure (a refusal decided after an earlier commit of the group could be
/// wrong once that commit is gone).
fn commit_group(
    connection: &mut Connection,
    commits: &[&Commit],
    pause: &PauseSlot,
) -> Vec<Result<Vec<u64>, CommitError>> {
    let all_failed =
        |error: StoreError| commits.iter().map(|_| Err(error.clone().into())).collect();
    let mut transaction = match connection.transaction_with_behavior(TransactionBehavior::Immediate)
    {
        Ok(transaction) => transaction,
        Err(error) => return all_failed(sql(error)),
    };
    let mut outcomes = Vec::with_capacity(commits.len());
    if let [commit] = commits {
        // Alone: the transaction is the commit's (dropped, hence rolled back, on a refusal).
        match write(&transaction, commit) {
            Ok(ids) => outcomes.push(Ok(ids)),
            Err(refused) => return vec![Err(refused)],
        }
    } else {
        for commit in commits {
            let outcome = match transaction.savepoint() {
                Ok(savepoint) => match write(&savepoint, commit) {
                    Ok(ids) => savepoint.commit().map(|()| ids).map_err(|e| sql(e).into()),
                    Err(refused) => {
                        // Undoes what it wrote and releases the savepoint.
                        match savepoint.finish() {
                            Ok(()) => Err(refused),
                            Err(error) => return all_failed(sql(error)),
                        }
                    }
                },
                Err(error) => return all_failed(sql(error)),
            };
            // Some errors (a full disk, say) make SQLite roll back the whole transaction:
            // what the group wrote so far is gone.
            if transaction.is_autocommit() {
                return all_failed(StoreError("sqlite: the transaction was rolled back".into()));
            }
            outcomes.push(outcome);
        }
    }
    if let Some(pause) = pause.take() {
        pause.wait_blocking();
    }
    match transaction.commit() {
        Ok(()) => outcomes,
        Err(error) => all_failed(sql(error)),
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

/// The entry remembered for `key` in `table` (inside a commit's transaction, or on its own).
pub(crate) fn read_idempotency(
    connection: &Connection,
    table: KeyTable,
    workspace_id: &str,
    key: &str,
) -> Result<Option<IdempotencyEntry>, StoreError> {
    connection
        .prepare_cached(table.select(false))
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
    /// Runs `work` on the connection, on the store's thread, so that SQLite's I/O and locking
    /// never hold an executor thread (the future resolves on any executor, or none).
    pub(crate) fn run<T, E>(
        &self,
        name: &'static str,
        work: impl FnOnce(&mut Connection) -> Result<T, E> + Send + 'static,
    ) -> StoreFuture<'static, Result<T, E>>
    where
        T: Send + 'static,
        E: From<StoreError> + Send + 'static,
    {
        let (answer, outcome) = oneshot::channel();
        let sent = self.send(Job::Run(Box::new(move |connection| {
            let _ = answer.send(work(connection));
        })));
        answered(name, sent, outcome)
    }
}

/// The answer to a job that was `sent` (or the reason it was not).
fn answered<T: Send + 'static, E: From<StoreError> + Send + 'static>(
    name: &'static str,
    sent: Result<(), StoreError>,
    outcome: oneshot::Receiver<Result<T, E>>,
) -> StoreFuture<'static, Result<T, E>> {
    traced("sqlite", name, async move {
        sent?;
        outcome.await.unwrap_or_else(|_| Err(stopped().into()))
    })
}

impl RecordStore for SqliteStore {
    fn get<'a>(
        &'a self,
        workspace_id: &'a str,
        id: Uuid,
    ) -> StoreFuture<'a, Result<Option<Record>, StoreError>> {
        let workspace_id = workspace_id.to_owned();
        self.run("records.get", move |connection| {
            get(connection, &workspace_id, id)
        })
    }

    fn scan<'a>(
        &'a self,
        workspace_id: &'a str,
        filter: &'a ScanFilter,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<(u64, Record)>, StoreError>> {
        let (workspace_id, filter) = (workspace_id.to_owned(), filter.clone());
        self.run("records.scan", move |connection| {
            scan(connection, &workspace_id, &filter, after, limit)
        })
    }

    fn events<'a>(
        &'a self,
        workspace_id: &'a str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<ChangeEvent>, StoreError>> {
        let workspace_id = workspace_id.to_owned();
        self.run("events.read", move |connection| {
            events(connection, &workspace_id, record, after, limit)
        })
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        let (workspace_id, key) = (workspace_id.to_owned(), key.to_owned());
        self.run("idempotency.read", move |connection| {
            read_idempotency(connection, KeyTable::Records, &workspace_id, &key)
        })
    }

    fn cursor_secret(&self) -> StoreFuture<'_, Result<Option<[u8; 32]>, StoreError>> {
        self.run("secret", |connection| {
            secret(connection, "cursor").map(Some)
        })
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, Result<Vec<u64>, CommitError>> {
        let (answer, outcome) = oneshot::channel();
        answered(
            "commit",
            self.send(Job::Commit(Box::new(commit), answer)),
            outcome,
        )
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

/// Everything a commit writes, checks first, in the caller's transaction (or savepoint).
fn write(transaction: &Connection, commit: &Commit) -> Result<Vec<u64>, CommitError> {
    let entry = &commit.idempotency;
    let existing = read_idempotency(
        transaction,
        KeyTable::Records,
        &entry.workspace_id,
        &entry.key,
    )?;
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
    Ok(ids)
}

/// The secret called `name` (32 random bytes), created by the first connection that asks and
/// the same for every later one: the engine's cursor key, the directory's secrets.
pub(crate) fn secret(connection: &Connection, name: &str) -> Result<[u8; 32], StoreError> {
    let mut candidate = random_128().to_vec();
    candidate.extend_from_slice(&random_128());
    connection
        .execute(
            "INSERT OR IGNORE INTO secrets (name, value) VALUES (?1, ?2)",
            params![name, candidate],
        )
        .map_err(sql)?;
    let value: Vec<u8> = connection
        .query_row("SELECT value FROM secrets WHERE name = ?1", [name], |row| {
            row.get(0)
        })
        .map_err(sql)?;
    value.try_into().map_err(|value: Vec<u8>| {
        StoreError(format!(
            "sqlite: secret {name:?} is {} bytes, not 32",
            value.len()
        ))
    })
}
