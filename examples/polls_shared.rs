//! The polls' state in PostgreSQL, for several instances of the example on one database
//! (`-- mcp-http ADDR --database URL`): one JSON document in a table of the application's own,
//! changed under a row lock, so a vote through one instance is every instance's.

use std::sync::Arc;

use rcip_database::tokio_postgres::{self, NoTls};
use rcip_runtime::HandlerError;
use tokio::sync::Mutex;

use crate::Polls;

/// The document, through one connection of this instance's own (a lock orders this
/// instance's changes; the row lock orders every instance's).
pub(crate) struct SharedPolls {
    client: Mutex<tokio_postgres::Client>,
}

impl std::fmt::Debug for SharedPolls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedPolls").finish_non_exhaustive()
    }
}

fn failed(error: impl std::fmt::Display) -> HandlerError {
    HandlerError::failed(format!("the polls database: {error}"))
}

impl SharedPolls {
    /// Connects, and makes the table (under a lock: instances may start together).
    pub(crate) async fn open(url: &str) -> Result<Arc<Self>, Box<dyn std::error::Error>> {
        let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
        tokio::spawn(connection);
        client
            .batch_execute(
                "BEGIN; SELECT pg_advisory_xact_lock(7300738); \
                 CREATE TABLE IF NOT EXISTS polls_example (id INT PRIMARY KEY, doc TEXT NOT NULL); \
                 INSERT INTO polls_example VALUES (1, '{\"polls\":[]}') ON CONFLICT DO NOTHING; \
                 COMMIT",
            )
            .await?;
        Ok(Arc::new(Self {
            client: Mutex::new(client),
        }))
    }

    /// Runs `f` on the document; what it changed is written back unless it failed.
    pub(crate) async fn with<T>(
        &self,
        f: impl FnOnce(&mut Polls) -> Result<T, HandlerError>,
    ) -> Result<T, HandlerError> {
        let mut client = self.client.lock().await;
        let transaction = client.transaction().await.map_err(failed)?;
        let row = transaction
            .query_one("SELECT doc FROM polls_example WHERE id = 1 FOR UPDATE", &[])
            .await
            .map_err(failed)?;
        let text: &str = row.try_get(0).map_err(failed)?;
        let mut polls: Polls = serde_json::from_str(text).map_err(failed)?;
        let result = f(&mut polls)?;
        let changed = serde_json::to_string(&polls).map_err(failed)?;
        if changed != text {
            transaction
                .execute(
                    "UPDATE polls_example SET doc = $1 WHERE id = 1",
                    &[&changed],
                )
                .await
                .map_err(failed)?;
        }
        transaction.commit().await.map_err(failed)?;
        Ok(result)
    }
}
