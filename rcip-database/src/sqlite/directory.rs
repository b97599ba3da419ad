//! The directory in SQLite: [`DirectoryStore`] for [`SqliteStore`], in the same file as the
//! records (tables created at open, like the record tables).
//!
//! A change is one `IMMEDIATE` transaction (one writer at a time, also across processes on
//! one file): its idempotency key is read first, the change checked and written, the entry
//! stored, all committed together; a refusal rolls everything back. Every call runs on the
//! store's own thread, as the record store's do.

use rusqlite::types::ToSql;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use uuid::Uuid;

use super::{SqliteStore, int, read_idempotency, secret, sql};
use crate::rows::KeyTable;
use crate::rows::{
    access_str, check_activation, check_removal, check_replace, parse_access, parse_kind,
    parse_package, parse_role, parse_scopes, parse_visibility, scopes_text, visibility_str,
};
use rcip_platform::__private::{by_version, refusal};
use rcip_platform::{
    Applied, Collection, DirectoryChange, DirectoryError, DirectoryFuture, DirectoryStore, Grant,
    Member, MemberRole, ProgramDraft, ProgramVersion, Workspace, WorkspaceAccess,
};
use rcip_records::{IdempotencyEntry, StoreError};

const VERSION_COLUMNS: &str =
    "workspace_id, namespace, version, digest, package, activated_at, activated_by";

const DRAFT_COLUMNS: &str =
    "workspace_id, draft_id, namespace, version, digest, package, created_at, created_by";

/// Every row of `statement` with `params`, each read by `read`.
fn all<T>(
    connection: &Connection,
    statement: &str,
    params: &[&dyn ToSql],
    read: impl Fn(&Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let mut statement = connection.prepare_cached(statement).map_err(sql)?;
    let mut rows = statement.query(params).map_err(sql)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sql)? {
        out.push(read(row)?);
    }
    Ok(out)
}

fn access(
    connection: &Connection,
    workspace_id: &str,
) -> Result<Option<WorkspaceAccess>, StoreError> {
    // One read transaction: the four reads see one state of the file.
    let transaction = connection.unchecked_transaction().map_err(sql)?;
    let Some(workspace) = all(
        &transaction,
        "SELECT workspace_id, name, created_at FROM workspaces WHERE workspace_id = ?1",
        &[&workspace_id],
        workspace_row,
    )?
    .pop() else {
        return Ok(None);
    };
    let members = all(
        &transaction,
        "SELECT principal_id, kind, role, scopes FROM members WHERE workspace_id = ?1 \
         ORDER BY principal_id",
        &[&workspace_id],
        member_row,
    )?;
    let mut collections = all(
        &transaction,
        "SELECT collection_id, name, visibility, created_at FROM collections \
         WHERE workspace_id = ?1 ORDER BY collection_id",
        &[&workspace_id],
        |row| collection_row(workspace_id, row),
    )?;
    let grants = all(
        &transaction,
        "SELECT collection_id, principal_id, access FROM collection_grants \
         WHERE workspace_id = ?1 ORDER BY principal_id",
        &[&workspace_id],
        |row| {
            let collection_id: String = row.get(0).map_err(sql)?;
            let grant = Grant {
                principal_id: row.get(1).map_err(sql)?,
                access: parse_access(&row.get::<_, String>(2).map_err(sql)?)?,
            };
            Ok((collection_id, grant))
        },
    )?;
    for (collection_id, grant) in grants {
        if let Some(collection) = collections
            .iter_mut()
            .find(|c| c.collection_id == collection_id)
        {
            collection.grants.push(grant);
        }
    }
    transaction.commit().map_err(sql)?;
    Ok(Some(WorkspaceAccess {
        workspace,
        members,
        collections,
    }))
}

