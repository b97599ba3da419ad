//! The platform's one entry: [`Platform::call`] runs every operation of the registry, in the
//! order of `docs/platform-design.md`: the registry parses the arguments (400), the
//! directory answers the caller's access to the workspace once, [`authorize_call`] makes the
//! operation-level decision (403 / 404), then the operation runs: directory operations on
//! the [`DirectoryStore`], record operations on the [`Engine`] with the record-level
//! authority ([`WorkspaceAuthority`]) reading that same access.

use http::StatusCode;
use std::sync::Arc;

use rcip_core::jcs::{canonical_json, digest_of_canonical};
use rcip_runtime::__private::shared::random_128;
use rcip_runtime::{Clock, SystemClock};
use serde::Serialize;
use serde_json::{Value, json};
use uuid::Uuid;

use super::authority::{WorkspaceAuthority, with_access};
use super::authorize::{
    Denial, authorize_call, authorize_operation, is_membership_of, readable_collections,
};
use super::directory::{
    Applied, Collection, DirectoryChange, DirectoryError, DirectoryStore, Grant, ProgramDraft,
    ProgramVersion, Workspace, WorkspaceAccess,
};
use super::directory_programs::DirectoryPrograms;
use super::error::PlatformError;
use super::programs::{check_package, example_packages};
use super::registry::{
    OperationSpec, PlatformCall, capability_definitions, operations, parse_call, read_checked_call,
};
use rcip_records::__private::{CursorKey, CursorScope};
use rcip_records::DEFAULT_LIMIT;
use rcip_records::{Caller, Engine, IdempotencyEntry, MemoryStore, RecordStore};

/// Who installed a package given at start ([`ProgramVersion::activated_by`]).
pub const INSTALLED_BY: &str = "platform";

/// The platform: the directory and the engine behind one [`call`](Self::call).
///
/// ```
/// use std::sync::Arc;
/// use rcip_platform::{MemoryDirectory, Platform};
/// use rcip_records::{Actor, Caller, Engine};
/// use serde_json::json;
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let platform = Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
///     .await
///     .unwrap();
/// let ada = Caller::human(Actor::new("ada"));
/// platform.call(&ada, "workspace.create", json!({
///     "workspace_id": "acme", "name": "Acme", "idempotency_key": "k1"})).await.unwrap();
/// let listed = platform.call(&ada, "workspace.list", json!({})).await.unwrap();
/// assert_eq!(listed["items"][0]["workspace_id"], "acme");
/// // A stranger learns nothing about it.
/// let eve = Caller::human(Actor::new("eve"));
/// let refused = platform.call(&eve, "workspace.get", json!({"workspace_id": "acme"}))
///     .await.unwrap_err();
/// assert_eq!((refused.code, refused.status.as_u16()), ("WORKSPACE_NOT_FOUND", 404));
/// # });
/// ```
#[derive(Debug)]
pub struct Platform<S: RecordStore = MemoryStore> {
    engine: Arc<Engine<S>>,
    directory: Arc<dyn DirectoryStore>,
    cursor_key: CursorKey,
    clock: Arc<dyn Clock>,
}

impl<S: RecordStore> Platform<S> {
    /// The platform over `engine` and `directory`.
    ///
    /// The engine is taken whole because the platform configures it, so that nothing can be
    /// forgotten: its authority becomes the [`WorkspaceAuthority`] (whatever it was); it
    /// finds the programs activated (or installed) through any instance in the directory
    /// ([`DirectoryPrograms`]); and its cursors, like the directory's, are tagged under the
    /// directory's `cursor` secret, so a cursor from one instance holds on every instance of
    /// the same database.
    ///
    /// # Errors
    ///
    /// 500 `STORE_FAILED` when the directory cannot give its secret.
    pub async fn open(
        engine: Engine<S>,
        directory: Arc<dyn DirectoryStore>,
    ) -> Result<Self, PlatformError> {
        let key = directory
            .secret("cursor")
            .await
            .map_err(PlatformError::store)?;
        let engine = engine
            .with_cursor_key(key)
            .with_authority(WorkspaceAuthority)
            .with_program_source(Arc::new(DirectoryPrograms::new(Arc::clone(&directory))));
        Ok(Self {
            engine: Arc::new(engine),
            directory,
            cursor_key: CursorKey::new(key),
            clock: Arc::new(SystemClock),
        })
    }

