//! The directory: workspaces, their members, collections with access grants, program drafts
//! and activated program versions, and the [`DirectoryStore`] that keeps them.
//!
//! Principals are not records: a workspace lists its members by principal id, and
//! collections grant access to principal ids. The authorization decision
//! (`authorize`) reads one [`WorkspaceAccess`] snapshot per call, so every check of one call
//! sees the same membership.
//!
//! Times are milliseconds since the Unix epoch in the model and RFC 3339 on the wire (the
//! serde form), as for records.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use rcip_records::{IdempotencyEntry, PrincipalKind, ScopeSet, StoreError};

/// What a [`DirectoryStore`] call returns: a boxed future, so the trait stays object-safe
/// (`Arc<dyn DirectoryStore>`) and every implementation (in memory, SQLite on a blocking
/// pool, PostgreSQL natively async) has one signature.
pub type DirectoryFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A workspace: the unit of membership, collections and programs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workspace {
    /// Its id, chosen at creation and never changed.
    pub workspace_id: String,
    /// A display name.
    pub name: String,
    /// Creation time (ms since the epoch; RFC 3339 on the wire).
    #[serde(with = "rfc3339")]
    pub created_at: u64,
}

/// A member's role: humans are owners or members, agents always `agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberRole {
    /// A human who manages the workspace: reads and writes every collection, changes human
    /// membership.
    Owner,
    /// A human member: every collection of visibility `workspace`, and the restricted ones
    /// granted to it.
    Member,
    /// An agent, acting within the scopes delegated to it in this workspace.
    Agent,
}

impl MemberRole {
    /// `"owner"`, `"member"` or `"agent"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            MemberRole::Owner => "owner",
            MemberRole::Member => "member",
            MemberRole::Agent => "agent",
        }
    }
}

/// A principal's membership of a workspace.
///
/// ```
/// use rcip_platform::{Member, MemberRole};
/// use rcip_records::{DelegatedScope, PrincipalKind};
/// let bot = Member::agent("bot-7", [DelegatedScope::RecordsRead]);
/// assert_eq!((bot.kind, bot.role), (PrincipalKind::Agent, MemberRole::Agent));
/// assert!(bot.is_consistent());
/// assert!(Member::human("ada", MemberRole::Owner).is_consistent());
/// assert!(!Member::human("ada", MemberRole::Agent).is_consistent());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    /// The principal.
    pub principal_id: String,
    /// Human or agent; a principal's kind never changes.
    pub kind: PrincipalKind,
    /// `owner` or `member` (humans), `agent` (agents).
    pub role: MemberRole,
    /// The scopes delegated to an agent in this workspace (empty for humans).
    #[serde(default, skip_serializing_if = "ScopeSet::is_empty")]
    pub scopes: ScopeSet,
}

impl Member {
    /// A human member with `role` (`owner` or `member`).
    #[must_use]
    pub fn human(principal_id: impl Into<String>, role: MemberRole) -> Self {
        Self {
            principal_id: principal_id.into(),
            kind: PrincipalKind::Human,
            role,
            scopes: ScopeSet::new(),
        }
    }

    /// An agent member with these delegated scopes.
    #[must_use]
    pub fn agent(
        principal_id: impl Into<String>,
        scopes: impl IntoIterator<Item = rcip_records::DelegatedScope>,
    ) -> Self {
        Self {
            principal_id: principal_id.into(),
            kind: PrincipalKind::Agent,
            role: MemberRole::Agent,
            scopes: scopes.into_iter().collect(),
        }
    }

    /// Whether kind, role and scopes agree: agents have role `agent`, humans `owner` or
    /// `member` and no scopes. Stores refuse inconsistent members.
    #[must_use]
    pub fn is_consistent(&self) -> bool {
        match self.kind {
            PrincipalKind::Agent => self.role == MemberRole::Agent,
            PrincipalKind::Human => self.role != MemberRole::Agent && self.scopes.is_empty(),
        }
    }
}

/// Who reads and writes a collection's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Every member reads and writes (agents within their scopes).
    Workspace,
    /// Owners, plus the principals granted access.
    Restricted,
}

/// A level of access to a collection; `Write` includes `Read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read its records.
    Read,
    /// Read and change its records.
    Write,
}

/// Access to a restricted collection granted to one principal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// The principal (a member of the workspace).
    pub principal_id: String,
    /// What it may do.
    pub access: Access,
}

/// A collection of records in a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collection {
    /// The workspace.
    pub workspace_id: String,
    /// Its id, unique in the workspace.
    pub collection_id: String,
    /// A display name.
    pub name: String,
    /// Who reads and writes it.
    pub visibility: Visibility,
    /// Grants, in principal id order (at most one per principal).
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// Creation time (ms since the epoch; RFC 3339 on the wire).
    #[serde(with = "rfc3339")]
    pub created_at: u64,
}

