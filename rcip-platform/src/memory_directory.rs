//! The directory in memory, behind one mutex.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use uuid::Uuid;

use super::directory::{
    Applied, Collection, DirectoryChange, DirectoryError, DirectoryFuture, DirectoryStore, Grant,
    Member, MemberRole, ProgramDraft, ProgramVersion, Workspace, WorkspaceAccess, refusal,
};
use super::programs::check_activation;
use rcip_records::{IdempotencyEntry, StoreError};
use rcip_runtime::__private::shared::{lock, random_128};

/// Workspaces, members, collections, drafts, program versions, idempotency entries and
/// secrets in memory: no setup, gone with the process. [`apply`](DirectoryStore::apply)
/// holds the one lock for its whole check-and-apply, so concurrent changes are serialized.
///
/// ```
/// use rcip_platform::{DirectoryChange, DirectoryStore, MemoryDirectory, Workspace};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let directory = MemoryDirectory::new();
/// let workspace = Workspace { workspace_id: "acme".into(), name: "Acme".into(), created_at: 0 };
/// directory
///     .apply(DirectoryChange::CreateWorkspace { workspace, owner: "ada".into() }, None)
///     .await
///     .unwrap();
/// let access = directory.access("acme").await.unwrap().unwrap();
/// assert_eq!(access.members[0].principal_id, "ada");
/// # });
/// ```
#[derive(Debug, Default)]
pub struct MemoryDirectory {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    workspaces: BTreeMap<String, Space>,
    /// Installed program versions (every workspace sees them).
    installed: Vec<ProgramVersion>,
    idempotency: HashMap<(String, String), IdempotencyEntry>,
    secrets: HashMap<String, [u8; 32]>,
}

#[derive(Debug)]
struct Space {
    workspace: Workspace,
    members: BTreeMap<String, Member>,
    collections: BTreeMap<String, Collection>,
    drafts: Vec<ProgramDraft>,
    versions: Vec<ProgramVersion>,
}

impl MemoryDirectory {
    /// An empty directory.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }
}

impl Inner {
    fn space(&mut self, workspace_id: &str) -> Result<&mut Space, DirectoryError> {
        self.workspaces
            .get_mut(workspace_id)
            .ok_or(DirectoryError::WorkspaceNotFound)
    }