    /// Replaces the clock of the directory's times (tests use a fixed one).
    #[must_use]
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The engine (configured by [`open`](Self::open)).
    #[must_use]
    pub fn engine(&self) -> &Arc<Engine<S>> {
        &self.engine
    }

    /// The directory.
    #[must_use]
    pub fn directory(&self) -> &Arc<dyn DirectoryStore> {
        &self.directory
    }

    /// Installs a package at start (compiled by `rcip-build`, or given in the
    /// configuration): every workspace sees it. Installing the same content again is a
    /// no-op (the version first installed is answered).
    ///
    /// # Errors
    ///
    /// 422 `PROGRAM_INVALID` with every problem; 409 `VERSION_CONFLICT` when the version is
    /// installed, or active in a workspace, with other content.
    pub async fn install(&self, package: &Value) -> Result<ProgramVersion, PlatformError> {
        let checked = check_package(package)?;
        let version = ProgramVersion {
            workspace_id: None,
            namespace: checked.namespace().to_owned(),
            version: checked.version(),
            digest: checked.digest,
            package: package.clone(),
            activated_at: self.clock.now_ms(),
            activated_by: INSTALLED_BY.to_owned(),
        };
        let change = DirectoryChange::ActivateProgram {
            version: version.clone(),
        };
        match self.directory.apply(change, None).await? {
            Applied::Applied => Ok(version),
            // The first installation's record (its time) is the one kept.
            Applied::Unchanged | Applied::Replayed(_) => Ok(self
                .installed(&version.namespace, version.version)
                .await?
                .unwrap_or(version)),
        }
    }

    async fn installed(
        &self,
        namespace: &str,
        version: u64,
    ) -> Result<Option<ProgramVersion>, PlatformError> {
        // Every workspace sees the installed versions, so one that cannot exist (ids are
        // never empty) sees those only.
        Ok(self
            .directory
            .program("", namespace, version)
            .await
            .map_err(PlatformError::store)?
            .filter(|v| v.workspace_id.is_none()))
    }

    /// Runs `operation` with `arguments` for `caller`, answering an object that matches the
    /// operation's output schema in the registry.
    ///
    /// # Errors
    ///
    /// The [`PlatformError`] of the first refusal: 400 unknown operation or arguments, 403
    /// (`CONSOLE_ONLY`, `INSUFFICIENT_SCOPE`, `FORBIDDEN`), 404 (`WORKSPACE_NOT_FOUND`,
    /// `COLLECTION_NOT_FOUND`, `RECORD_NOT_FOUND`...), 409, 422, 500.
    pub async fn call(
        &self,
        caller: &Caller,
        operation: &str,
        arguments: Value,
    ) -> Result<Value, PlatformError> {
        let (spec, call) = parse_call(operation, &arguments)?;
        self.run(caller, spec, call).await
    }

