//! The directory's values as the durable stores keep them in columns: enums as their wire
//! names, scopes as a JSON array, packages as JSON text. One place, so the SQLite and
//! PostgreSQL directories read each other's words the same way.

use serde_json::Value;

use rcip_platform::{Access, DirectoryError, Member, MemberRole, Visibility};
use rcip_records::{PrincipalKind, ScopeSet, StoreError};

/// Whether `member` may replace `existing` (a kind never changes; the last of `owners`
/// owners stays one).
pub(crate) fn check_replace(
    existing: &Member,
    member: &Member,
    owners: u64,
) -> Result<(), DirectoryError> {
    if existing.kind != member.kind {
        return Err(DirectoryError::MemberKindConflict(
            member.principal_id.clone(),
        ));
    }
    if existing.role == MemberRole::Owner && member.role != MemberRole::Owner && owners == 1 {
        return Err(DirectoryError::LastOwner);
    }
    Ok(())
}

/// Whether `existing` may go, with `owners` owners in its workspace.
pub(crate) fn check_removal(existing: &Member, owners: u64) -> Result<(), DirectoryError> {
    if existing.role == MemberRole::Owner && owners == 1 {
        return Err(DirectoryError::LastOwner);
    }
    Ok(())
}

pub(crate) use rcip_platform::__private::check_activation;

pub(crate) fn parse_kind(text: &str) -> Result<PrincipalKind, StoreError> {
    match text {
        "human" => Ok(PrincipalKind::Human),
        "agent" => Ok(PrincipalKind::Agent),
        other => Err(bad("principal kind", other)),
    }
}

pub(crate) fn parse_role(text: &str) -> Result<MemberRole, StoreError> {
    match text {
        "owner" => Ok(MemberRole::Owner),
        "member" => Ok(MemberRole::Member),
        "agent" => Ok(MemberRole::Agent),
        other => Err(bad("member role", other)),
    }
}

pub(crate) const fn visibility_str(visibility: Visibility) -> &'static str {
    match visibility {
        Visibility::Workspace => "workspace",
        Visibility::Restricted => "restricted",
    }
}

pub(crate) fn parse_visibility(text: &str) -> Result<Visibility, StoreError> {
    match text {
        "workspace" => Ok(Visibility::Workspace),
        "restricted" => Ok(Visibility::Restricted),
        other => Err(bad("visibility", other)),
    }
}

pub(crate) const fn access_str(access: Access) -> &'static str {
    match access {
        Access::Read => "read",
        Access::Write => "write",
    }
}

pub(crate) fn parse_access(text: &str) -> Result<Access, StoreError> {
    match text {
        "read" => Ok(Access::Read),
        "write" => Ok(Access::Write),
        other => Err(bad("access", other)),
    }
}

pub(crate) fn scopes_text(scopes: &ScopeSet) -> Result<String, StoreError> {
    serde_json::to_string(scopes).map_err(|e| StoreError(format!("scopes as JSON: {e}")))
}

pub(crate) fn parse_scopes(text: &str) -> Result<ScopeSet, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError(format!("stored scopes {text:?}: {e}")))
}

pub(crate) fn parse_package(text: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError(format!("stored package: {e}")))
}

fn bad(what: &str, text: &str) -> StoreError {
    StoreError(format!(
        "stored {what} {:?} is not one this build knows",
        text.chars().take(64).collect::<String>()
    ))
}

/// The two tables that remember idempotency keys, each read by one statement per backend.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyTable {
    /// The records' `idempotency`.
    Records,
    /// The directory's `directory_idempotency`.
    Directory,
}

impl KeyTable {
    /// The statement reading a key's fingerprint and result: `$1` (SQLite: `?1`) the
    /// workspace, `$2` (`?2`) the key.
    pub(crate) const fn select(self, postgres: bool) -> &'static str {
        match (self, postgres) {
            (Self::Records, false) => {
                "SELECT fingerprint, result FROM idempotency WHERE workspace_id = ?1 AND key = ?2"
            }
            (Self::Records, true) => {
                "SELECT fingerprint, result FROM idempotency WHERE workspace_id = $1 AND key = $2"
            }
            (Self::Directory, false) => {
                "SELECT fingerprint, result FROM directory_idempotency \
                 WHERE workspace_id = ?1 AND key = ?2"
            }
            (Self::Directory, true) => {
                "SELECT fingerprint, result FROM directory_idempotency \
                 WHERE workspace_id = $1 AND key = $2"
            }
        }
    }
}
