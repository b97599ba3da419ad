//! Group commit: the updates an instance has queued are written together, in one transaction
//! of two round trips, by one task of the store's own.
//!
//! A workspace's commits take their event ids from its counter row, whose lock is held to
//! `COMMIT` (that is what puts ids in commit order), so they go one transaction at a time
//! whatever the number of connections. Written one by one, each pays the lock's hand-over
//! and the `COMMIT`'s flush; written together, a batch pays them once. Creations, and a
//! commit the test hook holds, go alone (`PostgresStore::commit_one`).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use deadpool_postgres::Pool;
use rcip_records::{Commit, CommitError, IdempotencyEntry, StoreError};
use rcip_runtime::__private::shared::lock;
use tokio::sync::oneshot;
use tokio_postgres::error::SqlState;
use uuid::Uuid;

use super::pipeline::{Checkout, Reply, Step, in_order};
use super::{
    Appended, COUNT_AND_APPEND, COUNTED, EventColumns, checkout, constraint, int, json_error, pg,
};

/// The most commits written in one transaction.
const MAX_BATCH: usize = 64;

/// The records' locks, taken in id order (every batch of every instance takes them in the
/// same order, so two batches never wait for each other in a cycle).
const LOCK_MANY: &str =
    "SELECT id, revision FROM records WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE";

/// The entries already stored under the batch's keys: one primary-key lookup per key. A
/// join lets the planner hash the whole table, and a prepared statement's generic plan keeps
/// that choice while the table grows (measured under load: a sequential scan of every stored
/// key in each batch). The `LIMIT` keeps the planner from pulling the lookup up into a join.
const KEYS_MANY: &str = "SELECT k.workspace_id, k.key, i.fingerprint, i.result \
     FROM UNNEST($1::text[], $2::text[]) AS k(workspace_id, key) \
     CROSS JOIN LATERAL (SELECT fingerprint, result FROM idempotency \
     WHERE workspace_id = k.workspace_id AND key = k.key LIMIT 1) AS i";

/// The batch's records, rewritten; `r.id = ANY($1)` lets the planner reach them through the
/// primary key whatever it guesses of the unnested rows.
const UPDATE_MANY: &str = "UPDATE records AS r SET revision = u.revision, data = u.data, \
     participants = u.participants, state = u.state, archived = u.archived, \
     updated_at = u.updated_at \
     FROM UNNEST($1::uuid[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::bool[], \
     $7::int8[]) AS u(id, revision, data, participants, state, archived, updated_at) \
     WHERE r.id = ANY($1::uuid[]) AND r.id = u.id";

/// The keys, inserted in key order (for the same reason as the locks).
const INSERT_KEYS: &str = "INSERT INTO idempotency (workspace_id, key, fingerprint, result) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) ORDER BY 1, 2";

type Answer = oneshot::Sender<Result<Vec<u64>, CommitError>>;

/// The commits waiting for the writer, and whether it runs.
#[derive(Debug, Default)]
struct Queue {
    waiting: Vec<(Commit, Answer)>,
    writing: bool,
}

/// The store's group commit: its queue and the pool its writer takes a connection from.
#[derive(Debug)]
pub(super) struct Batcher {
    queue: Mutex<Queue>,
    pool: Pool,
}

impl Batcher {
    pub(super) fn new(pool: Pool) -> Arc<Self> {
        Arc::new(Self {
            queue: Mutex::new(Queue::default()),
            pool,
        })
    }

    /// Queues `commit` and waits for its outcome; starts the writer when it does not run.
    /// The writer is a task of its own, so a caller that stops waiting (a request's timeout)
    /// does not stop a batch that holds other callers' commits.
    pub(super) async fn commit(self: &Arc<Self>, commit: Commit) -> Result<Vec<u64>, CommitError> {
        let (answer, outcome) = oneshot::channel();
        let start = {
            let mut queue = lock(&self.queue);
            queue.waiting.push((commit, answer));
            !std::mem::replace(&mut queue.writing, true)
        };
        if start {
            tokio::spawn(Arc::clone(self).write());
        }
        outcome
            .await
            .unwrap_or_else(|_| Err(StoreError("postgres: the writer stopped".into()).into()))
    }

