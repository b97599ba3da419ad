//! The PostgreSQL store (feature `postgres`): several instances of a service on one database.
//!
//! The client is tokio-postgres with a deadpool pool. tokio-postgres is natively async (no
//! blocking work to move off the executor, unlike SQLite), needs no database at compile time
//! (sqlx's checked queries do, or an offline cache kept in the repository), and brings far
//! fewer crates than sqlx (no query macros, no other databases' drivers); deadpool-postgres is
//! a small pool made for it, with per-connection statement caches.

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Transaction};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use tokio_postgres::error::SqlState;
use tokio_postgres::{NoTls, Row};
use uuid::Uuid;

mod batch;
pub(crate) mod confirmations;
mod directory;
#[cfg(feature = "mcp")]
pub(crate) mod mcp;
mod pipeline;
#[cfg(feature = "mcp")]
pub(crate) mod relay;
pub(crate) mod tokens;

use pipeline::{Checkout, Reply, Step, in_order};

use crate::pause::{CommitPause, PausePoint, PauseSlot};
use crate::rows::KeyTable;
use crate::traced::traced;
use rcip_records::{
    Actor, ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, Record, RecordStore,
    ScanFilter, StoreError, StoreFuture,
};
use rcip_relationship::Kind;
use rcip_runtime::__private::shared::random_128;

/// The schema's versions, in order: `(version, name, SQL)`. Each is applied once per schema,
/// in its own place in one transaction, and recorded in `rcip_migrations`.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (1, "initial", include_str!("migrations/0001_initial.sql")),
    (
        2,
        "directory",
        include_str!("migrations/0002_directory.sql"),
    ),
    (3, "tokens", include_str!("migrations/0003_tokens.sql")),
    (4, "mcp", include_str!("migrations/0004_mcp.sql")),
    (
        5,
        "instances",
        include_str!("migrations/0005_instances.sql"),
    ),
];

/// The advisory lock class of migrations (the second key is the schema's hash), so two
/// instances opening one schema at once apply its migrations once, and other schemas of the
/// same database are not held up.
const MIGRATION_LOCK: i32 = 0x7263_6970; // "rcip"

/// The pool's size when the caller gives none: one pool per instance serves records, the
/// directory and credentials. Small on purpose: the commits of a workspace queue on its
/// counter row, and a caller waiting in the pool costs less than a server process waiting on
/// that row's lock (two instances, 32 clients, 2 cores: 4 connections each served 964
/// `command.execute`/s at p99 58 ms; 16 each, 636/s at p99 224 ms; docs/performance.md).
pub const DEFAULT_POOL_SIZE: usize = 4;

const RECORD_COLUMNS: &str = "position, id, workspace_id, collection_id, namespace, version, \
    type_name, kind, revision, data, participants, state, archived, created_at, updated_at";

const EVENT_COLUMNS: &str =
    "id, event_id, workspace_id, actor, record_id, revision, kind, at, payload";

/// The last statement of a commit before `COMMIT`: each workspace's counter (`$1` workspaces,
/// sorted, `$2` events and `$3` new records of each) moves on, locking its row until
/// `COMMIT`, and the events (`$4`..`$12`, as columns: `$5` is an event's 1-based place among
/// its workspace's) go in with the ids it gave out. Ends with [`COUNTED`], after
/// [`CREATE_RECORD`] when the commit creates its record.
const COUNT_AND_APPEND: &str = "WITH counted AS (\
     INSERT INTO feed_counters AS c (workspace_id, last_event, last_position) \
     SELECT * FROM UNNEST($1::text[], $2::int8[], $3::int8[]) \
     ON CONFLICT (workspace_id) DO UPDATE \
     SET last_event = c.last_event + EXCLUDED.last_event, \
         last_position = c.last_position + EXCLUDED.last_position \
     RETURNING workspace_id, last_event, last_position), \
 asked AS (SELECT * FROM UNNEST($1::text[], $2::int8[]) AS a(workspace_id, events)), \
 appended AS (\
     INSERT INTO events (workspace_id, id, event_id, actor, record_id, revision, kind, at, payload) \
     SELECT e.workspace_id, counted.last_event - asked.events + e.seq, e.event_id, e.actor, \
            e.record_id, e.revision, e.kind, e.at, e.payload \
     FROM UNNEST($4::text[], $5::int8[], $6::uuid[], $7::text[], $8::uuid[], $9::int8[], \
                 $10::text[], $11::text[], $12::text[]) \
          AS e(workspace_id, seq, event_id, actor, record_id, revision, kind, at, payload) \
     JOIN counted USING (workspace_id) JOIN asked USING (workspace_id))";

