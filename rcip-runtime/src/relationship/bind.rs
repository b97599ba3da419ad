//! A package's command capabilities bound to an engine: what `rcip-build`'s capability sets
//! declare, executed by [`Engine::execute`].

use std::sync::Arc;

use rcip_core::relationship::command_capability_id;
use serde::Deserialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::args::ExecuteCommand;
use super::engine::Engine;
use super::error::RecordError;
use super::record::Actor;
use super::store::RecordStore;
use crate::binding::{Binding, HandlerError, InvocationContext};
use crate::host::{BindingGuard, Host};

/// The command capabilities' input (see `rcip_core::relationship::command_capabilities`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    record_id: String,
    expected_revision: u64,
    idempotency_key: String,
    input: Map<String, Value>,
}

impl<S: RecordStore + 'static> Engine<S> {
    /// Binds every command capability of the program `namespace` (version `version`, or the
    /// only one registered) on `host`, each running [`Engine::execute`] in `workspace_id` as
    /// `actor`. The capabilities must be in the runtime's catalog (list the package's
    /// `Capabilities` set in `catalog!`). Dropping the guards unbinds them.
    ///
    /// A failed command is a `failed` outcome whose message starts with the operation's
    /// stable code (`STALE_REVISION: ...`, `GUARD_FAILED: ...`), with the validation issues of
    /// a `SCHEMA_VIOLATION`: see [`HandlerError::public`].
    ///
    /// # Errors
    ///
    /// [`crate::Error::NotRegistered`] for a command capability the catalog lacks, or an
    /// unknown program (as [`Host::bind`] reports it).
    pub fn bind_commands(
        self: &Arc<Self>,
        host: &Host,
        namespace: &str,
        version: Option<u64>,
        workspace_id: &str,
        actor: &Actor,
    ) -> Result<Vec<BindingGuard>, crate::Error> {
        let package = self
            .package(namespace, version)
            .ok_or_else(|| crate::Error::NotRegistered(namespace.to_owned()))?;
        let mut guards = Vec::new();
        for type_def in package.types.iter() {
            for command in type_def.commands.iter() {
                let Some(id) = command_capability_id(namespace, &type_def.name, &command.name)
                else {
                    continue; // the validator refuses names without an id
                };
                let engine = Arc::clone(self);
                let workspace_id = workspace_id.to_owned();
                let actor = actor.clone();
                let command = command.name.to_string();
                let binding = Binding::new(move |input: Value, _context: InvocationContext| {
                    let result = run(&engine, &workspace_id, &actor, &command, input);
                    std::future::ready(result)
                });
                guards.push(host.bind(&id, binding)?);
            }
        }
        Ok(guards)
    }
}

fn run<S: RecordStore>(
    engine: &Engine<S>,
    workspace_id: &str,
    actor: &Actor,
    command: &str,
    input: Value,
) -> Result<Value, HandlerError> {
    let envelope: Envelope = serde_json::from_value(input)
        .map_err(|e| public(&RecordError::InvalidArguments(e.to_string())))?;
    let record_id = Uuid::parse_str(&envelope.record_id).map_err(|_| {
        public(&RecordError::InvalidArguments(format!(
            "record_id {:?} is not a record id",
            envelope.record_id
        )))
    })?;
    let result = engine
        .execute(
            actor,
            ExecuteCommand {
                workspace_id: workspace_id.to_owned(),
                record_id,
                command: command.to_owned(),
                expected_revision: envelope.expected_revision,
                idempotency_key: envelope.idempotency_key,
                input: envelope.input,
            },
        )
        .map_err(|e| public(&e))?;
    serde_json::to_value(result).map_err(HandlerError::invalid_output)
}

/// A record error as a failure the consumer reads: its code, its message, its issues.
pub(crate) fn public(error: &RecordError) -> HandlerError {
    let issues = match error {
        RecordError::SchemaViolation { issues, .. } => issues.clone(),
        _ => Vec::new(),
    };
    HandlerError::public(error.code(), error, issues)
}
