//! [`TokenStore`] in PostgreSQL: tables of their own in the service's database (the
//! connection's current schema), for several instances behind a load balancer.

use std::fmt;

use deadpool_postgres::{Object, Pool};

use super::PostgresStore;

use rcip_platform::tokens::{
    SecretHash, Session, StoreError, TokenFuture, TokenInfo, TokenStore, parse_scopes, scopes_text,
};

/// The pool's size when a token store is opened alone: credential lookups are one short
/// query each.
pub const DEFAULT_POOL_SIZE: usize = 4;

const TOKEN_COLUMNS: &str = "id, principal, workspace, scopes, label, created_at, revoked_at";

/// Tokens, tickets and sessions in PostgreSQL. Every statement is prepared once per
/// connection (deadpool's statement cache), so a lookup is one round trip.
pub struct PostgresTokenStore {
    pool: Pool,
}

impl fmt::Debug for PostgresTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = self.pool.status();
        f.debug_struct("PostgresTokenStore")
            .field("pool_size", &status.max_size)
            .finish_non_exhaustive()
    }
}

fn pg(error: tokio_postgres::Error) -> StoreError {
    StoreError(format!("postgres: {error}"))
}

impl PostgresTokenStore {
    /// Connects to the database at `url` and brings its schema up to date, as
    /// [`PostgresStore::open`] does, with a pool of [`DEFAULT_POOL_SIZE`].
    ///
    /// # Errors
    ///
    /// As [`PostgresStore::open`].
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let config = url
            .parse::<tokio_postgres::Config>()
            .map_err(|e| StoreError(format!("postgres: bad connection string: {e}")))?;
        Self::open_with(config, DEFAULT_POOL_SIZE).await
    }

    /// Like [`open`](Self::open), from a client configuration and a pool size (at least 1).
    /// A service that also keeps records there takes [`PostgresStore::tokens`] instead, on
    /// the store's own pool.
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open).
    pub async fn open_with(
        config: tokio_postgres::Config,
        pool_size: usize,
    ) -> Result<Self, StoreError> {
        let store = PostgresStore::open_with(config, pool_size)
            .await
            .map_err(|e| StoreError(e.0))?;
        Ok(store.tokens())
    }

    /// The token store on `pool` (the record store's).
    pub(crate) fn on(pool: Pool) -> Self {
        Self { pool }
    }

    async fn client(&self) -> Result<Object, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|e| StoreError(format!("postgres: {e}")))
    }
}

fn token_row(row: &tokio_postgres::Row) -> Result<TokenInfo, StoreError> {
    let scopes: String = row.try_get(3).map_err(pg)?;
    Ok(TokenInfo {
        id: row.try_get(0).map_err(pg)?,
        principal: row.try_get(1).map_err(pg)?,
        workspace: row.try_get(2).map_err(pg)?,
        scopes: parse_scopes(&scopes)?,
        label: row.try_get(4).map_err(pg)?,
        created_at: row.try_get(5).map_err(pg)?,
        revoked_at: row.try_get(6).map_err(pg)?,
    })
}