/// The new record (`$13`.., `$14` its workspace), at the position its workspace's counter
/// gave out.
const CREATE_RECORD: &str = "created AS (\
     INSERT INTO records (id, workspace_id, position, collection_id, namespace, version, \
     type_name, kind, revision, data, participants, state, archived, created_at, updated_at) \
     SELECT $13::uuid, $14::text, counted.last_position, $15::text, $16::text, $17::int8, \
            $18::text, $19::text, $20::int8, $21::text, $22::text, $23::text, $24::bool, \
            $25::int8, $26::int8 FROM counted WHERE counted.workspace_id = $14::text)";

/// What the commit statement answers: each workspace's last event id after it.
const COUNTED: &str = "SELECT workspace_id, last_event FROM counted";

/// Records, events, idempotency entries and secrets in PostgreSQL, for several instances of a
/// service on one database; also the platform's directory ([`DirectoryStore`](rcip_platform::DirectoryStore):
/// workspaces, members, collections, drafts and program versions, with idempotency keys of
/// their own), so one database holds a whole deployment.
///
/// [`open`](Self::open) applies the schema's migrations (under an advisory lock, so instances
/// starting together do not race). A commit is one transaction: the record, its events and its
/// idempotency entry are written together or not at all; a stale revision or a taken key is
/// refused whichever instance wrote first. Event ids (and record positions) are given out in
/// commit order, so a consumer polling the feed from a checkpoint never misses an event that
/// commits later with a lower id.
///
/// The tables go in the connection's current schema (the first of its `search_path`): a
/// URL's `options=-csearch_path%3Dname` puts a deployment in its own schema.
pub struct PostgresStore {
    pool: Pool,
    /// For connections of their own outside the pool (the relay's `LISTEN`).
    config: tokio_postgres::Config,
    migrated: Vec<i32>,
    pause: PauseSlot,
    batcher: Arc<batch::Batcher>,
}

