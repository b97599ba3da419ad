//! The directory on PostgreSQL (migration 0002): [`DirectoryStore`] for [`PostgresStore`], so
//! several instances of a service share workspaces, members, collections and programs.
//!
//! A change is one transaction: its idempotency entry is inserted first (a concurrent call
//! with the same key waits on that row, then finds it and is answered as a replay), then the
//! workspace's row is locked (`FOR UPDATE`), so the rules that read before they write (the
//! last owner, a member's kind) see every earlier change of the workspace; an activation also
//! takes an advisory lock on `namespace/version`, which serializes a workspace's activation
//! with an installation of the same version. A refusal rolls everything back, the entry too.

use deadpool_postgres::Transaction;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use super::{PostgresStore, int, pg, remembered};
use crate::rows::KeyTable;
use crate::rows::{
    access_str, check_activation, check_removal, check_replace, parse_access, parse_kind,
    parse_package, parse_role, parse_scopes, parse_visibility, scopes_text, visibility_str,
};
use crate::traced::traced;
use rcip_platform::__private::{by_version, refusal};
use rcip_platform::{
    Applied, Collection, DirectoryChange, DirectoryError, DirectoryFuture, DirectoryStore, Grant,
    Member, MemberRole, ProgramDraft, ProgramVersion, Workspace, WorkspaceAccess,
};
use rcip_records::{IdempotencyEntry, StoreError};

/// A workspace's access in one statement: `(part, a, b, c, d, n)` rows, the workspace first
/// (part 0: id, name, created at), then its members (1: principal, kind, role, scopes) by
/// principal, its collections (2: id, name, visibility, created at) by id, and their grants
/// (3: collection, principal, access) by principal. No rows: no such workspace.
const ACCESS: &str = "SELECT 0 AS part, workspace_id AS a, name AS b, NULL::text AS c, \
     NULL::text AS d, created_at AS n, '' COLLATE \"C\" AS sort FROM workspaces \
     WHERE workspace_id = $1 \
     UNION ALL SELECT 1, principal_id, kind, role, scopes, NULL, principal_id COLLATE \"C\" \
     FROM members WHERE workspace_id = $1 \
     UNION ALL SELECT 2, collection_id, name, visibility, NULL, created_at, \
     collection_id COLLATE \"C\" FROM collections WHERE workspace_id = $1 \
     UNION ALL SELECT 3, collection_id, principal_id, access, NULL, NULL, \
     principal_id COLLATE \"C\" FROM collection_grants WHERE workspace_id = $1 \
     ORDER BY part, sort";

/// The advisory lock class of activations (the second key hashes schema, namespace and
/// version): apart from the migrations' class.
const ACTIVATION_LOCK: i32 = 0x7263_6961; // "rcia"

const VERSION_COLUMNS: &str =
    "workspace_id, namespace, version, digest, package, activated_at, activated_by";

const DRAFT_COLUMNS: &str =
    "workspace_id, draft_id, namespace, version, digest, package, created_at, created_by";

