//! Who calls: principals (humans and agents, never records) and the scopes delegated to
//! agents.
//!
//! The platform's authorization rules are in `docs/platform-design.md`; this module holds
//! only the vocabulary both the platform and the engine speak.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::record::Actor;

/// Whether a principal is a person or an agent. Agents act only within the scopes delegated
/// to them; console-only operations refuse them whatever their scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrincipalKind {
    /// A person, signed in through the console.
    Human,
    /// An agent, acting with delegated scopes.
    Agent,
}

impl PrincipalKind {
    /// `"human"` or `"agent"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Human => "human",
            PrincipalKind::Agent => "agent",
        }
    }
}

/// A scope an agent may be delegated (the OAuth-style spelling is its wire form).
///
/// ```
/// use rcip_records::DelegatedScope;
/// let scope: DelegatedScope = "commands:execute".parse().unwrap();
/// assert_eq!(scope, DelegatedScope::CommandsExecute);
/// assert_eq!(scope.as_str(), "commands:execute");
/// assert!("records:delete".parse::<DelegatedScope>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "&'static str")]
pub enum DelegatedScope {
    /// Read records, their history, commands and the change feed.
    RecordsRead,
    /// Create, update and archive records.
    RecordsWrite,
    /// Execute commands.
    CommandsExecute,
    /// Draft program packages.
    ProgramsDraft,
    /// Activate program versions.
    ProgramsActivate,
    /// Create collections and change their access.
    CollectionsManage,
    /// Add and remove agent members (never humans), delegating at most its own scopes.
    MembersManage,
}

impl DelegatedScope {
    /// Every scope.
    pub const ALL: [DelegatedScope; 7] = [
        DelegatedScope::RecordsRead,
        DelegatedScope::RecordsWrite,
        DelegatedScope::CommandsExecute,
        DelegatedScope::ProgramsDraft,
        DelegatedScope::ProgramsActivate,
        DelegatedScope::CollectionsManage,
        DelegatedScope::MembersManage,
    ];

    /// The wire spelling, e.g. `records:read`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            DelegatedScope::RecordsRead => "records:read",
            DelegatedScope::RecordsWrite => "records:write",
            DelegatedScope::CommandsExecute => "commands:execute",
            DelegatedScope::ProgramsDraft => "programs:draft",
            DelegatedScope::ProgramsActivate => "programs:activate",
            DelegatedScope::CollectionsManage => "collections:manage",
            DelegatedScope::MembersManage => "members:manage",
        }
    }
}

impl fmt::Display for DelegatedScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A scope name that is not one of [`DelegatedScope::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scope {0:?}")]
pub struct UnknownScope(pub String);

impl FromStr for DelegatedScope {
    type Err = UnknownScope;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| UnknownScope(name.chars().take(64).collect()))
    }
}

impl TryFrom<String> for DelegatedScope {
    type Error = UnknownScope;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        name.parse()
    }
}

impl From<DelegatedScope> for &'static str {
    fn from(scope: DelegatedScope) -> Self {
        scope.as_str()
    }
}

/// A set of delegated scopes.
pub type ScopeSet = BTreeSet<DelegatedScope>;

/// The caller of an operation: who (the [`Actor`] every change event records), what kind of
/// principal, and the scopes its credential delegates (an agent's; a human's are not
/// consulted).
///
/// ```
/// use rcip_records::{Actor, Caller, DelegatedScope};
/// let agent = Caller::agent(Actor::new("bot-7").via("triage"), [DelegatedScope::RecordsRead]);
/// assert!(agent.has_scope(DelegatedScope::RecordsRead));
/// assert!(!agent.has_scope(DelegatedScope::RecordsWrite));
/// assert!(Caller::human(Actor::new("ada")).has_scope(DelegatedScope::RecordsWrite));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The principal's id and client, as change events record them.
    pub actor: Actor,
    /// Human or agent.
    pub kind: PrincipalKind,
    /// The credential's delegated scopes (agents).
    pub scopes: ScopeSet,
    /// The one workspace the credential reaches (an API token bound to it), or `None` for
    /// any workspace the principal is a member of. Another workspace is answered exactly as
    /// one the principal is no member of.
    pub workspace: Option<String>,
}

impl Caller {
    /// A human.
    #[must_use]
    pub fn human(actor: Actor) -> Self {
        Self {
            actor,
            kind: PrincipalKind::Human,
            scopes: ScopeSet::new(),
            workspace: None,
        }
    }

    /// An agent with these delegated scopes.
    #[must_use]
    pub fn agent(actor: Actor, scopes: impl IntoIterator<Item = DelegatedScope>) -> Self {
        Self {
            actor,
            kind: PrincipalKind::Agent,
            scopes: scopes.into_iter().collect(),
            workspace: None,
        }
    }

    /// The same caller, reaching `workspace_id` only.
    ///
    /// ```
    /// use rcip_records::{Actor, Caller};
    /// let bot = Caller::agent(Actor::new("bot"), []).within("acme");
    /// assert!(bot.reaches("acme"));
    /// assert!(!bot.reaches("other"));
    /// ```
    #[must_use]
    pub fn within(mut self, workspace_id: impl Into<String>) -> Self {
        self.workspace = Some(workspace_id.into());
        self
    }

    /// Whether the credential reaches `workspace_id` (membership is judged elsewhere).
    #[must_use]
    pub fn reaches(&self, workspace_id: &str) -> bool {
        self.workspace
            .as_deref()
            .is_none_or(|bound| bound == workspace_id)
    }

    /// The principal id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.actor.id
    }

    /// Whether the caller may act with `scope`: every human may (membership rules apply
    /// elsewhere); an agent only when its credential delegates it.
    #[must_use]
    pub fn has_scope(&self, scope: DelegatedScope) -> bool {
        self.kind == PrincipalKind::Human || self.scopes.contains(&scope)
    }
}
