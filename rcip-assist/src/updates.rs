//! Change notification: what a surface subscribes to instead of polling (the reference
//! re-renders its React hook; a headless controller tells its listeners).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};

use serde::Serialize;

use super::callbacks::PendingConfirmation;
use super::protocol::AssistMessage;
use super::status::{AssistStatus, InputStatus};
use rcip_runtime::__private::shared::{contain, lock};
use rcip_runtime::Subscription;

/// One change of an [`Assist`](super::Assist)'s state.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "camelCase")]
#[non_exhaustive]
pub enum AssistUpdate {
    /// A message was appended to the conversation.
    Message(AssistMessage),
    /// The conversation's status changed.
    Status(AssistStatus),
    /// The input side's status changed (see [`Assist::input_error`](super::Assist::input_error)
    /// when it is `error`).
    Input(InputStatus),
    /// A confirmation now waits for the user.
    ConfirmationPending(Box<PendingConfirmation>),
    /// The confirmation was answered, declined by a cancellation, or abandoned.
    ConfirmationEnded,
    /// A turn or input operation began (`true`) or ended (`false`); new input is ignored
    /// while busy.
    Busy(bool),
    /// The conversation was reset to its welcome message, the statuses to `idle` and the
    /// input error to none.
    Cleared,
}

type Listener = Arc<dyn Fn(&AssistUpdate) + Send + Sync>;

/// The subscribed listeners, and the updates waiting to reach them.
///
/// Updates are queued while the state lock is held, so the queue has the order in which the
/// state changed, and delivered after it is released by one task at a time (whichever finds
/// nobody delivering; the others only queue). So listeners hear every change once, in
/// order, never under the state lock, and may call back into Assist: what they cause is
/// queued and delivered after them.
#[derive(Default)]
pub(super) struct Listeners {
    table: Mutex<(u64, Vec<(u64, Listener)>)>,
    queue: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    updates: VecDeque<AssistUpdate>,
    delivering: bool,
}

impl Listeners {
    /// Adds a listener; the subscription removes it (if `listeners` still exists).
    pub(super) fn subscribe(
        listeners: &Arc<Listeners>,
        listener: impl Fn(&AssistUpdate) + Send + Sync + 'static,
    ) -> Subscription {
        let id = {
            let mut table = lock(&listeners.table);
            table.0 += 1;
            let id = table.0;
            table.1.push((id, Arc::new(listener)));
            id
        };
        let weak: Weak<Listeners> = Arc::downgrade(listeners);
        Subscription::new(move || {
            if let Some(listeners) = weak.upgrade() {
                lock(&listeners.table).1.retain(|(other, _)| *other != id);
            }
        })
    }

    /// Queues updates; called with the state lock held.
    pub(super) fn enqueue(&self, updates: Vec<AssistUpdate>) {
        if !updates.is_empty() {
            lock(&self.queue).updates.extend(updates);
        }
    }

    /// Delivers the queue unless another task is delivering it; called without the state
    /// lock. A panicking listener is skipped.
    pub(super) fn deliver(&self) {
        {
            let mut queue = lock(&self.queue);
            if queue.delivering || queue.updates.is_empty() {
                return;
            }
            queue.delivering = true;
        }
        loop {
            let batch: Vec<AssistUpdate> = {
                let mut queue = lock(&self.queue);
                if queue.updates.is_empty() {
                    queue.delivering = false;
                    return;
                }
                queue.updates.drain(..).collect()
            };
            let listeners: Vec<Listener> =
                lock(&self.table).1.iter().map(|(_, l)| l.clone()).collect();
            for update in &batch {
                for listener in &listeners {
                    let _ = contain(|| listener(update));
                }
            }
        }
    }
}