impl PostgresStore {
    async fn directory_access(
        &self,
        workspace_id: &str,
    ) -> Result<Option<WorkspaceAccess>, StoreError> {
        let client = self.client().await?;
        // One statement, so one snapshot and one round trip: the workspace (part 0), its
        // members (1), collections (2) and grants (3), each part in its order.
        let statement = client.prepare_cached(ACCESS).await.map_err(pg)?;
        let rows = client
            .query(&statement, &[&workspace_id])
            .await
            .map_err(pg)?;
        let mut rows = rows.iter();
        // The foreign keys keep parts 1 to 3 from outliving part 0.
        let Some(first) = rows.next() else {
            return Ok(None);
        };
        if first.try_get::<_, i32>(0).map_err(pg)? != 0 {
            return Ok(None);
        }
        let workspace = Workspace {
            workspace_id: first.try_get(1).map_err(pg)?,
            name: first.try_get(2).map_err(pg)?,
            created_at: unsigned(first, 5)?,
        };
        let mut members = Vec::new();
        let mut collections: Vec<Collection> = Vec::new();
        for row in rows {
            let part: i32 = row.try_get(0).map_err(pg)?;
            match part {
                1 => members.push(Member {
                    principal_id: row.try_get(1).map_err(pg)?,
                    kind: parse_kind(row.try_get(2).map_err(pg)?)?,
                    role: parse_role(row.try_get(3).map_err(pg)?)?,
                    scopes: parse_scopes(row.try_get(4).map_err(pg)?)?,
                }),
                2 => collections.push(Collection {
                    workspace_id: workspace_id.to_owned(),
                    collection_id: row.try_get(1).map_err(pg)?,
                    name: row.try_get(2).map_err(pg)?,
                    visibility: parse_visibility(row.try_get(3).map_err(pg)?)?,
                    grants: Vec::new(),
                    created_at: unsigned(row, 5)?,
                }),
                _ => {
                    let collection_id: &str = row.try_get(1).map_err(pg)?;
                    let grant = Grant {
                        principal_id: row.try_get(2).map_err(pg)?,
                        access: parse_access(row.try_get(3).map_err(pg)?)?,
                    };
                    if let Some(collection) = collections
                        .iter_mut()
                        .find(|c| c.collection_id == collection_id)
                    {
                        collection.grants.push(grant);
                    }
                }
            }
        }
        Ok(Some(WorkspaceAccess {
            workspace,
            members,
            collections,
        }))
    }

    async fn directory_apply(
        &self,
        change: DirectoryChange,
        idempotency: Option<IdempotencyEntry>,
    ) -> Result<Applied, DirectoryError> {
        change.check_entry(idempotency.as_ref())?;
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(pg)?;
        let outcome = match remember(&transaction, idempotency.as_ref()).await {
            Ok(None) => change_in(&transaction, change).await,
            Ok(Some(replayed)) => Ok(Applied::Replayed(replayed)),
            Err(error) => Err(error),
        };
        match outcome {
            Ok(applied @ (Applied::Applied | Applied::Unchanged)) => {
                transaction.commit().await.map_err(pg)?;
                Ok(applied)
            }
            // Rolled back and awaited: the connection goes back to the pool holding no lock.
            other => {
                let _ = transaction.rollback().await;
                other
            }
        }
    }

    async fn workspaces_of(
        &self,
        principal_id: &str,
    ) -> Result<Vec<(Workspace, Member)>, StoreError> {
        let client = self.client().await?;
        client
            .query(
                "SELECT w.workspace_id, w.name, w.created_at, \
                 m.principal_id, m.kind, m.role, m.scopes FROM workspaces w \
                 JOIN members m ON m.workspace_id = w.workspace_id WHERE m.principal_id = $1 \
                 ORDER BY w.workspace_id COLLATE \"C\"",
                &[&principal_id],
            )
            .await
            .map_err(pg)?
            .iter()
            .map(|row| Ok((workspace_row(row)?, member_at(row, 3)?)))
            .collect()
    }

    async fn directory_idempotency(
        &self,
        workspace_id: &str,
        key: &str,
    ) -> Result<Option<IdempotencyEntry>, StoreError> {
        let client = self.client().await?;
        remembered(&client, KeyTable::Directory, workspace_id, key)
            .await
            .map_err(pg)
    }

    async fn drafts(
        &self,
        workspace_id: &str,
        draft_id: Option<Uuid>,
    ) -> Result<Vec<ProgramDraft>, StoreError> {
        let client = self.client().await?;
        client
            .query(
                &format!(
                    "SELECT {DRAFT_COLUMNS} FROM program_drafts WHERE workspace_id = $1 \
                     AND ($2::uuid IS NULL OR draft_id = $2) ORDER BY position"
                ),
                &[&workspace_id, &draft_id],
            )
            .await
            .map_err(pg)?
            .iter()
            .map(draft_row)
            .collect()
    }

