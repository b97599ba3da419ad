//! The engine: every operation of the seed over a [`RecordStore`], with the protocol's
//! guarantees (revisions, idempotency, guards, lifecycle transitions, role constraints, work
//! intents, change events).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use rcip_core::ValidationIssue;
use rcip_core::depth::{MAX_VALUE_DEPTH, dismantle, exceeds_depth};
use rcip_relationship::{
    Command, Kind, Package, Role, Scope, TypeDef, View, command_capability_id,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::activation::Activation;
use super::args::{
    ArchiveRecord, ChangesFeed, CommandList, CommandResult, CommandStatus, CreateRecord,
    ExecuteCommand, GetRecord, ListCommands, Page, RecordHistory, Requirement, SearchRecords,
    UpdateRecord,
};
use super::authority::{AllowAll, Authority, NewRecord, Operation, Target};
use super::cursor::{CursorKey, CursorScope, DEFAULT_LIMIT, MAX_LIMIT};
use super::error::RecordError;
use super::memory::MemoryStore;
use super::principal::Caller;
use super::record::{ParticipantRef, Record, RecordView, timestamp};
use super::store::{
    ChangeEvent, Commit, CommitError, EventKind, IdempotencyEntry, RecordStore, ScanFilter,
};
use super::versions::{ProgramSource, Programs, Registered, TypeEntry};
use rcip_runtime::__private::shared::random_128;
use rcip_runtime::{Clock, MAX_VALIDATION_ISSUES, SystemClock, TRUNCATED_KEYWORD};

/// The longest idempotency key, in characters: the `maxLength` of the capabilities' key
/// schemas ([`MAX_KEY_LENGTH`](rcip_relationship::MAX_KEY_LENGTH)), so that whatever
/// passes the schema passes here.
#[allow(clippy::cast_possible_truncation)] // 200
pub const MAX_IDEMPOTENCY_KEY: usize = rcip_relationship::MAX_KEY_LENGTH as usize;
/// Candidates a search examines per call before it returns a (possibly sparse) page.
const SCAN_BUDGET: usize = 1_000;

/// The relationship engine over a store (in memory by default). Its operations are `async`:
/// run them on any Tokio runtime (the SQLite store does its work on a thread of its own).
///
/// ```
/// use rcip_records::{Actor, Caller, CreateRecord, Engine, ExecuteCommand, GetRecord};
/// use rcip_relationship::parse_package;
/// use serde_json::json;
///
/// let package = parse_package(r#"{"protocol": "relationship/v1", "namespace": "notes",
///   "version": 1, "types": {"note": {"kind": "entity", "schema": {"type": "object",
///   "properties": {"text": {"type": "string"}}, "required": ["text"],
///   "additionalProperties": false}, "lifecycle": {"initial": "draft", "states": ["draft", "final"]},
///   "commands": {"finish": {"input": {"type": "object", "properties": {}, "required": [],
///   "additionalProperties": false}, "from": ["draft"], "to": "final"}}}}}"#).unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let engine = Engine::in_memory().with_program(package).unwrap();
/// let ada = Caller::human(Actor::new("ada"));
/// let note = engine
///     .create(&ada, CreateRecord::new("w", "c", "notes", "note", [("text", json!("hello"))], "k1"))
///     .await
///     .unwrap();
/// assert_eq!(note.revision, 1);
/// let finished = engine
///     .execute(&ada, ExecuteCommand::new("w", note.id, "finish", 1, "k2"))
///     .await
///     .unwrap();
/// assert_eq!(finished.state.as_deref(), Some("final"));
/// let read = engine.get(&ada, GetRecord::new("w", note.id)).await.unwrap();
/// assert_eq!((read.revision, read.state.as_deref()), (2, Some("final")));
/// # });
/// ```
#[derive(Debug)]
pub struct Engine<S: RecordStore = MemoryStore> {
    store: S,
    /// The installed programs and those activated per workspace.
    programs: RwLock<Programs>,
    /// Where other instances' activations are found.
    program_source: Option<Arc<dyn ProgramSource>>,
    authority: Arc<dyn Authority>,
    clock: Arc<dyn Clock>,
    /// Set by [`Engine::with_cursor_key`], or on first use from the store (see there).
    cursor_key: OnceLock<CursorKey>,
}

impl Engine<MemoryStore> {
    /// An engine over a fresh in-memory store.
    #[must_use]
    pub fn in_memory() -> Self {
        Self::new(MemoryStore::new())
    }
}

impl<S: RecordStore> Engine<S> {
    /// An engine over `store`, allowing every operation, on the system clock.
    pub fn new(store: S) -> Self {
        Self {
            store,
            programs: RwLock::default(),
            program_source: None,
            authority: Arc::new(AllowAll),
            clock: Arc::new(SystemClock),
            cursor_key: OnceLock::new(),
        }
    }

    /// Installs a program package (e.g. `programs::polls::PACKAGE.clone()`): every
    /// workspace sees it. Several versions of one namespace may be installed; installing a
    /// version again with the same content is a no-op.
    ///
    /// # Errors
    ///
    /// [`RecordError::VersionConflict`] when the namespace and version are installed (or
    /// activated in a workspace) with other content; [`RecordError::InvalidArguments`] when
    /// a schema does not compile.
    pub fn with_program(mut self, package: Package) -> Result<Self, RecordError> {
        let program = Registered::compile(package)?;
        self.programs
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .add(None, program)?;
        Ok(self)
    }

    /// Consults `source` for programs this engine has not seen (activated by another
    /// instance on the same database): see [`ProgramSource`].
    #[must_use]
    pub fn with_program_source(mut self, source: Arc<dyn ProgramSource>) -> Self {
        self.program_source = Some(source);
        self
    }

    /// Activates `package` in `workspace_id` at run time: its records can be created there
    /// from now on, and a `record.create` without a version takes the highest version
    /// visible. `namespace/version` pins content: the same content again is a no-op
    /// ([`Activation::AlreadyActive`]); records of older versions keep working.
    ///
    /// # Errors
    ///
    /// [`RecordError::VersionConflict`] (409) when that version is already active in the
    /// workspace, or installed, with other content; [`RecordError::InvalidArguments`] when
    /// a schema does not compile.
    pub fn activate(
        &self,
        workspace_id: &str,
        package: Package,
    ) -> Result<Activation, RecordError> {
        let (added, _) = self.add_program(workspace_id, package)?;
        Ok(if added {
            Activation::New
        } else {
            Activation::AlreadyActive
        })
    }

    /// Replaces the authority (default: [`AllowAll`]).
    #[must_use]
    pub fn with_authority(mut self, authority: impl Authority + 'static) -> Self {
        self.authority = Arc::new(authority);
        self
    }

    /// The secret paging cursors are tagged under (HMAC-SHA256): a cursor names its position,
    /// workspace, query and principal, and one that was edited, or made for another query,
    /// workspace or principal, is refused (`INVALID_CURSOR`). By default the engine takes the
    /// store's own secret ([`RecordStore::cursor_secret`]): on SQLite and PostgreSQL it is
    /// kept in the database, so the checkpoints consumers store hold across restarts and on
    /// every instance of the database; the memory store has none, and the engine draws a
    /// random key whose cursors hold for it alone. Set one to override either.
    #[must_use]
    pub fn with_cursor_key(self, key: [u8; 32]) -> Self {
        let cursor_key = OnceLock::new();
        let _ = cursor_key.set(CursorKey::new(key));
        Self { cursor_key, ..self }
    }

    /// The cursor key: the one set, else the store's secret (asked once), else a random one.
    async fn cursor_key(&self) -> Result<&CursorKey, RecordError> {
        if let Some(key) = self.cursor_key.get() {
            return Ok(key);
        }
        // Two first calls may both ask: the store answers both with the same secret.
        let key = match self.store.cursor_secret().await? {
            Some(secret) => CursorKey::new(secret),
            None => CursorKey::random(),
        };
        Ok(self.cursor_key.get_or_init(|| key))
    }

    /// Replaces the clock (tests use a fixed one).
    #[must_use]
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The installed program `namespace` at `version` (without one, the highest installed).
    #[must_use]
    pub fn package(&self, namespace: &str, version: Option<u64>) -> Option<Arc<Package>> {
        self.read_programs()
            .find(None, namespace, version)
            .map(|r| Arc::clone(&r.package))
    }

    /// The program `namespace` at `version` (without one, the highest) that `workspace_id`
    /// sees here: activated in it, or installed. The [`ProgramSource`] is not asked.
    #[must_use]
    pub fn workspace_package(
        &self,
        workspace_id: &str,
        namespace: &str,
        version: Option<u64>,
    ) -> Option<Arc<Package>> {
        self.read_programs()
            .find(Some(workspace_id), namespace, version)
            .map(|r| Arc::clone(&r.package))
    }

    fn read_programs(&self) -> std::sync::RwLockReadGuard<'_, Programs> {
        self.programs.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Compiles `package` and adds it to `workspace_id`'s programs.
    fn add_program(
        &self,
        workspace_id: &str,
        package: Package,
    ) -> Result<(bool, Arc<Registered>), RecordError> {
        // Compiled before the lock is taken: lookups go on meanwhile.
        let program = Registered::compile(package)?;
        self.programs
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .add(Some(workspace_id), program)
    }

    // ------------------------------------------------------------------ operations

    /// `record.create`.
    ///
    /// # Errors
    ///
    /// 400 unknown program/type or bad key, 403, 409 idempotency conflict, 422 data or roles.
    pub async fn create(
        &self,
        caller: &Caller,
        mut args: CreateRecord,
    ) -> Result<RecordView, RecordError> {
        refuse_deep("the data", &mut args.data)?;
        let mutation = match self.begin(caller, Operation::RecordCreate, &args).await? {
            Begun::Replay(stored) => return self.project(caller, stored).await,
            Begun::Fresh(mutation) => mutation,
        };
        let program = self
            .registered(&args.workspace_id, &args.namespace, args.version)
            .await?;
        let version = program.package.version;
        let entry = program.type_entry(&args.type_name).ok_or_else(|| {
            RecordError::InvalidArguments(format!(
                "unknown type {:?} in {} v{version}",
                args.type_name, args.namespace
            ))
        })?;
        let type_def = entry.def();
        let new = NewRecord::new(
            &args.workspace_id,
            &args.collection_id,
            &args.namespace,
            version,
            &args.type_name,
        );
        self.permit(caller, Operation::RecordCreate, Target::New(&new))?;
        let now = self.clock.now_ms();
        let mut record = Record {
            id: new_id(),
            workspace_id: args.workspace_id.clone(),
            collection_id: args.collection_id.clone(),
            namespace: args.namespace.clone(),
            version,
            type_name: args.type_name.clone(),
            kind: type_def.kind,
            revision: 1,
            data: args.data.clone(),
            participants: args.roles.clone(),
            state: type_def.lifecycle.as_ref().map(|l| l.initial.to_string()),
            archived: false,
            created_at: now,
            updated_at: now,
        };
        check_data(&entry, &mut record.data)?;
        self.check_roles(caller, &entry, &record, &BTreeMap::new())
            .await?;
        let stored = self
            .commit_record(caller, record, None, EventKind::RecordCreated, mutation)
            .await?;
        self.project(caller, stored).await
    }

    /// `record.get`.
    ///
    /// # Errors
    ///
    /// 404 when missing or not readable by the caller.
    pub async fn get(&self, caller: &Caller, args: GetRecord) -> Result<RecordView, RecordError> {
        let record = self
            .readable(caller, &args.workspace_id, args.record_id)
            .await?;
        self.view(caller, &record, None, &mut Readable::new()).await
    }

    /// `record.update`: data (`patch.set`, `patch.remove`) and roles; never the state.
    ///
    /// # Errors
    ///
    /// 403, 404, 409 stale revision / archived / idempotency conflict, 422 data or roles.
    pub async fn update(
        &self,
        caller: &Caller,
        mut args: UpdateRecord,
    ) -> Result<RecordView, RecordError> {
        refuse_deep("patch.set", &mut args.patch.set)?;
        let (mutation, mut record) = match self
            .begin_change(caller, Operation::RecordUpdate, &args)
            .await?
        {
            Changing::Replay(stored) => return self.project(caller, stored).await,
            Changing::Fresh(mutation, record) => (mutation, record),
        };
        let entry = self
            .type_entry(
                &record.workspace_id,
                &record.namespace,
                record.version,
                &record.type_name,
            )
            .await?;
        for (field, value) in &args.patch.set {
            record.data.insert(field.clone(), value.clone());
        }
        for field in &args.patch.remove {
            record.data.remove(field);
        }
        let before = record.participants.clone();
        for (role, ids) in &args.roles.add {
            for id in ids {
                // Adding a participant already there changes nothing, if the caller can
                // read it. One it cannot read is added again, so that the roles check
                // refuses it exactly as an id that names nothing: otherwise the call's
                // success would tell that the hidden record is a participant.
                let present = record
                    .participants
                    .get(role)
                    .is_some_and(|list| list.contains(id));
                if !present
                    || self
                        .visible(caller, &record.workspace_id, *id)
                        .await?
                        .is_none()
                {
                    record
                        .participants
                        .entry(role.clone())
                        .or_default()
                        .push(*id);
                }
            }
        }
        for (role, ids) in &args.roles.remove {
            // Only a participant the caller can read is removed: one it cannot read is left
            // in place, exactly as an id that is not there at all (nothing is removed), so
            // no answer tells a hidden participant from a missing one. Only ids in the role
            // are looked up: at most its participants, whatever the request lists.
            let mut removable = Vec::new();
            for id in ids {
                let present = before.get(role).is_some_and(|list| list.contains(id));
                if present
                    && self
                        .visible(caller, &record.workspace_id, *id)
                        .await?
                        .is_some()
                {
                    removable.push(*id);
                }
            }
            if let Some(list) = record.participants.get_mut(role) {
                list.retain(|id| !removable.contains(id));
            }
        }
        check_data(&entry, &mut record.data)?;
        self.check_roles(caller, &entry, &record, &before).await?;
        self.bump(&mut record);
        let stored = self
            .commit_record(
                caller,
                record,
                Some(args.expected_revision),
                EventKind::RecordUpdated,
                mutation,
            )
            .await?;
        self.project(caller, stored).await
    }

    /// `record.archive`.
    ///
    /// # Errors
    ///
    /// 403, 404, 409.
    pub async fn archive(
        &self,
        caller: &Caller,
        args: ArchiveRecord,
    ) -> Result<RecordView, RecordError> {
        let (mutation, mut record) = match self
            .begin_change(caller, Operation::RecordArchive, &args)
            .await?
        {
            Changing::Replay(stored) => return self.project(caller, stored).await,
            Changing::Fresh(mutation, record) => (mutation, record),
        };
        record.archived = true;
        self.bump(&mut record);
        let stored = self
            .commit_record(
                caller,
                record,
                Some(args.expected_revision),
                EventKind::RecordArchived,
                mutation,
            )
            .await?;
        self.project(caller, stored).await
    }

    /// `command.execute`: input, state (`from`), guard, expected revision and idempotency
    /// key must all permit it; then `to`, `set_data`, a schema re-check, the revision bump and
    /// the `work.requested` intents, committed together.
    ///
    /// # Errors
    ///
    /// 400 unknown command, 403, 404, 409 (stale, state, guard, archived, idempotency),
    /// 422 input or resulting data.
    pub async fn execute(
        &self,
        caller: &Caller,
        mut args: ExecuteCommand,
    ) -> Result<CommandResult, RecordError> {
        refuse_deep("the input", &mut args.input)?;
        let (mutation, mut record) = match self
            .begin_change(caller, Operation::CommandExecute, &args)
            .await?
        {
            Changing::Replay(result) => return Ok(result),
            Changing::Fresh(mutation, record) => (mutation, record),
        };
        let entry = self
            .type_entry(
                &record.workspace_id,
                &record.namespace,
                record.version,
                &record.type_name,
            )
            .await?;
        let (index, command) = find_command(entry.def(), &args.command)?;
        let input = Value::Object(args.input.clone());
        entry.inputs[index].check(&input).map_err(|issues| {
            RecordError::schema(
                format!(
                    "the input of command {:?} does not match its schema",
                    command.name
                ),
                issues,
            )
        })?;
        if let Some(reason) = state_blocks(command, record.state.as_deref()) {
            return Err(reason);
        }
        let data = Value::Object(record.data.clone());
        let scope = Scope {
            data: Some(&data),
            input: Some(&input),
            state: record.state.as_deref(),
        };
        if let Some(guard) = &command.guard
            && !guard.passes(&scope)
        {
            return Err(RecordError::GuardFailed {
                command: command.name.to_string(),
            });
        }
        // Expressions read the data as it was (`data`), writes go to the record.
        for (field, expr) in command.set_data.iter() {
            match expr.evaluate(&scope) {
                Some(value) => record.data.insert(field.to_string(), value),
                None => record.data.remove(field.as_ref()),
            };
        }
        if let Some(to) = &command.to {
            record.state = Some(to.to_string());
        }
        check_data(&entry, &mut record.data)?;
        self.bump(&mut record);
        let mut events = vec![self.event(
            caller,
            &record,
            EventKind::CommandExecuted,
            serde_json::json!({"command": command.name, "input": input, "record": snapshot(&record)}),
        )];
        for emit in command.emit.iter() {
            events.push(self.event(
                caller,
                &record,
                EventKind::WorkRequested,
                serde_json::json!({
                    "task": emit.task,
                    "command": command.name,
                    "namespace": record.namespace,
                    "version": record.version,
                    "type": record.type_name,
                }),
            ));
        }
        let result = CommandResult {
            record_id: record.id,
            revision: record.revision,
            state: record.state.clone(),
            work_requested: command.emit.iter().map(|e| e.task.to_string()).collect(),
        };
        let expected = Some(args.expected_revision);
        self.commit_and_remember(record, expected, events, mutation, result)
            .await
    }

    /// `command.list`: the record's commands and which of their requirements pass.
    ///
    /// # Errors
    ///
    /// 403, 404.
    pub async fn list_commands(
        &self,
        caller: &Caller,
        mut args: ListCommands,
    ) -> Result<CommandList, RecordError> {
        if let Some(input) = &mut args.input {
            refuse_deep("the input", input)?;
        }
        let record = self
            .readable(caller, &args.workspace_id, args.record_id)
            .await?;
        self.permit(caller, Operation::CommandList, Target::Record(&record))?;
        let entry = self
            .type_entry(
                &record.workspace_id,
                &record.namespace,
                record.version,
                &record.type_name,
            )
            .await?;
        let data = Value::Object(record.data.clone());
        // `runnable` also asks the authority whether this caller may execute commands here.
        let may_execute =
            self.authority
                .allows(caller, Operation::CommandExecute, Target::Record(&record));
        let input = args.input.clone().map(Value::Object);
        let commands = entry
            .def()
            .commands
            .iter()
            .enumerate()
            .map(|(index, command)| {
                let mut requirements = Vec::new();
                let state = state_blocks(command, record.state.as_deref());
                requirements.push(Requirement {
                    kind: "state".to_owned(),
                    passed: Some(state.is_none()),
                    reason: state.map(|e| e.to_string()),
                });
                let input_check = input.as_ref().map(|input| entry.inputs[index].check(input));
                requirements.push(Requirement {
                    kind: "input".to_owned(),
                    passed: input_check.as_ref().map(Result::is_ok),
                    reason: match &input_check {
                        Some(Err(issues)) => Some(issue_summary(issues)),
                        _ => None,
                    },
                });
                if let Some(guard) = &command.guard {
                    // Without input, a guard that reads it cannot be judged yet.
                    let passed = (input.is_some() || !uses_input(guard)).then(|| {
                        guard.passes(&Scope {
                            data: Some(&data),
                            input: input.as_ref(),
                            state: record.state.as_deref(),
                        })
                    });
                    requirements.push(Requirement {
                        kind: "guard".to_owned(),
                        passed,
                        reason: (passed == Some(false))
                            .then(|| "the guard does not pass".to_owned()),
                    });
                }
                let runnable = !record.archived
                    && may_execute
                    && requirements.iter().all(|r| r.passed != Some(false));
                CommandStatus {
                    command: command.name.to_string(),
                    capability_id: command_capability_id(
                        &record.namespace,
                        &record.type_name,
                        &command.name,
                    )
                    .unwrap_or_default(),
                    description: command.description.as_ref().map(ToString::to_string),
                    requirements,
                    runnable,
                }
            })
            .collect();
        Ok(CommandList { commands })
    }

    /// `record.search`: by filters, or through a view; only records the caller may read.
    ///
    /// # Errors
    ///
    /// 400 bad limit, cursor or view.
    pub async fn search(
        &self,
        caller: &Caller,
        args: SearchRecords,
    ) -> Result<Page<RecordView>, RecordError> {
        let limit = page_limit(args.limit)?;
        let (filter, view) = match &args.view {
            Some(view_ref) => {
                if args.namespace.is_some() || args.type_name.is_some() {
                    return Err(RecordError::InvalidArguments(
                        "give either a view or namespace/type filters".to_owned(),
                    ));
                }
                let package = &self
                    .registered(&args.workspace_id, &view_ref.namespace, view_ref.version)
                    .await?
                    .package;
                let version = package.version;
                let view = package.view(&view_ref.view).ok_or_else(|| {
                    RecordError::InvalidArguments(format!(
                        "unknown view {:?} in {} v{version}",
                        view_ref.view, view_ref.namespace
                    ))
                })?;
                let filter = ScanFilter {
                    namespace: Some(view_ref.namespace.clone()),
                    type_name: Some(view.type_name.to_string()),
                    version: Some(version),
                    state: args.state.clone(),
                    collection_id: args.collection_id.clone(),
                    include_archived: false,
                };
                (filter, Some(view.clone()))
            }
            None => (
                ScanFilter {
                    namespace: args.namespace.clone(),
                    type_name: args.type_name.clone(),
                    version: args.version,
                    state: args.state.clone(),
                    collection_id: args.collection_id.clone(),
                    include_archived: false,
                },
                None,
            ),
        };
        let binding = {
            let mut bound = args.clone();
            bound.limit = None;
            bound.cursor = None;
            format!(
                "search|{}",
                serde_json::to_string(&bound).unwrap_or_default()
            )
        };
        let scope = CursorScope {
            workspace_id: &args.workspace_id,
            query: &binding,
            principal: caller.id(),
        };
        let cursor_key = self.cursor_key().await?;
        let mut after = cursor_key.after(args.cursor.as_deref(), &scope)?;
        let query = args.query.as_ref().map(|q| q.to_lowercase());
        let mut items = Vec::new();
        let mut seen = Readable::new();
        let mut scanned = 0;
        let mut exhausted = false;
        while items.len() < limit && scanned < SCAN_BUDGET {
            let batch = self
                .store
                .scan(&args.workspace_id, &filter, after, limit)
                .await?;
            let batch_len = batch.len();
            let mut consumed = 0;
            for (position, record) in batch {
                after = position;
                scanned += 1;
                consumed += 1;
                if self.shown(caller, &record, query.as_deref(), view.as_ref()) {
                    items.push(self.view(caller, &record, view.as_ref(), &mut seen).await?);
                    if items.len() == limit {
                        break;
                    }
                }
            }
            if batch_len < limit && consumed == batch_len {
                exhausted = true;
                break;
            }
        }
        // More may remain unless the store ran out: a page cut by the scan budget may be
        // sparse (even empty) and still carry a cursor.
        let next_cursor = (!exhausted).then(|| cursor_key.encode(after, &scope));
        Ok(Page {
            items,
            next_cursor,
            checkpoint: None,
        })
    }

    /// `record.history`: the record's events, oldest first.
    ///
    /// # Errors
    ///
    /// 400 bad limit or cursor, 404.
    pub async fn history(
        &self,
        caller: &Caller,
        args: RecordHistory,
    ) -> Result<Page<ChangeEvent>, RecordError> {
        let limit = page_limit(args.limit)?;
        self.readable(caller, &args.workspace_id, args.record_id)
            .await?;
        let binding = format!("history|{}", args.record_id);
        let scope = CursorScope {
            workspace_id: &args.workspace_id,
            query: &binding,
            principal: caller.id(),
        };
        let cursor_key = self.cursor_key().await?;
        let after = cursor_key.after(args.cursor.as_deref(), &scope)?;
        let mut items = self
            .store
            .events(&args.workspace_id, Some(args.record_id), after, limit)
            .await?;
        let mut seen = Readable::new();
        for event in &mut items {
            self.redact(caller, &args.workspace_id, &mut event.payload, &mut seen)
                .await?;
        }
        let next_cursor = (items.len() == limit).then(|| {
            let position = items.last().map_or(after, |e| e.id);
            cursor_key.encode(position, &scope)
        });
        Ok(Page {
            items,
            next_cursor,
            checkpoint: None,
        })
    }

    /// `changes.feed`: the workspace's events after a cursor or checkpoint, oldest first,
    /// without events of records the caller may not read. `checkpoint` is where to poll from
    /// later; consumers deduplicate on `event_id`.
    ///
    /// # Errors
    ///
    /// 400 bad limit or cursor.
    pub async fn feed(
        &self,
        caller: &Caller,
        args: ChangesFeed,
    ) -> Result<Page<ChangeEvent>, RecordError> {
        let limit = page_limit(args.limit)?;
        // `Some("")` is no namespace a package can have: it cannot pass for `None`.
        let binding = match &args.namespace {
            Some(namespace) => format!("feed|{namespace}"),
            None => "feed".to_owned(),
        };
        let scope = CursorScope {
            workspace_id: &args.workspace_id,
            query: &binding,
            principal: caller.id(),
        };
        let cursor_key = self.cursor_key().await?;
        let after = cursor_key.after(args.cursor.as_deref(), &scope)?;
        let events = self
            .store
            .events(&args.workspace_id, None, after, limit)
            .await?;
        let full = events.len() == limit;
        let last = events.last().map_or(after, |e| e.id);
        let mut visible: BTreeMap<Uuid, bool> = BTreeMap::new();
        let mut seen = Readable::new();
        let mut items = Vec::with_capacity(events.len());
        for event in events {
            let readable = match visible.get(&event.record_id) {
                Some(readable) => *readable,
                None => {
                    let record = self
                        .visible(caller, &args.workspace_id, event.record_id)
                        .await?;
                    // Read once: as an event's record here, as a participant below.
                    seen.insert(event.record_id, record.is_some());
                    let readable = record.is_some_and(|r| {
                        args.namespace.as_deref().is_none_or(|ns| r.namespace == ns)
                    });
                    visible.insert(event.record_id, readable);
                    readable
                }
            };
            if readable {
                let mut event = event;
                self.redact(caller, &args.workspace_id, &mut event.payload, &mut seen)
                    .await?;
                items.push(event);
            }
        }
        let cursor = cursor_key.encode(last, &scope);
        Ok(Page {
            items,
            next_cursor: full.then(|| cursor.clone()),
            checkpoint: Some(cursor),
        })
    }

    // ------------------------------------------------------------------ helpers

    /// Current access applies to old snapshots: in an event's record snapshot, participants
    /// the reader may not read (now) become `{"restricted": true}`, by [`Self::restrict`]'s
    /// rule (a reference that names no record is restricted too).
    async fn redact(
        &self,
        caller: &Caller,
        workspace_id: &str,
        payload: &mut Value,
        seen: &mut Readable,
    ) -> Result<(), RecordError> {
        let snapshot = if payload.get("participants").is_some() {
            Some(payload)
        } else {
            payload.get_mut("record")
        };
        let Some(Value::Object(roles)) = snapshot.and_then(|s| s.get_mut("participants")) else {
            return Ok(());
        };
        for refs in roles.values_mut() {
            let Value::Array(values) = refs else { continue };
            let mut parsed: Vec<ParticipantRef> = values
                .iter()
                .map(|value| {
                    serde_json::from_value(value.clone())
                        .unwrap_or(ParticipantRef::Restricted { restricted: true })
                })
                .collect();
            self.restrict(caller, workspace_id, parsed.iter_mut(), seen)
                .await?;
            for (value, reference) in values.iter_mut().zip(parsed) {
                if let ParticipantRef::Restricted { .. } = reference {
                    *value = serde_json::json!({"restricted": true});
                }
            }
        }
        Ok(())
    }

    /// The one redaction rule, for records read now and snapshots alike: each participant
    /// the caller may not read now becomes `{"restricted": true}`. Each distinct
    /// participant is read once per call (`seen` is shared by a page's items), not once per
    /// reference.
    async fn restrict<'r>(
        &self,
        caller: &Caller,
        workspace_id: &str,
        refs: impl Iterator<Item = &'r mut ParticipantRef> + Send,
        seen: &mut Readable,
    ) -> Result<(), RecordError> {
        for reference in refs {
            let ParticipantRef::Visible { id } = *reference else {
                continue;
            };
            let readable = match seen.get(&id) {
                Some(&known) => known,
                None => {
                    let known = self.visible(caller, workspace_id, id).await?.is_some();
                    seen.insert(id, known);
                    known
                }
            };
            if !readable {
                *reference = ParticipantRef::Restricted { restricted: true };
            }
        }
        Ok(())
    }

    /// The package of the program `namespace` at `version` (without one, the highest) that
    /// `workspace_id` sees: its own or installed, else (and for the highest version, also)
    /// what the [`ProgramSource`] knows.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` when the workspace sees no such program; the [`ProgramSource`]'s failure.
    pub async fn program(
        &self,
        workspace_id: &str,
        namespace: &str,
        version: Option<u64>,
    ) -> Result<Arc<Package>, RecordError> {
        let registered = self.registered(workspace_id, namespace, version).await?;
        Ok(Arc::clone(&registered.package))
    }

    /// The program `namespace` at `version` (without one, the highest) that `workspace_id`
    /// sees: its own or installed, else (and for the highest version, also) what the
    /// [`ProgramSource`] knows.
    pub(crate) async fn registered(
        &self,
        workspace_id: &str,
        namespace: &str,
        version: Option<u64>,
    ) -> Result<Arc<Registered>, RecordError> {
        let local = self
            .read_programs()
            .find(Some(workspace_id), namespace, version);
        if let Some(source) = &self.program_source
            && (local.is_none() || version.is_none())
            && let Some(package) = source.program(workspace_id, namespace, version).await?
        {
            let fits = package.namespace == namespace
                && version.is_none_or(|v| v == package.version)
                && local
                    .as_ref()
                    .is_none_or(|l| l.package.version < package.version);
            if fits {
                return Ok(self.add_program(workspace_id, package)?.1);
            }
        }
        local.ok_or_else(|| match version {
            Some(v) => RecordError::InvalidArguments(format!(
                "program {namespace} v{v} is not active in this workspace"
            )),
            None => {
                RecordError::InvalidArguments(format!("unknown program namespace {namespace:?}"))
            }
        })
    }

    async fn type_entry(
        &self,
        workspace_id: &str,
        namespace: &str,
        version: u64,
        type_name: &str,
    ) -> Result<Arc<TypeEntry>, RecordError> {
        let program = match self
            .registered(workspace_id, namespace, Some(version))
            .await
        {
            Ok(program) => Some(program),
            // Not active here: the type is unknown. A store failure stays one (500).
            Err(RecordError::InvalidArguments(_)) => None,
            Err(error) => return Err(error),
        };
        program
            .and_then(|r| r.type_entry(type_name))
            .ok_or_else(|| {
                RecordError::InvalidArguments(format!(
                    "unknown type {type_name:?} in {namespace} v{version}"
                ))
            })
    }

    /// Whether record `id` (readable by `caller`) is of `type_name` in program `namespace`
    /// `version`: 404 otherwise. What a capability bound to one type checks first.
    pub(crate) async fn check_type(
        &self,
        caller: &Caller,
        workspace_id: &str,
        id: Uuid,
        (namespace, version, type_name): (&str, u64, &str),
    ) -> Result<(), RecordError> {
        let record = self.readable(caller, workspace_id, id).await?;
        if record.namespace == namespace
            && record.version == version
            && record.type_name == type_name
        {
            Ok(())
        } else {
            Err(RecordError::NotFound)
        }
    }

    /// Starts a mutation: checks the idempotency key, and answers a replay of it from the
    /// stored result (or refuses other arguments under the same key).
    async fn begin<T: Answer>(
        &self,
        caller: &Caller,
        operation: Operation,
        args: &(impl Serialize + Keyed),
    ) -> Result<Begun<T>, RecordError> {
        let (workspace_id, key) = args.idempotency();
        check_key(key)?;
        let fingerprint = fingerprint(caller, operation.as_str(), args)?;
        match self.store.idempotency(workspace_id, key).await? {
            Some(entry) => {
                let answer: T = replayed(&entry, &fingerprint)?;
                // Current access first: a replay answers nothing that a read would not.
                self.replay_access(caller, workspace_id, answer.record_id(), operation)
                    .await?;
                Ok(Begun::Replay(answer))
            }
            None => Ok(Begun::Fresh(Mutation {
                workspace_id: workspace_id.to_owned(),
                key: key.to_owned(),
                fingerprint,
            })),
        }
    }

    /// Starts a change of an existing record: [`begin`](Self::begin), then the record as
    /// [`writable`](Self::writable) for `operation`.
    async fn begin_change<T: Answer>(
        &self,
        caller: &Caller,
        operation: Operation,
        args: &(impl Serialize + Change),
    ) -> Result<Changing<T>, RecordError> {
        let mutation = match self.begin(caller, operation, args).await? {
            Begun::Replay(result) => return Ok(Changing::Replay(result)),
            Begun::Fresh(mutation) => mutation,
        };
        let (record_id, expected) = args.target();
        let record = match self
            .writable(
                caller,
                &mutation.workspace_id,
                record_id,
                operation,
                expected,
            )
            .await
        {
            Ok(record) => record,
            // The same call, under the same key, may have changed the record between the key's
            // lookup and this read (another instance, or a concurrent retry): its idempotency
            // entry commits with the change, so a second look finds it and the call is its
            // replay, not a conflict.
            Err(error @ (RecordError::StaleRevision { .. } | RecordError::Archived)) => {
                return match self.begin(caller, operation, args).await? {
                    Begun::Replay(result) => Ok(Changing::Replay(result)),
                    Begun::Fresh(_) => Err(error),
                };
            }
            Err(error) => return Err(error),
        };
        Ok(Changing::Fresh(mutation, record))
    }

    /// Commits a record change with its one event. What it remembers for replays (and
    /// returns) is the unredacted snapshot: every answer, the first or a replay, is
    /// [projected](Self::project) for its reader when it is given.
    async fn commit_record(
        &self,
        caller: &Caller,
        record: Record,
        expected_revision: Option<u64>,
        kind: EventKind,
        mutation: Mutation,
    ) -> Result<RecordView, RecordError> {
        let stored = snapshot_view(&record);
        let event = self.event(caller, &record, kind, snapshot(&record));
        self.commit_and_remember(record, expected_revision, vec![event], mutation, stored)
            .await
    }

    /// The access a replay needs: what the first call needed, judged now. A record the
    /// caller may no longer read is not found (404); one it may no longer change, or create
    /// in its collection, is forbidden (403).
    async fn replay_access(
        &self,
        caller: &Caller,
        workspace_id: &str,
        id: Uuid,
        operation: Operation,
    ) -> Result<(), RecordError> {
        let record = self.readable(caller, workspace_id, id).await?;
        if operation == Operation::RecordCreate {
            let new = NewRecord::new(
                &record.workspace_id,
                &record.collection_id,
                &record.namespace,
                record.version,
                &record.type_name,
            );
            self.permit(caller, operation, Target::New(&new))
        } else {
            self.permit(caller, operation, Target::Record(&record))
        }
    }

    /// Commits a change with its events and its idempotency entry (which remembers
    /// `result` for replays); a concurrent call that took the key first is replayed.
    async fn commit_and_remember<T: Serialize + DeserializeOwned>(
        &self,
        record: Record,
        expected_revision: Option<u64>,
        events: Vec<ChangeEvent>,
        mutation: Mutation,
        result: T,
    ) -> Result<T, RecordError> {
        let Mutation {
            workspace_id,
            key,
            fingerprint,
        } = mutation;
        let idempotency = IdempotencyEntry {
            workspace_id,
            key,
            fingerprint: fingerprint.clone(),
            result: serde_json::to_string(&result)
                .map_err(|e| RecordError::Store(e.to_string()))?,
        };
        let commit = Commit {
            record,
            expected_revision,
            events,
            idempotency,
        };
        match self.store.commit(commit).await {
            Ok(_) => Ok(result),
            Err(CommitError::Stale { actual }) => Err(RecordError::StaleRevision {
                expected: expected_revision.unwrap_or(0),
                actual,
            }),
            // A concurrent call with the same key won the race.
            Err(CommitError::DuplicateKey(entry)) => replayed(&entry, &fingerprint),
            Err(CommitError::Store(e)) => Err(e.into()),
        }
    }

    /// The record, if it exists and the caller may read it. Every read of a record goes
    /// through here: one that may not be read is reported exactly like a missing one, so
    /// nothing about it leaks.
    async fn visible(
        &self,
        caller: &Caller,
        workspace_id: &str,
        id: Uuid,
    ) -> Result<Option<Record>, RecordError> {
        Ok(self.store.get(workspace_id, id).await?.filter(|r| {
            self.authority
                .allows(caller, Operation::RecordRead, Target::Record(r))
        }))
    }

    /// The record, if it exists and the caller may read it (else 404).
    async fn readable(
        &self,
        caller: &Caller,
        workspace_id: &str,
        id: Uuid,
    ) -> Result<Record, RecordError> {
        self.visible(caller, workspace_id, id)
            .await?
            .ok_or(RecordError::NotFound)
    }

    /// 403 unless the authority allows `operation` on `record`.
    fn permit(
        &self,
        caller: &Caller,
        operation: Operation,
        target: Target<'_>,
    ) -> Result<(), RecordError> {
        if self.authority.allows(caller, operation, target) {
            Ok(())
        } else {
            Err(RecordError::Forbidden {
                operation: operation.as_str(),
            })
        }
    }

    /// The record for a change: readable (404), permitted (403), not archived and at the
    /// expected revision (409).
    async fn writable(
        &self,
        caller: &Caller,
        workspace_id: &str,
        id: Uuid,
        operation: Operation,
        expected: u64,
    ) -> Result<Record, RecordError> {
        let record = self.readable(caller, workspace_id, id).await?;
        self.permit(caller, operation, Target::Record(&record))?;
        if record.archived {
            return Err(RecordError::Archived);
        }
        if record.revision != expected {
            return Err(RecordError::StaleRevision {
                expected,
                actual: record.revision,
            });
        }
        Ok(record)
    }

    /// Whether a scanned record belongs on a search page: readable, matching the query and
    /// the view's `where`.
    fn shown(
        &self,
        caller: &Caller,
        record: &Record,
        query: Option<&str>,
        view: Option<&View>,
    ) -> bool {
        if !self
            .authority
            .allows(caller, Operation::RecordRead, Target::Record(record))
        {
            return false;
        }
        // Through a view, the text query sees only the fields the view shows.
        if let Some(query) = query
            && !record
                .data
                .iter()
                .any(|(field, value)| shows(view, field) && contains_text(value, query))
        {
            return false;
        }
        view.and_then(|v| v.filter.as_ref()).is_none_or(|filter| {
            filter.passes(&Scope {
                data: Some(&Value::Object(record.data.clone())),
                input: None,
                state: record.state.as_deref(),
            })
        })
    }

    fn bump(&self, record: &mut Record) {
        record.revision += 1;
        record.updated_at = self.clock.now_ms().max(record.updated_at);
    }

    fn event(
        &self,
        caller: &Caller,
        record: &Record,
        kind: EventKind,
        payload: Value,
    ) -> ChangeEvent {
        ChangeEvent {
            id: 0,
            event_id: new_id(),
            workspace_id: record.workspace_id.clone(),
            actor: caller.actor.clone(),
            record_id: record.id,
            revision: record.revision,
            kind,
            at: timestamp(record.updated_at),
            payload,
        }
    }

    /// Roles against the type: known roles, `min`/`max`, and each participant not in
    /// `before` (the participants the record had: none for a new record) one that exists in
    /// the workspace, that the caller can read, with an allowed type. A participant the
    /// record already had was checked when it was added, and may be one this caller cannot
    /// read: checking it again would refuse the caller's change for it, naming it.
    async fn check_roles(
        &self,
        caller: &Caller,
        entry: &TypeEntry,
        record: &Record,
        before: &BTreeMap<String, Vec<Uuid>>,
    ) -> Result<(), RecordError> {
        let type_def = entry.def();
        let mut issues = Vec::new();
        let issue = |path: String, keyword: &str, message: String| {
            ValidationIssue::new(path, keyword, message)
        };
        if type_def.kind == Kind::Entity {
            // Any role key, even with no participants, is refused: an entity has none.
            if !record.participants.is_empty() {
                issues.push(issue(
                    "/roles".to_owned(),
                    "roles",
                    "an entity has no roles".to_owned(),
                ));
            }
        } else {
            // The issues stop at one more than the runtime's limit: enough to know the list
            // is cut (see the end), however many unknown roles or participants come.
            let full = |issues: &Vec<ValidationIssue>| issues.len() > MAX_VALIDATION_ISSUES;
            for name in record.participants.keys() {
                if full(&issues) {
                    break;
                }
                if type_def.role(name).is_none() {
                    issues.push(issue(
                        format!("/roles/{name}"),
                        "roles",
                        format!("unknown role {name:?}"),
                    ));
                }
            }
            for role in type_def.roles.iter() {
                let ids = record
                    .participants
                    .get(role.name.as_ref())
                    .map_or(&[][..], Vec::as_slice);
                let count = ids.len();
                if count < role.min as usize || count > role.max as usize {
                    issues.push(issue(
                        format!("/roles/{}", role.name),
                        "cardinality",
                        format!(
                            "role {:?} takes {} to {} participants, found {count}",
                            role.name, role.min, role.max
                        ),
                    ));
                }
                // Past `max` the role is already wrong (the cardinality issue): the ids
                // looked up stop `MAX_VALIDATION_ISSUES` after it, since each is a store
                // read and the duplicate check is quadratic.
                for (i, id) in ids
                    .iter()
                    .enumerate()
                    .take(role.max as usize + MAX_VALIDATION_ISSUES)
                {
                    if full(&issues) {
                        break;
                    }
                    let repeated = ids[..i].contains(id);
                    let kept = !repeated
                        && before
                            .get(role.name.as_ref())
                            .is_some_and(|list| list.contains(id));
                    // An id the caller cannot read is "does not exist" wherever it is, a
                    // repeat included: "listed twice" would say it names a record.
                    let problem = if kept {
                        None
                    } else {
                        match self.participant_problem(caller, record, role, *id).await? {
                            None if repeated => Some(format!("participant {id} is listed twice")),
                            problem => problem,
                        }
                    };
                    if let Some(message) = problem {
                        let path = format!("/roles/{}/{i}", role.name);
                        issues.push(issue(path, "participant", message));
                    }
                }
            }
        }
        if issues.len() > MAX_VALIDATION_ISSUES {
            // The runtime's marker, so that every issue list of a call ends the same way.
            issues.truncate(MAX_VALIDATION_ISSUES);
            issues.push(
                ValidationIssue::new(
                    "",
                    TRUNCATED_KEYWORD,
                    format!(
                        "more issues not reported (at most {MAX_VALIDATION_ISSUES} are listed)"
                    ),
                )
                .with_param("limit", MAX_VALIDATION_ISSUES),
            );
        }
        if issues.is_empty() {
            Ok(())
        } else {
            Err(RecordError::schema(
                "the roles do not satisfy the type",
                issues,
            ))
        }
    }

    /// What is wrong with record `id` as a participant in `role` of `record`, if anything.
    /// Linking to a record the caller may not read is refused like linking to a missing one.
    async fn participant_problem(
        &self,
        caller: &Caller,
        record: &Record,
        role: &Role,
        id: Uuid,
    ) -> Result<Option<String>, RecordError> {
        let Some(participant) = self.visible(caller, &record.workspace_id, id).await? else {
            return Ok(Some(format!(
                "participant {id} does not exist in this workspace"
            )));
        };
        let allowed = role
            .types
            .iter()
            .any(|t| t.namespace == participant.namespace && t.name == participant.type_name);
        if allowed {
            return Ok(None);
        }
        let types: Vec<String> = role
            .types
            .iter()
            .map(|t| format!("{}/{}", t.namespace, t.name))
            .collect();
        Ok(Some(format!(
            "participant {id} is a {}/{}; role {:?} allows {}",
            participant.namespace,
            participant.type_name,
            role.name,
            types.join(", ")
        )))
    }

    /// The reader's projection: participants the caller may not read are restricted; a view
    /// keeps only its fields.
    async fn view(
        &self,
        caller: &Caller,
        record: &Record,
        view: Option<&View>,
        seen: &mut Readable,
    ) -> Result<RecordView, RecordError> {
        let data = record
            .data
            .iter()
            .filter(|(field, _)| shows(view, field))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        self.project_with(caller, record_view(record, visible_ids(record), data), seen)
            .await
    }

    /// `view` as `caller` may see it now: each participant it may not read becomes
    /// `{"restricted": true}` (a stored answer is projected like a fresh read).
    async fn project(&self, caller: &Caller, view: RecordView) -> Result<RecordView, RecordError> {
        self.project_with(caller, view, &mut Readable::new()).await
    }

    /// [`Self::project`], with what the call has already read.
    async fn project_with(
        &self,
        caller: &Caller,
        mut view: RecordView,
        seen: &mut Readable,
    ) -> Result<RecordView, RecordError> {
        let refs = view.participants.values_mut().flatten();
        self.restrict(caller, &view.workspace_id, refs, seen)
            .await?;
        Ok(view)
    }
}

