//! rcip-mcp's [`Relay`] in PostgreSQL: what one instance tells the others (a client's answer
//! to a request another instance sent, a cancellation, a session's log level or end), as
//! rows of `rcip_relay` that `NOTIFY rcip_relay` announces.
//!
//! Why `LISTEN`/`NOTIFY` and not only polling: an answer to an elicitation waits on it, so it
//! should arrive in about a round trip, and an idle deployment should cost the database
//! nothing. The notice itself is a row (a `NOTIFY` payload is limited to 8,000 bytes, and a
//! sampling answer can be larger), read in `seq` order; a read every second besides catches
//! what a dropped listening connection missed.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;
use futures_util::StreamExt;
use rcip_mcp::{Relay, SessionStoreError};
use rcip_runtime::__private::shared::lock;
use rcip_runtime::{BoxFuture, Clock, SystemClock};
use serde_json::Value;
use tokio_postgres::{AsyncMessage, NoTls};

/// The channel of the notifications.
const CHANNEL: &str = "rcip_relay";

/// How long a notice is kept (every instance has read it long before).
const KEPT_MS: u64 = 60_000;

/// How long a gap in `seq` (a notice written but not yet committed when a later one was
/// read) is looked for before it is taken for a rolled-back write.
const GAP_MS: u64 = 10_000;

/// The longest run of missing numbers looked for (writes in flight at once, at most).
const MAX_GAP: i64 = 256;

/// How often the listener reads without being woken.
const POLL: Duration = Duration::from_secs(1);

/// Notices in the `rcip_relay` table
/// ([`PostgresStore::mcp_relay`](crate::PostgresStore::mcp_relay)); each instance makes one
/// (it knows its own notices by a random origin and skips them).
///
/// ```no_run
/// use std::sync::Arc;
/// use rcip_database::PostgresStore;
/// use rcip_mcp::HttpOptions;
///
/// async fn options() -> Result<HttpOptions, Box<dyn std::error::Error>> {
///     let store = PostgresStore::open("postgres://postgres@127.0.0.1:5432/test").await?;
///     Ok(HttpOptions::new()
///         .session_store(Arc::new(store.mcp_sessions()))
///         .event_store(Arc::new(store.mcp_events()))
///         .relay(Arc::new(store.mcp_relay())))
/// }
/// ```
#[derive(Clone)]
pub struct PostgresRelay {
    pool: Pool,
    config: tokio_postgres::Config,
    origin: Arc<str>,
    listening: Arc<std::sync::OnceLock<Arc<Listening>>>,
    /// This instance's requests waiting for a session's turn, woken when it is given back.
    waiting: Arc<Waiting>,
    /// How soon a waiter looks again without being woken (a turn that lapsed instead of
    /// being given back wakes nobody).
    turn_poll: Duration,
}

/// One waiter's share of its session's `Notify`. The map's entry goes with the last share,
/// however the wait ended: a request cancelled while it waits drops its future unfinished.
struct Waiter<'w> {
    waiting: &'w Waiting,
    session: &'w str,
    /// Always `Some` until dropped (taken there, under the map's lock).
    notify: Option<Arc<tokio::sync::Notify>>,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        let mut waiting = lock(&self.waiting.0);
        // This share goes under the lock, so two waiters ending together cannot each see
        // the other's share and both leave the entry.
        drop(self.notify.take());
        if waiting
            .get(self.session)
            .is_some_and(|notify| Arc::strong_count(notify) == 1)
        {
            waiting.remove(self.session);
        }
    }
}

/// The sessions whose turn requests of this instance wait for: one `Notify` each, woken by
/// the `rcip_turn` notification the holder's last give-back sends.
#[derive(Default)]
struct Waiting(std::sync::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Notify>>>);

impl Waiting {
    /// A share of the session's `Notify`, for one waiter of this instance.
    fn on<'w>(&'w self, session: &'w str) -> Waiter<'w> {
        let notify = Arc::clone(lock(&self.0).entry(session.to_owned()).or_default());
        Waiter {
            waiting: self,
            session,
            notify: Some(notify),
        }
    }