impl Collection {
    /// The access granted to `principal_id`, if any.
    #[must_use]
    pub fn grant(&self, principal_id: &str) -> Option<Access> {
        self.grants
            .iter()
            .find(|g| g.principal_id == principal_id)
            .map(|g| g.access)
    }
}

/// A validated package kept for activation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramDraft {
    /// The workspace.
    pub workspace_id: String,
    /// Its id.
    pub draft_id: Uuid,
    /// The package's namespace.
    pub namespace: String,
    /// The package's version.
    pub version: u64,
    /// `sha256:` + base64url of the SHA-256 of the RFC 8785 canonical package.
    pub digest: String,
    /// The package as given.
    pub package: Value,
    /// When it was drafted (ms since the epoch; RFC 3339 on the wire).
    #[serde(with = "rfc3339")]
    pub created_at: u64,
    /// The principal who drafted it.
    pub created_by: String,
}

/// An activated program version: `namespace/version` pins `digest` for good.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramVersion {
    /// The workspace that activated it; `None` for an installed package (compiled in or
    /// given at start), which every workspace sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    /// The namespace.
    pub namespace: String,
    /// The version.
    pub version: u64,
    /// `sha256:` + base64url of the SHA-256 of the RFC 8785 canonical package.
    pub digest: String,
    /// The package.
    pub package: Value,
    /// When it was activated (ms since the epoch; RFC 3339 on the wire).
    #[serde(with = "rfc3339")]
    pub activated_at: u64,
    /// The principal who activated it (installed packages: the host's name for itself).
    pub activated_by: String,
}

/// What the authorization decision reads about one workspace, read once per call.
///
/// Members are in principal id order, collections in collection id order and each
/// collection's grants in principal id order, in every store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceAccess {
    /// The workspace.
    pub workspace: Workspace,
    /// Its members.
    pub members: Vec<Member>,
    /// Its collections, with their grants.
    pub collections: Vec<Collection>,
}

impl WorkspaceAccess {
    /// The membership of `principal_id`.
    #[must_use]
    pub fn member(&self, principal_id: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.principal_id == principal_id)
    }

    /// The collection `collection_id`.
    #[must_use]
    pub fn collection(&self, collection_id: &str) -> Option<&Collection> {
        self.collections
            .iter()
            .find(|c| c.collection_id == collection_id)
    }
}

/// One atomic change of the directory. A store applies it together with its idempotency
/// entry, or neither. Not `#[non_exhaustive]`: a store must apply every change, so a new one
/// is a breaking change for every [`DirectoryStore`] anyway.
#[derive(Debug, Clone, PartialEq)]
pub enum DirectoryChange {
    /// A new workspace with its first owner (a human).
    CreateWorkspace {
        /// The workspace (its id must be new).
        workspace: Workspace,
        /// The principal id of its first owner.
        owner: String,
    },
    /// Adds a member, or replaces an existing member's role and scopes (its kind stays).
    PutMember {
        /// The workspace.
        workspace_id: String,
        /// The membership.
        member: Member,
    },
    /// Removes a member and every grant it holds.
    RemoveMember {
        /// The workspace.
        workspace_id: String,
        /// The member.
        principal_id: String,
    },
    /// A new collection (its id must be new in the workspace).
    CreateCollection {
        /// The collection.
        collection: Collection,
    },
    /// Grants a member access to a collection (replacing its earlier grant there).
    PutGrant {
        /// The workspace.
        workspace_id: String,
        /// The collection.
        collection_id: String,
        /// The grant; its principal must be a member.
        grant: Grant,
    },
    /// Revokes a principal's grant on a collection (none: nothing to do).
    RemoveGrant {
        /// The workspace.
        workspace_id: String,
        /// The collection.
        collection_id: String,
        /// The principal.
        principal_id: String,
    },
    /// Keeps a validated draft.
    SaveDraft {
        /// The draft.
        draft: ProgramDraft,
    },
    /// Activates a program version: a workspace's, or an installed one (`workspace_id`
    /// `None`). The same `namespace/version` with the same digest is a no-op; with another
    /// digest, in the workspace or among the installed packages, a
    /// [`DirectoryError::VersionConflict`].
    ActivateProgram {
        /// The version.
        version: ProgramVersion,
    },
}

impl DirectoryChange {
    /// The workspace the change is in (`None`: an installed program).
    #[must_use]
    pub fn workspace_id(&self) -> Option<&str> {
        match self {
            DirectoryChange::CreateWorkspace { workspace, .. } => Some(&workspace.workspace_id),
            DirectoryChange::PutMember { workspace_id, .. }
            | DirectoryChange::RemoveMember { workspace_id, .. }
            | DirectoryChange::PutGrant { workspace_id, .. }
            | DirectoryChange::RemoveGrant { workspace_id, .. } => Some(workspace_id),
            DirectoryChange::CreateCollection { collection } => Some(&collection.workspace_id),
            DirectoryChange::SaveDraft { draft } => Some(&draft.workspace_id),
            DirectoryChange::ActivateProgram { version } => version.workspace_id.as_deref(),
        }
    }
}