    fn change(&mut self, change: DirectoryChange) -> Result<Applied, DirectoryError> {
        match change {
            DirectoryChange::CreateWorkspace { workspace, owner } => {
                if self.workspaces.contains_key(&workspace.workspace_id) {
                    return Err(DirectoryError::WorkspaceExists(workspace.workspace_id));
                }
                let owner = Member::human(owner, MemberRole::Owner);
                self.workspaces.insert(
                    workspace.workspace_id.clone(),
                    Space {
                        workspace,
                        members: BTreeMap::from([(owner.principal_id.clone(), owner)]),
                        collections: BTreeMap::new(),
                        drafts: Vec::new(),
                        versions: Vec::new(),
                    },
                );
            }
            DirectoryChange::PutMember {
                workspace_id,
                member,
            } => {
                refusal::check_member(&member)?;
                let space = self.space(&workspace_id)?;
                if let Some(existing) = space.members.get(&member.principal_id) {
                    if existing.kind != member.kind {
                        return Err(DirectoryError::MemberKindConflict(member.principal_id));
                    }
                    if existing.role == MemberRole::Owner
                        && member.role != MemberRole::Owner
                        && space.owners() == 1
                    {
                        return Err(DirectoryError::LastOwner);
                    }
                }
                space.members.insert(member.principal_id.clone(), member);
            }
            DirectoryChange::RemoveMember {
                workspace_id,
                principal_id,
            } => {
                let space = self.space(&workspace_id)?;
                let member = space
                    .members
                    .get(&principal_id)
                    .ok_or(DirectoryError::MemberNotFound)?;
                if member.role == MemberRole::Owner && space.owners() == 1 {
                    return Err(DirectoryError::LastOwner);
                }
                space.members.remove(&principal_id);
                // A member added again later starts without its old grants.
                for collection in space.collections.values_mut() {
                    collection.grants.retain(|g| g.principal_id != principal_id);
                }
            }
            DirectoryChange::CreateCollection { collection } => {
                let space = self.space(&collection.workspace_id)?;
                if space.collections.contains_key(&collection.collection_id) {
                    return Err(DirectoryError::CollectionExists(collection.collection_id));
                }
                if let Some(grant) = collection
                    .grants
                    .iter()
                    .find(|g| !space.members.contains_key(&g.principal_id))
                {
                    return Err(refusal::grant_to_stranger(&grant.principal_id));
                }
                let mut collection = collection;
                collection
                    .grants
                    .sort_by(|a, b| a.principal_id.cmp(&b.principal_id));
                collection
                    .grants
                    .dedup_by(|a, b| a.principal_id == b.principal_id);
                space
                    .collections
                    .insert(collection.collection_id.clone(), collection);
            }
            DirectoryChange::PutGrant {
                workspace_id,
                collection_id,
                grant,
            } => {
                let space = self.space(&workspace_id)?;
                if !space.members.contains_key(&grant.principal_id) {
                    return Err(DirectoryError::MemberNotFound);
                }
                let collection = space
                    .collections
                    .get_mut(&collection_id)
                    .ok_or(DirectoryError::CollectionNotFound)?;
                put_grant(&mut collection.grants, grant);
            }
            DirectoryChange::RemoveGrant {
                workspace_id,
                collection_id,
                principal_id,
            } => {
                let space = self.space(&workspace_id)?;
                let collection = space
                    .collections
                    .get_mut(&collection_id)
                    .ok_or(DirectoryError::CollectionNotFound)?;
                collection.grants.retain(|g| g.principal_id != principal_id);
            }
            DirectoryChange::SaveDraft { draft } => {
                let space = self.space(&draft.workspace_id)?;
                if space.drafts.iter().any(|d| d.draft_id == draft.draft_id) {
                    return Err(refusal::draft_exists(draft.draft_id));
                }
                space.drafts.push(draft);
            }
            DirectoryChange::ActivateProgram { version } => return self.activate(version),
        }
        Ok(Applied::Applied)
    }

    fn activate(&mut self, version: ProgramVersion) -> Result<Applied, DirectoryError> {
        // What the version may conflict with: the installed and the workspace's own; an
        // installed version is seen by every workspace, so it may conflict with any.
        let workspaces: Vec<&Space> = match &version.workspace_id {
            Some(workspace_id) => vec![
                self.workspaces
                    .get(workspace_id)
                    .ok_or(DirectoryError::WorkspaceNotFound)?,
            ],
            None => self.workspaces.values().collect(),
        };
        let existing = self
            .installed
            .iter()
            .chain(workspaces.into_iter().flat_map(|s| &s.versions));
        if let Some(unchanged) = check_activation(existing, &version)? {
            return Ok(unchanged);
        }
        match &version.workspace_id {
            Some(workspace_id) => self.space(&workspace_id.clone())?.versions.push(version),
            None => self.installed.push(version),
        }
        Ok(Applied::Applied)
    }
}

impl Space {
    fn owners(&self) -> usize {
        self.members
            .values()
            .filter(|m| m.role == MemberRole::Owner)
            .count()
    }

    fn access(&self) -> WorkspaceAccess {
        WorkspaceAccess {
            workspace: self.workspace.clone(),
            members: self.members.values().cloned().collect(),
            collections: self.collections.values().cloned().collect(),
        }
    }
}

fn put_grant(grants: &mut Vec<Grant>, grant: Grant) {
    match grants
        .iter_mut()
        .find(|g| g.principal_id == grant.principal_id)
    {
        Some(existing) => existing.access = grant.access,
        None => {
            grants.push(grant);
            grants.sort_by(|a, b| a.principal_id.cmp(&b.principal_id));
        }
    }
}

/// In (namespace, version) order, installed before a workspace's own; a version both
/// installed and active in the workspace (one content: activation sees to it) listed once,
/// as installed.
pub fn by_version(versions: &mut Vec<ProgramVersion>) {
    versions.sort_by(|a, b| {
        (a.namespace.as_str(), a.version, a.workspace_id.is_some()).cmp(&(
            b.namespace.as_str(),
            b.version,
            b.workspace_id.is_some(),
        ))
    });
    versions.dedup_by(|later, first| {
        later.namespace == first.namespace && later.version == first.version
    });
}