    /// [`call`](Self::call) for arguments a door already checked against the operation's
    /// input schema (see [`read_checked_call`]): the MCP door, whose runtime validated them
    /// against [`capability_definitions`](crate::capability_definitions).
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call).
    pub async fn call_checked(
        &self,
        caller: &Caller,
        operation: &str,
        arguments: Value,
    ) -> Result<Value, PlatformError> {
        let (spec, call) = read_checked_call(operation, &arguments)?;
        self.run(caller, spec, call).await
    }

    /// A parsed call, authorized then dispatched.
    async fn run(
        &self,
        caller: &Caller,
        spec: &'static OperationSpec,
        call: PlatformCall,
    ) -> Result<Value, PlatformError> {
        // A workspace the credential does not reach reads as one without the caller: the
        // refusals that come first (arguments, console-only) still come first, then 404.
        let access = match call.workspace_id() {
            Some(workspace_id) if spec.in_workspace && caller.reaches(workspace_id) => self
                .directory
                .access(workspace_id)
                .await
                .map_err(PlatformError::store)?,
            _ => None,
        };
        if let Err(denial) = authorize_call(caller, spec, &call, access.as_ref()) {
            // A removal's replay finds the member gone: steps 2-4 passed (checked in
            // `authorize_call` before the member rules), so the first answer is given.
            if denial == Denial::MemberNotFound
                && let PlatformCall::MemberRemove(remove) = &call
                && let Some(answer) = self
                    .replay(
                        &remove.workspace_id,
                        &remove.idempotency_key,
                        &fingerprint(caller, spec, remove)?,
                    )
                    .await?
            {
                return Ok(answer);
            }
            return Err(denial.into());
        }
        let access = access.map(Arc::new);
        self.dispatch(caller, spec, call, access).await
    }

    #[allow(clippy::too_many_lines)] // One arm per operation.
    async fn dispatch(
        &self,
        caller: &Caller,
        spec: &'static OperationSpec,
        call: PlatformCall,
        access: Option<Arc<WorkspaceAccess>>,
    ) -> Result<Value, PlatformError> {
        use PlatformCall as C;
        // Every operation in a workspace was authorized against its access: it is there.
        let here = || access.clone().ok_or(Denial::WorkspaceNotFound);
        let engine = &self.engine;
        match call {
            C::CapabilitiesList(a) => {
                let access = here()?;
                let items: Vec<Value> = operations()
                    .iter()
                    .zip(capability_definitions())
                    .filter(|(spec, _)| authorize_operation(caller, spec, Some(&access)).is_ok())
                    .map(|(_, capability)| to_value(&capability))
                    .collect::<Result<_, _>>()?;
                let query = Query::new(spec, &a.workspace_id, "");
                self.page(caller, &query, items, a.limit, a.cursor.as_deref())
            }
            C::WorkspaceList(a) => {
                // One read of the caller's memberships; one of another kind than the
                // credential is no membership.
                let items: Vec<Workspace> = self
                    .directory
                    .workspaces_of(caller.id())
                    .await
                    .map_err(PlatformError::store)?
                    .into_iter()
                    .filter(|(workspace, member)| {
                        is_membership_of(caller, member) && caller.reaches(&workspace.workspace_id)
                    })
                    .map(|(workspace, _)| workspace)
                    .collect();
                let query = Query::new(spec, "", "");
                self.page(caller, &query, items, a.limit, a.cursor.as_deref())
            }
            C::WorkspaceGet(_) => to_value(&here()?.workspace),
            C::WorkspaceCreate(a) => {
                let fingerprint = fingerprint(caller, spec, &a)?;
                if let Some(answer) = self
                    .replay(&a.workspace_id, &a.idempotency_key, &fingerprint)
                    .await?
                {
                    return Ok(answer);
                }
                let workspace = Workspace {
                    workspace_id: a.workspace_id.clone(),
                    name: a.name.clone(),
                    created_at: self.clock.now_ms(),
                };
                let answer = to_value(&workspace)?;
                let change = DirectoryChange::CreateWorkspace {
                    workspace,
                    owner: caller.id().to_owned(),
                };
                self.apply(
                    change,
                    &a.workspace_id,
                    &a.idempotency_key,
                    fingerprint,
                    answer,
                )
                .await
            }
            C::MemberList(a) => {
                let access = here()?;
                let query = Query::new(spec, &a.workspace_id, "");
                self.page(
                    caller,
                    &query,
                    access.members.clone(),
                    a.limit,
                    a.cursor.as_deref(),
                )
            }
            C::MemberAdd(a) => {
                let member = a.member();
                let answer = to_value(&member)?;
                let change = DirectoryChange::PutMember {
                    workspace_id: a.workspace_id.clone(),
                    member,
                };
                self.mutate(
                    caller,
                    spec,
                    &a,
                    (&a.workspace_id, &a.idempotency_key),
                    change,
                    answer,
                )
                .await
            }
            C::MemberRemove(a) => {
                let answer = json!({"workspace_id": a.workspace_id,
                                    "principal_id": a.principal_id, "removed": true});
                let change = DirectoryChange::RemoveMember {
                    workspace_id: a.workspace_id.clone(),
                    principal_id: a.principal_id.clone(),
                };
                self.mutate(
                    caller,
                    spec,
                    &a,
                    (&a.workspace_id, &a.idempotency_key),
                    change,
                    answer,
                )
                .await
            }
            C::CollectionList(a) => {
                let access = here()?;
                let items: Vec<Collection> = readable_collections(caller, &access)
                    .into_iter()
                    .cloned()
                    .collect();
                let query = Query::new(spec, &a.workspace_id, "");
                self.page(caller, &query, items, a.limit, a.cursor.as_deref())
            }
            C::CollectionCreate(a) => {
                let collection = Collection {
                    workspace_id: a.workspace_id.clone(),
                    collection_id: a.collection_id.clone(),
                    name: a.name.clone(),
                    visibility: a.visibility,
                    grants: Vec::new(),
                    created_at: self.clock.now_ms(),
                };
                let answer = to_value(&collection)?;
                let change = DirectoryChange::CreateCollection { collection };
                self.mutate(
                    caller,
                    spec,
                    &a,
                    (&a.workspace_id, &a.idempotency_key),
                    change,
                    answer,
                )
                .await
            }
            C::CollectionGrant(a) => {
                let grant = Grant {
                    principal_id: a.principal_id.clone(),
                    access: a.access,
                };
                let answer = regranted(&*here()?, &a.collection_id, &a.principal_id, Some(&grant))?;
                let change = DirectoryChange::PutGrant {
                    workspace_id: a.workspace_id.clone(),
                    collection_id: a.collection_id.clone(),
                    grant,
                };
                self.mutate(
                    caller,
                    spec,
                    &a,
                    (&a.workspace_id, &a.idempotency_key),
                    change,
                    answer,
                )
                .await
            }
            C::CollectionRevoke(a) => {
                let answer = regranted(&*here()?, &a.collection_id, &a.principal_id, None)?;
                let change = DirectoryChange::RemoveGrant {
                    workspace_id: a.workspace_id.clone(),
                    collection_id: a.collection_id.clone(),
                    principal_id: a.principal_id.clone(),
                };
                self.mutate(
                    caller,
                    spec,
                    &a,
                    (&a.workspace_id, &a.idempotency_key),
                    change,
                    answer,
                )
                .await
            }
            C::ProgramVersions(a) => {
                let items = self
                    .directory
                    .program_versions(&a.workspace_id, a.namespace.as_deref())
                    .await
                    .map_err(PlatformError::store)?;
                let query = Query::new(spec, &a.workspace_id, a.namespace.as_deref().unwrap_or(""));
                self.page(caller, &query, items, a.limit, a.cursor.as_deref())
            }
            C::ProgramGet(a) => {
                let version = self
                    .directory
                    .program(&a.workspace_id, &a.namespace, a.version)
                    .await
                    .map_err(PlatformError::store)?
                    .ok_or_else(|| {
                        PlatformError::new(
                            StatusCode::NOT_FOUND,
                            "PROGRAM_NOT_FOUND",
                            "program version not found",
                        )
                    })?;
                to_value(&version)
            }
            C::ExamplesList(_) => Ok(json!({"items": to_value(&example_packages())?})),
            C::ProgramDraft(a) => self.draft(caller, spec, &a).await,
            C::ProgramActivate(a) => self.activate(caller, spec, &a).await,
            C::RecordGet(a) => {
                let access = here()?;
                to_value(&with_access(access, engine.get(caller, a)).await?)
            }
            C::RecordSearch(a) => to_value(&with_access(here()?, engine.search(caller, a)).await?),
            C::RecordCreate(a) => to_value(&with_access(here()?, engine.create(caller, a)).await?),
            C::RecordUpdate(a) => to_value(&with_access(here()?, engine.update(caller, a)).await?),
            C::RecordArchive(a) => {
                to_value(&with_access(here()?, engine.archive(caller, a)).await?)
            }
            C::RecordHistory(a) => {
                to_value(&with_access(here()?, engine.history(caller, a)).await?)
            }
            C::CommandList(a) => {
                to_value(&with_access(here()?, engine.list_commands(caller, a)).await?)
            }
            C::CommandExecute(a) => {
                to_value(&with_access(here()?, engine.execute(caller, a)).await?)
            }
            C::ChangesFeed(a) => to_value(&with_access(here()?, engine.feed(caller, a)).await?),
            // `PlatformCall` grows with the registry: an operation without a handler here is
            // refused, never run half-way.
            #[allow(unreachable_patterns)]
            _ => Err(PlatformError::new(
                StatusCode::BAD_REQUEST,
                "UNKNOWN_OPERATION",
                format!("{} has no handler in this version", spec.name),
            )),
        }
    }

    /// `program.draft`: the one validator, then the draft kept.
    async fn draft(
        &self,
        caller: &Caller,
        spec: &'static OperationSpec,
        a: &super::args::DraftProgram,
    ) -> Result<Value, PlatformError> {
        let fingerprint = fingerprint(caller, spec, a)?;
        if let Some(answer) = self
            .replay(&a.workspace_id, &a.idempotency_key, &fingerprint)
            .await?
        {
            return Ok(answer);
        }
        let package = Value::Object(a.package.clone());
        let checked = check_package(&package)?;
        let draft = ProgramDraft {
            workspace_id: a.workspace_id.clone(),
            draft_id: new_id(),
            namespace: checked.namespace().to_owned(),
            version: checked.version(),
            digest: checked.digest,
            package,
            created_at: self.clock.now_ms(),
            created_by: caller.id().to_owned(),
        };
        let answer = json!({"draft_id": draft.draft_id, "namespace": draft.namespace,
                            "version": draft.version, "digest": draft.digest});
        self.apply(
            DirectoryChange::SaveDraft { draft },
            &a.workspace_id,
            &a.idempotency_key,
            fingerprint,
            answer,
        )
        .await
    }

    /// `program.activate`: the package of a draft or given whole, pinned in the directory
    /// (which every instance reads), then made runnable in this instance's engine.
    async fn activate(
        &self,
        caller: &Caller,
        spec: &'static OperationSpec,
        a: &super::args::ActivateProgram,
    ) -> Result<Value, PlatformError> {
        let fingerprint = fingerprint(caller, spec, a)?;
        if let Some(answer) = self
            .replay(&a.workspace_id, &a.idempotency_key, &fingerprint)
            .await?
        {
            return Ok(answer);
        }
        let package = match (&a.draft_id, &a.package) {
            (Some(draft_id), _) => {
                self.directory
                    .draft(&a.workspace_id, *draft_id)
                    .await
                    .map_err(PlatformError::store)?
                    .ok_or_else(|| {
                        PlatformError::new(
                            StatusCode::NOT_FOUND,
                            "DRAFT_NOT_FOUND",
                            "draft not found",
                        )
                    })?
                    .package
            }
            (None, Some(package)) => Value::Object(package.clone()),
            // `parse_call` refuses neither-nor.
            (None, None) => {
                return Err(PlatformError::invalid_arguments(
                    "give exactly one of draft_id and package",
                    Vec::new(),
                ));
            }
        };
        // A draft was checked when drafted; checked again, the validator of this version
        // of the platform is the one that lets it run.
        let checked = check_package(&package)?;
        let existing = self
            .directory
            .program(&a.workspace_id, checked.namespace(), checked.version())
            .await
            .map_err(PlatformError::store)?;
        let version = match existing {
            // The same content already active: that activation is the answer.
            Some(existing) if existing.digest == checked.digest => existing,
            _ => ProgramVersion {
                workspace_id: Some(a.workspace_id.clone()),
                namespace: checked.namespace().to_owned(),
                version: checked.version(),
                digest: checked.digest.clone(),
                package,
                activated_at: self.clock.now_ms(),
                activated_by: caller.id().to_owned(),
            },
        };
        let answer = to_value(&version)?;
        let change = DirectoryChange::ActivateProgram { version };
        let answer = self
            .apply(
                change,
                &a.workspace_id,
                &a.idempotency_key,
                fingerprint,
                answer,
            )
            .await?;
        // The engine finds it through its program source (`DirectoryPrograms`) at the
        // first call that names it, here as on every other instance.
        Ok(answer)
    }

    /// A mutation of the directory: the replay of its key, or the change applied with its
    /// idempotency entry.
    async fn mutate(
        &self,
        caller: &Caller,
        spec: &'static OperationSpec,
        arguments: &impl Serialize,
        (workspace_id, key): (&str, &str),
        change: DirectoryChange,
        answer: Value,
    ) -> Result<Value, PlatformError> {
        let fingerprint = fingerprint(caller, spec, arguments)?;
        if let Some(answer) = self.replay(workspace_id, key, &fingerprint).await? {
            return Ok(answer);
        }
        self.apply(change, workspace_id, key, fingerprint, answer)
            .await
    }

    /// The first answer under `key`, when the key was used with this fingerprint; a
    /// conflict when it was used otherwise (another operation, other arguments, or another
    /// principal: a replay never shows one principal what another was answered).
    async fn replay(
        &self,
        workspace_id: &str,
        key: &str,
        fingerprint: &str,
    ) -> Result<Option<Value>, PlatformError> {
        match self
            .directory
            .idempotency(workspace_id, key)
            .await
            .map_err(PlatformError::store)?
        {
            None => Ok(None),
            Some(entry) => remembered(&entry, fingerprint).map(Some),
        }
    }

    async fn apply(
        &self,
        change: DirectoryChange,
        workspace_id: &str,
        key: &str,
        fingerprint: String,
        answer: Value,
    ) -> Result<Value, PlatformError> {
        let entry = IdempotencyEntry {
            workspace_id: workspace_id.to_owned(),
            key: key.to_owned(),
            fingerprint: fingerprint.clone(),
            result: answer.to_string(),
        };
        match self.directory.apply(change, Some(entry)).await? {
            Applied::Applied | Applied::Unchanged => Ok(answer),
            // A concurrent call with the same key and arguments applied first.
            Applied::Replayed(entry) => remembered(&entry, &fingerprint),
        }
    }

    /// One page of a directory list, after a tamper-evident cursor (the engine's form,
    /// under the same key; the position is the count of items before the page).
    fn page<T: Serialize>(
        &self,
        caller: &Caller,
        query: &Query<'_>,
        items: Vec<T>,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> Result<Value, PlatformError> {
        let limit = limit.map_or(DEFAULT_LIMIT, |l| usize::try_from(l).unwrap_or(usize::MAX));
        let binding = format!("directory|{}|{}", query.operation, query.filter);
        let scope = CursorScope {
            workspace_id: query.workspace_id,
            query: &binding,
            principal: caller.id(),
        };
        let after = self.cursor_key.after(cursor, &scope)?;
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(items.len());
        let end = start.saturating_add(limit).min(items.len());
        let more = end < items.len();
        let page: Vec<T> = items.into_iter().skip(start).take(end - start).collect();
        let mut answer = json!({"items": to_value(&page)?});
        if more {
            answer["next_cursor"] = Value::String(self.cursor_key.encode(end as u64, &scope));
        }
        Ok(answer)
    }
}