/// What a call has learnt of participants: whether the caller may read each.
type Readable = HashMap<Uuid, bool>;

/// Whether `field` is shown through `view` (every field without one).
fn shows(view: Option<&View>, field: &str) -> bool {
    view.is_none_or(|view| view.fields.iter().any(|f| f.as_ref() == field))
}

/// `record` as readers see it, with their participants and data.
fn record_view(
    record: &Record,
    participants: BTreeMap<String, Vec<ParticipantRef>>,
    data: Map<String, Value>,
) -> RecordView {
    RecordView {
        id: record.id,
        workspace_id: record.workspace_id.clone(),
        collection_id: record.collection_id.clone(),
        namespace: record.namespace.clone(),
        version: record.version,
        type_name: record.type_name.clone(),
        kind: record.kind.as_str().to_owned(),
        revision: record.revision,
        data,
        participants,
        state: record.state.clone(),
        archived: record.archived,
        created_at: timestamp(record.created_at),
        updated_at: timestamp(record.updated_at),
    }
}

fn check_key(key: &str) -> Result<(), RecordError> {
    // Characters, as JSON Schema's `maxLength` counts them.
    if key.is_empty() || key.chars().count() > MAX_IDEMPOTENCY_KEY {
        return Err(RecordError::InvalidArguments(format!(
            "idempotency_key must be 1 to {MAX_IDEMPOTENCY_KEY} characters"
        )));
    }
    // PostgreSQL's text cannot hold U+0000: refused here, the same on every store.
    if key.contains('\0') {
        return Err(RecordError::InvalidArguments(
            "idempotency_key must not contain U+0000".to_owned(),
        ));
    }
    Ok(())
}