    /// Writes batches until the queue is empty.
    async fn write(self: Arc<Self>) {
        loop {
            let batch = {
                let mut queue = lock(&self.queue);
                if queue.waiting.is_empty() {
                    queue.writing = false;
                    return;
                }
                take_batch(&mut queue.waiting)
            };
            let (commits, answers): (Vec<Commit>, Vec<Answer>) = batch.into_iter().unzip();
            let outcomes = self.write_batch(&commits).await;
            for (answer, outcome) in answers.into_iter().zip(outcomes) {
                let _ = answer.send(outcome);
            }
        }
    }

    /// Every commit's outcome, in order.
    async fn write_batch(&self, commits: &[Commit]) -> Vec<Result<Vec<u64>, CommitError>> {
        let fail_all =
            |error: StoreError| commits.iter().map(|_| Err(error.clone().into())).collect();
        let mut client = match checkout(&self.pool).await {
            Ok(client) => Checkout::new(client),
            Err(error) => return fail_all(error),
        };
        client.in_transaction = true;
        // `write` ends its transaction itself when it answers (a `COMMIT`, or a `ROLLBACK`
        // when nothing is to be written); a failure leaves it to this rollback.
        let written = write(&client, commits).await;
        client.in_transaction = written.is_err() && client.batch_execute("ROLLBACK").await.is_err();
        match written {
            Ok(outcomes) => outcomes,
            // Another instance committed one of the keys between the read and the insert:
            // each commit again on its own, which finds the key and answers the replay.
            Err(error)
                if error.code() == Some(&SqlState::UNIQUE_VIOLATION)
                    && constraint(&error) == Some("idempotency_pkey") =>
            {
                drop(client);
                let mut outcomes = Vec::with_capacity(commits.len());
                for commit in commits {
                    outcomes.push(super::commit_one(&self.pool, commit, None).await);
                }
                outcomes
            }
            Err(error) => fail_all(pg(error)),
        }
    }
}

/// The next batch: the first [`MAX_BATCH`] commits waiting.
fn take_batch(waiting: &mut Vec<(Commit, Answer)>) -> Vec<(Commit, Answer)> {
    let rest = waiting.split_off(waiting.len().min(MAX_BATCH));
    std::mem::replace(waiting, rest)
}

