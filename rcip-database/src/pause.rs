//! The durable stores' test hook: a commit held after writing everything, before its `COMMIT`
//! (so a test can make commits finish out of order on purpose, as in `tests/feed_order.rs`).

use std::sync::Mutex;

use tokio::sync::oneshot;

use rcip_runtime::__private::shared::lock;

/// Where a store keeps the pause its next commit stops at (none most of the time).
#[derive(Debug, Default)]
pub(crate) struct PauseSlot(Mutex<Option<PausePoint>>);

#[derive(Debug)]
pub(crate) struct PausePoint {
    reached: oneshot::Sender<()>,
    release: oneshot::Receiver<()>,
}

impl PauseSlot {
    /// Arms the slot: the next commit that takes it stops until the pause is released.
    pub(crate) fn arm(&self) -> CommitPause {
        let (reached_tx, reached) = oneshot::channel();
        let (release, release_rx) = oneshot::channel();
        *lock(&self.0) = Some(PausePoint {
            reached: reached_tx,
            release: release_rx,
        });
        CommitPause { reached, release }
    }

    /// The armed pause, disarming the slot.
    pub(crate) fn take(&self) -> Option<PausePoint> {
        lock(&self.0).take()
    }
}

impl PausePoint {
    /// Says the commit is here and waits for the release (an async commit).
    #[cfg(feature = "postgres")]
    pub(crate) async fn wait(self) {
        let _ = self.reached.send(());
        let _ = self.release.await;
    }

    /// Says the commit is here and blocks the thread until the release (a commit on a
    /// thread of its own, never an executor's).
    #[cfg(feature = "sqlite")]
    pub(crate) fn wait_blocking(self) {
        let _ = self.reached.send(());
        let _ = self.release.blocking_recv();
    }
}

/// A commit held before its `COMMIT` (see `PostgresStore::pause_next_commit` and
/// `SqliteStore::pause_next_commit`).
#[doc(hidden)]
#[derive(Debug)]
pub struct CommitPause {
    reached: oneshot::Receiver<()>,
    release: oneshot::Sender<()>,
}

impl CommitPause {
    /// Waits until the paused commit has written everything and stopped.
    pub async fn reached(&mut self) {
        let _ = (&mut self.reached).await;
    }

    /// Lets the commit go on to its `COMMIT`.
    pub fn release(self) {
        let _ = self.release.send(());
    }
}