/// A mutation no earlier call answered: what its idempotency entry will hold.
struct Mutation {
    workspace_id: String,
    key: String,
    fingerprint: String,
}

/// How [`Engine::begin_change`] starts a change of an existing record.
// Returned once per change and destructured at once: boxing the record would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
enum Changing<T> {
    /// The key was used before with the same arguments: its first result.
    Replay(T),
    /// A new change of this record (readable, permitted, current, not archived).
    Fresh(Mutation, Record),
}

/// How [`Engine::begin`] starts a mutation.
enum Begun<T> {
    /// The key was used before with the same arguments: its first result.
    Replay(T),
    /// A new mutation.
    Fresh(Mutation),
}

/// What a mutation answers: replays of it are checked against the record it names.
trait Answer: Serialize + DeserializeOwned {
    fn record_id(&self) -> Uuid;
}

impl Answer for RecordView {
    fn record_id(&self) -> Uuid {
        self.id
    }
}

impl Answer for CommandResult {
    fn record_id(&self) -> Uuid {
        self.record_id
    }
}

/// Mutation arguments: their workspace and idempotency key.
trait Keyed {
    fn idempotency(&self) -> (&str, &str);
}

macro_rules! keyed {
    ($($args:ty),*) => {$(
        impl Keyed for $args {
            fn idempotency(&self) -> (&str, &str) {
                (&self.workspace_id, &self.idempotency_key)
            }
        }
    )*};
}
keyed!(CreateRecord, UpdateRecord, ArchiveRecord, ExecuteCommand);

