//! The default store: everything in memory, behind one mutex. Every call answers at once
//! (its futures are already resolved).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use uuid::Uuid;

use super::record::Record;
use super::store::{
    ChangeEvent, Commit, CommitError, IdempotencyEntry, RecordStore, ScanFilter, StoreError,
    StoreFuture,
};
use rcip_runtime::__private::shared::lock;

/// A store future already resolved: memory answers at once.
fn ready<'a, T: Send + 'a>(value: T) -> StoreFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

/// Records, events and idempotency entries in memory: the default, no setup. A commit holds
/// the one lock for its whole check-and-apply, so concurrent commits are serialized and a
/// stale one is refused.
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// id -> (insertion position, record).
    records: HashMap<Uuid, (u64, Record)>,
    /// insertion position -> id.
    order: BTreeMap<u64, Uuid>,
    events: Vec<ChangeEvent>,
    idempotency: HashMap<(String, String), IdempotencyEntry>,
}

impl MemoryStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl RecordStore for MemoryStore {
    fn get<'a>(
        &'a self,
        workspace_id: &'a str,
        id: Uuid,
    ) -> StoreFuture<'a, Result<Option<Record>, StoreError>> {
        let inner = lock(&self.inner);
        ready(Ok(inner
            .records
            .get(&id)
            .filter(|(_, r)| r.workspace_id == workspace_id)
            .map(|(_, r)| r.clone())))
    }

    fn scan<'a>(
        &'a self,
        workspace_id: &'a str,
        filter: &'a ScanFilter,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<(u64, Record)>, StoreError>> {
        let inner = lock(&self.inner);
        ready(Ok(inner
            .order
            .range(after.saturating_add(1)..)
            .filter_map(|(_, id)| inner.records.get(id))
            .filter(|(_, r)| r.workspace_id == workspace_id && filter.matches(r))
            .take(limit)
            .map(|(position, r)| (*position, r.clone()))
            .collect()))
    }

    fn events<'a>(
        &'a self,
        workspace_id: &'a str,
        record: Option<Uuid>,
        after: u64,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<ChangeEvent>, StoreError>> {
        let inner = lock(&self.inner);
        // Event ids are 1.. in order, so `after` is also an index.
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(inner.events.len());
        ready(Ok(inner.events[start..]
            .iter()
            .filter(|e| e.workspace_id == workspace_id && record.is_none_or(|r| e.record_id == r))
            .take(limit)
            .cloned()
            .collect()))
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> StoreFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        ready(Ok(lock(&self.inner)
            .idempotency
            .get(&(workspace_id.to_owned(), key.to_owned()))
            .cloned()))
    }

    fn commit(&self, commit: Commit) -> StoreFuture<'_, Result<Vec<u64>, CommitError>> {
        ready(self.apply(commit))
    }
}

impl MemoryStore {
    fn apply(&self, commit: Commit) -> Result<Vec<u64>, CommitError> {
        let mut inner = lock(&self.inner);
        let Inner {
            records,
            order,
            events,
            idempotency,
        } = &mut *inner;
        let entry = &commit.idempotency;
        commit.check(
            idempotency
                .get(&(entry.workspace_id.clone(), entry.key.clone()))
                .cloned(),
            records.get(&commit.record.id).map(|(_, r)| r.revision),
        )?;
        let position = match records.get(&commit.record.id) {
            Some((position, _)) => *position,
            None => {
                let position = order.last_key_value().map_or(1, |(p, _)| p + 1);
                order.insert(position, commit.record.id);
                position
            }
        };
        records.insert(commit.record.id, (position, commit.record));
        let mut ids = Vec::with_capacity(commit.events.len());
        for mut event in commit.events {
            event.id = events.len() as u64 + 1;
            ids.push(event.id);
            events.push(event);
        }
        let entry = commit.idempotency;
        idempotency.insert((entry.workspace_id.clone(), entry.key.clone()), entry);
        Ok(ids)
    }
}