    /// The turn of `session` was given back: every waiter here looks again.
    fn wake(&self, session: &str) {
        if let Some(notify) = lock(&self.0).get(session) {
            notify.notify_waiters();
        }
    }
}

impl fmt::Debug for PostgresRelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresRelay")
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

fn failed(error: impl fmt::Display) -> SessionStoreError {
    SessionStoreError(format!("postgres relay: {error}"))
}

fn now_ms() -> i64 {
    i64::try_from(SystemClock.now_ms()).unwrap_or(i64::MAX)
}

impl PostgresRelay {
    pub(crate) fn on(pool: Pool, config: tokio_postgres::Config) -> Self {
        Self {
            pool,
            config,
            origin: Arc::from(uuid::Uuid::new_v4().simple().to_string()),
            listening: Arc::default(),
            waiting: Arc::default(),
            turn_poll: TURN_POLL_LISTENING,
        }
    }

    /// How soon a request waiting for a session's turn looks again when no give-back woke
    /// it: a turn whose holder stopped lapses by time, and wakes nobody (default 500 ms).
    /// Without a listening connection (before [`subscribe`](Relay::subscribe), or while it
    /// is down) waiters look every 25 ms whatever this says, and never more often.
    #[must_use]
    pub fn with_turn_poll(mut self, every: Duration) -> Self {
        self.turn_poll = every.max(TURN_POLL);
        self
    }

    async fn publish_notice(&self, notice: Value) -> Result<(), SessionStoreError> {
        let text = serde_json::to_string(&notice).map_err(failed)?;
        let client = self.pool.get().await.map_err(failed)?;
        let insert = client
            .prepare_cached(
                "WITH n AS (INSERT INTO rcip_relay (origin, notice, created_at) \
                 VALUES ($1, $2, $3) RETURNING seq) \
                 SELECT pg_notify('rcip_relay', seq::text) FROM n",
            )
            .await
            .map_err(failed)?;
        client
            .execute(&insert, &[&&*self.origin, &text, &now_ms()])
            .await
            .map_err(failed)?;
        Ok(())
    }

    /// Listens, reads and hands over, for as long as the process runs; a broken connection
    /// is opened again (after a second).
    async fn listen(self, listening: Arc<Listening>) {
        loop {
            if let Err(error) = self.listen_once(&listening).await {
                tracing::warn!(target: "rcip::mcp", %error, "the relay's listening connection failed; opening it again");
            }
            // Without a listening connection (the server refuses one, a pooler in between),
            // the notices are still read, once a second.
            if let Err(error) = self.read(&listening).await {
                tracing::warn!(target: "rcip::mcp", %error, "the relay could not be read");
            }
            tokio::time::sleep(POLL).await;
        }
    }