/// One batch's transaction: `BEGIN`, the records' locks and the keys' entries; then, for the
/// commits that pass their checks, the updates, the keys, the counters with the events, and
/// `COMMIT`. Returns each commit's outcome, or the database's refusal of the whole batch.
async fn write(
    client: &Checkout,
    commits: &[Commit],
) -> Result<Vec<Result<Vec<u64>, CommitError>>, tokio_postgres::Error> {
    let lock_many = client.prepare_cached(LOCK_MANY).await?;
    let keys_many = client.prepare_cached(KEYS_MANY).await?;
    let ids: Vec<Uuid> = commits.iter().map(|c| c.record.id).collect();
    let key_workspaces: Vec<&str> = commits
        .iter()
        .map(|c| c.idempotency.workspace_id.as_str())
        .collect();
    let keys: Vec<&str> = commits.iter().map(|c| c.idempotency.key.as_str()).collect();
    let replies = in_order(vec![
        Box::pin(async { client.batch_execute("BEGIN").await.map(|()| Reply::Done) }) as Step<'_>,
        Box::pin(async { client.query(&lock_many, &[&ids]).await.map(Reply::Rows) }),
        Box::pin(async {
            client
                .query(&keys_many, &[&key_workspaces, &keys])
                .await
                .map(Reply::Rows)
        }),
    ])
    .await?;
    let [Reply::Done, Reply::Rows(locked), Reply::Rows(stored)] = replies.as_slice() else {
        client.batch_execute("ROLLBACK").await?;
        return Ok(commits
            .iter()
            .map(|_| Err(StoreError("postgres: unexpected replies".into()).into()))
            .collect());
    };
    let mut revisions: HashMap<Uuid, u64> = HashMap::new();
    for row in locked {
        revisions.insert(row.try_get(0)?, row.try_get::<_, i64>(1)?.unsigned_abs());
    }
    let mut entries: HashMap<(String, String), IdempotencyEntry> = HashMap::new();
    for row in stored {
        let entry = IdempotencyEntry {
            workspace_id: row.try_get(0)?,
            key: row.try_get(1)?,
            fingerprint: row.try_get(2)?,
            result: row.try_get(3)?,
        };
        entries.insert((entry.workspace_id.clone(), entry.key.clone()), entry);
    }

    // The checks, in queue order, each commit after the ones accepted before it: a key the
    // batch takes is taken, and a record the batch changes is at its new revision. A record
    // changes once per batch: a second commit that would pass against the new revision
    // (which no caller has been told yet) is answered as if it came first, stale against
    // the stored revision.
    let mut outcomes: Vec<Option<Result<Vec<u64>, CommitError>>> =
        Vec::with_capacity(commits.len());
    let mut accepted = Vec::new();
    let mut changed: HashMap<Uuid, u64> = HashMap::new();
    for (index, commit) in commits.iter().enumerate() {
        let entry = &commit.idempotency;
        let name = (entry.workspace_id.clone(), entry.key.clone());
        let existing = entries.get(&name).cloned();
        let id = commit.record.id;
        match commit.check(existing, revisions.get(&id).copied()) {
            Ok(()) if changed.contains_key(&id) => {
                let actual = changed[&id];
                outcomes.push(Some(Err(CommitError::Stale { actual })));
            }
            Ok(()) => {
                entries.insert(name, entry.clone());
                changed.insert(id, revisions.get(&id).copied().unwrap_or(0));
                revisions.insert(id, commit.record.revision);
                accepted.push(index);
                outcomes.push(None);
            }
            Err(refused) => outcomes.push(Some(Err(refused))),
        }
    }
    if accepted.is_empty() {
        client.batch_execute("COMMIT").await?;
        return Ok(outcomes.into_iter().flatten().collect());
    }

    // The accepted commits' columns.
    let mut update = UpdateColumns::default();
    let mut remembered = KeyColumns::default();
    let mut counters: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    let mut columns = EventColumns::default();
    for &index in &accepted {
        let commit = &commits[index];
        let converted = update.push(commit).and_then(|()| {
            for event in &commit.events {
                let counter = counters.entry(&event.workspace_id).or_default();
                counter.0 += 1;
                columns.push(counter.0, event)?;
            }
            Ok(())
        });
        if let Err(error) = converted {
            // A value this store cannot hold refuses the batch as a whole (nothing written).
            client.batch_execute("ROLLBACK").await?;
            return Ok(commits.iter().map(|_| Err(error.clone().into())).collect());
        }
        remembered.push(&commit.idempotency);
    }
    let appended = Appended::new(&counters, &columns);
    let append_params = appended.params();
    let update_many = client.prepare_cached(UPDATE_MANY).await?;
    let insert_keys = client.prepare_cached(INSERT_KEYS).await?;
    let append = client
        .prepare_cached(&format!("{COUNT_AND_APPEND} {COUNTED}"))
        .await?;
    let u = &update;
    let k = &remembered;
    let replies = in_order(vec![
        Box::pin(async {
            client
                .execute(
                    &update_many,
                    &[
                        &u.id,
                        &u.revision,
                        &u.data,
                        &u.participants,
                        &u.state,
                        &u.archived,
                        &u.updated_at,
                    ],
                )
                .await
                .map(|_| Reply::Done)
        }) as Step<'_>,
        Box::pin(async {
            client
                .execute(
                    &insert_keys,
                    &[&k.workspace_id, &k.key, &k.fingerprint, &k.result],
                )
                .await
                .map(|_| Reply::Done)
        }),
        Box::pin(async { client.query(&append, &append_params).await.map(Reply::Rows) }),
        Box::pin(async { client.batch_execute("COMMIT").await.map(|()| Reply::Done) }),
    ])
    .await?;
    let Some(Reply::Rows(rows)) = replies.get(2) else {
        return Ok(commits
            .iter()
            .map(|_| Err(StoreError("postgres: the counters answered nothing".into()).into()))
            .collect());
    };
    let mut last_event: BTreeMap<String, i64> = BTreeMap::new();
    for row in rows {
        last_event.insert(row.try_get(0)?, row.try_get(1)?);
    }
    // Each accepted commit's event ids, from its events' places in the batch (the same
    // arithmetic as the statement's).
    let mut seqs = columns.seq.iter();
    for &index in &accepted {
        let ids = commits[index]
            .events
            .iter()
            .map(|event| {
                let seq = seqs.next().copied().unwrap_or_default();
                let last = last_event
                    .get(&event.workspace_id)
                    .ok_or_else(|| StoreError("postgres: event without a counter".into()))?;
                let (count, _) = counters[event.workspace_id.as_str()];
                Ok((last - count + seq).unsigned_abs())
            })
            .collect::<Result<Vec<u64>, CommitError>>();
        outcomes[index] = Some(ids);
    }
    Ok(outcomes.into_iter().flatten().collect())
}