/// The arguments of a change of an existing record.
trait Change: Keyed {
    /// The record and the revision the change expects.
    fn target(&self) -> (Uuid, u64);
}

macro_rules! change {
    ($($args:ty),*) => {$(
        impl Change for $args {
            fn target(&self) -> (Uuid, u64) {
                (self.record_id, self.expected_revision)
            }
        }
    )*};
}
change!(UpdateRecord, ArchiveRecord, ExecuteCommand);

/// What a replay must match: the caller, the operation and its arguments. The caller is part of
/// it so that another caller reusing a key gets a conflict, never the first caller's result.
fn fingerprint(
    caller: &Caller,
    operation: &str,
    args: &impl Serialize,
) -> Result<String, RecordError> {
    serde_json::to_string(args)
        .map(|json| format!("{}|{operation}|{json}", caller.id()))
        .map_err(|e| RecordError::InvalidArguments(e.to_string()))
}

fn replayed<T: DeserializeOwned>(
    entry: &IdempotencyEntry,
    fingerprint: &str,
) -> Result<T, RecordError> {
    if entry.fingerprint != fingerprint {
        return Err(RecordError::IdempotencyConflict {
            key: entry.key.clone(),
        });
    }
    serde_json::from_str(&entry.result)
        .map_err(|e| RecordError::Store(format!("stored result unreadable: {e}")))
}