/// How a [`PostgresStore`]'s connection pool is used at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUse {
    /// The most connections the pool opens.
    pub max: usize,
    /// The connections open now (handed out or idle).
    pub open: usize,
    /// The open connections waiting in the pool for a caller.
    pub idle: usize,
    /// The callers waiting for a connection.
    pub waiting: usize,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresStore")
            .field("pool_size", &status.max_size)
            .field("connections", &status.size)
            .field("migrated", &self.migrated)
            .finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (a `postgres://` URL or `key=value` pairs, as libpq
    /// reads them) with a pool of [`DEFAULT_POOL_SIZE`] connections, and brings its schema up
    /// to date.
    ///
    /// # Errors
    ///
    /// The URL does not parse, the server cannot be reached, or a migration failed (or the
    /// schema is newer than this build).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let config = url
            .parse::<tokio_postgres::Config>()
            .map_err(|e| StoreError(format!("postgres: bad connection string: {e}")))?;
        Self::open_with(config, DEFAULT_POOL_SIZE).await
    }

    /// Like [`open`](Self::open), from a client configuration and a pool size (at least 1).
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open).
    pub async fn open_with(
        config: tokio_postgres::Config,
        pool_size: usize,
    ) -> Result<Self, StoreError> {
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                // Fast: a connection that broke is noticed by the next query's error; the
                // verified method would add a round trip to every checkout.
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .build()
            .map_err(|e| StoreError(format!("postgres: pool: {e}")))?;
        let migrated = {
            let mut client = checkout(&pool).await?;
            migrate(&mut client).await?
        };
        Ok(Self {
            batcher: batch::Batcher::new(pool.clone()),
            pool,
            config,
            migrated,
            pause: PauseSlot::default(),
        })
    }

    /// The migrations this `open` applied (none when the schema was already current): with
    /// several instances starting at once, one of them applies each.
    #[must_use]
    pub fn migrated(&self) -> &[i32] {
        &self.migrated
    }

    /// The service's tokens, tickets and sessions on this store's pool: one pool serves
    /// records, the directory and credentials.
    #[must_use]
    pub fn tokens(&self) -> tokens::PostgresTokenStore {
        tokens::PostgresTokenStore::on(self.pool.clone())
    }

    /// Pending confirmations on this store's pool, shared by every instance on this database
    /// schema (give it to each runtime's
    /// [`RuntimeOptions::confirmation_store`](rcip_runtime::RuntimeOptions::confirmation_store)).
    #[must_use]
    pub fn confirmations(&self) -> confirmations::PostgresConfirmationStore {
        confirmations::PostgresConfirmationStore::on(self.pool.clone())
    }

    /// MCP tasks on this store's pool (feature `mcp`), shared by every instance on this
    /// database schema.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_tasks(&self) -> mcp::PostgresTaskStore {
        mcp::PostgresTaskStore::on(self.pool.clone())
    }

    /// MCP 2025-11-25 sessions on this store's pool (feature `mcp`), shared by every
    /// instance on this database schema.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_sessions(&self) -> mcp::PostgresSessionStore {
        mcp::PostgresSessionStore::on(self.pool.clone())
    }

    /// The events of MCP 2025-11-25 event streams on this store's pool (feature `mcp`),
    /// replayed by any instance on this database schema.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_events(&self) -> mcp::PostgresEventStore {
        mcp::PostgresEventStore::on(self.pool.clone())
    }

    /// What this instance tells the others of its MCP 2025-11-25 sessions, over this
    /// database (feature `mcp`): a relay of its own per endpoint, listening on a connection
    /// outside the pool.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn mcp_relay(&self) -> relay::PostgresRelay {
        relay::PostgresRelay::on(self.pool.clone(), self.config.clone())
    }

    /// The pool's use now (for a metrics gauge; no connection is touched).
    #[must_use]
    pub fn pool_use(&self) -> PoolUse {
        let status = self.pool.status();
        PoolUse {
            max: status.max_size,
            open: status.size,
            idle: status.available,
            waiting: status.waiting,
        }
    }

    /// The latest schema version this build knows.
    #[must_use]
    pub fn schema_version() -> i32 {
        MIGRATIONS.last().map_or(0, |(version, _, _)| *version)
    }

    /// Readiness: a connection is handed out and the schema's latest migration is this
    /// build's (another instance may have moved it on, or someone may have dropped it).
    async fn ready(&self) -> Result<(), StoreError> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT max(version) FROM rcip_migrations", &[])
            .await
            .map_err(pg)?;
        let version: Option<i32> = row.try_get(0).map_err(pg)?;
        match version {
            Some(version) if version == Self::schema_version() => Ok(()),
            other => Err(StoreError(format!(
                "postgres: the schema is at migration {}, this build's is {}",
                other.map_or_else(|| "none".to_owned(), |v| v.to_string()),
                Self::schema_version()
            ))),
        }
    }

    async fn client(&self) -> Result<Object, StoreError> {
        checkout(&self.pool).await
    }

    /// The record `id` of `workspace_id`.
    ///
    /// # Errors
    ///
    /// A store failure.
    pub async fn get(&self, workspace_id: &str, id: Uuid) -> Result<Option<Record>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {RECORD_COLUMNS} FROM records WHERE id = $1 AND workspace_id = $2"
            ))
            .await
            .map_err(pg)?;
        let row = client
            .query_opt(&statement, &[&id, &workspace_id])
            .await
            .map_err(pg)?;
        row.map(|row| record_row(&row).map(|(_, record)| record))
            .transpose()
    }

    /// Records of `workspace_id` passing `filter`, in insertion order, after position `after`
    /// (0: from the start), at most `limit`, each with its position.
    ///
    /// # Errors
    ///
    /// A store failure.
    pub async fn scan(
        &self,
        workspace_id: &str,
        filter: &ScanFilter,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, Record)>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {RECORD_COLUMNS} FROM records WHERE workspace_id = $1 AND position > $2 \
                 AND ($3::text IS NULL OR namespace = $3) AND ($4::text IS NULL OR type_name = $4) \
                 AND ($5::text IS NULL OR state = $5) AND ($6::text IS NULL OR collection_id = $6) \
                 AND ($7 OR NOT archived) AND ($8::int8 IS NULL OR version = $8) \
                 ORDER BY position LIMIT $9"
            ))
            .await
            .map_err(pg)?;
        let rows = client
            .query(
                &statement,
                &[
                    &workspace_id,
                    &int(after)?,
                    &filter.namespace,
                    &filter.type_name,
                    &filter.state,
                    &filter.collection_id,
                    &filter.include_archived,
                    &filter.version.map(int).transpose()?,
                    &limit_param(limit),
                ],
            )
            .await
            .map_err(pg)?;
        rows.iter().map(record_row).collect()
    }

    /// Events of `workspace_id` (of one record when `record` is given) with an id above
    /// `after`, in order, at most `limit`.
    ///
    /// # Errors
    ///
    /// A store failure.
    pub async fn events(
        &self,
        workspace_id: &str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<ChangeEvent>, StoreError> {
        let client = self.client().await?;
        let after = int(after)?;
        let limit = limit_param(limit);
        // Two statements rather than `$3 IS NULL OR record_id = $3`: a prepared statement's
        // generic plan could not use the per-record index for the one and not the other.
        let rows = match record {
            Some(record) => {
                let statement = client
                    .prepare_cached(&format!(
                        "SELECT {EVENT_COLUMNS} FROM events WHERE workspace_id = $1 \
                         AND record_id = $2 AND id > $3 ORDER BY id LIMIT $4"
                    ))
                    .await
                    .map_err(pg)?;
                client
                    .query(&statement, &[&workspace_id, &record, &after, &limit])
                    .await
            }
            None => {
                let statement = client
                    .prepare_cached(&format!(
                        "SELECT {EVENT_COLUMNS} FROM events WHERE workspace_id = $1 AND id > $2 \
                         ORDER BY id LIMIT $3"
                    ))
                    .await
                    .map_err(pg)?;
                client
                    .query(&statement, &[&workspace_id, &after, &limit])
                    .await
            }
        }
        .map_err(pg)?;
        rows.iter().map(event_row).collect()
    }

    /// The entry remembered for `key` in `workspace_id`.
    ///
    /// # Errors
    ///
    /// A store failure.
    pub async fn idempotency(
        &self,
        workspace_id: &str,
        key: &str,
    ) -> Result<Option<IdempotencyEntry>, StoreError> {
        let client = self.client().await?;
        remembered(&client, KeyTable::Records, workspace_id, key)
            .await
            .map_err(pg)
    }

    /// The secret called `name` (32 random bytes), created by the first instance that asks
    /// and the same for every instance on this database schema. An [`Engine`](rcip_records::Engine)
    /// on this store takes its cursor key from the secret `cursor` by itself
    /// ([`RecordStore::cursor_secret`]), so that a cursor one instance gave out is accepted by
    /// the others and after a restart.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), rcip_records::StoreError> {
    /// use rcip_database::PostgresStore;
    /// let store = PostgresStore::open("postgres://postgres@127.0.0.1:5432/test").await?;
    /// let webhook_key = store.secret("webhooks").await?;
    /// # let _ = webhook_key;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// A store failure, or a stored value that is not 32 bytes.
    pub async fn secret(&self, name: &str) -> Result<[u8; 32], StoreError> {
        let client = self.client().await?;
        let mut candidate = random_128().to_vec();
        candidate.extend_from_slice(&random_128());
        // Two statements, not one with a CTE: when another instance is inserting the same
        // name, the INSERT waits for it, and only a new statement's snapshot sees its row.
        client
            .execute(
                "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                &[&name, &candidate],
            )
            .await
            .map_err(pg)?;
        let row = client
            .query_one("SELECT value FROM secrets WHERE name = $1", &[&name])
            .await
            .map_err(pg)?;
        let value: Vec<u8> = row.try_get(0).map_err(pg)?;
        value.try_into().map_err(|value: Vec<u8>| {
            StoreError(format!(
                "postgres: secret {name:?} is {} bytes, not 32",
                value.len()
            ))
        })
    }

    /// Applies `commit` atomically; returns the ids given to its events. An update is
    /// written together with the other updates this store has queued (group commit: see
    /// `batch.rs`); a creation, or a commit the test hook holds, alone.
    ///
    /// # Errors
    ///
    /// [`CommitError`]; nothing was applied.
    pub async fn commit(&self, commit: Commit) -> Result<Vec<u64>, CommitError> {
        let pause = self.pause.take();
        if commit.expected_revision.is_some() && pause.is_none() {
            return self.batcher.commit(commit).await;
        }
        commit_one(&self.pool, &commit, pause).await
    }
}

