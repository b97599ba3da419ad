//! Change notification: what a surface subscribes to instead of polling (the reference
//! re-renders its React hook; a headless controller tells its listeners).

use std::sync::{Arc, Mutex, Weak};

use serde::Serialize;

use super::callbacks::PendingConfirmation;
use super::engine::{AssistStatus, InputStatus};
use super::protocol::AssistMessage;
use crate::client::Subscription;
use crate::support::{contain, lock};

/// One change of an [`Assist`](super::Assist)'s state.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "value", rename_all = "camelCase")]
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
    /// The conversation was reset to its welcome message.
    Cleared,
}

type Listener = Arc<dyn Fn(&AssistUpdate) + Send + Sync>;

/// The subscribed listeners.
#[derive(Default)]
pub(super) struct Listeners {
    next: Mutex<(u64, Vec<(u64, Listener)>)>,
}

impl Listeners {
    /// Adds a listener; the subscription removes it (if `listeners` still exists).
    pub(super) fn subscribe(
        listeners: &Arc<Listeners>,
        listener: impl Fn(&AssistUpdate) + Send + Sync + 'static,
    ) -> Subscription {
        let id = {
            let mut table = lock(&listeners.next);
            table.0 += 1;
            let id = table.0;
            table.1.push((id, Arc::new(listener)));
            id
        };
        let weak: Weak<Listeners> = Arc::downgrade(listeners);
        Subscription::new(move || {
            if let Some(listeners) = weak.upgrade() {
                lock(&listeners.next).1.retain(|(other, _)| *other != id);
            }
        })
    }

    /// Tells every listener about every update, in order. Listeners run without any lock
    /// held (they may read the controller, or unsubscribe); a panicking one is skipped.
    pub(super) fn notify(&self, updates: &[AssistUpdate]) {
        if updates.is_empty() {
            return;
        }
        let listeners: Vec<Listener> = lock(&self.next).1.iter().map(|(_, l)| l.clone()).collect();
        for update in updates {
            for listener in &listeners {
                let _ = contain(|| listener(update));
            }
        }
    }
}
