//! `command.execute` throughput (commands per second) on the memory, SQLite (a file) and
//! PostgreSQL stores, with concurrent writers: 1 writer, 16 writers on 16 records, and 16
//! writers on one record (where all but one of each round lose with a stale revision: the
//! figure counts the commands that committed, and the refusals are shown beside it).
//!
//! `cargo bench -p rcip-database --features postgres --bench execute` runs each case for
//! a few seconds and prints a table; run as a test (`cargo test --benches`), each case runs a
//! handful of commands only, to show the bench still works. PostgreSQL is the server named by
//! `RCIP_TEST_POSTGRES_URL` (a schema of its own, dropped at the end); without it, that store
//! is skipped with one line. Naming stores after `--` (`memory`, `sqlite`, `postgres`) runs
//! those only: each store in a process of its own measures it without the heap the others
//! left behind (the memory store's run leaves a gigabyte of freed blocks to the allocator).
#![allow(missing_docs, clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rcip_database::tokio_postgres::{self, NoTls};
use rcip_database::{PostgresStore, SqliteStore};
use rcip_records::{Actor, Caller, Engine, ExecuteCommand, GetRecord, MemoryStore, RecordStore};
use rcip_relationship::parse_package;
use serde_json::json;
use uuid::Uuid;

fn engine<S: RecordStore>(store: S) -> Engine<S> {
    let package = parse_package(include_str!("../../examples/programs/polls.json")).unwrap();
    Engine::new(store).with_program(package).unwrap()
}

fn caller() -> Caller {
    Caller::human(Actor::new("bench"))
}

fn key() -> String {
    uuid::Builder::from_random_bytes(rcip_runtime::__private::shared::random_128())
        .into_uuid()
        .to_string()
}

/// How long each case runs, or how many commands each writer makes.
#[derive(Clone, Copy)]
enum Budget {
    Time(Duration),
    Commands(u64),
}

impl Budget {
    fn more(self, started: Instant, done: u64) -> bool {
        match self {
            Budget::Time(limit) => started.elapsed() < limit,
            Budget::Commands(n) => done < n,
        }
    }
}

async fn create_poll<S: RecordStore>(engine: &Engine<S>) -> Uuid {
    engine
        .create(
            &caller(),
            serde_json::from_value(json!({
                "workspace_id": "w", "collection_id": "c", "namespace": "polls", "type": "poll",
                "data": {"question": "Lunch?", "options": ["a", "b"], "vote_count": 3},
                "idempotency_key": key(),
            }))
            .unwrap(),
        )
        .await
        .unwrap()
        .id
}

/// One writer: `close` and `reopen` in turn on `poll`. Alone on its record it knows the
/// revision; sharing it, it reads the record first and counts the refusals.
async fn writer<S: RecordStore>(
    engine: Arc<Engine<S>>,
    poll: Uuid,
    shared: bool,
    budget: Budget,
    started: Instant,
    refused: Arc<AtomicU64>,
) -> u64 {
    let mut revision = 1;
    let mut open = true;
    let mut done = 0;
    let mut attempts = 0;
    while budget.more(started, attempts) {
        attempts += 1;
        if shared {
            let read = engine
                .get(
                    &caller(),
                    GetRecord {
                        workspace_id: "w".into(),
                        record_id: poll,
                    },
                )
                .await
                .unwrap();
            revision = read.revision;
            open = read.state.as_deref() == Some("open");
        }
        let outcome = engine
            .execute(
                &caller(),
                ExecuteCommand {
                    workspace_id: "w".into(),
                    record_id: poll,
                    command: if open { "close" } else { "reopen" }.into(),
                    expected_revision: revision,
                    idempotency_key: key(),
                    input: serde_json::Map::new(),
                },
            )
            .await;
        match outcome {
            Ok(result) => {
                revision = result.revision;
                open = !open;
                done += 1;
            }
            Err(error) if shared && error.status() == 409 => {
                refused.fetch_add(1, Ordering::Relaxed);
            }
            Err(error) => panic!("{error:?}"),
        }
    }
    done
}

/// Commands per second of `writers` writers (on one record when `shared`), and the refusals.
async fn case<S: RecordStore>(
    engine: &Arc<Engine<S>>,
    writers: usize,
    shared: bool,
    budget: Budget,
) -> (f64, u64) {
    let one = create_poll(engine).await;
    let mut polls = Vec::new();
    for _ in 0..writers {
        polls.push(if shared {
            one
        } else {
            create_poll(engine).await
        });
    }
    let refused = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = polls
        .into_iter()
        .map(|poll| {
            tokio::spawn(writer(
                Arc::clone(engine),
                poll,
                shared,
                budget,
                started,
                Arc::clone(&refused),
            ))
        })
        .collect();
    let mut done = 0;
    for task in tasks {
        done += task.await.unwrap();
    }
    let seconds = started.elapsed().as_secs_f64();
    (done as f64 / seconds, refused.load(Ordering::Relaxed))
}

async fn store_cases<S: RecordStore>(name: &str, store: S, budget: Budget) {
    let engine = Arc::new(engine(store));
    for (writers, shared, label) in [
        (1, false, "1 writer"),
        (16, false, "16 writers, 16 records"),
        (16, true, "16 writers, 1 record"),
    ] {
        let (rate, refused) = case(&engine, writers, shared, budget).await;
        let refused = if shared {
            format!(" ({refused} stale refused)")
        } else {
            String::new()
        };
        println!("command.execute  {name:<10} {label:<24} {rate:>9.0} ops/s{refused}");
    }
}

async fn postgres(budget: Budget) {
    let Ok(url) = std::env::var("RCIP_TEST_POSTGRES_URL") else {
        println!("skipped: PostgreSQL bench (RCIP_TEST_POSTGRES_URL not set)");
        return;
    };
    let base: tokio_postgres::Config = url.parse().unwrap();
    let schema = format!("rcip_bench_{}", key().replace('-', ""));
    let (admin, connection) = base.connect(NoTls).await.unwrap();
    let driver = tokio::spawn(connection);
    admin
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .await
        .unwrap();
    let mut config = base.clone();
    config.options(format!("-c search_path={schema}"));
    let store = PostgresStore::open_with(config, 16).await.unwrap();
    store_cases("postgres", store, budget).await;
    admin
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
    drop(admin);
    let _ = driver.await;
}

fn main() {
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let runs = |store: &str| named.is_empty() || named.iter().any(|n| n == store);
    // `cargo bench` passes `--bench`; a test run does not.
    let budget = if std::env::args().any(|a| a == "--bench") {
        Budget::Time(Duration::from_secs(3))
    } else {
        Budget::Commands(4)
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if runs("memory") {
            store_cases("memory", MemoryStore::new(), budget).await;
        }
        if runs("sqlite") {
            let dir =
                std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-{}", key()));
            std::fs::create_dir_all(&dir).unwrap();
            store_cases(
                "sqlite",
                SqliteStore::open(dir.join("records.db")).unwrap(),
                budget,
            )
            .await;
            std::fs::remove_dir_all(&dir).unwrap();
        }
        if runs("postgres") {
            postgres(budget).await;
        }
    });
}
