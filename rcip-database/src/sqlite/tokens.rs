//! [`TokenStore`] in SQLite: tables of their own in the service's database file, so the
//! instances opening that file share tokens, tickets and sessions.

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};

use rcip_platform::tokens::{
    SecretHash, Session, StoreError, TokenFuture, TokenInfo, TokenStore, parse_scopes, scopes_text,
};

/// The tables (made at open when missing). Hashes are BLOBs of 32 bytes; times are seconds
/// since the Unix epoch.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS rcip_api_tokens (
    id TEXT PRIMARY KEY,
    secret_hash BLOB NOT NULL UNIQUE,
    principal TEXT NOT NULL,
    workspace TEXT NOT NULL,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE TABLE IF NOT EXISTS rcip_sign_in_tickets (
    ticket_hash BLOB PRIMARY KEY,
    principal TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rcip_sessions (
    session_hash BLOB PRIMARY KEY,
    principal TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS rcip_sessions_expiry ON rcip_sessions (expires_at);
";

const TOKEN_COLUMNS: &str = "id, principal, workspace, scopes, label, created_at, revoked_at";

/// Tokens, tickets and sessions in a SQLite file (its own connection to it, beside the
/// record store's).
#[derive(Debug, Clone)]
pub struct SqliteTokenStore {
    connection: Arc<Mutex<Connection>>,
}

impl SqliteTokenStore {
    /// Opens (creating if needed) the database file at `path` and its token tables.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or written.
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
        // WAL as the record store sets it; the busy timeout because this connection and the
        // record store's (and other instances') write the same file: a writer waits for the
        // lock instead of failing at once.
        connection
            .execute_batch("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;")
            .map_err(sql)?;
        connection.execute_batch(SCHEMA).map_err(sql)?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    /// Runs `work` on the connection on the blocking pool (SQLite calls block).
    fn run<'a, T, F>(&self, work: F) -> TokenFuture<'a, T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> rusqlite::Result<Result<T, StoreError>> + Send + 'static,
    {
        let connection = Arc::clone(&self.connection);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let connection = connection
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                work(&connection).map_err(sql)?
            })
            .await
            .map_err(|e| StoreError(format!("sqlite task: {e}")))?
        })
    }
}

fn sql(error: rusqlite::Error) -> StoreError {
    StoreError(format!("sqlite: {error}"))
}

fn token_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Result<TokenInfo, StoreError>> {
    let scopes: String = row.get(3)?;
    let info = TokenInfo {
        id: row.get(0)?,
        principal: row.get(1)?,
        workspace: row.get(2)?,
        scopes: Vec::new(),
        label: row.get(4)?,
        created_at: row.get(5)?,
        revoked_at: row.get(6)?,
    };
    Ok(parse_scopes(&scopes).map(|scopes| TokenInfo { scopes, ..info }))
}

impl TokenStore for SqliteTokenStore {
    fn insert_token<'a>(&'a self, token: &'a TokenInfo, hash: SecretHash) -> TokenFuture<'a, ()> {
        let token = token.clone();
        self.run(move |c| {
            c.execute(
                "INSERT INTO rcip_api_tokens (id, secret_hash, principal, workspace, scopes, \
                 label, created_at, revoked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    token.id,
                    hash.0.as_slice(),
                    token.principal,
                    token.workspace,
                    scopes_text(&token.scopes),
                    token.label,
                    token.created_at,
                    token.revoked_at
                ],
            )?;
            Ok(Ok(()))
        })
    }

    fn revoke_token<'a>(&'a self, id: &'a str, now: i64) -> TokenFuture<'a, bool> {
        let id = id.to_owned();
        self.run(move |c| {
            let changed = c.execute(
                "UPDATE rcip_api_tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                params![id, now],
            )?;
            Ok(Ok(changed == 1))
        })
    }

    fn list_tokens(&self) -> TokenFuture<'_, Vec<TokenInfo>> {
        self.run(|c| {
            let mut statement = c.prepare(&format!(
                "SELECT {TOKEN_COLUMNS} FROM rcip_api_tokens ORDER BY created_at, id"
            ))?;
            let rows = statement
                .query_map([], token_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows.into_iter().collect())
        })
    }

    fn find_token(&self, hash: SecretHash) -> TokenFuture<'_, Option<TokenInfo>> {
        self.run(move |c| {
            let row = c
                .query_row(
                    &format!("SELECT {TOKEN_COLUMNS} FROM rcip_api_tokens WHERE secret_hash = ?1"),
                    params![hash.0.as_slice()],
                    token_row,
                )
                .optional()?;
            Ok(row.transpose())
        })
    }

    fn insert_ticket<'a>(
        &'a self,
        hash: SecretHash,
        principal: &'a str,
        expires_at: i64,
        now: i64,
    ) -> TokenFuture<'a, ()> {
        let principal = principal.to_owned();
        self.run(move |c| {
            c.execute(
                "DELETE FROM rcip_sign_in_tickets WHERE expires_at <= ?1",
                params![now],
            )?;
            c.execute(
                "INSERT INTO rcip_sign_in_tickets (ticket_hash, principal, expires_at) \
                 VALUES (?1, ?2, ?3)",
                params![hash.0.as_slice(), principal, expires_at],
            )?;
            Ok(Ok(()))
        })
    }

    fn consume_ticket(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<String>> {
        self.run(move |c| {
            // One statement: SQLite's write lock makes it atomic across connections and
            // processes, so of two instances deleting the same row only one gets it back.
            let taken: Option<(String, i64)> = c
                .query_row(
                    "DELETE FROM rcip_sign_in_tickets WHERE ticket_hash = ?1 \
                     RETURNING principal, expires_at",
                    params![hash.0.as_slice()],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            Ok(Ok(taken
                .filter(|(_, expires)| *expires > now)
                .map(|(principal, _)| principal)))
        })
    }

    fn insert_session<'a>(&'a self, hash: SecretHash, session: &'a Session) -> TokenFuture<'a, ()> {
        let session = session.clone();
        self.run(move |c| {
            c.execute(
                "DELETE FROM rcip_sessions WHERE expires_at <= ?1",
                params![session.created_at],
            )?;
            c.execute(
                "INSERT INTO rcip_sessions (session_hash, principal, created_at, expires_at) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    hash.0.as_slice(),
                    session.principal,
                    session.created_at,
                    session.expires_at
                ],
            )?;
            Ok(Ok(()))
        })
    }

    fn find_session(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<Session>> {
        self.run(move |c| {
            let session = c
                .query_row(
                    "SELECT principal, created_at, expires_at FROM rcip_sessions \
                     WHERE session_hash = ?1 AND expires_at > ?2",
                    params![hash.0.as_slice(), now],
                    |row| {
                        Ok(Session {
                            principal: row.get(0)?,
                            created_at: row.get(1)?,
                            expires_at: row.get(2)?,
                        })
                    },
                )
                .optional()?;
            Ok(Ok(session))
        })
    }

    fn revoke_session(&self, hash: SecretHash) -> TokenFuture<'_, bool> {
        self.run(move |c| {
            let changed = c.execute(
                "DELETE FROM rcip_sessions WHERE session_hash = ?1",
                params![hash.0.as_slice()],
            )?;
            Ok(Ok(changed == 1))
        })
    }
}