    /// The versions `workspace_id` sees (its own and the installed), of `namespace` and
    /// `version` when given, in the memory directory's order.
    async fn versions_seen(
        &self,
        workspace_id: &str,
        namespace: Option<&str>,
        version: Option<u64>,
    ) -> Result<Vec<ProgramVersion>, StoreError> {
        let client = self.client().await?;
        let version = version.map(int).transpose()?;
        let mut versions = client
            .query(
                &format!(
                    "SELECT {VERSION_COLUMNS} FROM program_versions \
                     WHERE (workspace_id = $1 OR workspace_id IS NULL) \
                     AND ($2::text IS NULL OR namespace = $2) \
                     AND ($3::int8 IS NULL OR version = $3)"
                ),
                &[&workspace_id, &namespace, &version],
            )
            .await
            .map_err(pg)?
            .iter()
            .map(version_row)
            .collect::<Result<Vec<_>, _>>()?;
        // Sorted here, not in SQL: the memory directory's order is by bytes, whatever the
        // database's collation.
        by_version(&mut versions);
        Ok(versions)
    }
}

/// Inserts the entry; when the key is taken, the stored entry (a replay) or a conflict.
async fn remember(
    transaction: &Transaction<'_>,
    entry: Option<&IdempotencyEntry>,
) -> Result<Option<IdempotencyEntry>, DirectoryError> {
    let Some(entry) = entry else {
        return Ok(None);
    };
    let inserted = transaction
        .execute(
            "INSERT INTO directory_idempotency (workspace_id, key, fingerprint, result) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id, key) DO NOTHING",
            &[
                &entry.workspace_id,
                &entry.key,
                &entry.fingerprint,
                &entry.result,
            ],
        )
        .await
        .map_err(pg)?;
    if inserted == 1 {
        return Ok(None);
    }
    // The insert waited for the transaction holding the key; this new statement sees its row.
    let stored = remembered(
        transaction,
        KeyTable::Directory,
        &entry.workspace_id,
        &entry.key,
    )
    .await
    .map_err(pg)?
    .ok_or_else(|| StoreError("postgres: an idempotency key taken and gone".into()))?;
    if stored.fingerprint == entry.fingerprint {
        Ok(Some(stored))
    } else {
        Err(DirectoryError::IdempotencyConflict {
            key: entry.key.clone(),
        })
    }
}

