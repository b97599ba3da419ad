//! The load program (examples/load.rs) in its smoke mode, so it cannot rot: 2 clients, 20
//! requests each, `record.get` and `command.execute`, on SQLite (and on two instances sharing
//! PostgreSQL when `RCIP_TEST_POSTGRES_URL` is set and the `postgres` feature is on), each
//! case checked against the change feed and the records by the program itself.
#![cfg(feature = "serve")]
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "../examples/load.rs"]
#[allow(dead_code)] // Its `main` and the table's output are the program's, not the test's.
mod load;

#[test]
fn the_load_program_runs_and_the_feed_agrees_with_the_answers() {
    let options = load::Options::smoke(env!("CARGO_BIN_EXE_rcip").into());
    let rows = load::run(&options).unwrap_or_else(|e| panic!("{e}"));
    let sqlite: Vec<_> = rows.iter().filter(|r| r.store == "sqlite").collect();
    assert_eq!(sqlite.len(), 2, "{rows:?}");
    for row in &rows {
        // Every request answered 200: each client has a record of its own.
        assert_eq!((row.ok, &row.errors), (40, &Default::default()), "{row:?}");
        // The workspace's feed: a creation per poll, and a command event per vote.
        let commands = if row.operation == "command.execute" {
            40
        } else {
            0
        };
        assert_eq!(row.feed_events, 2 + commands, "{row:?}");
        assert!(row.p50 <= row.p99 && row.rate() > 0.0, "{row:?}");
    }
}
