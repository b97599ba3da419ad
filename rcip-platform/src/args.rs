//! The arguments of the directory and program operations, as the registry's schemas accept
//! them (unknown fields are refused). The record operations' arguments are the engine's
//! (`CreateRecord`, `GetRecord`...).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::directory::{Access, Member, MemberRole, Visibility};
use rcip_records::{DelegatedScope, PrincipalKind};

/// `capabilities.list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListCapabilities {
    /// The workspace (its programs' capabilities are listed with the platform's).
    pub workspace_id: String,
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `workspace.list`: the caller's workspaces.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListWorkspaces {
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `workspace.get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetWorkspace {
    /// The workspace.
    pub workspace_id: String,
}

/// `workspace.create` (console-only): the caller becomes its first owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateWorkspace {
    /// The new workspace's id (lower case letters, digits, `-` and `_`).
    pub workspace_id: String,
    /// A display name.
    pub name: String,
    /// Replaying the key with the same arguments returns the first result.
    pub idempotency_key: String,
}

/// `member.list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListMembers {
    /// The workspace.
    pub workspace_id: String,
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `member.add`: adds a member or replaces a member's role and scopes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddMember {
    /// The workspace.
    pub workspace_id: String,
    /// The principal.
    pub principal_id: String,
    /// Human or agent.
    pub kind: PrincipalKind,
    /// Humans: `owner` or `member` (default `member`); agents take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<MemberRole>,
    /// Agents: the scopes delegated in this workspace; humans take none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<DelegatedScope>,
    /// Idempotency key.
    pub idempotency_key: String,
}

impl AddMember {
    /// The membership it asks for (`role` defaults to `member` for humans, `agent` for
    /// agents); check it with [`Member::is_consistent`].
    #[must_use]
    pub fn member(&self) -> Member {
        Member {
            principal_id: self.principal_id.clone(),
            kind: self.kind,
            role: self.role.unwrap_or(match self.kind {
                PrincipalKind::Human => MemberRole::Member,
                PrincipalKind::Agent => MemberRole::Agent,
            }),
            scopes: self.scopes.iter().copied().collect(),
        }
    }
}

/// `member.remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoveMember {
    /// The workspace.
    pub workspace_id: String,
    /// The member.
    pub principal_id: String,
    /// Idempotency key.
    pub idempotency_key: String,
}

/// `collection.list`: the collections the caller may read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListCollections {
    /// The workspace.
    pub workspace_id: String,
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `collection.create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateCollection {
    /// The workspace.
    pub workspace_id: String,
    /// The new collection's id (lower case letters, digits, `-` and `_`).
    pub collection_id: String,
    /// A display name.
    pub name: String,
    /// `workspace` (default) or `restricted`.
    #[serde(default = "workspace_visibility")]
    pub visibility: Visibility,
    /// Idempotency key.
    pub idempotency_key: String,
}

fn workspace_visibility() -> Visibility {
    Visibility::Workspace
}

/// `collection.grant`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantCollection {
    /// The workspace.
    pub workspace_id: String,
    /// The collection.
    pub collection_id: String,
    /// The member granted access.
    pub principal_id: String,
    /// `read` or `write`.
    pub access: Access,
    /// Idempotency key.
    pub idempotency_key: String,
}

/// `collection.revoke`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevokeCollection {
    /// The workspace.
    pub workspace_id: String,
    /// The collection.
    pub collection_id: String,
    /// The principal whose grant is revoked.
    pub principal_id: String,
    /// Idempotency key.
    pub idempotency_key: String,
}

/// `program.versions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListProgramVersions {
    /// The workspace.
    pub workspace_id: String,
    /// Only this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// 1–100, default 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `program.get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetProgram {
    /// The workspace.
    pub workspace_id: String,
    /// The namespace.
    pub namespace: String,
    /// The version.
    pub version: u64,
}

/// `examples.list`: no arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListExamples {}

/// `program.draft`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DraftProgram {
    /// The workspace.
    pub workspace_id: String,
    /// The `relationship/v1` package.
    pub package: Map<String, Value>,
    /// Idempotency key.
    pub idempotency_key: String,
}

/// `program.activate`: a draft, or a package given whole (exactly one of the two).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActivateProgram {
    /// The workspace.
    pub workspace_id: String,
    /// A draft of the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft_id: Option<Uuid>,
    /// A package.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<Map<String, Value>>,
    /// Idempotency key.
    pub idempotency_key: String,
}