impl DirectoryStore for MemoryDirectory {
    fn access<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<WorkspaceAccess>, StoreError>> {
        let inner = lock(&self.inner);
        let access = inner.workspaces.get(workspace_id).map(Space::access);
        Box::pin(std::future::ready(Ok(access)))
    }

    fn workspaces_of<'a>(
        &'a self,
        principal_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<(Workspace, Member)>, StoreError>> {
        let inner = lock(&self.inner);
        let workspaces = inner
            .workspaces
            .values()
            .filter_map(|s| {
                let member = s.members.get(principal_id)?;
                Some((s.workspace.clone(), member.clone()))
            })
            .collect();
        Box::pin(std::future::ready(Ok(workspaces)))
    }

    fn apply(
        &self,
        change: DirectoryChange,
        idempotency: Option<IdempotencyEntry>,
    ) -> DirectoryFuture<'_, Result<Applied, DirectoryError>> {
        let mut inner = lock(&self.inner);
        let outcome = (|| {
            let Some(entry) = idempotency else {
                return inner.change(change);
            };
            change.check_entry(Some(&entry))?;
            let slot = (entry.workspace_id.clone(), entry.key.clone());
            if let Some(stored) = inner.idempotency.get(&slot) {
                return if stored.fingerprint == entry.fingerprint {
                    Ok(Applied::Replayed(stored.clone()))
                } else {
                    Err(DirectoryError::IdempotencyConflict { key: entry.key })
                };
            }
            let applied = inner.change(change)?;
            inner.idempotency.insert(slot, entry);
            Ok(applied)
        })();
        drop(inner);
        Box::pin(std::future::ready(outcome))
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        let inner = lock(&self.inner);
        let entry = inner
            .idempotency
            .get(&(workspace_id.to_owned(), key.to_owned()))
            .cloned();
        Box::pin(std::future::ready(Ok(entry)))
    }

    fn drafts<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramDraft>, StoreError>> {
        let inner = lock(&self.inner);
        let drafts = inner
            .workspaces
            .get(workspace_id)
            .map(|s| s.drafts.clone())
            .unwrap_or_default();
        Box::pin(std::future::ready(Ok(drafts)))
    }

    fn draft<'a>(
        &'a self,
        workspace_id: &'a str,
        draft_id: Uuid,
    ) -> DirectoryFuture<'a, Result<Option<ProgramDraft>, StoreError>> {
        let inner = lock(&self.inner);
        let draft = inner
            .workspaces
            .get(workspace_id)
            .and_then(|s| s.drafts.iter().find(|d| d.draft_id == draft_id).cloned());
        Box::pin(std::future::ready(Ok(draft)))
    }

    fn program_versions<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: Option<&'a str>,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramVersion>, StoreError>> {
        let inner = lock(&self.inner);
        let own = inner
            .workspaces
            .get(workspace_id)
            .map_or(&[][..], |s| s.versions.as_slice());
        let mut versions: Vec<ProgramVersion> = inner
            .installed
            .iter()
            .chain(own)
            .filter(|v| namespace.is_none_or(|n| v.namespace == n))
            .cloned()
            .collect();
        by_version(&mut versions);
        Box::pin(std::future::ready(Ok(versions)))
    }

    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: u64,
    ) -> DirectoryFuture<'a, Result<Option<ProgramVersion>, StoreError>> {
        let inner = lock(&self.inner);
        let own = inner
            .workspaces
            .get(workspace_id)
            .map_or(&[][..], |s| s.versions.as_slice());
        let found = inner
            .installed
            .iter()
            .chain(own)
            .find(|v| v.namespace == namespace && v.version == version)
            .cloned();
        Box::pin(std::future::ready(Ok(found)))
    }

    fn secret<'a>(&'a self, name: &'a str) -> DirectoryFuture<'a, Result<[u8; 32], StoreError>> {
        let mut inner = lock(&self.inner);
        let secret = *inner.secrets.entry(name.to_owned()).or_insert_with(|| {
            let mut bytes = [0u8; 32];
            bytes[..16].copy_from_slice(&random_128());
            bytes[16..].copy_from_slice(&random_128());
            bytes
        });
        Box::pin(std::future::ready(Ok(secret)))
    }
}
