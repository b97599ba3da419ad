//! What the credential and token tests share: temporary SQLite files and PostgreSQL
//! schemas (skipped with one line without `RCIP_TEST_POSTGRES_URL`). Not every test file
//! uses every item.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::io::Write;
use std::path::PathBuf;
use std::sync::Once;

/// The variable naming the PostgreSQL server.
pub const URL_VAR: &str = "RCIP_TEST_POSTGRES_URL";

fn random_hex() -> String {
    let mut bytes = [0u8; 12];
    getrandom::fill(&mut bytes).unwrap();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A SQLite file path of its own, removed (with its WAL files) when dropped.
#[derive(Debug)]
pub struct TempDb {
    pub path: PathBuf,
}

impl TempDb {
    pub fn new() -> Self {
        let path = std::env::temp_dir().join(format!("rcip-server-test-{}.db", random_hex()));
        Self { path }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.path.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The server's URL; `None` (after printing one `skipped:` line) when the variable is unset.
/// Unset under CI is a failure: CI must run these tests.
pub fn postgres_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{URL_VAR} is not set and CI is: CI must run the PostgreSQL tests"
            );
            static SKIP: Once = Once::new();
            SKIP.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped: PostgreSQL tests ({URL_VAR} not set)"
                );
            });
            None
        }
    }
}

/// A PostgreSQL schema of its own, dropped (with its tables) when this is dropped.
#[derive(Debug)]
pub struct TestSchema {
    pub name: String,
    url: String,
}

impl TestSchema {
    /// A new schema, or `None` (skipped) without the variable.
    pub async fn create() -> Option<Self> {
        let url = postgres_url()?;
        let name = format!("rcip_server_test_{}", random_hex());
        let client = connect(&url.parse().unwrap()).await;
        client
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .await
            .unwrap();
        Some(Self { name, url })
    }

    /// A client configuration whose `search_path` is this schema.
    pub fn config(&self) -> tokio_postgres::Config {
        let mut config: tokio_postgres::Config = self.url.parse().unwrap();
        let options = match config.get_options() {
            Some(given) => format!("{given} -c search_path={}", self.name),
            None => format!("-c search_path={}", self.name),
        };
        config.options(options);
        config
    }

    /// A token store on this schema.
    pub async fn open(&self) -> rcip_server::tokens::PostgresTokenStore {
        rcip_server::tokens::PostgresTokenStore::open_with(self.config(), 2)
            .await
            .unwrap()
    }
}

async fn connect(config: &tokio_postgres::Config) -> tokio_postgres::Client {
    let (client, connection) = config
        .connect(tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("{URL_VAR} is set but the server cannot be reached: {e}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        let config: tokio_postgres::Config = self.url.parse().unwrap();
        let statement = format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name);
        // A runtime of its own on another thread: drop runs inside the test's runtime.
        let dropped = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(async {
                    let (client, connection) = config
                        .connect(tokio_postgres::NoTls)
                        .await
                        .map_err(|e| e.to_string())?;
                    tokio::spawn(async move {
                        let _ = connection.await;
                    });
                    client
                        .batch_execute(&statement)
                        .await
                        .map_err(|e| e.to_string())
                })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) && !std::thread::panicking() {
            panic!("could not drop test schema {}: {dropped:?}", self.name);
        }
    }
}