    async fn listen_once(&self, listening: &Listening) -> Result<(), SessionStoreError> {
        let (client, mut connection) = self.config.connect(NoTls).await.map_err(failed)?;
        let (woken, mut wake) = tokio::sync::mpsc::unbounded_channel();
        let waiting = Arc::clone(&self.waiting);
        let driver = tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(message) = messages.next().await {
                match message {
                    Ok(AsyncMessage::Notification(n)) if n.channel() == TURN_CHANNEL => {
                        waiting.wake(n.payload());
                    }
                    Ok(AsyncMessage::Notification(_)) => {
                        let _ = woken.send(());
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
        });
        client
            .batch_execute(&format!("LISTEN {CHANNEL}; LISTEN {TURN_CHANNEL}"))
            .await
            .map_err(failed)?;
        // Reads go through this connection of the relay's own while it is up: a pool busy
        // with the instance's other work does not hold back what the instances tell each
        // other.
        *lock(&listening.connection) = Some(Arc::new(client));
        let result = loop {
            if let Err(error) = self.read(listening).await {
                break Err(error);
            }
            if driver.is_finished() {
                break Err(failed("the connection closed"));
            }
            tokio::select! {
                _ = wake.recv() => {
                    // One read for every notification that came meanwhile.
                    while wake.try_recv().is_ok() {}
                }
                () = tokio::time::sleep(POLL) => {}
            }
        };
        *lock(&listening.connection) = None;
        driver.abort();
        result
    }

    /// Reads the notices after the last one read (and the gaps still open), hands over
    /// the other instances', and forgets old ones.
    async fn read(&self, listening: &Listening) -> Result<(), SessionStoreError> {
        self.read_after(listening, None).await
    }

    /// [`read`](Self::read), unless a read that began after `asked` (a count of reads
    /// begun) has ended meanwhile: it saw everything published before `asked` was taken.
    async fn read_after(
        &self,
        listening: &Listening,
        asked: Option<u64>,
    ) -> Result<(), SessionStoreError> {
        let mut reader = listening.reader.lock().await;
        if asked.is_some_and(|asked| reader.reads > asked) {
            return Ok(());
        }
        reader.reads += 1;
        let own = lock(&listening.connection).clone();
        let pooled;
        let client: &tokio_postgres::Client = match &own {
            Some(own) => own,
            None => {
                pooled = self.pool.get().await.map_err(failed)?;
                &pooled
            }
        };
        let last = match reader.last {
            Some(last) => last,
            None => {
                // Where to start: a little before the sequence's value (notices numbered
                // but not committed yet are still to be read), and only those written since
                // this instance subscribed (the read's `created_at` bound).
                let row = client
                    .query_one(
                        "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM rcip_relay_seq_seq",
                        &[],
                    )
                    .await
                    .map_err(failed)?;
                let value: i64 = row.try_get(0).map_err(failed)?;
                let last = value.saturating_sub(MAX_GAP).max(0);
                reader.last = Some(last);
                last
            }
        };
        let gaps: Vec<i64> = reader.gaps.keys().copied().collect();
        let rows = client
            .query(
                "SELECT seq, origin, notice FROM rcip_relay \
                 WHERE (seq > $1 OR seq = ANY($2)) AND created_at >= $3 ORDER BY seq",
                &[&last, &gaps, &reader.since],
            )
            .await
            .map_err(failed)?;
        let now = now_ms();
        for row in rows {
            let seq: i64 = row.try_get(0).map_err(failed)?;
            let origin: &str = row.try_get(1).map_err(failed)?;
            let notice: &str = row.try_get(2).map_err(failed)?;
            reader.saw(seq, now);
            if origin == &*self.origin {
                continue;
            }
            // Only rcip writes the table; a row that is not JSON (written by hand, or cut)
            // is skipped, and the rows after it are read as ever.
            match serde_json::from_str::<Value>(notice) {
                Ok(notice) => (listening.hear)(notice),
                Err(error) => {
                    tracing::warn!(target: "rcip::mcp", seq, %error, "a relay row that is not JSON was skipped");
                }
            }
        }
        reader
            .gaps
            .retain(|_, since| now - *since < i64::try_from(GAP_MS).unwrap_or(i64::MAX));
        if now - reader.swept > 10_000 {
            reader.swept = now;
            let sweep = "DELETE FROM rcip_relay WHERE seq IN (SELECT seq FROM rcip_relay \
                 WHERE created_at < $1 ORDER BY seq LIMIT 1000)";
            let horizon = now - i64::try_from(KEPT_MS).unwrap_or(i64::MAX);
            // Until less than a batch is left (at most ten batches a sweep).
            for _ in 0..10 {
                if client.execute(sweep, &[&horizon]).await.map_err(failed)? < 1000 {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// A subscribed relay's listener: who hears, and where the reading stands (one reader at a
/// time: the listening task, or a caller settling).
struct Listening {
    hear: Arc<dyn Fn(Value) + Send + Sync>,
    reader: tokio::sync::Mutex<Reader>,
    /// The listening connection, while it is up.
    connection: std::sync::Mutex<Option<Arc<tokio_postgres::Client>>>,
}

/// Where the reading stands: the highest `seq` read, and the lower ones not read yet (a
/// later write committed first), each with when it was first missed.
#[derive(Default)]
struct Reader {
    /// When the instance subscribed (epoch ms): it hears the notices written since.
    since: i64,
    /// How many reads have begun.
    reads: u64,
    last: Option<i64>,
    gaps: BTreeMap<i64, i64>,
    swept: i64,
}

impl Reader {
    fn saw(&mut self, seq: i64, now: i64) {
        if self.gaps.remove(&seq).is_some() {
            return;
        }
        let last = self.last.unwrap_or(0);
        if seq > last {
            // A write that committed after a later one leaves a short gap; a long one is
            // numbers used by writes that rolled back (or a sequence moved on), not looked for.
            if seq - last <= MAX_GAP {
                for missing in (last + 1)..seq {
                    self.gaps.insert(missing, now);
                }
            }
            self.last = Some(seq);
        }
    }
}

/// The database server's clock in epoch milliseconds (turns lapse by it).
const DB_NOW_MS: &str = "(extract(epoch FROM statement_timestamp()) * 1000)::bigint";

/// How soon an instance waiting for a session's turn looks again without a listening
/// connection, which would wake it when the turn is given back.
const TURN_POLL: Duration = Duration::from_millis(25);

/// [`PostgresRelay::with_turn_poll`]'s default: with a listening connection, a give-back
/// wakes the waiters, and only a lapsed turn is found by looking.
const TURN_POLL_LISTENING: Duration = Duration::from_millis(500);

/// The channel a turn's last give-back notifies, with the session id as its payload.
const TURN_CHANNEL: &str = "rcip_turn";

impl PostgresRelay {
    /// One try at the turn on `session`: whether this instance holds it now.
    async fn try_turn(&self, session: &str, hold: Duration) -> Result<bool, SessionStoreError> {
        let hold = i64::try_from(hold.as_millis()).unwrap_or(i64::MAX / 2);
        let client = self.pool.get().await.map_err(failed)?;
        let take = client
            .prepare_cached(&format!(
                "INSERT INTO rcip_mcp_turns AS t (session_id, holder, holders, until) \
                 VALUES ($1, $2, 1, {DB_NOW_MS} + $3) ON CONFLICT (session_id) DO UPDATE SET \
                 holders = CASE WHEN t.holder = EXCLUDED.holder AND t.until >= {DB_NOW_MS} \
                 THEN t.holders + 1 ELSE 1 END, \
                 until = GREATEST(CASE WHEN t.holder = EXCLUDED.holder THEN t.until ELSE 0 END, \
                 EXCLUDED.until), \
                 holder = EXCLUDED.holder \
                 WHERE t.holder = EXCLUDED.holder OR t.holders <= 0 OR t.until < {DB_NOW_MS} \
                 RETURNING 1"
            ))
            .await
            .map_err(failed)?;
        let taken = client
            .query_opt(&take, &[&session, &&*self.origin, &hold])
            .await
            .map_err(failed)?;
        Ok(taken.is_some())
    }

    async fn take(&self, session: &str, hold: Duration) {
        let waiter = self.waiting.on(session);
        if let Some(notify) = waiter.notify.as_deref() {
            self.take_woken(session, hold, notify).await;
        }
    }

    async fn take_woken(&self, session: &str, hold: Duration, notify: &tokio::sync::Notify) {
        let deadline = tokio::time::Instant::now() + hold;
        loop {
            // Listening for the give-back before looking: one sent between the look and
            // the wait still wakes it.
            let woken = notify.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            match self.try_turn(session, hold).await {
                Ok(true) => return,
                Ok(false) if tokio::time::Instant::now() < deadline => {
                    let listening = self
                        .listening
                        .get()
                        .is_some_and(|l| lock(&l.connection).is_some());
                    let poll = if listening { self.turn_poll } else { TURN_POLL };
                    let until = deadline.min(tokio::time::Instant::now() + poll);
                    tokio::select! {
                        () = woken => {}
                        () = tokio::time::sleep_until(until) => {}
                    }
                }
                Ok(false) => {
                    tracing::warn!(target: "rcip::mcp", "another instance kept a session's turn past the wait; asking anyway");
                    return;
                }
                Err(error) => {
                    tracing::warn!(target: "rcip::mcp", %error, "a session's turn could not be taken; asking anyway");
                    return;
                }
            }
        }
    }

    async fn leave(&self, session: &str) -> Result<(), SessionStoreError> {
        let client = self.pool.get().await.map_err(failed)?;
        // The last give-back tells the instances waiting for the turn.
        let leave = client
            .prepare_cached(&format!(
                "WITH given AS (UPDATE rcip_mcp_turns SET holders = GREATEST(holders - 1, 0) \
                 WHERE session_id = $1 AND holder = $2 RETURNING holders) \
                 SELECT pg_notify('{TURN_CHANNEL}', $1) FROM given WHERE holders = 0"
            ))
            .await
            .map_err(failed)?;
        client
            .query(&leave, &[&session, &&*self.origin])
            .await
            .map_err(failed)?;
        let sweep = client
            .prepare_cached(&format!(
                "DELETE FROM rcip_mcp_turns WHERE session_id IN (SELECT session_id FROM \
                 rcip_mcp_turns WHERE until < {DB_NOW_MS} - 3600000 LIMIT 100)"
            ))
            .await
            .map_err(failed)?;
        client.execute(&sweep, &[]).await.map_err(failed)?;
        Ok(())
    }
}

impl Relay for PostgresRelay {
    fn publish(&self, notice: Value) -> BoxFuture<Result<(), SessionStoreError>> {
        let relay = self.clone();
        Box::pin(async move { relay.publish_notice(notice).await })
    }

    fn subscribe(&self, hear: Arc<dyn Fn(Value) + Send + Sync>) {
        let listening = Arc::new(Listening {
            hear,
            reader: tokio::sync::Mutex::new(Reader {
                since: now_ms(),
                ..Reader::default()
            }),
            connection: std::sync::Mutex::new(None),
        });
        if self.listening.set(Arc::clone(&listening)).is_ok() {
            tokio::spawn(self.clone().listen(listening));
        }
    }

    fn settle(&self) -> BoxFuture<()> {
        let relay = self.clone();
        Box::pin(async move {
            let Some(listening) = relay.listening.get() else {
                return;
            };
            // Concurrent settles share a read: one begun after this call saw all it must.
            let asked = listening.reader.lock().await.reads;
            if let Err(error) = relay.read_after(listening, Some(asked)).await {
                tracing::warn!(target: "rcip::mcp", %error, "the relay could not be read");
            }
        })
    }

    fn take_turn(&self, session: &str, hold: Duration) -> BoxFuture<()> {
        let (relay, session) = (self.clone(), session.to_owned());
        Box::pin(async move { relay.take(&session, hold).await })
    }

    fn leave_turn(&self, session: &str) -> BoxFuture<()> {
        let (relay, session) = (self.clone(), session.to_owned());
        Box::pin(async move {
            if let Err(error) = relay.leave(&session).await {
                tracing::warn!(target: "rcip::mcp", %error, "a session's turn was not given back; it lapses");
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(waiting: &Waiting) -> usize {
        lock(&waiting.0).len()
    }

    /// An entry lasts while a waiter of its session does, however the waiters end.
    #[test]
    fn a_session_s_entry_goes_with_its_last_waiter() {
        let waiting = Waiting::default();
        let first = waiting.on("s1");
        let second = waiting.on("s1");
        let other = waiting.on("s2");
        assert_eq!(entries(&waiting), 2);
        drop(first);
        assert_eq!(entries(&waiting), 2, "s1 still has a waiter");
        drop(second);
        assert_eq!(entries(&waiting), 1, "s1 has none");
        // A wait abandoned halfway (its future dropped) drops its waiter too.
        let mut abandoned = Box::pin(async {
            let _waiter = waiting.on("s3");
            std::future::pending::<()>().await;
        });
        assert!(
            futures_util::FutureExt::now_or_never(abandoned.as_mut()).is_none(),
            "it waits"
        );
        assert_eq!(entries(&waiting), 2, "s3 has a waiter");
        drop(abandoned);
        assert_eq!(entries(&waiting), 1);
        drop(other);
        assert_eq!(entries(&waiting), 0);
    }
}