async fn change_in(
    transaction: &Transaction<'_>,
    change: DirectoryChange,
) -> Result<Applied, DirectoryError> {
    match change {
        DirectoryChange::CreateWorkspace { workspace, owner } => {
            let created = execute(
                transaction,
                "INSERT INTO workspaces (workspace_id, name, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (workspace_id) DO NOTHING",
                &[
                    &workspace.workspace_id,
                    &workspace.name,
                    &int(workspace.created_at)?,
                ],
            )
            .await?;
            if created == 0 {
                return Err(DirectoryError::WorkspaceExists(workspace.workspace_id));
            }
            put_member(
                transaction,
                &workspace.workspace_id,
                &Member::human(owner, MemberRole::Owner),
            )
            .await?;
        }
        DirectoryChange::PutMember {
            workspace_id,
            member,
        } => {
            refusal::check_member(&member)?;
            lock_workspace(transaction, &workspace_id).await?;
            if let Some(existing) =
                member_of(transaction, &workspace_id, &member.principal_id).await?
            {
                check_replace(
                    &existing,
                    &member,
                    owners(transaction, &workspace_id).await?,
                )?;
            }
            put_member(transaction, &workspace_id, &member).await?;
        }
        DirectoryChange::RemoveMember {
            workspace_id,
            principal_id,
        } => {
            lock_workspace(transaction, &workspace_id).await?;
            let member = member_of(transaction, &workspace_id, &principal_id)
                .await?
                .ok_or(DirectoryError::MemberNotFound)?;
            check_removal(&member, owners(transaction, &workspace_id).await?)?;
            // Its grants go with it (the foreign key cascades).
            execute(
                transaction,
                "DELETE FROM members WHERE workspace_id = $1 AND principal_id = $2",
                &[&workspace_id, &principal_id],
            )
            .await?;
        }
        DirectoryChange::CreateCollection { collection } => {
            let workspace_id = &collection.workspace_id;
            lock_workspace(transaction, workspace_id).await?;
            let created = execute(
                transaction,
                "INSERT INTO collections (workspace_id, collection_id, name, visibility, \
                 created_at) VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (workspace_id, collection_id) DO NOTHING",
                &[
                    workspace_id,
                    &collection.collection_id,
                    &collection.name,
                    &visibility_str(collection.visibility),
                    &int(collection.created_at)?,
                ],
            )
            .await?;
            if created == 0 {
                return Err(DirectoryError::CollectionExists(collection.collection_id));
            }
            // In the order given: a principal granted twice keeps its first grant.
            for grant in &collection.grants {
                if member_of(transaction, workspace_id, &grant.principal_id)
                    .await?
                    .is_none()
                {
                    return Err(refusal::grant_to_stranger(&grant.principal_id));
                }
                execute(
                    transaction,
                    "INSERT INTO collection_grants (workspace_id, collection_id, principal_id, \
                     access) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                    &[
                        workspace_id,
                        &collection.collection_id,
                        &grant.principal_id,
                        &access_str(grant.access),
                    ],
                )
                .await?;
            }
        }
        DirectoryChange::PutGrant {
            workspace_id,
            collection_id,
            grant,
        } => {
            lock_workspace(transaction, &workspace_id).await?;
            if member_of(transaction, &workspace_id, &grant.principal_id)
                .await?
                .is_none()
            {
                return Err(DirectoryError::MemberNotFound);
            }
            collection_exists(transaction, &workspace_id, &collection_id).await?;
            execute(
                transaction,
                "INSERT INTO collection_grants (workspace_id, collection_id, principal_id, access) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id, collection_id, principal_id) \
                 DO UPDATE SET access = EXCLUDED.access",
                &[
                    &workspace_id,
                    &collection_id,
                    &grant.principal_id,
                    &access_str(grant.access),
                ],
            )
            .await?;
        }
        DirectoryChange::RemoveGrant {
            workspace_id,
            collection_id,
            principal_id,
        } => {
            lock_workspace(transaction, &workspace_id).await?;
            collection_exists(transaction, &workspace_id, &collection_id).await?;
            execute(
                transaction,
                "DELETE FROM collection_grants WHERE workspace_id = $1 AND collection_id = $2 \
                 AND principal_id = $3",
                &[&workspace_id, &collection_id, &principal_id],
            )
            .await?;
        }
        DirectoryChange::SaveDraft { draft } => {
            lock_workspace(transaction, &draft.workspace_id).await?;
            let saved = execute(
                transaction,
                &format!(
                    "INSERT INTO program_drafts ({DRAFT_COLUMNS}) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (workspace_id, draft_id) DO NOTHING"
                ),
                &[
                    &draft.workspace_id,
                    &draft.draft_id,
                    &draft.namespace,
                    &int(draft.version)?,
                    &draft.digest,
                    &draft.package.to_string(),
                    &int(draft.created_at)?,
                    &draft.created_by,
                ],
            )
            .await?;
            if saved == 0 {
                return Err(refusal::draft_exists(draft.draft_id));
            }
        }
        DirectoryChange::ActivateProgram { version } => {
            return activate(transaction, version).await;
        }
    }
    Ok(Applied::Applied)
}

async fn activate(
    transaction: &Transaction<'_>,
    version: ProgramVersion,
) -> Result<Applied, DirectoryError> {
    if let Some(workspace_id) = &version.workspace_id {
        lock_workspace(transaction, workspace_id).await?;
    }
    let number = int(version.version)?;
    execute(
        transaction,
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || '/' || $2 || '/' || $3::int8::text))",
        &[&ACTIVATION_LOCK, &version.namespace, &number],
    )
    .await?;
    // Every activation of namespace/version: a workspace's conflicts with its own and the
    // installed; an installed one with any.
    let existing = transaction
        .query(
            &format!(
                "SELECT {VERSION_COLUMNS} FROM program_versions WHERE namespace = $1 \
                 AND version = $2 AND ($3::text IS NULL OR workspace_id IS NULL \
                 OR workspace_id = $3)"
            ),
            &[&version.namespace, &number, &version.workspace_id],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(version_row)
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(unchanged) = check_activation(&existing, &version)? {
        return Ok(unchanged);
    }
    execute(
        transaction,
        &format!(
            "INSERT INTO program_versions ({VERSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
        ),
        &[
            &version.workspace_id,
            &version.namespace,
            &number,
            &version.digest,
            &version.package.to_string(),
            &int(version.activated_at)?,
            &version.activated_by,
        ],
    )
    .await?;
    Ok(Applied::Applied)
}