/// The updated records, as the columns of [`UPDATE_MANY`].
#[derive(Debug, Default)]
struct UpdateColumns {
    id: Vec<Uuid>,
    revision: Vec<i64>,
    data: Vec<String>,
    participants: Vec<String>,
    state: Vec<Option<String>>,
    archived: Vec<bool>,
    updated_at: Vec<i64>,
}

impl UpdateColumns {
    fn push(&mut self, commit: &Commit) -> Result<(), StoreError> {
        let record = &commit.record;
        let data = serde_json::to_string(&record.data).map_err(json_error)?;
        let participants = serde_json::to_string(&record.participants).map_err(json_error)?;
        let (revision, updated_at) = (int(record.revision)?, int(record.updated_at)?);
        self.id.push(record.id);
        self.revision.push(revision);
        self.data.push(data);
        self.participants.push(participants);
        self.state.push(record.state.clone());
        self.archived.push(record.archived);
        self.updated_at.push(updated_at);
        Ok(())
    }
}

/// The keys, as the columns of [`INSERT_KEYS`].
#[derive(Debug, Default)]
struct KeyColumns {
    workspace_id: Vec<String>,
    key: Vec<String>,
    fingerprint: Vec<String>,
    result: Vec<String>,
}

impl KeyColumns {
    fn push(&mut self, entry: &IdempotencyEntry) {
        self.workspace_id.push(entry.workspace_id.clone());
        self.key.push(entry.key.clone());
        self.fingerprint.push(entry.fingerprint.clone());
        self.result.push(entry.result.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::KEYS_MANY;

    /// The plan a prepared statement keeps (generic, made while the table is empty, as when
    /// a deployment starts) still finds each key through the primary key: the table grows
    /// with every commit, and a scan of it per batch was most of PostgreSQL's work under load.
    #[tokio::test]
    async fn the_batch_key_lookup_never_scans_the_table() {
        const URL_VAR: &str = "RCIP_TEST_POSTGRES_URL";
        let Some(url) = std::env::var(URL_VAR).ok().filter(|u| !u.trim().is_empty()) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "{URL_VAR} is not set and CI is: CI must run the PostgreSQL tests"
            );
            eprintln!("skipped: PostgreSQL tests ({URL_VAR} not set)");
            return;
        };
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("the test server");
        tokio::spawn(connection);
        // A temporary table shadows any `idempotency` for this session only.
        client
            .batch_execute(&format!(
                "CREATE TEMP TABLE idempotency (workspace_id TEXT NOT NULL, key TEXT NOT NULL, \
                 fingerprint TEXT NOT NULL, result TEXT NOT NULL, PRIMARY KEY (workspace_id, key)); \
                 SET plan_cache_mode = force_generic_plan; PREPARE keys AS {KEYS_MANY}"
            ))
            .await
            .expect("the statement prepares");
        let plan: Vec<String> = client
            .simple_query("EXPLAIN EXECUTE keys('{acme}', '{k1}')")
            .await
            .expect("a plan")
            .into_iter()
            .filter_map(|message| match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
                _ => None,
            })
            .collect();
        let plan = plan.join("\n");
        assert!(plan.contains("Index Scan using idempotency_pkey"), "{plan}");
        assert!(!plan.contains("Seq Scan"), "{plan}");
    }
}
