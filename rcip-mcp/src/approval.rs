//! Confirmations the client cannot put to the human (no broker, or a client without form
//! elicitation): the call answers that approval is pending in the application, the host
//! approves or declines in its own interface, and the same caller calling again with the same
//! arguments gets the outcome, once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcip_core::InvocationOutcome;
use rcip_runtime::ConfirmationObserver;
use rmcp::model::{CallToolResult, ContentBlock};

use crate::context::lock;
use crate::context::{Call, now_ms};

/// The code that starts the text of a call waiting for the host's approval.
pub const APPROVAL_PENDING: &str = "CONFIRMATION_PENDING";

/// Domain separation of the key (a digest of the tool, the arguments and the principal).
const KEY_LABEL: &str = "rcip-mcp/awaiting/v1";

/// At most this many calls wait at once; beyond it the oldest expiry is forgotten (the
/// confirmation itself stays with the runtime, which bounds it).
const MAX_AWAITING: usize = 4096;

/// Where the runtime puts the outcome of one confirmation, whoever resolves it.
#[derive(Clone, Default)]
pub(crate) struct Slot(Arc<Mutex<Option<InvocationOutcome>>>);

impl Slot {
    /// The observer to put into the invocation's extensions.
    pub(crate) fn observer(&self) -> ConfirmationObserver {
        let slot = self.0.clone();
        ConfirmationObserver::new(move |outcome| *lock(&slot) = Some(outcome.clone()))
    }

    fn take(&self) -> Option<InvocationOutcome> {
        lock(&self.0).take()
    }
}

struct Entry {
    title: String,
    expires_at: u64,
    slot: Slot,
}

/// The key a call waiting for the host is filed under in a shared confirmation store: the
/// same digest of the tool, the arguments and the caller as [`Awaiting`]'s, in hex.
pub(crate) fn shared_key(call: &Call) -> Option<rcip_runtime::ConfirmationKey> {
    use std::fmt::Write as _;
    let digest = call.binding(KEY_LABEL)?;
    let mut hex = String::with_capacity(digest.len() * 2);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    Some(rcip_runtime::ConfirmationKey(Arc::from(hex)))
}

/// The calls waiting for the host, by caller, tool and arguments.
#[derive(Default)]
pub(crate) struct Awaiting {
    entries: Mutex<HashMap<Vec<u8>, Entry>>,
}

/// What a call finds waiting for it.
pub(crate) enum Found {
    /// The host answered: this is the outcome, handed out this once.
    Outcome(InvocationOutcome),
    /// Still waiting: the same answer as the first time, and nothing runs again.
    Pending(CallToolResult),
}

impl Awaiting {
    /// Whether nothing waits (then a call costs no digest of its arguments).
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.entries).is_empty()
    }

    /// What waits for this call, if anything; an outcome is taken out.
    pub(crate) fn find(&self, call: &Call) -> Option<Found> {
        let key = call.binding(KEY_LABEL)?;
        let now = now_ms();
        let mut entries = lock(&self.entries);
        let entry = entries.get(&key)?;
        if let Some(outcome) = entry.slot.take() {
            entries.remove(&key);
            return Some(Found::Outcome(outcome));
        }
        if entry.expires_at < now {
            entries.remove(&key);
            return None;
        }
        Some(Found::Pending(pending_result(&entry.title)))
    }

    /// Records a call now waiting for the host; its outcome will land in `slot`.
    pub(crate) fn insert(&self, call: &Call, title: &str, expires_at: u64, slot: Slot) {
        let Some(key) = call.binding(KEY_LABEL) else {
            return;
        };
        let now = now_ms();
        let mut entries = lock(&self.entries);
        // An answered entry is kept until its caller comes back or a minute after expiry.
        let horizon = now.saturating_sub(60_000);
        entries.retain(|_, e| e.expires_at >= horizon);
        if entries.len() >= MAX_AWAITING
            && let Some(oldest) = entries
                .iter()
                .min_by_key(|(_, e)| e.expires_at)
                .map(|(k, _)| k.clone())
        {
            entries.remove(&oldest);
        }
        entries.insert(
            key,
            Entry {
                title: title.to_owned(),
                expires_at,
                slot,
            },
        );
    }
}

/// The answer while the host has not approved: an `isError` result, because it is the one
/// every SDK accepts from a tool that declares an output schema (a result without
/// `structuredContent` is refused unless it is an error), and the operation has not run.
/// Nothing in it lets the model approve anything.
pub(crate) fn pending_result(title: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{APPROVAL_PENDING}: \"{title}\" awaits approval in the application and has not run. \
         Nothing in this conversation can approve it; once someone has approved it there, call \
         this tool again with the same arguments to get its outcome."
    ))])
}