impl TokenStore for PostgresTokenStore {
    fn insert_token<'a>(&'a self, token: &'a TokenInfo, hash: SecretHash) -> TokenFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute(
                    &client.prepare_cached("INSERT INTO rcip_api_tokens (id, secret_hash, principal, workspace, scopes, \
                     label, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)").await.map_err(pg)?,
                    &[
                        &token.id,
                        &hash.0.as_slice(),
                        &token.principal,
                        &token.workspace,
                        &scopes_text(&token.scopes),
                        &token.label,
                        &token.created_at,
                        &token.revoked_at,
                    ],
                )
                .await
                .map_err(pg)?;
            Ok(())
        })
    }

    fn revoke_token<'a>(&'a self, id: &'a str, now: i64) -> TokenFuture<'a, bool> {
        Box::pin(async move {
            let client = self.client().await?;
            let changed = client
                .execute(
                    &client
                        .prepare_cached(
                            "UPDATE rcip_api_tokens SET revoked_at = $2 \
                     WHERE id = $1 AND revoked_at IS NULL",
                        )
                        .await
                        .map_err(pg)?,
                    &[&id, &now],
                )
                .await
                .map_err(pg)?;
            Ok(changed == 1)
        })
    }

    fn list_tokens(&self) -> TokenFuture<'_, Vec<TokenInfo>> {
        Box::pin(async move {
            let client = self.client().await?;
            let rows = client
                .query(
                    &client
                        .prepare_cached(&format!(
                            "SELECT {TOKEN_COLUMNS} FROM rcip_api_tokens ORDER BY created_at, id"
                        ))
                        .await
                        .map_err(pg)?,
                    &[],
                )
                .await
                .map_err(pg)?;
            rows.iter().map(token_row).collect()
        })
    }

    fn find_token(&self, hash: SecretHash) -> TokenFuture<'_, Option<TokenInfo>> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    &client
                        .prepare_cached(&format!(
                            "SELECT {TOKEN_COLUMNS} FROM rcip_api_tokens WHERE secret_hash = $1"
                        ))
                        .await
                        .map_err(pg)?,
                    &[&hash.0.as_slice()],
                )
                .await
                .map_err(pg)?;
            row.as_ref().map(token_row).transpose()
        })
    }

    fn insert_ticket<'a>(
        &'a self,
        hash: SecretHash,
        principal: &'a str,
        expires_at: i64,
        now: i64,
    ) -> TokenFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute(
                    &client
                        .prepare_cached("DELETE FROM rcip_sign_in_tickets WHERE expires_at <= $1")
                        .await
                        .map_err(pg)?,
                    &[&now],
                )
                .await
                .map_err(pg)?;
            client
                .execute(
                    &client
                        .prepare_cached(
                            "INSERT INTO rcip_sign_in_tickets (ticket_hash, principal, expires_at) \
                     VALUES ($1, $2, $3)",
                        )
                        .await
                        .map_err(pg)?,
                    &[&hash.0.as_slice(), &principal, &expires_at],
                )
                .await
                .map_err(pg)?;
            Ok(())
        })
    }

    fn consume_ticket(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<String>> {
        Box::pin(async move {
            let client = self.client().await?;
            // One DELETE: a second instance's DELETE of the same row waits for the first to
            // commit, then finds the row gone and returns nothing.
            let row = client
                .query_opt(
                    &client
                        .prepare_cached(
                            "DELETE FROM rcip_sign_in_tickets WHERE ticket_hash = $1 \
                     RETURNING principal, expires_at",
                        )
                        .await
                        .map_err(pg)?,
                    &[&hash.0.as_slice()],
                )
                .await
                .map_err(pg)?;
            let Some(row) = row else { return Ok(None) };
            let principal: String = row.try_get(0).map_err(pg)?;
            let expires_at: i64 = row.try_get(1).map_err(pg)?;
            Ok((expires_at > now).then_some(principal))
        })
    }

    fn insert_session<'a>(&'a self, hash: SecretHash, session: &'a Session) -> TokenFuture<'a, ()> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute(
                    &client
                        .prepare_cached("DELETE FROM rcip_sessions WHERE expires_at <= $1")
                        .await
                        .map_err(pg)?,
                    &[&session.created_at],
                )
                .await
                .map_err(pg)?;
            client
                .execute(
                    &client.prepare_cached("INSERT INTO rcip_sessions (session_hash, principal, created_at, expires_at) \
                     VALUES ($1, $2, $3, $4)").await.map_err(pg)?,
                    &[
                        &hash.0.as_slice(),
                        &session.principal,
                        &session.created_at,
                        &session.expires_at,
                    ],
                )
                .await
                .map_err(pg)?;
            Ok(())
        })
    }

    fn find_session(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<Session>> {
        Box::pin(async move {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    &client
                        .prepare_cached(
                            "SELECT principal, created_at, expires_at FROM rcip_sessions \
                     WHERE session_hash = $1 AND expires_at > $2",
                        )
                        .await
                        .map_err(pg)?,
                    &[&hash.0.as_slice(), &now],
                )
                .await
                .map_err(pg)?;
            row.map(|row| {
                Ok(Session {
                    principal: row.try_get(0).map_err(pg)?,
                    created_at: row.try_get(1).map_err(pg)?,
                    expires_at: row.try_get(2).map_err(pg)?,
                })
            })
            .transpose()
        })
    }

    fn revoke_session(&self, hash: SecretHash) -> TokenFuture<'_, bool> {
        Box::pin(async move {
            let client = self.client().await?;
            let changed = client
                .execute(
                    &client
                        .prepare_cached("DELETE FROM rcip_sessions WHERE session_hash = $1")
                        .await
                        .map_err(pg)?,
                    &[&hash.0.as_slice()],
                )
                .await
                .map_err(pg)?;
            Ok(changed == 1)
        })
    }
}