/// Applies one commit in a transaction of its own.
async fn commit_one(
    pool: &Pool,
    commit: &Commit,
    pause: Option<PausePoint>,
) -> Result<Vec<u64>, CommitError> {
    let mut client = Checkout::new(checkout(pool).await?);
    match try_commit(&mut client, commit, pause).await {
        Err(Attempt::Failed(error)) => Err(error),
        Err(Attempt::Database(error)) => {
            let entry = &commit.idempotency;
            match error.code() {
                // Another instance committed the same key between our read and our insert
                // (the insert waited for it): answer as if we had read it.
                Some(&SqlState::UNIQUE_VIOLATION)
                    if constraint(&error) == Some("idempotency_pkey") =>
                {
                    match remembered(&*client, KeyTable::Records, &entry.workspace_id, &entry.key)
                        .await
                        .map_err(pg)?
                    {
                        Some(existing) => Err(CommitError::DuplicateKey(existing)),
                        None => Err(pg(error).into()),
                    }
                }
                // Another instance created the same record id first.
                Some(&SqlState::UNIQUE_VIOLATION) if constraint(&error) == Some("records_pkey") => {
                    let actual = current_revision(&client, commit.record.id)
                        .await?
                        .unwrap_or(0);
                    Err(CommitError::Stale { actual })
                }
                _ => Err(pg(error).into()),
            }
        }
        Ok(ids) => Ok(ids),
    }
}

async fn current_revision(client: &Object, id: Uuid) -> Result<Option<u64>, StoreError> {
    let row = client
        .query_opt("SELECT revision FROM records WHERE id = $1", &[&id])
        .await
        .map_err(pg)?;
    row.map(|row| row.try_get::<_, i64>(0).map(i64::unsigned_abs))
        .transpose()
        .map_err(pg)
}

/// The commit's transaction: committed, or rolled back (awaited, so the connection goes back
/// to the pool out of any transaction and holding no lock; a connection that cannot say so
/// leaves the pool).
async fn try_commit(
    client: &mut Checkout,
    commit: &Commit,
    pause: Option<PausePoint>,
) -> Result<Vec<u64>, Attempt> {
    client.in_transaction = true;
    match PostgresStore::write(client, commit, pause).await {
        // The `COMMIT` went with the last statements (or after the test's pause).
        Ok(ids) => {
            client.in_transaction = false;
            Ok(ids)
        }
        Err(error) => {
            // After a failed statement the pipelined `COMMIT` has rolled back already;
            // `ROLLBACK` then only warns.
            if client.batch_execute("ROLLBACK").await.is_ok() {
                client.in_transaction = false;
            }
            Err(error)
        }
    }
}

