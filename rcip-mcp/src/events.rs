//! Resumable streams (2025-11-25, SEP-1699): every event the endpoint sends on a session's
//! event streams is kept in an [`EventStore`] (rmcp's trait) under a globally unique id, so
//! a client that lost its stream reconnects with `Last-Event-ID` and gets what it missed,
//! the call's result included, even when the result came while it was away.
//! [`MemoryEventStore`] keeps them in this process; a deployment of several instances
//! shares one store.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::stream;
use rmcp::model::ServerJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::store::{
    EventId, EventStore, EventStoreError, EventStream,
};
use tokio::sync::watch;

use crate::context::lock;

/// What one stream keeps.
struct Log {
    /// The stream's unguessable part of every event id: an id names its event only with it,
    /// so nobody replays a stream whose ids they were not sent (rmcp's replay does not check
    /// whose session a stream is).
    secret: String,
    events: VecDeque<(u64, ServerSseMessage)>,
    /// The stream's last event was a response: nothing follows it.
    closed: bool,
    touched: Instant,
}

struct Logs {
    next: u64,
    /// Which stream each kept event belongs to.
    streams_of: BTreeMap<u64, String>,
    streams: HashMap<String, Log>,
    /// Events kept, over every stream.
    total: usize,
    /// The streams in the order they began: the first to go beyond the limit.
    order: VecDeque<String>,
    /// When idle streams were last looked for (at most once a second: a look visits them
    /// all, which a single event must not pay for).
    swept: Instant,
}

/// The events of the endpoint's streams in this process's memory: at most `per_stream` per
/// stream (the oldest go first), `streams` streams and 16,384 events in all (the oldest
/// streams go first), each forgotten after `idle` without a new event. Keeping an event
/// costs the same however many are kept.
///
/// Event ids are unguessable (128 random bits per stream, then a sequence number): rmcp
/// replays by id alone, whoever asks, so an id is what proves a client was sent the stream.
///
/// A replay yields the stream's events after the one named, then, while the stream is still
/// open (its call has not answered yet), the events written later, until the answer.
///
/// ```
/// use std::sync::Arc;
/// use rcip_mcp::{HttpOptions, MemoryEventStore};
/// let options = HttpOptions::new().event_store(Arc::new(MemoryEventStore::new()));
/// # let _ = options;
/// ```
pub struct MemoryEventStore {
    logs: Arc<Mutex<Logs>>,
    changed: watch::Sender<u64>,
    per_stream: usize,
    streams: usize,
    total: usize,
    idle: Duration,
}

