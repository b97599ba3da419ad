//! The idempotency declaration: `idempotent` in `#[capability]`, in `#[capabilities]` methods
//! and in `#[derive(Capability)]`'s `#[rcip]` sets `CapabilitySpec::IDEMPOTENT` and the
//! definition's `idempotent`; the snapshot's contract carries it; JSON has the member only
//! when it is `true`.
#![allow(clippy::unwrap_used)]

use rcip_runtime::{
    Capability, CapabilityFilter, CapabilitySpec, Runtime, RuntimeOptions, capabilities,
    capability, catalog,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PollRef {
    poll_id: String,
}

/// Close a poll.
///
/// Stops voting; closing a closed poll changes nothing.
#[capability(effect = "write", scope = "polls", idempotent)]
fn close(input: PollRef) -> String {
    input.poll_id
}

/// Vote.
///
/// Adds a vote.
#[capability(effect = "write", scope = "polls", idempotent = false)]
fn vote(input: PollRef) -> String {
    input.poll_id
}

/// Count polls.
///
/// Counts them; a read is not idempotent unless it says so.
#[capability(effect = "read", scope = "polls")]
fn count() -> u32 {
    0
}

/// Reopen a poll.
///
/// Reopens it.
#[derive(Serialize, Deserialize, JsonSchema, Capability)]
#[rcip(id = "polls.reopen", effect = "write", scope = "polls", output = bool, idempotent = true)]
#[serde(deny_unknown_fields)]
struct Reopen {
    poll_id: String,
}

/// The archive.
#[derive(Clone)]
struct Archive;

#[capabilities(module = archive)]
impl Archive {
    /// Archive a poll.
    ///
    /// Archiving an archived poll changes nothing.
    #[capability(effect = "write", scope = "polls", idempotent)]
    fn archive(&self, input: PollRef) -> String {
        input.poll_id
    }
}

catalog! {
    struct App {
        id = "polls",
        name = "Polls",
        description = "Polls.",
        scopes = [("polls", "Polls", "The list.")],
        capabilities = [close, vote, count, Reopen, archive::archive],
    }
}

// Checked at compile time: the constants are what each form declared.
const _: () = {
    assert!(<close as CapabilitySpec>::IDEMPOTENT);
    assert!(!<vote as CapabilitySpec>::IDEMPOTENT);
    assert!(!<count as CapabilitySpec>::IDEMPOTENT);
    assert!(<Reopen as CapabilitySpec>::IDEMPOTENT);
    assert!(<archive::archive as CapabilitySpec>::IDEMPOTENT);
};

#[test]
fn every_form_declares_it() {
    assert!(<close as CapabilitySpec>::definition().unwrap().idempotent);
    assert!(!<count as CapabilitySpec>::definition().unwrap().idempotent);
    assert!(<Reopen as CapabilitySpec>::definition().unwrap().idempotent);
    assert!(
        <archive::archive as CapabilitySpec>::definition()
            .unwrap()
            .idempotent
    );
}

#[test]
fn json_has_the_member_only_when_true() {
    let close = serde_json::to_value(<close as CapabilitySpec>::definition().unwrap()).unwrap();
    assert_eq!(close["idempotent"], true);
    let vote = serde_json::to_value(<vote as CapabilitySpec>::definition().unwrap()).unwrap();
    assert!(vote.get("idempotent").is_none());
    // And it reads back.
    let read: rcip_runtime::CapabilityDefinition = serde_json::from_value(close).unwrap();
    assert!(read.idempotent);
}

#[test]
fn the_snapshot_contract_carries_it() {
    let runtime = Runtime::new(App::definition().unwrap(), RuntimeOptions::default()).unwrap();
    let client = runtime.client();
    let listed = client.list_capabilities(&CapabilityFilter::default());
    let idempotent: Vec<&str> = listed
        .iter()
        .filter(|entry| entry.idempotent)
        .map(|entry| entry.id.as_str())
        .collect();
    assert_eq!(idempotent, ["polls.close", "polls.reopen", "polls.archive"]);
    let snapshot = serde_json::to_value(&*client.get_snapshot()).unwrap();
    let members: Vec<bool> = snapshot["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.get("idempotent").is_some())
        .collect();
    assert_eq!(members, [true, false, false, true, true]);
}