/// What a directory list's cursor is bound to.
struct Query<'a> {
    operation: &'static str,
    workspace_id: &'a str,
    filter: &'a str,
}

impl<'a> Query<'a> {
    fn new(spec: &'static OperationSpec, workspace_id: &'a str, filter: &'a str) -> Self {
        Self {
            operation: spec.name,
            workspace_id,
            filter,
        }
    }
}

/// The collection as it will be once the principal's grant is `grant` (`None`: revoked),
/// grants in principal id order as every store keeps them.
fn regranted(
    access: &WorkspaceAccess,
    collection_id: &str,
    principal_id: &str,
    grant: Option<&Grant>,
) -> Result<Value, PlatformError> {
    let mut collection = access
        .collection(collection_id)
        .cloned()
        .ok_or(DirectoryError::CollectionNotFound)?;
    collection.grants.retain(|g| g.principal_id != principal_id);
    collection.grants.extend(grant.cloned());
    collection
        .grants
        .sort_by(|a, b| a.principal_id.cmp(&b.principal_id));
    to_value(&collection)
}

/// A directory mutation's fingerprint: the operation, its arguments as typed (defaults
/// written out, so leaving one out and giving it are the same call) in RFC 8785 form, and
/// the caller's principal id.
fn fingerprint(
    caller: &Caller,
    spec: &OperationSpec,
    arguments: &impl Serialize,
) -> Result<String, PlatformError> {
    let value = json!({"operation": spec.name, "principal": caller.id(),
                       "arguments": to_value(arguments)?});
    let text = canonical_json(&value).map_err(internal)?;
    Ok(digest_of_canonical(&text))
}

fn remembered(entry: &IdempotencyEntry, fingerprint: &str) -> Result<Value, PlatformError> {
    if entry.fingerprint != fingerprint {
        return Err(DirectoryError::IdempotencyConflict {
            key: entry.key.chars().take(64).collect(),
        }
        .into());
    }
    serde_json::from_str(&entry.result).map_err(internal)
}

fn to_value(value: &impl Serialize) -> Result<Value, PlatformError> {
    serde_json::to_value(value).map_err(internal)
}

fn internal(error: impl std::fmt::Display) -> PlatformError {
    PlatformError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "INTERNAL",
        format!("internal error: {error}"),
    )
}

fn new_id() -> Uuid {
    uuid::Builder::from_random_bytes(random_128()).into_uuid()
}