impl PostgresStore {
    /// Everything a commit writes, checks first.
    ///
    /// Two round trips: `BEGIN`, the record's lock and its key's entry; then the update, the
    /// key, the counters with the events, and `COMMIT`. The workspace counters are taken by
    /// the last statement before `COMMIT`, which also writes the events (and a new record)
    /// with the ids and position it takes: their row locks are what orders the committers of
    /// a workspace, and each is held from there to `COMMIT`. Since `COMMIT` is sent with that
    /// statement, what other commits of the workspace wait for is the server's work alone,
    /// never this client's turn on a busy machine.
    async fn write(
        client: &Object,
        commit: &Commit,
        pause: Option<PausePoint>,
    ) -> Result<Vec<u64>, Attempt> {
        let entry = &commit.idempotency;
        let record = &commit.record;
        // FOR UPDATE: a concurrent commit of the same record waits here until this one ends,
        // then reads the revision it left (READ COMMITTED re-reads the locked row), so of two
        // commits at one revision exactly one passes the check.
        let locked = client
            .prepare_cached("SELECT revision FROM records WHERE id = $1 FOR UPDATE")
            .await?;
        let read_key = client
            .prepare_cached(KeyTable::Records.select(true))
            .await?;
        // The key is read after the lock: when the commit that held it used the same key (the
        // same call, retried through another instance), this reads its entry and the call is
        // answered as a replay rather than as stale. (A key taken by a commit of another
        // record is caught by the key's primary key at the insert below.) They go with the
        // `BEGIN`, in one round trip; the server runs them in order, and the key's read takes
        // its snapshot when the lock is held.
        let id: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&record.id];
        let key: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
            [&entry.workspace_id, &entry.key];
        let replies = in_order(vec![
            Box::pin(async { client.batch_execute("BEGIN").await.map(|()| Reply::Done) })
                as Step<'_>,
            Box::pin(async { client.query_opt(&locked, &id).await.map(Reply::Row) }),
            Box::pin(async { client.query_opt(&read_key, &key).await.map(Reply::Row) }),
        ])
        .await?;
        let (current, existing) = match replies.as_slice() {
            [Reply::Done, Reply::Row(current), Reply::Row(existing)] => (current, existing),
            _ => return Err(StoreError("postgres: unexpected replies".into()).into()),
        };
        let current: Option<i64> = current.as_ref().map(|row| row.try_get(0)).transpose()?;
        let existing = existing
            .as_ref()
            .map(|row| remembered_row(&entry.workspace_id, &entry.key, row))
            .transpose()?;
        commit
            .check(existing, current.map(i64::unsigned_abs))
            .map_err(Attempt::Failed)?;

