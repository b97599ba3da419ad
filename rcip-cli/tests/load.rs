//! The load program (examples/load.rs) in its smoke mode, so it cannot rot: 2 clients, 20
//! requests each, `record.get` and `command.execute` (on a record each and on one shared), on
//! SQLite (and on two instances sharing
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
    assert_eq!(sqlite.len(), 3, "{rows:?}");
    for row in &rows {
        let stale = row.errors.get("409 STALE_REVISION").copied().unwrap_or(0);
        if row.records == 1 {
            // Both clients on one record: what one loses to the other is refused 409, and
            // nothing else is.
            assert_eq!(row.ok + stale, 40, "{row:?}");
            assert!(row.ok > 0 && row.errors.len() <= 1, "{row:?}");
        } else {
            // A record per client: every request answered 200.
            assert_eq!((row.ok, &row.errors), (40, &Default::default()), "{row:?}");
        }
        // The workspace's feed: a creation per poll, and a command event per vote.
        let commands = if row.operation == "command.execute" {
            row.ok
        } else {
            0
        };
        assert_eq!(row.feed_events, row.records + commands, "{row:?}");
        assert!(row.p50 <= row.p99 && row.rate() > 0.0, "{row:?}");
    }
}

/// The check after each case is what makes the figures trustworthy: it must find a commit the
/// clients were told of that the feed lacks, and one in the feed no client was told of.
#[test]
fn the_check_finds_a_lost_commit_and_one_nobody_was_told_of() {
    let (instance, _dir) = load::sqlite_instance(env!("CARGO_BIN_EXE_rcip").as_ref()).unwrap();
    let records = load::set_up(&instance.address, "check", 1).unwrap();
    let ledger = load::Ledger {
        record_id: records[0].clone(),
        ..Default::default()
    };
    let measured = load::client(
        &instance.address,
        "check",
        "command.execute",
        0,
        ledger,
        load::Budget::Requests(3),
        &std::sync::Barrier::new(1),
    )
    .unwrap();
    let ledger = measured.ledger;
    assert_eq!(ledger.committed, [2, 3, 4]);
    // As told: the creation and three votes.
    assert_eq!(load::verify(&instance.address, "check", &[&ledger]), Ok(4));

    let mut lost = ledger.clone();
    lost.committed.push(5);
    let problems = load::verify(&instance.address, "check", &[&lost]).unwrap_err();
    assert!(problems.contains("missing revisions [5]"), "{problems}");

    let mut untold = ledger;
    untold.committed.pop();
    let problems = load::verify(&instance.address, "check", &[&untold]).unwrap_err();
    assert!(problems.contains("not answered [4]"), "{problems}");
    assert!(
        problems.contains("revision 4 after 2 commands"),
        "{problems}"
    );
}

/// The acceptance figures: PostgreSQL's rate over SQLite's per operation at each client
/// count, and `command.execute`'s p99 on PostgreSQL, each with its verdict.
#[test]
fn the_ratios_hold_postgres_to_the_embedded_store() {
    let row = |store, operation, ok, p99_ms| load::Row {
        store,
        instances: 1,
        operation,
        clients: 32,
        records: 32,
        ok,
        elapsed: std::time::Duration::from_secs(1),
        p50: std::time::Duration::from_millis(1),
        p99: std::time::Duration::from_millis(p99_ms),
        errors: Default::default(),
        feed_events: 0,
    };
    let lines = load::ratios(&[
        row("sqlite", "record.get", 1000, 5),
        row("postgres", "record.get", 500, 9),
        row("sqlite", "command.execute", 1000, 5),
        row("postgres", "command.execute", 300, 70),
    ]);
    assert_eq!(
        lines,
        [
            "postgres (2 instances) / sqlite (1), 32 clients: record.get 0.50 (>= 0.40: met); \
             command.execute 0.30 (>= 0.40: NOT met); \
             command.execute p99 on postgres 70.0 ms (<= 60: NOT met)"
        ]
    );
    // Without both stores' rows there is nothing to compare.
    assert!(load::ratios(&[row("sqlite", "record.get", 1000, 5)]).is_empty());
}
