//! rcip-runtime's pending confirmations in PostgreSQL, shared by the instances on one
//! database schema: raised on one, listed and resolved on any, exactly once.

use std::fmt;

use deadpool_postgres::Pool;
use rcip_core::{ConfirmationInfo, InvocationOutcome, SemanticContext};
use rcip_runtime::{
    BoxFuture, Clock, ConfirmationStore, ConfirmationTicket, Error, Filed, Principal,
    StoredConfirmation, SystemClock,
};
use serde_json::{Value, json};

/// How long after its expiry a ticket nobody took is kept (then it is forgotten; taking it
/// before then still answers `CONFIRMATION_EXPIRED` rather than `CONFIRMATION_NOT_FOUND`).
const KEPT_AFTER_EXPIRY_MS: u64 = 3_600_000;

/// How many forgotten tickets one `put` deletes at most (bounded work per call).
const SWEEP: i64 = 100;

/// At most this many pending tickets are listed.
const LISTED: i64 = 1_000;

/// Pending confirmations in the `rcip_confirmations` table, on a
/// [`PostgresStore`](crate::PostgresStore)'s pool
/// ([`PostgresStore::confirmations`](crate::PostgresStore::confirmations)). Taking a ticket
/// is one `DELETE … RETURNING`: of any number of instances resolving it at once, exactly one
/// gets it.
///
/// ```no_run
/// use std::sync::Arc;
/// use rcip_database::PostgresStore;
/// use rcip_runtime::RuntimeOptions;
///
/// async fn options() -> Result<RuntimeOptions, Box<dyn std::error::Error>> {
///     let store = PostgresStore::open("postgres://postgres@127.0.0.1:5432/test").await?;
///     Ok(RuntimeOptions::default().confirmation_store(Arc::new(store.confirmations())))
/// }
/// ```
#[derive(Clone)]
pub struct PostgresConfirmationStore {
    pool: Pool,
}

impl fmt::Debug for PostgresConfirmationStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresConfirmationStore")
            .finish_non_exhaustive()
    }
}

fn failed(error: impl fmt::Display) -> Error {
    Error::ConfirmationStore(format!("postgres: {error}"))
}