/// What [`DirectoryStore::apply`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// The change and its idempotency entry were stored.
    Applied,
    /// Nothing needed changing (an activation of a version already active with the same
    /// content); the idempotency entry was stored.
    Unchanged,
    /// The key was used before with the same fingerprint: nothing was applied; here is the
    /// first call's entry (its result is the answer).
    Replayed(IdempotencyEntry),
}

/// Why a directory change was not applied (nothing of it was).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DirectoryError {
    /// The idempotency key was used before with another fingerprint.
    #[error("idempotency key {key:?} was already used with other arguments")]
    IdempotencyConflict {
        /// The key.
        key: String,
    },
    /// `workspace.create` with an id already taken.
    #[error("workspace {0:?} already exists")]
    WorkspaceExists(String),
    /// No such workspace.
    #[error("workspace not found")]
    WorkspaceNotFound,
    /// `collection.create` with an id already taken in the workspace.
    #[error("collection {0:?} already exists")]
    CollectionExists(String),
    /// No such collection in the workspace.
    #[error("collection not found")]
    CollectionNotFound,
    /// No such member of the workspace.
    #[error("member not found")]
    MemberNotFound,
    /// A member's kind cannot change (a human stays human).
    #[error("principal {0:?} is already a member of another kind")]
    MemberKindConflict(String),
    /// The change would leave the workspace without an owner.
    #[error("a workspace keeps at least one owner")]
    LastOwner,
    /// `namespace/version` is already active with other content.
    #[error("{namespace}/{version} is already active with other content")]
    VersionConflict {
        /// The namespace.
        namespace: String,
        /// The version.
        version: u64,
    },
    /// The change is malformed (an inconsistent member, an idempotency entry of another
    /// workspace).
    #[error("invalid change: {0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl DirectoryError {
    /// The stable code.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::IdempotencyConflict { .. } => "IDEMPOTENCY_CONFLICT",
            Self::WorkspaceExists(_) => "WORKSPACE_EXISTS",
            Self::WorkspaceNotFound => "WORKSPACE_NOT_FOUND",
            Self::CollectionExists(_) => "COLLECTION_EXISTS",
            Self::CollectionNotFound => "COLLECTION_NOT_FOUND",
            Self::MemberNotFound => "MEMBER_NOT_FOUND",
            Self::MemberKindConflict(_) => "MEMBER_KIND_CONFLICT",
            Self::LastOwner => "LAST_OWNER",
            Self::VersionConflict { .. } => "VERSION_CONFLICT",
            Self::Invalid(_) => "INVALID_ARGUMENTS",
            Self::Store(_) => "STORE_FAILED",
        }
    }

    /// The HTTP-style class: 400, 404, 409 (500 for store failures).
    #[must_use]
    pub const fn status(&self) -> StatusCode {
        match self {
            Self::Invalid(_) => StatusCode::BAD_REQUEST,
            Self::WorkspaceNotFound | Self::CollectionNotFound | Self::MemberNotFound => {
                StatusCode::NOT_FOUND
            }
            Self::IdempotencyConflict { .. }
            | Self::WorkspaceExists(_)
            | Self::CollectionExists(_)
            | Self::MemberKindConflict(_)
            | Self::LastOwner
            | Self::VersionConflict { .. } => StatusCode::CONFLICT,
            Self::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl DirectoryChange {
    /// The check every store makes before anything else: an idempotency entry belongs to
    /// the change's workspace (an installed activation takes none).
    ///
    /// # Errors
    ///
    /// [`DirectoryError::Invalid`] when the entry belongs to another workspace.
    pub fn check_entry(&self, entry: Option<&IdempotencyEntry>) -> Result<(), DirectoryError> {
        match entry {
            Some(entry) if self.workspace_id() != Some(entry.workspace_id.as_str()) => {
                Err(DirectoryError::Invalid(
                    "the idempotency entry belongs to another workspace".to_owned(),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// The refusals every store words the same way.
pub mod refusal {
    use super::{DirectoryError, Member};

    /// An inconsistent member ([`Member::is_consistent`]).
    pub fn check_member(member: &Member) -> Result<(), DirectoryError> {
        if member.is_consistent() {
            return Ok(());
        }
        Err(DirectoryError::Invalid(format!(
            "a {} member cannot have role {}{}",
            member.kind.as_str(),
            member.role.as_str(),
            if member.scopes.is_empty() {
                ""
            } else {
                " and scopes"
            }
        )))
    }

    /// A new collection's grant to a principal who is not a member.
    pub fn grant_to_stranger(principal_id: &str) -> DirectoryError {
        DirectoryError::Invalid(format!("grant to {principal_id:?}, who is not a member"))
    }

    /// A draft id used twice.
    pub fn draft_exists(draft_id: uuid::Uuid) -> DirectoryError {
        DirectoryError::Invalid(format!("draft {draft_id} already exists"))
    }
}

/// Where the directory lives. Every rule that needs atomicity (a key used once, an id taken
/// once, the last owner kept, a version pinned to one content) is the store's, inside
/// [`apply`](Self::apply); every other rule is the platform's, so every store behaves the
/// same (the directory conformance suite checks that).
pub trait DirectoryStore: Send + Sync + fmt::Debug + 'static {
    /// The workspace, its members and its collections, or `None` when it does not exist.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn access<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<WorkspaceAccess>, StoreError>>;

    /// The workspaces `principal_id` is a member of, each with that membership, in
    /// workspace id order: one read, whatever the number of workspaces (`workspace.list`
    /// decides on the memberships, [`membership`](crate::membership)'s rule).
    ///
    /// # Errors
    ///
    /// A store failure.
    fn workspaces_of<'a>(
        &'a self,
        principal_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<(Workspace, Member)>, StoreError>>;

    /// Applies `change` atomically with `idempotency` (installed activations have none).
    ///
    /// The key is checked first: used with the same fingerprint, nothing is applied and the
    /// stored entry is returned ([`Applied::Replayed`]); with another fingerprint,
    /// [`DirectoryError::IdempotencyConflict`]. The entry's workspace must be the change's.
    ///
    /// # Errors
    ///
    /// [`DirectoryError`]; nothing was applied.
    fn apply(
        &self,
        change: DirectoryChange,
        idempotency: Option<IdempotencyEntry>,
    ) -> DirectoryFuture<'_, Result<Applied, DirectoryError>>;

    /// The entry remembered for `key` in `workspace_id`.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<IdempotencyEntry>, StoreError>>;

    /// The drafts of `workspace_id`, oldest first.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn drafts<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramDraft>, StoreError>>;

    /// One draft of `workspace_id`.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn draft<'a>(
        &'a self,
        workspace_id: &'a str,
        draft_id: Uuid,
    ) -> DirectoryFuture<'a, Result<Option<ProgramDraft>, StoreError>>;

    /// The versions `workspace_id` sees (its own and the installed ones), of `namespace`
    /// only when given, in (namespace, version) order.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn program_versions<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: Option<&'a str>,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramVersion>, StoreError>>;

    /// The installed versions (every workspace sees them), in (namespace, version) order.
    ///
    /// The default asks [`program_versions`](Self::program_versions) of the empty workspace
    /// id and keeps the installed ones: right in every store, since a version both installed
    /// and active in a workspace is listed as installed.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn installed_versions(&self) -> DirectoryFuture<'_, Result<Vec<ProgramVersion>, StoreError>> {
        Box::pin(async move {
            let mut versions = self.program_versions("", None).await?;
            versions.retain(|v| v.workspace_id.is_none());
            Ok(versions)
        })
    }

    /// The version `namespace/version` as `workspace_id` sees it (its own or installed).
    ///
    /// # Errors
    ///
    /// A store failure.
    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: u64,
    ) -> DirectoryFuture<'a, Result<Option<ProgramVersion>, StoreError>>;

    /// The secret named `name` (e.g. `cursor`, the cursor MAC key): 32 random bytes,
    /// created by the first call and the same for every later one, in every instance on the
    /// same database (insert-if-absent, then read, so two first calls agree).
    ///
    /// # Errors
    ///
    /// A store failure.
    fn secret<'a>(&'a self, name: &'a str) -> DirectoryFuture<'a, Result<[u8; 32], StoreError>>;

    /// Whether the store can serve now: its database answers and holds this build's schema
    /// (a readiness probe; one cheap statement). The default, for a store in memory, is
    /// always ready.
    ///
    /// # Errors
    ///
    /// Why it cannot serve: the database is unreachable or its schema is not this build's.
    fn ready(&self) -> DirectoryFuture<'_, Result<(), StoreError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The model's times on the wire: RFC 3339 with milliseconds, UTC.
mod rfc3339 {
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    pub(super) fn serialize<S: Serializer>(ms: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&rcip_records::__private::timestamp(*ms))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        let text = String::deserialize(deserializer)?;
        let time = humantime::parse_rfc3339(&text).map_err(D::Error::custom)?;
        let since = time
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(D::Error::custom)?;
        u64::try_from(since.as_millis()).map_err(D::Error::custom)
    }
}