        let data = serde_json::to_string(&record.data).map_err(json_error)?;
        let participants = serde_json::to_string(&record.participants).map_err(json_error)?;
        let update = client
            .prepare_cached(
                "UPDATE records SET revision = $2, data = $3, participants = $4, \
                 state = $5, archived = $6, updated_at = $7 WHERE id = $1",
            )
            .await?;
        let remember = client
            .prepare_cached(
                "INSERT INTO idempotency (workspace_id, key, fingerprint, result) \
                 VALUES ($1, $2, $3, $4)",
            )
            .await?;
        let (revision, updated_at) = (int(record.revision)?, int(record.updated_at)?);
        let update_params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
            &record.id,
            &revision,
            &data,
            &participants,
            &record.state,
            &record.archived,
            &updated_at,
        ];
        let remember_params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [
            &entry.workspace_id,
            &entry.key,
            &entry.fingerprint,
            &entry.result,
        ];

        // Per workspace (sorted, so two commits that touch the same two lock their counters in
        // one order and never wait for each other in a cycle): how many events, and whether
        // it gets the new record.
        let creates = current.is_none();
        let mut counters: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
        if creates {
            counters.entry(&record.workspace_id).or_default().1 = 1;
        }
        let mut columns = EventColumns::default();
        for event in &commit.events {
            let counter = counters.entry(&event.workspace_id).or_default();
            counter.0 += 1;
            columns.push(counter.0, event)?;
        }
        let appended = Appended::new(&counters, &columns);
        let mut params = appended.params();
        let (version, record_revision, created_at, updated_at) = (
            int(record.version)?,
            int(record.revision)?,
            int(record.created_at)?,
            int(record.updated_at)?,
        );
        let kind_name = record.kind.as_str();
        let statement = if creates {
            params.extend([
                &record.id as &(dyn tokio_postgres::types::ToSql + Sync),
                &record.workspace_id,
                &record.collection_id,
                &record.namespace,
                &version,
                &record.type_name,
                &kind_name,
                &record_revision,
                &data,
                &participants,
                &record.state,
                &record.archived,
                &created_at,
                &updated_at,
            ]);
            client
                .prepare_cached(&format!("{COUNT_AND_APPEND}, {CREATE_RECORD} {COUNTED}"))
                .await?
        } else {
            client
                .prepare_cached(&format!("{COUNT_AND_APPEND} {COUNTED}"))
                .await?
        };
        // The update (the row is ours since the FOR UPDATE above), the key, the counters with
        // the events and `COMMIT`: one round trip. The server runs them in this order, so a
        // commit racing this one with the same key waits at the key (and fails on its primary
        // key), not while holding its workspace's counter; a failed statement fails the ones
        // after it and turns the `COMMIT` into a rollback, and the first error stands for all.
        let mut steps: Vec<Step<'_>> = Vec::with_capacity(4);
        if current.is_some() {
            steps.push(Box::pin(async {
                client
                    .execute(&update, &update_params)
                    .await
                    .map(|_| Reply::Done)
            }));
        }
        steps.push(Box::pin(async {
            client
                .execute(&remember, &remember_params)
                .await
                .map(|_| Reply::Done)
        }));
        steps.push(Box::pin(async {
            client.query(&statement, &params).await.map(Reply::Rows)
        }));
        // The test hook holds the commit between its last statement and its `COMMIT`.
        if pause.is_none() {
            steps.push(Box::pin(async {
                client.batch_execute("COMMIT").await.map(|()| Reply::Done)
            }));
        }
        let replies = in_order(steps).await?;
        if let Some(pause) = pause {
            pause.wait().await;
            client.batch_execute("COMMIT").await?;
        }
        let Some(Reply::Rows(rows)) = replies
            .into_iter()
            .find(|reply| matches!(reply, Reply::Rows(_)))
        else {
            return Err(StoreError("postgres: the counters answered nothing".into()).into());
        };
        let mut last_event = BTreeMap::new();
        for row in &rows {
            let workspace: String = row.try_get(0)?;
            let last: i64 = row.try_get(1)?;
            last_event.insert(workspace, last);
        }
        // The ids the statement gave the events (the same arithmetic as in its SQL).
        commit
            .events
            .iter()
            .zip(&columns.seq)
            .map(|(event, seq)| {
                let last = last_event
                    .get(&event.workspace_id)
                    .ok_or_else(|| StoreError("postgres: event without a counter".into()))?;
                let (count, _) = counters[&event.workspace_id.as_str()];
                Ok::<u64, Attempt>((last - count + seq).unsigned_abs())
            })
            .collect()
    }

    /// Test hook: the next commit of this store stops after writing everything, before its
    /// `COMMIT`, until the returned pause is released (or dropped). Lets a test commit out of
    /// order on purpose.
    #[doc(hidden)]
    pub fn pause_next_commit(&self) -> CommitPause {
        self.pause.arm()
    }
}

// The trait is the inherent methods, boxed (each in its span): they are natively async (no
// blocking work).
impl RecordStore for PostgresStore {
    fn get<'a>(
        &'a self,
        workspace_id: &'a str,
        id: Uuid,
    ) -> StoreFuture<'a, Result<Option<Record>, StoreError>> {
        traced(
            "postgres",
            "records.get",
            PostgresStore::get(self, workspace_id, id),
        )
    }

    fn scan<'a>(
        &'a self,
        workspace_id: &'a str,
        filter: &'a ScanFilter,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<(u64, Record)>, StoreError>> {
        traced(
            "postgres",
            "records.scan",
            PostgresStore::scan(self, workspace_id, filter, after, limit),
        )
    }

    fn events<'a>(
        &'a self,
        workspace_id: &'a str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<ChangeEvent>, StoreError>> {
        traced(
            "postgres",
            "events.read",
            PostgresStore::events(self, workspace_id, record, after, limit),
        )
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        traced(
            "postgres",
            "idempotency.read",
            PostgresStore::idempotency(self, workspace_id, key),
        )
    }

    fn cursor_secret(&self) -> StoreFuture<'_, Result<Option<[u8; 32]>, StoreError>> {
        traced("postgres", "secrets.get", async move {
            self.secret("cursor").await.map(Some)
        })
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, Result<Vec<u64>, CommitError>> {
        traced("postgres", "commit", PostgresStore::commit(self, commit))
    }
}

/// The events of a commit as columns, for one multi-row insert.
#[derive(Default)]
struct EventColumns {
    workspace_id: Vec<String>,
    /// An event's 1-based place among its workspace's events of the commit.
    seq: Vec<i64>,
    event_id: Vec<Uuid>,
    actor: Vec<String>,
    record_id: Vec<Uuid>,
    revision: Vec<i64>,
    kind: Vec<&'static str>,
    at: Vec<String>,
    payload: Vec<String>,
}