/// Runs `sql` (prepared once per connection) with `params`; the rows it changed.
async fn execute(
    client: &deadpool_postgres::Object,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<u64, Error> {
    let statement = client.prepare_cached(sql).await.map_err(failed)?;
    client.execute(&statement, params).await.map_err(failed)
}

/// Runs `sql` (prepared once per connection) with `params`; its one row, if any.
async fn query_opt(
    client: &deadpool_postgres::Object,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Option<tokio_postgres::Row>, Error> {
    let statement = client.prepare_cached(sql).await.map_err(failed)?;
    client.query_opt(&statement, params).await.map_err(failed)
}

fn int(value: u64) -> Result<i64, Error> {
    i64::try_from(value).map_err(|_| failed(format!("{value} does not fit a BIGINT")))
}

/// A ticket as the `ticket` column's JSON.
fn encode(confirmation: &StoredConfirmation) -> Result<String, Error> {
    let ticket = &confirmation.ticket;
    let principal = ticket
        .principal
        .as_ref()
        .map(|p| json!({ "id": p.id(), "name": p.name(), "scopes": p.scopes() }));
    let value = json!({
        "confirmation": ticket.confirmation,
        "capabilityId": ticket.capability_id,
        "input": ticket.input,
        "principal": principal,
        "invocationId": confirmation.invocation_id,
        "context": confirmation.context,
        "key": confirmation.key,
    });
    serde_json::to_string(&value).map_err(failed)
}

/// A ticket read back from its JSON.
fn decode(text: &str) -> Result<StoredConfirmation, Error> {
    let unreadable = || failed("a stored confirmation is not readable");
    let mut value: Value = serde_json::from_str(text).map_err(failed)?;
    let mut take = |key: &str| value.get_mut(key).map(Value::take).ok_or_else(unreadable);
    let confirmation: ConfirmationInfo =
        serde_json::from_value(take("confirmation")?).map_err(failed)?;
    let capability_id = take("capabilityId")?
        .as_str()
        .ok_or_else(unreadable)?
        .to_owned();
    let input = take("input")?;
    let principal = match take("principal")? {
        Value::Null => None,
        Value::Object(principal) => {
            let text = |key: &str| principal.get(key).and_then(Value::as_str);
            let mut read = Principal::new(text("id").ok_or_else(unreadable)?);
            if let Some(name) = text("name") {
                read = read.with_name(name);
            }
            for scope in principal
                .get("scopes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                read = read.with_scope(scope.as_str().ok_or_else(unreadable)?);
            }
            Some(read)
        }
        _ => return Err(unreadable()),
    };
    let invocation_id = take("invocationId")?
        .as_str()
        .ok_or_else(unreadable)?
        .to_owned();
    let context: SemanticContext = serde_json::from_value(take("context")?).map_err(failed)?;
    let key = take("key")?.as_str().map(str::to_owned);
    Ok(StoredConfirmation::new(
        ConfirmationTicket::new(confirmation, capability_id, input, principal),
        invocation_id,
        context,
    )
    .with_key(key))
}

impl PostgresConfirmationStore {
    pub(crate) fn on(pool: Pool) -> Self {
        Self { pool }
    }

    async fn put_ticket(&self, confirmation: StoredConfirmation) -> Result<(), Error> {
        let ticket = encode(&confirmation)?;
        let expires_at = int(confirmation.ticket.confirmation.expires_at)?;
        let horizon = int(SystemClock.now_ms().saturating_sub(KEPT_AFTER_EXPIRY_MS))?;
        let client = self.pool.get().await.map_err(failed)?;
        execute(
            &client,
            "DELETE FROM rcip_confirmations WHERE id IN (SELECT id FROM rcip_confirmations \
                 WHERE expires_at < $1 ORDER BY expires_at LIMIT $2)",
            &[&horizon, &SWEEP],
        )
        .await?;
        execute(
            &client,
            "INSERT INTO rcip_confirmations (id, expires_at, ticket, key) \
                 VALUES ($1, $2, $3, $4)",
            &[&confirmation.id(), &expires_at, &ticket, &confirmation.key],
        )
        .await?;
        Ok(())
    }

    async fn take_ticket(&self, id: String) -> Result<Option<StoredConfirmation>, Error> {
        let client = self.pool.get().await.map_err(failed)?;
        let row = query_opt(
            &client,
            "DELETE FROM rcip_confirmations WHERE id = $1 RETURNING ticket",
            &[&id],
        )
        .await?;
        row.map(|row| decode(row.try_get::<_, &str>(0).map_err(failed)?))
            .transpose()
    }

    async fn pending_tickets(&self, now_ms: u64) -> Result<Vec<StoredConfirmation>, Error> {
        let now = int(now_ms)?;
        let client = self.pool.get().await.map_err(failed)?;
        let list = client
            .prepare_cached(
                "SELECT ticket FROM rcip_confirmations WHERE expires_at >= $1 \
                 ORDER BY expires_at, id LIMIT $2",
            )
            .await
            .map_err(failed)?;
        let rows = client
            .query(&list, &[&now, &LISTED])
            .await
            .map_err(failed)?;
        rows.iter()
            .map(|row| decode(row.try_get::<_, &str>(0).map_err(failed)?))
            .collect()
    }
}

impl PostgresConfirmationStore {
    async fn find_filed(&self, key: String, now_ms: u64) -> Result<Option<Filed>, Error> {
        let now = int(now_ms)?;
        let client = self.pool.get().await.map_err(failed)?;
        if let Some(row) = query_opt(
            &client,
            "DELETE FROM rcip_confirmation_outcomes WHERE key = $1 AND keep_until >= $2 \
                 RETURNING outcome",
            &[&key, &now],
        )
        .await?
        {
            let outcome: InvocationOutcome =
                serde_json::from_str(row.try_get::<_, &str>(0).map_err(failed)?).map_err(failed)?;
            return Ok(Some(Filed::Answered(outcome)));
        }
        let row = query_opt(
            &client,
            "SELECT ticket FROM rcip_confirmations WHERE key = $1 AND expires_at >= $2 \
                 ORDER BY expires_at DESC LIMIT 1",
            &[&key, &now],
        )
        .await?;
        row.map(|row| decode(row.try_get::<_, &str>(0).map_err(failed)?).map(Filed::Pending))
            .transpose()
    }

    async fn file(
        &self,
        key: String,
        outcome: InvocationOutcome,
        keep_until_ms: u64,
    ) -> Result<(), Error> {
        let text = serde_json::to_string(&outcome).map_err(failed)?;
        let keep_until = int(keep_until_ms)?;
        let now = int(SystemClock.now_ms())?;
        let client = self.pool.get().await.map_err(failed)?;
        execute(
            &client,
            "DELETE FROM rcip_confirmation_outcomes WHERE key IN (SELECT key FROM \
                 rcip_confirmation_outcomes WHERE keep_until < $1 ORDER BY keep_until LIMIT $2)",
            &[&now, &SWEEP],
        )
        .await?;
        execute(
            &client,
            "INSERT INTO rcip_confirmation_outcomes (key, outcome, keep_until) \
                 VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE \
                 SET outcome = EXCLUDED.outcome, keep_until = EXCLUDED.keep_until",
            &[&key, &text, &keep_until],
        )
        .await?;
        Ok(())
    }
}

impl ConfirmationStore for PostgresConfirmationStore {
    fn put(&self, confirmation: StoredConfirmation) -> BoxFuture<Result<(), Error>> {
        let store = self.clone();
        Box::pin(async move { store.put_ticket(confirmation).await })
    }

    fn take(&self, id: &str) -> BoxFuture<Result<Option<StoredConfirmation>, Error>> {
        let store = self.clone();
        let id = id.to_owned();
        Box::pin(async move { store.take_ticket(id).await })
    }

    fn pending(&self, now_ms: u64) -> BoxFuture<Result<Vec<StoredConfirmation>, Error>> {
        let store = self.clone();
        Box::pin(async move { store.pending_tickets(now_ms).await })
    }

    fn find(&self, key: &str, now_ms: u64) -> BoxFuture<Result<Option<Filed>, Error>> {
        let store = self.clone();
        let key = key.to_owned();
        Box::pin(async move { store.find_filed(key, now_ms).await })
    }

    fn file_outcome(
        &self,
        key: &str,
        outcome: InvocationOutcome,
        keep_until_ms: u64,
    ) -> BoxFuture<Result<(), Error>> {
        let store = self.clone();
        let key = key.to_owned();
        Box::pin(async move { store.file(key, outcome, keep_until_ms).await })
    }
}
