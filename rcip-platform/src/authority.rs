//! Step 6 of the one decision: the engine's record-level [`Authority`], built from the same
//! [`WorkspaceAccess`] the platform decided the call with.
//!
//! ## How the call's access reaches the engine
//!
//! The engine's authority is one object for the whole engine and its `allows` is
//! synchronous, while access is per call and read from an async store. The platform scopes
//! the access it read for a call to that call's engine future with a Tokio task-local
//! ([`with_access`]); [`WorkspaceAuthority`] reads it there.
//!
//! Why a task-local rather than a per-workspace cache refreshed at each call:
//!
//! - every record check of one call sees exactly the snapshot the operation-level decision
//!   (steps 2–5) used, even when calls of the same workspace run concurrently and one of
//!   them changes membership meanwhile (a shared cache would let call A judge records with
//!   the access call B read);
//! - there is nothing to invalidate, bound or clean up, and nothing is kept between calls;
//! - outside a platform call (an engine used directly, or a task the engine might spawn
//!   some day) there is no access at all, and the authority **refuses everything**: it
//!   fails closed, never open.

use std::sync::Arc;

use super::authorize::{collection_access, effective_scopes};
use super::directory::{Access, WorkspaceAccess};
use rcip_records::{Authority, Caller, DelegatedScope, Operation, Target};

tokio::task_local! {
    static CALL_ACCESS: Arc<WorkspaceAccess>;
}

/// Runs `future` (an engine operation) with `access` as the access every record check of
/// it reads.
pub(crate) async fn with_access<F: Future>(access: Arc<WorkspaceAccess>, future: F) -> F::Output {
    CALL_ACCESS.scope(access, future).await
}

/// The platform's record-level authority: what the caller's membership and the
/// collections' visibility and grants allow (`docs/platform-design.md`, step 6).
///
/// - reading a record (and listing its commands) needs read access to its collection; an
///   unreadable record is answered as not found (404) and shown as `{"restricted": true}`
///   where it participates;
/// - creating, updating and archiving need write access and, for an agent, the effective
///   scope `records:write`; executing a command needs write access and `commands:execute`
///   (so `command.list` reports `runnable: false` to an agent that may not execute);
/// - a record of another workspace than the call's is never allowed.
///
/// It decides only inside a platform call ([`Platform::call`](crate::Platform::call)), which
/// scopes the call's access to the engine operation; anywhere else it allows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkspaceAuthority;

impl Authority for WorkspaceAuthority {
    fn allows(&self, caller: &Caller, operation: Operation, target: Target<'_>) -> bool {
        CALL_ACCESS
            .try_with(|access| decide(caller, access, operation, target))
            .unwrap_or(false)
    }
}

fn decide(
    caller: &Caller,
    access: &WorkspaceAccess,
    operation: Operation,
    target: Target<'_>,
) -> bool {
    if target.workspace_id() != access.workspace.workspace_id {
        return false;
    }
    let Some(have) = collection_access(caller, access, target.collection_id()) else {
        return false;
    };
    let scope = match operation {
        Operation::RecordRead | Operation::CommandList => return true,
        Operation::RecordCreate | Operation::RecordUpdate | Operation::RecordArchive => {
            DelegatedScope::RecordsWrite
        }
        Operation::CommandExecute => DelegatedScope::CommandsExecute,
    };
    have == Access::Write && effective_scopes(caller, access).contains(&scope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Collection, Grant, Member, MemberRole, Visibility, Workspace};
    use rcip_records::{Actor, NewRecord};

    fn access() -> Arc<WorkspaceAccess> {
        let collection = |id: &str, visibility, grants| Collection {
            workspace_id: "w".into(),
            collection_id: id.into(),
            name: id.into(),
            visibility,
            grants,
            created_at: 0,
        };
        Arc::new(WorkspaceAccess {
            workspace: Workspace {
                workspace_id: "w".into(),
                name: "W".into(),
                created_at: 0,
            },
            members: vec![
                Member::human("ada", MemberRole::Owner),
                Member::agent("bot", [DelegatedScope::RecordsRead]),
                Member::human("bob", MemberRole::Member),
            ],
            collections: vec![
                collection("open", Visibility::Workspace, vec![]),
                collection(
                    "secret",
                    Visibility::Restricted,
                    vec![Grant {
                        principal_id: "bob".into(),
                        access: Access::Read,
                    }],
                ),
            ],
        })
    }

    fn new(workspace: &str, collection: &str) -> NewRecord {
        NewRecord::new(workspace, collection, "notes", 1, "note")
    }

    #[tokio::test]
    async fn decides_from_the_scoped_access_only() {
        let ada = Caller::human(Actor::new("ada"));
        let bob = Caller::human(Actor::new("bob"));
        let bot = Caller::agent(Actor::new("bot"), DelegatedScope::ALL);
        let authority = WorkspaceAuthority;
        let create = |caller: &Caller, w: &str, c: &str| {
            authority.allows(caller, Operation::RecordCreate, Target::New(&new(w, c)))
        };
        // Outside a platform call: nothing.
        assert!(!create(&ada, "w", "open"));
        with_access(access(), async {
            assert!(create(&ada, "w", "secret"));
            assert!(create(&bob, "w", "open"));
            // A read grant does not write.
            assert!(!create(&bob, "w", "secret"));
            // The membership delegates records:read only.
            assert!(!create(&bot, "w", "open"));
            // Another workspace, an unknown collection: never.
            assert!(!create(&ada, "v", "open"));
            assert!(!create(&ada, "w", "nowhere"));
        })
        .await;
    }
}