impl std::fmt::Debug for MemoryEventStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryEventStore")
            .field("per_stream", &self.per_stream)
            .field("streams", &self.streams)
            .field("idle", &self.idle)
            .finish_non_exhaustive()
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryEventStore {
    /// 256 events per stream, 4,096 streams, forgotten after 5 minutes idle.
    #[must_use]
    pub fn new() -> Self {
        Self::with_limits(256, 4096, Duration::from_secs(300))
    }

    /// Other limits.
    #[must_use]
    pub fn with_limits(per_stream: usize, streams: usize, idle: Duration) -> Self {
        let (changed, _) = watch::channel(0);
        let logs = Logs {
            next: 0,
            streams_of: BTreeMap::new(),
            streams: HashMap::new(),
            total: 0,
            order: VecDeque::new(),
            swept: Instant::now(),
        };
        Self {
            logs: Arc::new(Mutex::new(logs)),
            changed,
            per_stream: per_stream.max(1),
            streams: streams.max(1),
            // Most streams are a call's two events; this bounds the whole, however the
            // events spread over the streams.
            total: per_stream.max(1).saturating_mul(16).max(16_384),
            idle,
        }
    }

    /// Forgets the oldest streams beyond the limit, and (once a second) idle ones.
    fn evict(&self, logs: &mut Logs, now: Instant) {
        if now.duration_since(logs.swept) > Duration::from_secs(1) {
            logs.swept = now;
            let idle = self.idle;
            let gone: Vec<String> = logs
                .streams
                .iter()
                .filter(|(_, log)| now.duration_since(log.touched) > idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in gone {
                forget(logs, &id);
            }
            let Logs { order, streams, .. } = logs;
            order.retain(|id| streams.contains_key(id));
        }
        while logs.streams.len() > self.streams || logs.total > self.total {
            let Some(oldest) = logs.order.pop_front() else {
                break;
            };
            forget(logs, &oldest);
        }
    }
}

fn forget(logs: &mut Logs, stream: &str) {
    if let Some(log) = logs.streams.remove(stream) {
        logs.total -= log.events.len();
        for (seq, _) in log.events {
            logs.streams_of.remove(&seq);
        }
    }
}

/// The refusal of an event id no store can replay from (expired, never sent, or naming a
/// stream with another secret): one text for every case, so an id tells a guesser nothing.
#[must_use]
pub fn unknown_event() -> EventStoreError {
    EventStoreError::from("no such event (expired, never sent, or not this stream's)")
}

/// An event id as the stores write it, `SECRET-SEQ`: the stream's secret and the event's
/// number; [`unknown_event`] for anything else.
///
/// ```
/// let (secret, seq) = rcip_mcp::event_id_parts("a1b2-17").unwrap();
/// assert_eq!((secret, seq), ("a1b2", 17));
/// assert!(rcip_mcp::event_id_parts("17").is_err());
/// ```
///
/// # Errors
///
/// [`unknown_event`] when the id has no `-` or no number after the last one.
pub fn event_id_parts(id: &str) -> Result<(&str, u64), EventStoreError> {
    let (secret, seq) = id.rsplit_once('-').ok_or_else(unknown_event)?;
    Ok((secret, seq.parse().map_err(|_| unknown_event())?))
}

/// Whether an event ends its stream: a request's stream ends with its answer (a response or
/// an error). An [`EventStore`] replaying a stream follows it until such an event.
///
/// ```
/// use rcip_mcp::ends_stream;
/// use rcip_mcp::rmcp::transport::streamable_http_server::session::ServerSseMessage;
/// let priming = ServerSseMessage::retry(std::time::Duration::from_secs(3));
/// assert!(!ends_stream(&priming));
/// ```
#[must_use]
pub fn ends_stream(event: &ServerSseMessage) -> bool {
    event.message.as_deref().is_some_and(|message| {
        matches!(
            message,
            ServerJsonRpcMessage::Response(_) | ServerJsonRpcMessage::Error(_)
        )
    })
}

/// Where a replay stands.
struct Replay {
    logs: Arc<Mutex<Logs>>,
    changed: watch::Receiver<u64>,
    stream: String,
    after: u64,
    pending: VecDeque<ServerSseMessage>,
    done: bool,
}

impl Replay {
    /// The next event, waiting for one while the stream is open.
    async fn next(mut self) -> Option<(ServerSseMessage, Self)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((event, self));
            }
            if self.done {
                return None;
            }
            self.changed.borrow_and_update();
            {
                let logs = lock(&self.logs);
                let log = logs.streams.get(&self.stream)?;
                for (seq, event) in &log.events {
                    if *seq > self.after {
                        self.after = *seq;
                        self.pending.push_back(event.clone());
                    }
                }
                self.done = log.closed;
            }
            if self.pending.is_empty() && !self.done && self.changed.changed().await.is_err() {
                return None;
            }
        }
    }
}

