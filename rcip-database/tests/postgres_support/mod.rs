//! The PostgreSQL tests' database: the server named by `RCIP_TEST_POSTGRES_URL`, one fresh
//! schema per test (dropped when the test ends, failed or not), and worker processes (this
//! test binary run again) for what only several instances can show. Not every test file uses
//! every item.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Once;

use rcip_database::PostgresStore;
use rcip_database::tokio_postgres::{self, Client, NoTls};

use crate::store_support::{Tap, Tapped};

/// The variable naming the server.
pub const URL_VAR: &str = "RCIP_TEST_POSTGRES_URL";
/// Set in a worker process: which role it plays (the test decides what that means).
pub const ROLE_VAR: &str = "RCIP_TEST_POSTGRES_ROLE";
/// Set in a worker process: the schema it works in.
pub const SCHEMA_VAR: &str = "RCIP_TEST_POSTGRES_SCHEMA";

/// The server's URL; `None` when the variable is unset, after printing the one `skipped:`
/// line of this test binary. Unset under CI is a failure: CI must run these tests.
pub fn server_url() -> Option<String> {
    match std::env::var(URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{URL_VAR} is not set and CI is: CI must run the PostgreSQL tests (.ci/run sets it)"
            );
            static SKIP: Once = Once::new();
            SKIP.call_once(|| {
                // Straight to stderr: the test harness captures `println!`, and this line must
                // be seen.
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped: PostgreSQL tests ({URL_VAR} not set)"
                );
            });
            None
        }
    }
}