/// Refuses caller values nested more than [`MAX_VALUE_DEPTH`] arrays and objects (the map
/// itself one of them) with `INVALID_ARGUMENTS`, before anything recurses into them: the
/// idempotency fingerprint serializes the arguments, the record clones its data, a
/// `set_data` rule copies its value. A refused map is taken apart here, without recursion,
/// since the caller's arguments are dropped on return.
fn refuse_deep(what: &str, map: &mut Map<String, Value>) -> Result<(), RecordError> {
    if !map
        .values()
        .any(|value| exceeds_depth(value, MAX_VALUE_DEPTH - 1))
    {
        return Ok(());
    }
    dismantle(Value::Object(std::mem::take(map)));
    Err(RecordError::InvalidArguments(format!(
        "{what} nests more than {MAX_VALUE_DEPTH} arrays and objects"
    )))
}

fn check_data(entry: &TypeEntry, data: &mut Map<String, Value>) -> Result<(), RecordError> {
    // The validator reads a `Value`: the map is moved in and back out, not copied.
    let value = Value::Object(std::mem::take(data));
    let checked = entry.data.check(&value);
    if let Value::Object(map) = value {
        *data = map;
    }
    checked.map_err(|issues| {
        RecordError::schema(
            format!(
                "the data does not match the schema of type {:?}",
                entry.def().name
            ),
            issues,
        )
    })
}

