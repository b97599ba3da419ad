//! The one authorization decision, in the order of `docs/platform-design.md` ("The one
//! decision"):
//!
//! 1. unknown operation or refused arguments: 400 (the registry's [`parse_call`](crate::parse_call));
//! 2. an agent calling a console-only operation: 403 `CONSOLE_ONLY`, whatever its scopes;
//! 3. unknown workspace **or** not a member: 404 `WORKSPACE_NOT_FOUND` (one answer);
//! 4. an agent without the operation's scope: 403 `INSUFFICIENT_SCOPE`, naming it;
//! 5. an unknown or unreadable collection: 404 `COLLECTION_NOT_FOUND`; readable but not
//!    writable for a write: 403 `FORBIDDEN`;
//! 6. records: the engine's authority, built from the same [`WorkspaceAccess`]
//!    ([`collection_access`] is its rule).
//!
//! Steps 2–4 are [`authorize_operation`]; [`authorize_call`] runs 2–5 for a parsed call,
//! with the membership rules of `member.add` / `member.remove` ([`authorize_member_change`])
//! and every collection a call names: the platform runs nothing of an operation before it
//! passed, and checks nothing else itself.
//!
//! ```
//! use rcip_platform::{Member, MemberRole, Workspace, WorkspaceAccess, authorize_operation, operation};
//! use rcip_records::{Actor, Caller, DelegatedScope};
//! let access = WorkspaceAccess {
//!     workspace: Workspace { workspace_id: "acme".into(), name: "Acme".into(), created_at: 0 },
//!     members: vec![Member::human("ada", MemberRole::Owner),
//!                   Member::agent("bot", [DelegatedScope::RecordsRead])],
//!     collections: vec![],
//! };
//! let bot = Caller::agent(Actor::new("bot"), [DelegatedScope::RecordsRead, DelegatedScope::RecordsWrite]);
//! let get = operation("record.get").unwrap();
//! let create = operation("record.create").unwrap();
//! assert!(authorize_operation(&bot, get, Some(&access)).is_ok());
//! // The credential delegates records:write, the membership does not.
//! let denial = authorize_operation(&bot, create, Some(&access)).unwrap_err();
//! assert_eq!((denial.code(), denial.status().as_u16()), ("INSUFFICIENT_SCOPE", 403));
//! // A stranger learns nothing: the workspace is "not found".
//! let eve = Caller::human(Actor::new("eve"));
//! assert_eq!(authorize_operation(&eve, get, Some(&access)).unwrap_err().status(), 404);
//! ```

use std::fmt;

use http::StatusCode;

use super::directory::{Access, Member, MemberRole, Visibility, WorkspaceAccess};
use super::error::PlatformError;
use super::registry::{Agents, OperationSpec, PlatformCall};
use rcip_records::{Caller, DelegatedScope, PrincipalKind, ScopeSet};

/// A refusal is answered as a [`PlatformError`] with its code, status and message.
impl From<Denial> for PlatformError {
    fn from(denial: Denial) -> Self {
        Self::new(denial.status(), denial.code(), denial.to_string())
    }
}

/// A refusal of the authorization decision: a stable code, a status and a public message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Denial {
    /// 403 `CONSOLE_ONLY`: agents may not call this, whatever their scopes.
    ConsoleOnly {
        /// The operation (or `member.add of a human`).
        operation: &'static str,
    },
    /// 404 `WORKSPACE_NOT_FOUND`: no such workspace, or the caller is not a member.
    WorkspaceNotFound,
    /// 403 `INSUFFICIENT_SCOPE`: the agent lacks the scope (in its credential or its
    /// membership).
    InsufficientScope {
        /// The scope needed.
        scope: DelegatedScope,
    },
    /// 404 `COLLECTION_NOT_FOUND`: no such collection, or the caller may not read it.
    CollectionNotFound,
    /// 404 `MEMBER_NOT_FOUND`: `member.remove` of a principal that is not a member.
    MemberNotFound,
    /// 403 `FORBIDDEN`: visible, but the caller may not do this.
    Forbidden {
        /// Why, in public words.
        reason: String,
    },
}

impl Denial {
    /// The stable code.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Denial::ConsoleOnly { .. } => "CONSOLE_ONLY",
            Denial::WorkspaceNotFound => "WORKSPACE_NOT_FOUND",
            Denial::InsufficientScope { .. } => "INSUFFICIENT_SCOPE",
            Denial::CollectionNotFound => "COLLECTION_NOT_FOUND",
            Denial::MemberNotFound => "MEMBER_NOT_FOUND",
            Denial::Forbidden { .. } => "FORBIDDEN",
        }
    }

    /// 403 or 404.
    #[must_use]
    pub const fn status(&self) -> StatusCode {
        match self {
            Denial::WorkspaceNotFound | Denial::CollectionNotFound | Denial::MemberNotFound => {
                StatusCode::NOT_FOUND
            }
            Denial::ConsoleOnly { .. }
            | Denial::InsufficientScope { .. }
            | Denial::Forbidden { .. } => StatusCode::FORBIDDEN,
        }
    }
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denial::ConsoleOnly { operation } => {
                write!(
                    f,
                    "{operation} is console-only: refused to agents whatever their scopes"
                )
            }
            Denial::WorkspaceNotFound => f.write_str("workspace not found"),
            Denial::InsufficientScope { scope } => {
                write!(f, "this needs the delegated scope {scope}")
            }
            Denial::CollectionNotFound => f.write_str("collection not found"),
            Denial::MemberNotFound => f.write_str("member not found"),
            Denial::Forbidden { reason } => f.write_str(reason),
        }
    }
}