/// Connects one plain client (its connection driven by a task of the current runtime).
/// Panics when the server cannot be reached: with the variable set, that is a failure.
pub async fn connect(config: &tokio_postgres::Config) -> Client {
    let (client, connection) = config
        .connect(NoTls)
        .await
        .unwrap_or_else(|e| panic!("{URL_VAR} is set but the server cannot be reached: {e}"));
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

fn parse(url: &str) -> tokio_postgres::Config {
    url.parse()
        .unwrap_or_else(|e| panic!("{URL_VAR} is not a connection string: {e}"))
}

/// A schema of its own for one test, dropped (with everything in it) when this is dropped,
/// so also when the test panics.
#[derive(Debug)]
pub struct TestSchema {
    /// The schema's name.
    pub name: String,
    url: String,
    /// Whether to drop it (a worker process works in its parent's schema and leaves it).
    owned: bool,
}

impl TestSchema {
    /// A new schema, or `None` (skipped) without the variable.
    pub async fn create() -> Option<Self> {
        let url = server_url()?;
        let name = format!(
            "rcip_test_{:032x}",
            u128::from_le_bytes(rcip_runtime::__private::shared::random_128())
        );
        connect(&parse(&url))
            .await
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .await
            .unwrap();
        Some(Self {
            name,
            url,
            owned: true,
        })
    }

    /// In a worker process: the schema its parent made (`None` in the parent).
    pub fn of_worker() -> Option<Self> {
        let name = std::env::var(SCHEMA_VAR).ok()?;
        let url = std::env::var(URL_VAR).ok()?;
        Some(Self {
            name,
            url,
            owned: false,
        })
    }

    /// A client configuration whose `search_path` is this schema.
    pub fn config(&self) -> tokio_postgres::Config {
        let mut config = parse(&self.url);
        let options = match config.get_options() {
            Some(given) => format!("{given} -c search_path={}", self.name),
            None => format!("-c search_path={}", self.name),
        };
        config.options(options);
        config
    }

    /// The same, tagged with `application_name` (to find its sessions in `pg_stat_activity`).
    pub fn config_named(&self, application_name: &str) -> tokio_postgres::Config {
        let mut config = self.config();
        config.application_name(application_name);
        config
    }

    /// A store on this schema.
    pub async fn open(&self) -> PostgresStore {
        PostgresStore::open_with(self.config(), 4).await.unwrap()
    }

    /// A plain client on this schema.
    pub async fn client(&self) -> Client {
        connect(&self.config()).await
    }

    /// Starts this test binary again as `workers` processes at once, each running only `test`
    /// in `role`, in this schema, with `env` besides.
    pub fn spawn_workers(
        &self,
        test: &str,
        role: &str,
        workers: usize,
        env: &[(&str, String)],
    ) -> Workers {
        let exe = std::env::current_exe().unwrap();
        let children = (0..workers)
            .map(|_| {
                Command::new(&exe)
                    .args(["--exact", test, "--nocapture", "--test-threads=1"])
                    .env(ROLE_VAR, role)
                    .env(SCHEMA_VAR, &self.name)
                    .env(URL_VAR, &self.url)
                    .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        Workers {
            children,
            label: format!("{role} of {test}"),
        }
    }
}

/// Worker processes started by [`TestSchema::spawn_workers`].
#[derive(Debug)]
pub struct Workers {
    children: Vec<Child>,
    label: String,
}

impl Workers {
    /// Waits for every worker; each must succeed. Their outputs, in start order.
    pub async fn wait(self) -> Vec<Output> {
        let Workers { children, label } = self;
        tokio::task::spawn_blocking(move || {
            children
                .into_iter()
                .map(|child| {
                    let output = child.wait_with_output().unwrap();
                    assert!(
                        output.status.success(),
                        "worker {label} failed:\n{}\n{}",
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    );
                    output
                })
                .collect()
        })
        .await
        .unwrap()
    }
}

/// The lines a worker printed as `worker-result: ...`, without the prefix.
pub fn results(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        // Not only at the start: libtest prints `test name ... ` before the test's output.
        .filter_map(|line| line.split_once("worker-result: ").map(|(_, rest)| rest))
        .map(str::to_owned)
        .collect()
}

/// This process's role, when it is a worker.
pub fn role() -> Option<String> {
    std::env::var(ROLE_VAR).ok()
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let config = parse(&self.url);
        let name = self.name.clone();
        // A thread with a runtime of its own: drop runs inside the test's runtime (or while it
        // unwinds), where blocking on a future is not allowed. That runtime is stopped while
        // this waits, so a session of the test's left in a transaction (a failed test's
        // paused commit, say) would hold its locks forever: after a short lock timeout, the
        // sessions holding locks in this schema are ended, and the drop tried again.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let (client, connection) =
                    config.connect(NoTls).await.map_err(|e| e.to_string())?;
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                client
                    .batch_execute("SET lock_timeout = '2s'")
                    .await
                    .map_err(|e| e.to_string())?;
                let statement = format!("DROP SCHEMA IF EXISTS {name} CASCADE");
                let mut attempts = 0;
                loop {
                    match client.batch_execute(&statement).await {
                        Ok(()) => return Ok(()),
                        Err(error) if attempts < 3 => {
                            attempts += 1;
                            let _ = error;
                            client
                                .execute(
                                    "SELECT pg_terminate_backend(l.pid) FROM pg_locks l \
                                     JOIN pg_class c ON c.oid = l.relation \
                                     JOIN pg_namespace n ON n.oid = c.relnamespace \
                                     WHERE n.nspname = $1 AND l.pid <> pg_backend_pid()",
                                    &[&name],
                                )
                                .await
                                .map_err(|e| e.to_string())?;
                        }
                        Err(error) => return Err(error.to_string()),
                    }
                }
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) && !std::thread::panicking() {
            panic!("could not drop test schema {}: {dropped:?}", self.name);
        }
    }
}

/// A barrier across processes: the parent holds it while workers start; each worker waits in
/// [`wait_barrier`] until the parent releases it, so they go on together.
pub struct Barrier {
    client: Client,
    key: i32,
}

const BARRIER_CLASS: i32 = 0x7465_7374; // "test"

impl Barrier {
    /// Takes a barrier (keyed by a random number) on this schema's server.
    pub async fn hold(schema: &TestSchema) -> Self {
        let key = i32::from_le_bytes(
            rcip_runtime::__private::shared::random_128()[..4]
                .try_into()
                .unwrap(),
        ) & 0x7fff_ffff;
        let client = schema.client().await;
        client
            .execute("SELECT pg_advisory_lock($1, $2)", &[&BARRIER_CLASS, &key])
            .await
            .unwrap();
        Self { client, key }
    }

    /// The environment a worker needs to wait on it.
    pub fn key(&self) -> String {
        self.key.to_string()
    }

    /// Waits until `waiters` sessions wait on the barrier, then releases it.
    pub async fn release_when_waiting(self, waiters: i64) {
        let started = std::time::Instant::now();
        loop {
            let row = self
                .client
                .query_one(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
                     AND classid = $1::int8::oid AND objid = $2::int8::oid",
                    &[&i64::from(BARRIER_CLASS), &i64::from(self.key)],
                )
                .await
                .unwrap();
            if row.get::<_, i64>(0) >= waiters {
                break;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "the workers never reached the barrier"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        self.client
            .execute(
                "SELECT pg_advisory_unlock($1, $2)",
                &[&BARRIER_CLASS, &self.key],
            )
            .await
            .unwrap();
    }
}

/// In a worker: waits until the parent's barrier (its key in `key`) is released.
pub async fn wait_barrier(schema: &TestSchema, key: &str) {
    let key: i32 = key.parse().unwrap();
    let client = schema.client().await;
    client
        .execute(
            "SELECT pg_advisory_lock_shared($1, $2)",
            &[&BARRIER_CLASS, &key],
        )
        .await
        .unwrap();
    client
        .execute(
            "SELECT pg_advisory_unlock_shared($1, $2)",
            &[&BARRIER_CLASS, &key],
        )
        .await
        .unwrap();
}

/// A store on a schema of its own, dropped with the store: what the engine's conformance
/// suite runs on (its tests take a store by value and keep it to the end). The store's
/// connections drop before the schema (`Tapped` drops `inner` first).
pub type SchemaStore = Tapped<PostgresStore, TestSchema>;

impl Tap for TestSchema {}

impl SchemaStore {
    /// A store on a new schema, or `None` (skipped) without the variable.
    pub async fn create() -> Option<Self> {
        let schema = TestSchema::create().await?;
        Some(Self {
            inner: schema.open().await,
            tap: schema,
        })
    }
}