impl EventColumns {
    fn push(&mut self, seq: i64, event: &ChangeEvent) -> Result<(), StoreError> {
        self.workspace_id.push(event.workspace_id.clone());
        self.seq.push(seq);
        self.event_id.push(event.event_id);
        self.actor
            .push(serde_json::to_string(&event.actor).map_err(json_error)?);
        self.record_id.push(event.record_id);
        self.revision.push(int(event.revision)?);
        self.kind.push(event.kind.as_str());
        self.at.push(event.at.clone());
        self.payload.push(event.payload.to_string());
        Ok(())
    }
}

/// The first twelve parameters of [`COUNT_AND_APPEND`]: each workspace's counts, then the
/// events' columns.
struct Appended<'a> {
    workspaces: Vec<&'a str>,
    events: Vec<i64>,
    positions: Vec<i64>,
    columns: &'a EventColumns,
}

impl<'a> Appended<'a> {
    /// `counters`: per workspace, how many events and new records.
    fn new(counters: &BTreeMap<&'a str, (i64, i64)>, columns: &'a EventColumns) -> Self {
        let (workspaces, (events, positions)) =
            counters.iter().map(|(w, (e, p))| (*w, (*e, *p))).unzip();
        Self {
            workspaces,
            events,
            positions,
            columns,
        }
    }

    fn params(&self) -> Vec<&(dyn tokio_postgres::types::ToSql + Sync)> {
        let c = self.columns;
        vec![
            &self.workspaces,
            &self.events,
            &self.positions,
            &c.workspace_id,
            &c.seq,
            &c.event_id,
            &c.actor,
            &c.record_id,
            &c.revision,
            &c.kind,
            &c.at,
            &c.payload,
        ]
    }
}

/// How a commit's transaction ended without committing.
enum Attempt {
    /// Refused by the checks (or a value this store cannot hold).
    Failed(CommitError),
    /// The database refused a statement; some refusals are a concurrent commit's doing.
    Database(tokio_postgres::Error),
}

impl From<tokio_postgres::Error> for Attempt {
    fn from(error: tokio_postgres::Error) -> Self {
        Attempt::Database(error)
    }
}

impl From<StoreError> for Attempt {
    fn from(error: StoreError) -> Self {
        Attempt::Failed(error.into())
    }
}

fn constraint(error: &tokio_postgres::Error) -> Option<&str> {
    error.as_db_error().and_then(|e| e.constraint())
}

async fn checkout(pool: &Pool) -> Result<Object, StoreError> {
    pool.get()
        .await
        .map_err(|e| StoreError(format!("postgres: {e}")))
}

/// Brings the connection's current schema up to date; returns the versions applied.
///
/// One transaction under a transaction-level advisory lock: a second instance opening the same
/// schema waits on the lock, then finds every migration recorded. DDL is transactional in
/// PostgreSQL, so a failed migration leaves nothing behind, and the lock is released by the
/// commit (or by the connection dropping), never left held.
async fn migrate(client: &mut Object) -> Result<Vec<i32>, StoreError> {
    let transaction = client.transaction().await.map_err(pg)?;
    match apply_migrations(&transaction).await {
        Ok(applied) => {
            transaction.commit().await.map_err(pg)?;
            Ok(applied)
        }
        Err(error) => {
            let _ = transaction.rollback().await;
            Err(error)
        }
    }
}

async fn apply_migrations(transaction: &Transaction<'_>) -> Result<Vec<i32>, StoreError> {
    let schema: Option<String> = transaction
        .query_one("SELECT current_schema()", &[])
        .await
        .map_err(pg)?
        .try_get(0)
        .map_err(pg)?;
    let Some(schema) = schema else {
        return Err(StoreError(
            "postgres: no schema to create the tables in (the search_path names none that exists)"
                .into(),
        ));
    };
    transaction
        .execute(
            "SELECT pg_advisory_xact_lock($1, hashtext($2))",
            &[&MIGRATION_LOCK, &schema],
        )
        .await
        .map_err(pg)?;
    transaction
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS rcip_migrations (\
                 version INTEGER PRIMARY KEY, \
                 name TEXT NOT NULL, \
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        )
        .await
        .map_err(pg)?;
    let rows = transaction
        .query(
            "SELECT version, name FROM rcip_migrations ORDER BY version",
            &[],
        )
        .await
        .map_err(pg)?;
    let mut applied = Vec::with_capacity(rows.len());
    for row in rows {
        let version: i32 = row.try_get(0).map_err(pg)?;
        let name: String = row.try_get(1).map_err(pg)?;
        applied.push((version, name));
    }
    for (version, name) in &applied {
        match MIGRATIONS.iter().find(|(v, _, _)| v == version) {
            Some((_, known, _)) if known == name => {}
            Some((_, known, _)) => {
                return Err(StoreError(format!(
                    "postgres: schema {schema:?} has migration {version} {name:?}, this build \
                     calls it {known:?}"
                )));
            }
            None => {
                return Err(StoreError(format!(
                    "postgres: schema {schema:?} is at migration {version} {name:?}, newer than \
                     this build (at most {}): upgrade this instance",
                    PostgresStore::schema_version()
                )));
            }
        }
    }
    let mut done = Vec::new();
    for (version, name, sql) in MIGRATIONS {
        if applied.iter().any(|(v, _)| v == version) {
            continue;
        }
        transaction.batch_execute(sql).await.map_err(|e| {
            StoreError(format!(
                "postgres: migration {version} {name:?} failed: {}",
                pg(e)
            ))
        })?;
        transaction
            .execute(
                "INSERT INTO rcip_migrations (version, name) VALUES ($1, $2)",
                &[version, name],
            )
            .await
            .map_err(pg)?;
        done.push(*version);
    }
    Ok(done)
}