impl std::error::Error for Denial {}

/// The caller's membership, when it is a member of the same kind (an agent credential for
/// a principal registered as a human is no member at all).
#[must_use]
pub fn membership<'a>(caller: &Caller, access: &'a WorkspaceAccess) -> Option<&'a Member> {
    access
        .member(caller.id())
        .filter(|member| is_membership_of(caller, member))
}

/// Whether `member` (a membership of the caller's principal id) makes the caller a member:
/// the same kind of principal.
#[must_use]
pub fn is_membership_of(caller: &Caller, member: &Member) -> bool {
    member.principal_id == caller.id() && member.kind == caller.kind
}

/// What the caller may do in the workspace: every scope for a human member; for an agent
/// member, its member scopes ∩ its credential's scopes; nothing for a non-member.
#[must_use]
pub fn effective_scopes(caller: &Caller, access: &WorkspaceAccess) -> ScopeSet {
    match membership(caller, access) {
        None => ScopeSet::new(),
        Some(_) if caller.kind == PrincipalKind::Human => DelegatedScope::ALL.into(),
        Some(member) => member
            .scopes
            .intersection(&caller.scopes)
            .copied()
            .collect(),
    }
}

/// Steps 2–4 for one operation: console-only, workspace membership, delegated scope.
///
/// `access` is the workspace the call names (`None` when it does not exist); it is not read
/// for the operations outside a workspace (`workspace.list`, `workspace.create`,
/// `examples.list`), where an agent's scopes are its credential's. For `member.add` and
/// `member.remove` this checks the operation only; [`authorize_member_change`] (or
/// [`authorize_call`]) decides on the member changed.
///
/// # Errors
///
/// The first [`Denial`] in the design's order.
pub fn authorize_operation(
    caller: &Caller,
    spec: &OperationSpec,
    access: Option<&WorkspaceAccess>,
) -> Result<(), Denial> {
    let agent = caller.kind == PrincipalKind::Agent;
    if agent && spec.agents == Agents::ConsoleOnly {
        return Err(Denial::ConsoleOnly {
            operation: spec.name,
        });
    }
    let Some(scope) = spec.scope else {
        return if !spec.in_workspace || access.is_some_and(|a| membership(caller, a).is_some()) {
            Ok(())
        } else {
            Err(Denial::WorkspaceNotFound)
        };
    };
    let has_scope = if spec.in_workspace {
        let access = access
            .filter(|a| membership(caller, a).is_some())
            .ok_or(Denial::WorkspaceNotFound)?;
        effective_scopes(caller, access).contains(&scope)
    } else {
        caller.has_scope(scope)
    };
    if has_scope {
        Ok(())
    } else {
        Err(Denial::InsufficientScope { scope })
    }
}

/// The caller's access to a collection: owners write every collection; in a `workspace`
/// collection every member writes; in a `restricted` one, a member has what it was granted.
/// `None`: unknown collection, not a member, or nothing granted. (An agent's scopes are a
/// separate check, step 4.)
#[must_use]
pub fn collection_access(
    caller: &Caller,
    access: &WorkspaceAccess,
    collection_id: &str,
) -> Option<Access> {
    let member = membership(caller, access)?;
    let collection = access.collection(collection_id)?;
    if member.role == MemberRole::Owner || collection.visibility == Visibility::Workspace {
        return Some(Access::Write);
    }
    collection.grant(&member.principal_id)
}

/// The collections the caller may read, in collection id order (what `collection.list`
/// answers: an unreadable collection is as absent there as it is to `record.get`).
#[must_use]
pub fn readable_collections<'a>(
    caller: &Caller,
    access: &'a WorkspaceAccess,
) -> Vec<&'a super::directory::Collection> {
    access
        .collections
        .iter()
        .filter(|c| collection_access(caller, access, &c.collection_id).is_some())
        .collect()
}

/// Step 5: the caller needs `need` on the collection.
///
/// # Errors
///
/// 404 `COLLECTION_NOT_FOUND` when unknown or unreadable; 403 `FORBIDDEN` when readable
/// but `need` is [`Access::Write`].
pub fn authorize_collection(
    caller: &Caller,
    access: &WorkspaceAccess,
    collection_id: &str,
    need: Access,
) -> Result<Access, Denial> {
    match collection_access(caller, access, collection_id) {
        None => Err(Denial::CollectionNotFound),
        Some(have) if have < need => Err(Denial::Forbidden {
            reason: format!("the collection {collection_id:?} is read-only for the caller"),
        }),
        Some(have) => Ok(have),
    }
}