fn apply(
    connection: &mut Connection,
    change: DirectoryChange,
    idempotency: Option<IdempotencyEntry>,
) -> Result<Applied, DirectoryError> {
    change.check_entry(idempotency.as_ref())?;
    // Dropped without a commit (every early return): rolled back.
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql)?;
    if let Some(entry) = &idempotency
        && let Some(stored) = read_idempotency(
            &transaction,
            KeyTable::Directory,
            &entry.workspace_id,
            &entry.key,
        )?
    {
        return if stored.fingerprint == entry.fingerprint {
            Ok(Applied::Replayed(stored))
        } else {
            Err(DirectoryError::IdempotencyConflict {
                key: entry.key.clone(),
            })
        };
    }
    let applied = change_in(&transaction, change)?;
    if let Some(entry) = &idempotency {
        transaction
            .execute(
                "INSERT INTO directory_idempotency (workspace_id, key, fingerprint, result) \
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    entry.workspace_id,
                    entry.key,
                    entry.fingerprint,
                    entry.result
                ],
            )
            .map_err(sql)?;
    }
    transaction.commit().map_err(sql)?;
    Ok(applied)
}

fn change_in(connection: &Connection, change: DirectoryChange) -> Result<Applied, DirectoryError> {
    match change {
        DirectoryChange::CreateWorkspace { workspace, owner } => {
            let created = connection
                .execute(
                    "INSERT OR IGNORE INTO workspaces (workspace_id, name, created_at) \
                     VALUES (?1, ?2, ?3)",
                    params![
                        workspace.workspace_id,
                        workspace.name,
                        int(workspace.created_at)?
                    ],
                )
                .map_err(sql)?;
            if created == 0 {
                return Err(DirectoryError::WorkspaceExists(workspace.workspace_id));
            }
            put_member(
                connection,
                &workspace.workspace_id,
                &Member::human(owner, MemberRole::Owner),
            )?;
        }
        DirectoryChange::PutMember {
            workspace_id,
            member,
        } => {
            refusal::check_member(&member)?;
            workspace_exists(connection, &workspace_id)?;
            if let Some(existing) = member_of(connection, &workspace_id, &member.principal_id)? {
                check_replace(&existing, &member, owners(connection, &workspace_id)?)?;
            }
            put_member(connection, &workspace_id, &member)?;
        }
        DirectoryChange::RemoveMember {
            workspace_id,
            principal_id,
        } => {
            workspace_exists(connection, &workspace_id)?;
            let member = member_of(connection, &workspace_id, &principal_id)?
                .ok_or(DirectoryError::MemberNotFound)?;
            check_removal(&member, owners(connection, &workspace_id)?)?;
            // Its grants go with it: added again, it starts without them.
            for table in ["collection_grants", "members"] {
                connection
                    .execute(
                        &format!(
                            "DELETE FROM {table} WHERE workspace_id = ?1 AND principal_id = ?2"
                        ),
                        params![workspace_id, principal_id],
                    )
                    .map_err(sql)?;
            }
        }
        DirectoryChange::CreateCollection { collection } => {
            let workspace_id = &collection.workspace_id;
            workspace_exists(connection, workspace_id)?;
            let created = connection
                .execute(
                    "INSERT OR IGNORE INTO collections (workspace_id, collection_id, name, \
                     visibility, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![
                        workspace_id,
                        collection.collection_id,
                        collection.name,
                        visibility_str(collection.visibility),
                        int(collection.created_at)?
                    ],
                )
                .map_err(sql)?;
            if created == 0 {
                return Err(DirectoryError::CollectionExists(collection.collection_id));
            }
            // In the order given: a principal granted twice keeps its first grant.
            for grant in &collection.grants {
                if member_of(connection, workspace_id, &grant.principal_id)?.is_none() {
                    return Err(refusal::grant_to_stranger(&grant.principal_id));
                }
                connection
                    .execute(
                        "INSERT OR IGNORE INTO collection_grants (workspace_id, collection_id, \
                         principal_id, access) VALUES (?1, ?2, ?3, ?4)",
                        params![
                            workspace_id,
                            collection.collection_id,
                            grant.principal_id,
                            access_str(grant.access)
                        ],
                    )
                    .map_err(sql)?;
            }
        }
        DirectoryChange::PutGrant {
            workspace_id,
            collection_id,
            grant,
        } => {
            workspace_exists(connection, &workspace_id)?;
            if member_of(connection, &workspace_id, &grant.principal_id)?.is_none() {
                return Err(DirectoryError::MemberNotFound);
            }
            collection_exists(connection, &workspace_id, &collection_id)?;
            connection
                .execute(
                    "INSERT INTO collection_grants (workspace_id, collection_id, principal_id, \
                     access) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (workspace_id, collection_id, \
                     principal_id) DO UPDATE SET access = excluded.access",
                    params![
                        workspace_id,
                        collection_id,
                        grant.principal_id,
                        access_str(grant.access)
                    ],
                )
                .map_err(sql)?;
        }
        DirectoryChange::RemoveGrant {
            workspace_id,
            collection_id,
            principal_id,
        } => {
            workspace_exists(connection, &workspace_id)?;
            collection_exists(connection, &workspace_id, &collection_id)?;
            connection
                .execute(
                    "DELETE FROM collection_grants WHERE workspace_id = ?1 AND collection_id = ?2 \
                     AND principal_id = ?3",
                    params![workspace_id, collection_id, principal_id],
                )
                .map_err(sql)?;
        }
        DirectoryChange::SaveDraft { draft } => {
            workspace_exists(connection, &draft.workspace_id)?;
            let saved = connection
                .execute(
                    &format!(
                        "INSERT OR IGNORE INTO program_drafts ({DRAFT_COLUMNS}) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                    ),
                    params![
                        draft.workspace_id,
                        draft.draft_id.to_string(),
                        draft.namespace,
                        int(draft.version)?,
                        draft.digest,
                        draft.package.to_string(),
                        int(draft.created_at)?,
                        draft.created_by
                    ],
                )
                .map_err(sql)?;
            if saved == 0 {
                return Err(refusal::draft_exists(draft.draft_id));
            }
        }
        DirectoryChange::ActivateProgram { version } => {
            if let Some(workspace_id) = &version.workspace_id {
                workspace_exists(connection, workspace_id)?;
            }
            let number = int(version.version)?;
            let existing = all(
                connection,
                &format!(
                    "SELECT {VERSION_COLUMNS} FROM program_versions WHERE namespace = ?1 \
                     AND version = ?2 AND (?3 IS NULL OR workspace_id IS NULL \
                     OR workspace_id = ?3)"
                ),
                &[&version.namespace, &number, &version.workspace_id],
                version_row,
            )?;
            if let Some(unchanged) = check_activation(&existing, &version)? {
                return Ok(unchanged);
            }
            connection
                .execute(
                    &format!(
                        "INSERT INTO program_versions ({VERSION_COLUMNS}) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                    ),
                    params![
                        version.workspace_id,
                        version.namespace,
                        number,
                        version.digest,
                        version.package.to_string(),
                        int(version.activated_at)?,
                        version.activated_by
                    ],
                )
                .map_err(sql)?;
        }
    }
    Ok(Applied::Applied)
}

fn workspace_exists(connection: &Connection, workspace_id: &str) -> Result<(), DirectoryError> {
    connection
        .query_row(
            "SELECT 1 FROM workspaces WHERE workspace_id = ?1",
            [workspace_id],
            |_| Ok(()),
        )
        .optional()
        .map_err(sql)?
        .ok_or(DirectoryError::WorkspaceNotFound)
}

fn collection_exists(
    connection: &Connection,
    workspace_id: &str,
    collection_id: &str,
) -> Result<(), DirectoryError> {
    connection
        .query_row(
            "SELECT 1 FROM collections WHERE workspace_id = ?1 AND collection_id = ?2",
            [workspace_id, collection_id],
            |_| Ok(()),
        )
        .optional()
        .map_err(sql)?
        .ok_or(DirectoryError::CollectionNotFound)
}

fn member_of(
    connection: &Connection,
    workspace_id: &str,
    principal_id: &str,
) -> Result<Option<Member>, StoreError> {
    Ok(all(
        connection,
        "SELECT principal_id, kind, role, scopes FROM members \
         WHERE workspace_id = ?1 AND principal_id = ?2",
        &[&workspace_id, &principal_id],
        member_row,
    )?
    .pop())
}

fn owners(connection: &Connection, workspace_id: &str) -> Result<u64, StoreError> {
    let count: i64 = connection
        .query_row(
            "SELECT count(*) FROM members WHERE workspace_id = ?1 AND role = 'owner'",
            [workspace_id],
            |row| row.get(0),
        )
        .map_err(sql)?;
    Ok(count.unsigned_abs())
}

fn put_member(
    connection: &Connection,
    workspace_id: &str,
    member: &Member,
) -> Result<(), StoreError> {
    // The kind is written once: an existing member keeps its own (checked by the caller).
    connection
        .execute(
            "INSERT INTO members (workspace_id, principal_id, kind, role, scopes) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (workspace_id, principal_id) \
             DO UPDATE SET role = excluded.role, scopes = excluded.scopes",
            params![
                workspace_id,
                member.principal_id,
                member.kind.as_str(),
                member.role.as_str(),
                scopes_text(&member.scopes)?
            ],
        )
        .map(drop)
        .map_err(sql)
}

fn unsigned(row: &Row<'_>, index: usize) -> Result<u64, StoreError> {
    let value: i64 = row.get(index).map_err(sql)?;
    u64::try_from(value).map_err(|_| StoreError(format!("sqlite: a stored {value} below 0")))
}

fn text(row: &Row<'_>, index: usize) -> Result<String, StoreError> {
    row.get(index).map_err(sql)
}

fn workspace_row(row: &Row<'_>) -> Result<Workspace, StoreError> {
    Ok(Workspace {
        workspace_id: text(row, 0)?,
        name: text(row, 1)?,
        created_at: unsigned(row, 2)?,
    })
}

fn member_row(row: &Row<'_>) -> Result<Member, StoreError> {
    member_at(row, 0)
}

/// The member in the row's four columns from `at` on.
fn member_at(row: &Row<'_>, at: usize) -> Result<Member, StoreError> {
    Ok(Member {
        principal_id: text(row, at)?,
        kind: parse_kind(&text(row, at + 1)?)?,
        role: parse_role(&text(row, at + 2)?)?,
        scopes: parse_scopes(&text(row, at + 3)?)?,
    })
}

fn collection_row(workspace_id: &str, row: &Row<'_>) -> Result<Collection, StoreError> {
    Ok(Collection {
        workspace_id: workspace_id.to_owned(),
        collection_id: text(row, 0)?,
        name: text(row, 1)?,
        visibility: parse_visibility(&text(row, 2)?)?,
        grants: Vec::new(),
        created_at: unsigned(row, 3)?,
    })
}

/// A row in `DRAFT_COLUMNS` order.
fn draft_row(row: &Row<'_>) -> Result<ProgramDraft, StoreError> {
    let draft_id = text(row, 1)?;
    Ok(ProgramDraft {
        workspace_id: text(row, 0)?,
        draft_id: Uuid::parse_str(&draft_id)
            .map_err(|e| StoreError(format!("sqlite: bad draft id {draft_id:?}: {e}")))?,
        namespace: text(row, 2)?,
        version: unsigned(row, 3)?,
        digest: text(row, 4)?,
        package: parse_package(&text(row, 5)?)?,
        created_at: unsigned(row, 6)?,
        created_by: text(row, 7)?,
    })
}

/// A row in `VERSION_COLUMNS` order.
fn version_row(row: &Row<'_>) -> Result<ProgramVersion, StoreError> {
    Ok(ProgramVersion {
        workspace_id: row.get(0).map_err(sql)?,
        namespace: text(row, 1)?,
        version: unsigned(row, 2)?,
        digest: text(row, 3)?,
        package: parse_package(&text(row, 4)?)?,
        activated_at: unsigned(row, 5)?,
        activated_by: text(row, 6)?,
    })
}

fn drafts(
    connection: &Connection,
    workspace_id: &str,
    draft_id: Option<Uuid>,
) -> Result<Vec<ProgramDraft>, StoreError> {
    let draft_id = draft_id.map(|id| id.to_string());
    all(
        connection,
        &format!(
            "SELECT {DRAFT_COLUMNS} FROM program_drafts WHERE workspace_id = ?1 \
             AND (?2 IS NULL OR draft_id = ?2) ORDER BY position"
        ),
        &[&workspace_id, &draft_id],
        draft_row,
    )
}

/// The versions `workspace_id` sees (its own and the installed), of `namespace` and
/// `version` when given, in the memory directory's order.
fn versions_seen(
    connection: &Connection,
    workspace_id: &str,
    namespace: Option<&str>,
    version: Option<u64>,
) -> Result<Vec<ProgramVersion>, StoreError> {
    let version = version.map(int).transpose()?;
    let mut versions = all(
        connection,
        &format!(
            "SELECT {VERSION_COLUMNS} FROM program_versions \
             WHERE (workspace_id = ?1 OR workspace_id IS NULL) \
             AND (?2 IS NULL OR namespace = ?2) AND (?3 IS NULL OR version = ?3)"
        ),
        &[&workspace_id, &namespace, &version],
        version_row,
    )?;
    by_version(&mut versions);
    Ok(versions)
}

impl DirectoryStore for SqliteStore {
    fn access<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<WorkspaceAccess>, StoreError>> {
        let workspace_id = workspace_id.to_owned();
        self.run("directory.access", move |connection| {
            access(connection, &workspace_id)
        })
    }

    fn workspaces_of<'a>(
        &'a self,
        principal_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<(Workspace, Member)>, StoreError>> {
        let principal_id = principal_id.to_owned();
        self.run("directory.workspaces_of", move |connection| {
            all(
                connection,
                "SELECT w.workspace_id, w.name, w.created_at, \
                 m.principal_id, m.kind, m.role, m.scopes FROM workspaces w \
                 JOIN members m ON m.workspace_id = w.workspace_id WHERE m.principal_id = ?1 \
                 ORDER BY w.workspace_id",
                &[&principal_id],
                |row| Ok((workspace_row(row)?, member_at(row, 3)?)),
            )
        })
    }

    fn apply(
        &self,
        change: DirectoryChange,
        idempotency: Option<IdempotencyEntry>,
    ) -> DirectoryFuture<'_, Result<Applied, DirectoryError>> {
        self.run("directory.apply", move |connection| {
            apply(connection, change, idempotency)
        })
    }

    fn idempotency<'a>(
        &'a self,
        workspace_id: &'a str,
        key: &'a str,
    ) -> DirectoryFuture<'a, Result<Option<IdempotencyEntry>, StoreError>> {
        let (workspace_id, key) = (workspace_id.to_owned(), key.to_owned());
        self.run("directory.idempotency", move |connection| {
            read_idempotency(connection, KeyTable::Directory, &workspace_id, &key)
        })
    }

    fn drafts<'a>(
        &'a self,
        workspace_id: &'a str,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramDraft>, StoreError>> {
        let workspace_id = workspace_id.to_owned();
        self.run("directory.drafts", move |connection| {
            drafts(connection, &workspace_id, None)
        })
    }

    fn draft<'a>(
        &'a self,
        workspace_id: &'a str,
        draft_id: Uuid,
    ) -> DirectoryFuture<'a, Result<Option<ProgramDraft>, StoreError>> {
        let workspace_id = workspace_id.to_owned();
        self.run("directory.draft", move |connection| {
            Ok(drafts(connection, &workspace_id, Some(draft_id))?.pop())
        })
    }

    fn program_versions<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: Option<&'a str>,
    ) -> DirectoryFuture<'a, Result<Vec<ProgramVersion>, StoreError>> {
        let (workspace_id, namespace) = (workspace_id.to_owned(), namespace.map(str::to_owned));
        self.run("directory.program_versions", move |connection| {
            versions_seen(connection, &workspace_id, namespace.as_deref(), None)
        })
    }

    fn program<'a>(
        &'a self,
        workspace_id: &'a str,
        namespace: &'a str,
        version: u64,
    ) -> DirectoryFuture<'a, Result<Option<ProgramVersion>, StoreError>> {
        let (workspace_id, namespace) = (workspace_id.to_owned(), namespace.to_owned());
        self.run("directory.program", move |connection| {
            let mut seen =
                versions_seen(connection, &workspace_id, Some(&namespace), Some(version))?;
            // At most one after `by_version`'s dedup (installed first).
            Ok((!seen.is_empty()).then(|| seen.swap_remove(0)))
        })
    }

    fn secret<'a>(&'a self, name: &'a str) -> DirectoryFuture<'a, Result<[u8; 32], StoreError>> {
        let name = name.to_owned();
        self.run("directory.secret", move |connection| {
            secret(connection, &name)
        })
    }

    fn ready(&self) -> DirectoryFuture<'_, Result<(), StoreError>> {
        // The store's thread answers and the schema it made at open is there.
        self.run("ready", |connection| {
            connection
                .query_row("SELECT count(*) FROM workspaces WHERE 0", [], |_| Ok(()))
                .map_err(sql)
        })
    }
}