/// The entry remembered for `key` in `table`, by a prepared statement (a commit reads the
/// records' before every mutation, the directory's inside its own transactions).
pub(crate) async fn remembered(
    client: &impl deadpool_postgres::GenericClient,
    table: KeyTable,
    workspace_id: &str,
    key: &str,
) -> Result<Option<IdempotencyEntry>, tokio_postgres::Error> {
    let statement = client.prepare_cached(table.select(true)).await?;
    let row = client.query_opt(&statement, &[&workspace_id, &key]).await?;
    row.map(|row| remembered_row(workspace_id, key, &row))
        .transpose()
}

/// A row of a [`KeyTable`]'s statement as the entry of `key`.
fn remembered_row(
    workspace_id: &str,
    key: &str,
    row: &Row,
) -> Result<IdempotencyEntry, tokio_postgres::Error> {
    Ok(IdempotencyEntry {
        workspace_id: workspace_id.to_owned(),
        key: key.to_owned(),
        fingerprint: row.try_get(0)?,
        result: row.try_get(1)?,
    })
}

fn pg(error: tokio_postgres::Error) -> StoreError {
    StoreError(format!("postgres: {error}"))
}

fn json_error(error: serde_json::Error) -> StoreError {
    StoreError(format!("JSON: {error}"))
}

/// PostgreSQL integers are signed: values beyond `i64::MAX` are refused rather than wrapped.
fn int(value: u64) -> Result<i64, StoreError> {
    i64::try_from(value)
        .map_err(|_| StoreError(format!("{value} does not fit PostgreSQL's bigint")))
}

fn limit_param(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// A row of `records` (columns in `RECORD_COLUMNS` order) as its position and record.
fn record_row(row: &Row) -> Result<(u64, Record), StoreError> {
    let position: i64 = row.try_get(0).map_err(pg)?;
    let kind: &str = row.try_get(7).map_err(pg)?;
    let data: &str = row.try_get(9).map_err(pg)?;
    let participants: &str = row.try_get(10).map_err(pg)?;
    let unsigned = |index: usize| {
        row.try_get::<_, i64>(index)
            .map(i64::unsigned_abs)
            .map_err(pg)
    };
    let record = Record {
        id: row.try_get(1).map_err(pg)?,
        workspace_id: row.try_get(2).map_err(pg)?,
        collection_id: row.try_get(3).map_err(pg)?,
        namespace: row.try_get(4).map_err(pg)?,
        version: unsigned(5)?,
        type_name: row.try_get(6).map_err(pg)?,
        kind: match kind {
            "entity" => Kind::Entity,
            "relationship" => Kind::Relationship,
            other => return Err(StoreError(format!("bad record kind {other:?}"))),
        },
        revision: unsigned(8)?,
        data: serde_json::from_str(data).map_err(json_error)?,
        participants: serde_json::from_str(participants).map_err(json_error)?,
        state: row.try_get(11).map_err(pg)?,
        archived: row.try_get(12).map_err(pg)?,
        created_at: unsigned(13)?,
        updated_at: unsigned(14)?,
    };
    Ok((position.unsigned_abs(), record))
}

/// A row of `events` (columns in `EVENT_COLUMNS` order).
fn event_row(row: &Row) -> Result<ChangeEvent, StoreError> {
    let id: i64 = row.try_get(0).map_err(pg)?;
    let actor: &str = row.try_get(3).map_err(pg)?;
    let revision: i64 = row.try_get(5).map_err(pg)?;
    let kind: &str = row.try_get(6).map_err(pg)?;
    let payload: &str = row.try_get(8).map_err(pg)?;
    Ok(ChangeEvent {
        id: id.unsigned_abs(),
        event_id: row.try_get(1).map_err(pg)?,
        workspace_id: row.try_get(2).map_err(pg)?,
        actor: serde_json::from_str::<Actor>(actor).map_err(json_error)?,
        record_id: row.try_get(4).map_err(pg)?,
        revision: revision.unsigned_abs(),
        kind: EventKind::parse(kind)
            .ok_or_else(|| StoreError(format!("bad event kind {kind:?}")))?,
        at: row.try_get(7).map_err(pg)?,
        payload: serde_json::from_str(payload).map_err(json_error)?,
    })
}
