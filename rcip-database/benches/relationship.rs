//! `command.execute` on the in-memory and the SQLite store (an in-memory SQLite database and
//! a file), criterion reporting commands per second. Each iteration runs `close` then
//! `reopen` on one poll (two commands: input check, state, guard, `set_data`, schema re-check,
//! events, work intent, commit).
#![allow(missing_docs, clippy::unwrap_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcip_database::SqliteStore;
use rcip_records::{Actor, Caller, Engine, ExecuteCommand, MemoryStore, RecordStore};
use rcip_relationship::parse_package;
use serde_json::json;

fn engine<S: RecordStore>(store: S) -> Engine<S> {
    let package = parse_package(include_str!("../../examples/programs/polls.json")).unwrap();
    Engine::new(store).with_program(package).unwrap()
}

fn bench_store<S: RecordStore>(c: &mut Criterion, name: &str, store: S) {
    let engine = engine(store);
    // One current-thread runtime: what the benchmark measures is the engine and the store.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let actor = Caller::human(Actor::new("bench"));
    let poll = runtime
        .block_on(
            engine.create(
                &actor,
                serde_json::from_value(json!({
                    "workspace_id": "w", "collection_id": "c", "namespace": "polls", "type": "poll",
                    "data": {"question": "Lunch?", "options": ["a", "b"], "vote_count": 3},
                    "idempotency_key": "create",
                }))
                .unwrap(),
            ),
        )
        .unwrap();
    let mut revision = 1;
    let mut n = 0u64;
    let mut group = c.benchmark_group("command_execute");
    group.throughput(Throughput::Elements(2));
    group.bench_function(name, |b| {
        b.iter(|| {
            for command in ["close", "reopen"] {
                n += 1;
                let result = runtime
                    .block_on(engine.execute(
                        &actor,
                        ExecuteCommand {
                            workspace_id: "w".into(),
                            record_id: poll.id,
                            command: command.into(),
                            expected_revision: revision,
                            idempotency_key: format!("k{n}"),
                            input: serde_json::Map::new(),
                        },
                    ))
                    .unwrap();
                revision = result.revision;
            }
        });
    });
    group.finish();
}

fn command_execute(c: &mut Criterion) {
    bench_store(c, "memory", MemoryStore::new());
    bench_store(c, "sqlite_memory", SqliteStore::in_memory().unwrap());
    let dir = std::env::temp_dir().join(format!("rcip-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    bench_store(
        c,
        "sqlite_file",
        SqliteStore::open(dir.join("bench.db")).unwrap(),
    );
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(benches, command_execute);
criterion_main!(benches);
