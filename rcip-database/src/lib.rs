//! Every SQL statement of rcip, for SQLite and PostgreSQL: the record engine's store
//! ([`RecordStore`](rcip_records::RecordStore)) and the platform's directory
//! ([`DirectoryStore`](rcip_platform::DirectoryStore)) in one database, each backend with
//! one ordered list of migrations.
//!
//! - `SqliteStore` (feature `sqlite`, or `sqlite-bundled` to build SQLite from source, the
//!   default): one file (or `:memory:`), one connection owned by a thread of its own.
//! - `PostgresStore` (feature `postgres`): several instances of a service on one database,
//!   over one pool (tokio-postgres, re-exported as `tokio_postgres` for its `Config`).
//!
//! ```
//! # #[cfg(feature = "sqlite")] {
//! use rcip_database::SqliteStore;
//! use rcip_records::Engine;
//! let engine = Engine::new(SqliteStore::in_memory().unwrap());
//! # let _ = engine;
//! # }
//! ```
#![deny(missing_docs)]

#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod pause;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod traced;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[doc(hidden)]
pub use pause::CommitPause;
#[cfg(feature = "postgres")]
pub use postgres::confirmations::PostgresConfirmationStore;
#[cfg(all(feature = "postgres", feature = "mcp"))]
pub use postgres::mcp::{PostgresEventStore, PostgresSessionStore, PostgresTaskStore, TASK_LEASE};
#[cfg(all(feature = "postgres", feature = "mcp"))]
pub use postgres::relay::PostgresRelay;
#[cfg(feature = "postgres")]
pub use postgres::tokens::{DEFAULT_POOL_SIZE as TOKENS_POOL_SIZE, PostgresTokenStore};
#[cfg(feature = "postgres")]
pub use postgres::{DEFAULT_POOL_SIZE, PoolUse, PostgresStore};
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;
#[cfg(feature = "sqlite")]
pub use sqlite::tokens::SqliteTokenStore;
#[cfg(feature = "postgres")]
pub use tokio_postgres;

#[cfg(feature = "sqlite")]
use std::sync::Arc;

#[cfg(feature = "sqlite")]
use rcip_platform::tokens::{StoreError, TokenStore};

/// Opens the token store of the service's database: `postgres://...` (or `postgresql://`)
/// for PostgreSQL (feature `postgres`), otherwise SQLite: `sqlite:PATH`, `sqlite://PATH` or a
/// plain file path. The tables are created if missing.
///
/// # Errors
///
/// The database cannot be opened, or a PostgreSQL URL without the `postgres` feature.
#[cfg(feature = "sqlite")]
pub async fn open_tokens(database_url: &str) -> Result<Arc<dyn TokenStore>, StoreError> {
    if database_url.starts_with("postgres://") || database_url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        {
            return Ok(Arc::new(PostgresTokenStore::open(database_url).await?));
        }
        #[cfg(not(feature = "postgres"))]
        {
            return Err(StoreError(
                "this build has no PostgreSQL support (feature `postgres`)".into(),
            ));
        }
    }
    let path = database_url
        .strip_prefix("sqlite://")
        .or_else(|| database_url.strip_prefix("sqlite:"))
        .unwrap_or(database_url);
    let path = path.to_owned();
    let store = tokio::task::spawn_blocking(move || SqliteTokenStore::open(path))
        .await
        .map_err(|e| StoreError(format!("open: {e}")))??;
    Ok(Arc::new(store))
}

// The README's code, as doctests (it needs the SQLite store, which the examples crate that
// tests the other READMEs must not build).
#[cfg(all(doctest, feature = "sqlite"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