async fn execute(
    transaction: &Transaction<'_>,
    statement: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, StoreError> {
    transaction.execute(statement, params).await.map_err(pg)
}

/// Locks the workspace's row until the transaction ends: its changes happen one at a time.
async fn lock_workspace(
    transaction: &Transaction<'_>,
    workspace_id: &str,
) -> Result<(), DirectoryError> {
    transaction
        .query_opt(
            "SELECT 1 FROM workspaces WHERE workspace_id = $1 FOR UPDATE",
            &[&workspace_id],
        )
        .await
        .map_err(pg)?
        .map(drop)
        .ok_or(DirectoryError::WorkspaceNotFound)
}

async fn member_of(
    transaction: &Transaction<'_>,
    workspace_id: &str,
    principal_id: &str,
) -> Result<Option<Member>, StoreError> {
    transaction
        .query_opt(
            "SELECT principal_id, kind, role, scopes FROM members \
             WHERE workspace_id = $1 AND principal_id = $2",
            &[&workspace_id, &principal_id],
        )
        .await
        .map_err(pg)?
        .map(|row| member_row(&row))
        .transpose()
}

async fn owners(transaction: &Transaction<'_>, workspace_id: &str) -> Result<u64, StoreError> {
    let count: i64 = transaction
        .query_one(
            "SELECT count(*) FROM members WHERE workspace_id = $1 AND role = 'owner'",
            &[&workspace_id],
        )
        .await
        .and_then(|row| row.try_get(0))
        .map_err(pg)?;
    Ok(count.unsigned_abs())
}

async fn put_member(
    transaction: &Transaction<'_>,
    workspace_id: &str,
    member: &Member,
) -> Result<(), StoreError> {
    // The kind is written once: an existing member keeps its own (checked by the caller).
    execute(
        transaction,
        "INSERT INTO members (workspace_id, principal_id, kind, role, scopes) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id, principal_id) \
         DO UPDATE SET role = EXCLUDED.role, scopes = EXCLUDED.scopes",
        &[
            &workspace_id,
            &member.principal_id,
            &member.kind.as_str(),
            &member.role.as_str(),
            &scopes_text(&member.scopes)?,
        ],
    )
    .await
    .map(drop)
}

async fn collection_exists(
    transaction: &Transaction<'_>,
    workspace_id: &str,
    collection_id: &str,
) -> Result<(), DirectoryError> {
    transaction
        .query_opt(
            "SELECT 1 FROM collections WHERE workspace_id = $1 AND collection_id = $2",
            &[&workspace_id, &collection_id],
        )
        .await
        .map_err(pg)?
        .map(drop)
        .ok_or(DirectoryError::CollectionNotFound)
}

fn unsigned(row: &Row, index: usize) -> Result<u64, StoreError> {
    let value: i64 = row.try_get(index).map_err(pg)?;
    u64::try_from(value).map_err(|_| StoreError(format!("postgres: a stored {value} below 0")))
}

fn workspace_row(row: &Row) -> Result<Workspace, StoreError> {
    Ok(Workspace {
        workspace_id: row.try_get(0).map_err(pg)?,
        name: row.try_get(1).map_err(pg)?,
        created_at: unsigned(row, 2)?,
    })
}

fn member_row(row: &Row) -> Result<Member, StoreError> {
    member_at(row, 0)
}

/// The member in the row's four columns from `at` on.
fn member_at(row: &Row, at: usize) -> Result<Member, StoreError> {
    Ok(Member {
        principal_id: row.try_get(at).map_err(pg)?,
        kind: parse_kind(row.try_get(at + 1).map_err(pg)?)?,
        role: parse_role(row.try_get(at + 2).map_err(pg)?)?,
        scopes: parse_scopes(row.try_get(at + 3).map_err(pg)?)?,
    })
}

/// A row in `DRAFT_COLUMNS` order.
fn draft_row(row: &Row) -> Result<ProgramDraft, StoreError> {
    Ok(ProgramDraft {
        workspace_id: row.try_get(0).map_err(pg)?,
        draft_id: row.try_get(1).map_err(pg)?,
        namespace: row.try_get(2).map_err(pg)?,
        version: unsigned(row, 3)?,
        digest: row.try_get(4).map_err(pg)?,
        package: parse_package(row.try_get(5).map_err(pg)?)?,
        created_at: unsigned(row, 6)?,
        created_by: row.try_get(7).map_err(pg)?,
    })
}

/// A row in `VERSION_COLUMNS` order.
fn version_row(row: &Row) -> Result<ProgramVersion, StoreError> {
    Ok(ProgramVersion {
        workspace_id: row.try_get(0).map_err(pg)?,
        namespace: row.try_get(1).map_err(pg)?,
        version: unsigned(row, 2)?,
        digest: row.try_get(3).map_err(pg)?,
        package: parse_package(row.try_get(4).map_err(pg)?)?,
        activated_at: unsigned(row, 5)?,
        activated_by: row.try_get(6).map_err(pg)?,
    })
}

impl DirectoryStore for PostgresStore {
    fn access<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<WorkspaceAccess>, StoreError>> {
        traced(
            "postgres",
            "directory.access",
            self.directory_access(workspace_id),
        )
    }

    fn workspaces_of<'a>(
        &'a self,
        principal_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<(Workspace, Member)>, StoreError>> {
        traced(
            "postgres",
            "directory.workspaces_of",
            PostgresStore::workspaces_of(self, principal_id),
        )
    }

    fn apply(
        &self,
        change: DirectoryChange,
        idempotency: Option<IdempotencyEntry>,
    ) -> DirectoryFuture<'_, Result<Applied, DirectoryError>> {
        traced(
            "postgres",
            "directory.apply",
            self.directory_apply(change, idempotency),
        )
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        traced(
            "postgres",
            "directory.idempotency",
            self.directory_idempotency(workspace_id, key),
        )
    }

    fn drafts<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramDraft>, StoreError>> {
        traced(
            "postgres",
            "directory.drafts",
            PostgresStore::drafts(self, workspace_id, None),
        )
    }

    fn draft<'a>(
        &'a self,
        workspace_id: &'a str,
        draft_id: Uuid,
    ) -> DirectoryFuture<'a, Result<Option<ProgramDraft>, StoreError>> {
        traced("postgres", "directory.draft", async move {
            Ok(PostgresStore::drafts(self, workspace_id, Some(draft_id))
                .await?
                .pop())
        })
    }

    fn program_versions<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: Option<&'a str>,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramVersion>, StoreError>> {
        traced(
            "postgres",
            "directory.program_versions",
            self.versions_seen(workspace_id, namespace, None),
        )
    }

    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: u64,
    ) -> DirectoryFuture<'a, Result<Option<ProgramVersion>, StoreError>> {
        traced("postgres", "directory.program", async move {
            let mut seen = self
                .versions_seen(workspace_id, Some(namespace), Some(version))
                .await?;
            // At most one after `by_version`'s dedup (installed first).
            Ok((!seen.is_empty()).then(|| seen.swap_remove(0)))
        })
    }

    fn secret<'a>(&'a self, name: &'a str) -> DirectoryFuture<'a, Result<[u8; 32], StoreError>> {
        traced(
            "postgres",
            "directory.secret",
            PostgresStore::secret(self, name),
        )
    }

    fn ready(&self) -> DirectoryFuture<'_, Result<(), StoreError>> {
        traced("postgres", "ready", PostgresStore::ready(self))
    }
}