#[async_trait::async_trait]
impl EventStore for MemoryEventStore {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<EventId, EventStoreError> {
        let now = Instant::now();
        let (seq, id) = {
            let mut logs = lock(&self.logs);
            logs.next += 1;
            let seq = logs.next;
            let closes = ends_stream(event);
            if !logs.streams.contains_key(stream_id) {
                logs.order.push_back(stream_id.to_owned());
            }
            let log = logs
                .streams
                .entry(stream_id.to_owned())
                .or_insert_with(|| Log {
                    secret: rcip_runtime::__private::shared::random_id(""),
                    events: VecDeque::new(),
                    closed: false,
                    touched: now,
                });
            let id = format!("{}-{seq}", log.secret);
            let mut kept = event.clone();
            kept.event_id = Some(id.clone());
            log.events.push_back((seq, kept));
            log.closed |= closes;
            log.touched = now;
            let dropped = (log.events.len() > self.per_stream)
                .then(|| log.events.pop_front())
                .flatten();
            logs.total += 1;
            if let Some((old, _)) = dropped {
                logs.total -= 1;
                logs.streams_of.remove(&old);
            }
            logs.streams_of.insert(seq, stream_id.to_owned());
            self.evict(&mut logs, now);
            (seq, id)
        };
        self.changed.send_replace(seq);
        Ok(id)
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        let unknown = unknown_event;
        let (secret, after) = event_id_parts(last_event_id)?;
        let stream = {
            let logs = lock(&self.logs);
            let stream = logs.streams_of.get(&after).ok_or_else(unknown)?;
            let log = logs.streams.get(stream).ok_or_else(unknown)?;
            if log.secret != secret {
                return Err(unknown());
            }
            stream.clone()
        };
        let replay = Replay {
            logs: self.logs.clone(),
            changed: self.changed.subscribe(),
            stream,
            after,
            pending: VecDeque::new(),
            done: false,
        };
        Ok(Box::pin(stream::unfold(replay, Replay::next)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use futures_util::StreamExt;
    use rmcp::model::{NumberOrString, ServerResult};

    use super::*;

    fn notice() -> ServerSseMessage {
        ServerSseMessage::retry(Duration::from_secs(3))
    }

    fn answer() -> ServerSseMessage {
        ServerSseMessage::from_message(ServerJsonRpcMessage::response(
            ServerResult::empty(()),
            NumberOrString::Number(1),
        ))
    }

    #[tokio::test]
    async fn a_replay_ends_at_the_answer_and_old_events_and_streams_are_forgotten() {
        let store = MemoryEventStore::with_limits(2, 2, Duration::from_secs(60));
        let first = store.store_event("s1", &notice()).await.unwrap();
        store.store_event("s1", &notice()).await.unwrap();
        store.store_event("s1", &answer()).await.unwrap();
        // Two per stream: the first event is gone, the second replays the answer and ends.
        assert!(store.replay_events_after(&first).await.is_err());
        let (secret, seq) = first.rsplit_once('-').unwrap();
        let second = format!("{secret}-{}", seq.parse::<u64>().unwrap() + 1);
        // The sequence number alone, or another secret, names nothing.
        let guessed = format!("{}-{}", "0".repeat(32), seq.parse::<u64>().unwrap() + 1);
        assert!(store.replay_events_after(&guessed).await.is_err());
        assert!(
            store
                .replay_events_after(&(seq.parse::<u64>().unwrap() + 1).to_string())
                .await
                .is_err()
        );
        let replayed: Vec<ServerSseMessage> = store
            .replay_events_after(&second)
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(replayed.len(), 1);
        assert!(ends_stream(&replayed[0]));
        // Two streams: a third one pushes out the oldest.
        store.store_event("s2", &notice()).await.unwrap();
        let third = store.store_event("s3", &notice()).await.unwrap();
        assert!(store.replay_events_after(&second).await.is_err());
        assert!(store.replay_events_after(&third).await.is_ok());
        assert!(store.replay_events_after("not-an-id").await.is_err());
    }

    #[tokio::test]
    async fn a_replay_of_an_open_stream_follows_it_to_its_answer() {
        let store = Arc::new(MemoryEventStore::new());
        let first = store.store_event("s", &notice()).await.unwrap();
        let mut replay = store.replay_events_after(&first).await.unwrap();
        let writer = store.clone();
        tokio::spawn(async move {
            writer.store_event("s", &notice()).await.unwrap();
            writer.store_event("s", &answer()).await.unwrap();
        });
        let next = replay.next().await.unwrap();
        assert!(!ends_stream(&next));
        assert!(ends_stream(&replay.next().await.unwrap()));
        assert!(replay.next().await.is_none());
    }
}