/// A change of membership, as `member.add` and `member.remove` ask it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange<'a> {
    /// Add (or replace) this membership.
    Add(&'a Member),
    /// Remove this principal.
    Remove(&'a str),
}

/// The membership rules, after [`authorize_operation`] passed for `member.add` /
/// `member.remove`:
///
/// - a change to a human member (adding one, or changing or removing an existing one) is
///   console-only for agents (403 `CONSOLE_ONLY`), and needs an owner among humans
///   (403 `FORBIDDEN` for a `member`);
/// - an agent changes only agent members whose scopes, before and after, lie within its
///   own effective scopes (403 `FORBIDDEN` naming the scopes beyond them): it never
///   delegates, nor takes away, what it does not hold itself;
/// - removing a principal that is not a member: 404 `MEMBER_NOT_FOUND`.
///
/// (The last owner is kept by the store, atomically: `LAST_OWNER`.)
///
/// # Errors
///
/// The [`Denial`].
pub fn authorize_member_change(
    caller: &Caller,
    access: &WorkspaceAccess,
    change: MemberChange<'_>,
) -> Result<(), Denial> {
    let (principal_id, added) = match change {
        MemberChange::Add(member) => (member.principal_id.as_str(), Some(member)),
        MemberChange::Remove(principal_id) => (principal_id, None),
    };
    let existing = access.member(principal_id);
    if added.is_none() && existing.is_none() {
        return Err(Denial::MemberNotFound);
    }
    let touches_human = added
        .into_iter()
        .chain(existing)
        .any(|m| m.kind == PrincipalKind::Human);
    let Some(own) = membership(caller, access) else {
        return Err(Denial::WorkspaceNotFound);
    };
    if caller.kind == PrincipalKind::Human {
        let owner_needed = touches_human;
        return if owner_needed && own.role != MemberRole::Owner {
            Err(Denial::Forbidden {
                reason: "only an owner changes human membership".to_owned(),
            })
        } else {
            Ok(())
        };
    }
    if touches_human {
        return Err(Denial::ConsoleOnly {
            operation: "a change of human membership",
        });
    }
    let scopes = effective_scopes(caller, access);
    let beyond: Vec<&str> = added
        .into_iter()
        .chain(existing)
        .flat_map(|m| m.scopes.iter())
        .filter(|s| !scopes.contains(s))
        .map(|s| s.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if beyond.is_empty() {
        Ok(())
    } else {
        Err(Denial::Forbidden {
            reason: format!(
                "an agent manages only agents within its own scopes; beyond them: {}",
                beyond.join(", ")
            ),
        })
    }
}

/// Steps 2–5 for a parsed call, in order: [`authorize_operation`] (for `member.add` of a
/// human by an agent, `CONSOLE_ONLY` comes first, as for every console-only operation),
/// then the membership rules of `member.*`, then the collection the call names:
/// `collection.grant` / `collection.revoke` and `record.create` need write access to it, a
/// `record.search` restricted to one collection read access.
///
/// Records themselves (and the collection of an existing record) are step 6, the engine's
/// authority, which asks the same [`collection_access`] again (for a replay too).
///
/// # Errors
///
/// The first [`Denial`].
pub fn authorize_call(
    caller: &Caller,
    spec: &OperationSpec,
    call: &PlatformCall,
    access: Option<&WorkspaceAccess>,
) -> Result<(), Denial> {
    if caller.kind == PrincipalKind::Agent
        && let PlatformCall::MemberAdd(add) = call
        && add.kind == PrincipalKind::Human
    {
        return Err(Denial::ConsoleOnly {
            operation: "member.add of a human",
        });
    }
    authorize_operation(caller, spec, access)?;
    let Some(access) = access else {
        return Ok(());
    };
    match call {
        PlatformCall::MemberAdd(add) => {
            authorize_member_change(caller, access, MemberChange::Add(&add.member()))
        }
        PlatformCall::MemberRemove(remove) => {
            authorize_member_change(caller, access, MemberChange::Remove(&remove.principal_id))
        }
        PlatformCall::CollectionGrant(grant) => {
            authorize_collection(caller, access, &grant.collection_id, Access::Write).map(drop)
        }
        PlatformCall::CollectionRevoke(revoke) => {
            authorize_collection(caller, access, &revoke.collection_id, Access::Write).map(drop)
        }
        PlatformCall::RecordCreate(create) => {
            authorize_collection(caller, access, &create.collection_id, Access::Write).map(drop)
        }
        PlatformCall::RecordSearch(search) => match &search.collection_id {
            Some(collection_id) => {
                authorize_collection(caller, access, collection_id, Access::Read).map(drop)
            }
            None => Ok(()),
        },
        _ => Ok(()),
    }
}
