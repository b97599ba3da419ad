//! rcip-mcp's relay over PostgreSQL (`PostgresStore::mcp_relay`; skipped with one line
//! without `RCIP_TEST_POSTGRES_URL`): what one instance publishes, every other instance on
//! the schema hears, once each, in order, and the publisher does not hear its own.
#![cfg(all(feature = "postgres", feature = "mcp"))]
#![allow(clippy::unwrap_used)]

mod postgres_support;
mod store_support;

use std::sync::Arc;
use std::time::Duration;

use postgres_support::TestSchema;
use rcip_mcp::Relay;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// A relay of its own store on `schema`, subscribed: what it hears comes out of the channel.
async fn listening(
    schema: &TestSchema,
) -> (rcip_database::PostgresRelay, mpsc::UnboundedReceiver<Value>) {
    let store = schema.open().await;
    let relay = store.mcp_relay();
    let (to, from) = mpsc::unbounded_channel();
    relay.subscribe(Arc::new(move |notice| {
        let _ = to.send(notice);
    }));
    (relay, from)
}

async fn next(from: &mut mpsc::UnboundedReceiver<Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(5), from.recv())
        .await
        .expect("a notice within 5 s")
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_other_instance_hears_each_notice_once_in_order() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, mut heard_by_a) = listening(&schema).await;
    let (b, mut heard_by_b) = listening(&schema).await;
    let (_c, mut heard_by_c) = listening(&schema).await;
    // The listeners are up once a notice published now is heard.
    a.publish(json!({"n": 0})).await.unwrap();
    assert_eq!(next(&mut heard_by_b).await, json!({"n": 0}));
    assert_eq!(next(&mut heard_by_c).await, json!({"n": 0}));

    for n in 1..=50 {
        a.publish(json!({"n": n, "from": "a"})).await.unwrap();
    }
    b.publish(json!({"from": "b", "large": "x".repeat(20_000)}))
        .await
        .unwrap();
    for n in 1..=50 {
        assert_eq!(next(&mut heard_by_b).await, json!({"n": n, "from": "a"}));
    }
    let mut at_c = Vec::new();
    for _ in 0..51 {
        at_c.push(next(&mut heard_by_c).await);
    }
    let from_a: Vec<&Value> = at_c.iter().filter(|n| n["from"] == "a").collect();
    assert_eq!(from_a.len(), 50);
    assert!(
        from_a.iter().enumerate().all(|(i, n)| n["n"] == i + 1),
        "in order"
    );
    // Larger than a NOTIFY payload may be: the notice travels as a row.
    let large = at_c.iter().find(|n| n["from"] == "b").unwrap();
    assert_eq!(large["large"].as_str().map(str::len), Some(20_000));
    assert_eq!(
        next(&mut heard_by_a).await["from"],
        "b",
        "A hears B's, not its own"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(heard_by_a.try_recv().is_err(), "nothing else reached A");
    assert!(heard_by_b.try_recv().is_err(), "B did not hear its own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settling_hands_over_what_was_published_before_it() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, _heard_by_a) = listening(&schema).await;
    let (b, mut heard_by_b) = listening(&schema).await;
    // Both listening (a probe went through), then one more notice and at once a settle:
    // it is handed over by the time the settle returns, woken listener or not.
    a.publish(json!({"probe": true})).await.unwrap();
    assert_eq!(next(&mut heard_by_b).await, json!({"probe": true}));
    for n in 0..20 {
        a.publish(json!({"n": n})).await.unwrap();
        b.settle().await;
        assert_eq!(
            heard_by_b.try_recv().ok(),
            Some(json!({"n": n})),
            "round {n}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_a_swept_table_starts_from_the_sequence() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    // A deployment that has relayed for long: the table swept empty, the numbers far on.
    let store = schema.open().await;
    schema
        .client()
        .await
        .batch_execute("SELECT setval('rcip_relay_seq_seq', 5000000)")
        .await
        .unwrap();
    let (_b, mut heard) = listening(&schema).await;
    let a = store.mcp_relay();
    a.publish(json!({"n": 1})).await.unwrap();
    assert_eq!(next(&mut heard).await, json!({"n": 1}));
    a.publish(json!({"n": 2})).await.unwrap();
    assert_eq!(next(&mut heard).await, json!({"n": 2}));
}

/// A row that is not JSON (written by hand, or cut) is skipped with a warning naming it:
/// nothing is heard of it, and the notices after it are heard as ever, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_that_is_not_json_is_skipped() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    // The rows are read on the relay's own task, which no thread's default subscriber
    // reaches; this is the only test of the binary that installs one.
    let log = rcip_test_support::LogCapture::new("rcip::mcp");
    tracing::subscriber::set_global_default(log.clone()).expect("the only global subscriber");
    let (a, _heard_by_a) = listening(&schema).await;
    let (b, mut heard_by_b) = listening(&schema).await;
    a.publish(json!({"n": 0})).await.unwrap();
    assert_eq!(next(&mut heard_by_b).await, json!({"n": 0}));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let now = i64::try_from(now).unwrap();
    schema
        .client()
        .await
        .execute(
            "INSERT INTO rcip_relay (origin, notice, created_at) VALUES ('by-hand', $1, $2), \
             ('by-hand', '', $2)",
            &[&"{\"cut\": ", &now],
        )
        .await
        .unwrap();
    a.publish(json!({"n": 1})).await.unwrap();
    a.publish(json!({"n": 2})).await.unwrap();
    assert_eq!(next(&mut heard_by_b).await, json!({"n": 1}));
    assert_eq!(next(&mut heard_by_b).await, json!({"n": 2}));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(heard_by_b.try_recv().is_err(), "nothing of the bad rows");
    // Both relays have read every row (A's own are skipped unread): each logged its warnings.
    a.settle().await;
    b.settle().await;
    let skipped: Vec<String> = log
        .lines()
        .into_iter()
        .filter(|line| line.starts_with("WARN message=a relay row that is not JSON was skipped"))
        .collect();
    // Each listening relay reads both rows (their origin is neither's).
    assert_eq!(skipped.len(), 4, "{skipped:?}");
    assert!(
        skipped
            .iter()
            .all(|line| line.contains(" seq=") && line.contains(" error=")),
        "{skipped:?}"
    );
}

/// One instance at a time has requests outstanding to a session's client: another waits
/// until every request of the holder gave its share back, or the turn lapsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_take_turns_asking_a_session_s_client() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, b) = (
        schema.open().await.mcp_relay(),
        schema.open().await.mcp_relay(),
    );
    let hold = Duration::from_secs(10);
    tokio::time::timeout(Duration::from_secs(2), a.take_turn("s1", hold))
        .await
        .expect("a free turn at once");
    // A second request of the same instance shares its turn.
    tokio::time::timeout(Duration::from_secs(2), a.take_turn("s1", hold))
        .await
        .expect("shared by the holder's requests");
    let waiting = tokio::spawn({
        let b = b.clone();
        async move { b.take_turn("s1", Duration::from_secs(10)).await }
    });
    // Another session's turn is its own.
    tokio::time::timeout(Duration::from_secs(2), b.take_turn("s2", hold))
        .await
        .expect("another session's turn is free");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "B waits while A asks");
    a.leave_turn("s1").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "A still has a request outstanding");
    a.leave_turn("s1").await;
    tokio::time::timeout(Duration::from_secs(2), waiting)
        .await
        .expect("B's turn once A's requests are answered")
        .unwrap();

    // A holder that never gives its turn back (killed) holds it until it lapses.
    let c = schema.open().await.mcp_relay();
    c.take_turn("s3", Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(5), a.take_turn("s3", hold))
        .await
        .expect("the lapsed turn is taken");
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "{:?}",
        started.elapsed()
    );
}

/// A turn given back wakes the instances waiting for it: a waiter that would otherwise look
/// again only after a minute takes the turn at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_given_back_wakes_its_waiters() {
    let Some(schema) = TestSchema::create().await else {
        return;
    };
    let (a, _heard_by_a) = listening(&schema).await;
    let store = schema.open().await;
    let b = store.mcp_relay().with_turn_poll(Duration::from_secs(60));
    let (to, mut heard_by_b) = mpsc::unbounded_channel();
    b.subscribe(Arc::new(move |notice| {
        let _ = to.send(notice);
    }));
    // B listens once a notice published now reaches it.
    a.publish(json!({"probe": true})).await.unwrap();
    assert_eq!(next(&mut heard_by_b).await, json!({"probe": true}));

    let hold = Duration::from_secs(120);
    a.take_turn("s1", hold).await;
    let waiting = tokio::spawn({
        let b = b.clone();
        async move { b.take_turn("s1", hold).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "B waits while A asks");
    a.leave_turn("s1").await;
    tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("woken by the give-back, not a minute later")
        .unwrap();
}