fn find_command<'t>(
    type_def: &'t TypeDef,
    name: &str,
) -> Result<(usize, &'t Command), RecordError> {
    type_def
        .commands
        .iter()
        .enumerate()
        .find(|(_, c)| c.name == name)
        .ok_or_else(|| {
            RecordError::InvalidArguments(format!(
                "type {:?} has no command {name:?}",
                type_def.name
            ))
        })
}

/// Why the record's state does not allow the command, if it does not.
fn state_blocks(command: &Command, state: Option<&str>) -> Option<RecordError> {
    if command.from.is_empty() || state.is_some_and(|s| command.from.iter().any(|f| f == s)) {
        return None;
    }
    Some(RecordError::StateNotAllowed {
        command: command.name.to_string(),
        state: state.unwrap_or_default().to_owned(),
        from: command.from.join(", "),
    })
}

fn uses_input(expr: &rcip_relationship::Expr) -> bool {
    use rcip_relationship::{Expr, Root};
    match expr {
        Expr::Path(p) | Expr::Present(p) => p.root == Root::Input,
        Expr::All(list) | Expr::Any(list) | Expr::Not(list) | Expr::Compare(_, list) => {
            list.iter().any(uses_input)
        }
        Expr::Const(_) => false,
    }
}

fn issue_summary(issues: &[ValidationIssue]) -> String {
    issues
        .iter()
        .map(|i| {
            format!(
                "{}: {}",
                if i.instance_path.is_empty() {
                    "/"
                } else {
                    &i.instance_path
                },
                i.message
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn page_limit(limit: Option<u32>) -> Result<usize, RecordError> {
    match limit {
        None => Ok(DEFAULT_LIMIT),
        Some(n) if (1..=MAX_LIMIT as u32).contains(&n) => Ok(n as usize),
        Some(n) => Err(RecordError::InvalidArguments(format!(
            "limit must be 1 to {MAX_LIMIT}, found {n}"
        ))),
    }
}

/// Every participant of `record` by id, before any reader's projection.
fn visible_ids(record: &Record) -> BTreeMap<String, Vec<ParticipantRef>> {
    record
        .participants
        .iter()
        .map(|(role, ids)| {
            let refs = ids.iter().map(|&id| ParticipantRef::Visible { id });
            (role.clone(), refs.collect())
        })
        .collect()
}

/// A record as events and idempotency entries store it: every participant by id. Readers
/// get it projected ([`Engine::redact`], [`Engine::project`]) at read time.
fn snapshot_view(record: &Record) -> RecordView {
    record_view(record, visible_ids(record), record.data.clone())
}

/// [`snapshot_view`] as JSON.
fn snapshot(record: &Record) -> Value {
    // A struct of strings, numbers and string-keyed maps always serializes.
    serde_json::to_value(snapshot_view(record)).unwrap_or_default()
}

/// Whether any string (or number, as text) in `value` contains `query` (lowercase).
fn contains_text(value: &Value, query: &str) -> bool {
    match value {
        Value::String(s) => s.to_lowercase().contains(query),
        Value::Number(n) => n.to_string().contains(query),
        Value::Array(items) => items.iter().any(|v| contains_text(v, query)),
        Value::Object(map) => map.values().any(|v| contains_text(v, query)),
        Value::Null | Value::Bool(_) => false,
    }
}

/// A fresh record or event id: a version-4 UUID over the runtime's 128 random bits. uuid's own
/// `v4` feature would bring getrandom 0.4 beside the 0.3 the runtime (and jsonschema) use.
fn new_id() -> Uuid {
    uuid::Builder::from_random_bytes(random_128()).into_uuid()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_random_version_4_uuids() {
        let (a, b) = (super::new_id(), super::new_id());
        assert_eq!(a.get_version(), Some(uuid::Version::Random));
        assert_eq!(a.get_variant(), uuid::Variant::RFC4122);
        assert_ne!(a, b);
    }
}
