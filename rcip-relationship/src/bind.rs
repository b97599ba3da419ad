//! A package's capabilities bound to an engine: what `rcip-build`'s capability sets declare
//! (commands and record operations), executed by the engine's operations.

use std::sync::Arc;

use crate::{
    FEED_OPERATION, TypeOperation, command_capability_id, operation_capability_id,
    view_capability_id,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use uuid::Uuid;

use super::args::{
    ArchiveRecord, ChangesFeed, CreateRecord, ExecuteCommand, SearchRecords, UpdateRecord,
};
use super::engine::Engine;
use super::error::RecordError;
use super::principal::Caller;
use super::store::ChangeEvent;
use super::store::RecordStore;
use rcip_runtime::{Binding, HandlerError, InvocationContext};
use rcip_runtime::{BindingGuard, Host};

impl<S: RecordStore + 'static> Engine<S> {
    /// Binds every capability of the program `namespace` (version `version`, or the highest
    /// visible in `workspace_id`) on `host`: its commands (running [`Engine::execute`]) and each type's and
    /// view's record operations (`rcip_relationship::package_capabilities` declares
    /// them all), in `workspace_id`, as `caller` (every invocation acts as it: events record
    /// its actor, the authority judges it). The capabilities must be in the runtime's
    /// catalog (list the package's generated `Capabilities` set in `catalog!`). Dropping the
    /// guards unbinds them.
    ///
    /// A failed operation is a `failed` outcome whose message starts with the operation's
    /// stable code (`STALE_REVISION: ...`, `GUARD_FAILED: ...`), with the validation issues of
    /// a `SCHEMA_VIOLATION`: see [`HandlerError::public`].
    ///
    /// # Errors
    ///
    /// [`rcip_runtime::Error::NotRegistered`] for a capability the catalog lacks, or an unknown
    /// program.
    pub fn bind_package(
        self: &Arc<Self>,
        host: &Host,
        namespace: &str,
        version: Option<u64>,
        workspace_id: &str,
        caller: &Caller,
    ) -> Result<Vec<BindingGuard>, rcip_runtime::Error> {
        let package = self
            .workspace_package(workspace_id, namespace, version)
            .ok_or_else(|| rcip_runtime::Error::NotRegistered(namespace.to_owned()))?;
        let version = package.version;
        let context = Arc::new(Context {
            workspace_id: workspace_id.to_owned(),
            namespace: namespace.to_owned(),
            version,
            caller: caller.clone(),
        });
        let mut guards = Vec::new();
        for type_def in package.types.iter() {
            for command in type_def.commands.iter() {
                let Some(id) = command_capability_id(namespace, &type_def.name, &command.name)
                else {
                    continue; // the validator refuses names without an id
                };
                let target = Target::Command(type_def.name.to_string(), command.name.to_string());
                guards.push(host.bind(&id, self.binding(&context, target))?);
            }
            for operation in TypeOperation::ALL {
                let Some(id) = operation_capability_id(namespace, &type_def.name, operation) else {
                    continue;
                };
                let target = Target::Operation(operation, type_def.name.to_string());
                guards.push(host.bind(&id, self.binding(&context, target))?);
            }
        }
        for view in package.views.iter() {
            let Some(id) = view_capability_id(namespace, &view.name) else {
                continue;
            };
            let target = Target::View(view.name.to_string());
            guards.push(host.bind(&id, self.binding(&context, target))?);
        }
        if let Some(id) = view_capability_id(namespace, FEED_OPERATION) {
            guards.push(host.bind(&id, self.binding(&context, Target::Feed))?);
        }
        Ok(guards)
    }

    fn binding(self: &Arc<Self>, context: &Arc<Context>, target: Target) -> Binding {
        let engine = Arc::clone(self);
        let context = Arc::clone(context);
        let target = Arc::new(target);
        Binding::new(move |input: Value, _: InvocationContext| {
            let (engine, context, target) = (
                Arc::clone(&engine),
                Arc::clone(&context),
                Arc::clone(&target),
            );
            async move { engine.run(&context, &target, input).await }
        })
    }

    async fn run(
        &self,
        context: &Context,
        target: &Target,
        input: Value,
    ) -> Result<Value, HandlerError> {
        let caller = &context.caller;
        let ws = ("workspace_id", Value::from(context.workspace_id.clone()));
        match target {
            Target::Command(type_name, command) => {
                // The command capabilities' input is `ExecuteCommand` without the workspace
                // and the command, which the binding fixes.
                let fixed = [ws, ("command", Value::from(command.clone()))];
                let args: ExecuteCommand = args(input, &fixed)?;
                self.of_type(context, type_name, args.record_id).await?;
                reply(self.execute(caller, args).await)
            }
            Target::Operation(operation, type_name) => {
                let of_type = [
                    ws.clone(),
                    ("namespace", Value::from(context.namespace.clone())),
                    ("type", Value::from(type_name.clone())),
                    ("version", Value::from(context.version)),
                ];
                use TypeOperation as Op;
                if matches!(operation, Op::Get | Op::Commands | Op::Update | Op::Archive) {
                    let record_id = input
                        .get("record_id")
                        .and_then(Value::as_str)
                        .and_then(|id| Uuid::parse_str(id).ok());
                    if let Some(record_id) = record_id {
                        self.of_type(context, type_name, record_id).await?;
                    }
                    // Without a valid id, the operation's own argument check answers.
                }
                match operation {
                    Op::Get => reply(self.get(caller, args(input, &[ws])?).await),
                    Op::Search => reply(
                        self.search(caller, args::<SearchRecords>(input, &of_type)?)
                            .await,
                    ),
                    Op::Commands => reply(self.list_commands(caller, args(input, &[ws])?).await),
                    Op::Create => reply(
                        self.create(caller, args::<CreateRecord>(input, &of_type)?)
                            .await,
                    ),
                    Op::Update => reply(
                        self.update(caller, args::<UpdateRecord>(input, &[ws])?)
                            .await,
                    ),
                    Op::Archive => reply(
                        self.archive(caller, args::<ArchiveRecord>(input, &[ws])?)
                            .await,
                    ),
                }
            }
            Target::Feed => {
                let fixed = [ws, ("namespace", Value::from(context.namespace.clone()))];
                let page = self
                    .feed(caller, args::<ChangesFeed>(input, &fixed)?)
                    .await
                    .map_err(|e| public(&e))?;
                let items: Vec<Value> = page.items.iter().map(event_summary).collect();
                let mut reply = serde_json::json!({"items": items});
                if let Some(next) = page.next_cursor {
                    reply["next_cursor"] = Value::from(next);
                }
                if let Some(checkpoint) = page.checkpoint {
                    reply["checkpoint"] = Value::from(checkpoint);
                }
                Ok(reply)
            }
            Target::View(view) => {
                let view = serde_json::json!({
                    "namespace": context.namespace, "version": context.version, "view": view,
                });
                reply(
                    self.search(caller, args::<SearchRecords>(input, &[ws, ("view", view)])?)
                        .await,
                )
            }
        }
    }
}

impl<S: RecordStore + 'static> Engine<S> {
    /// A capability of one type acts only on records of that type (and program version):
    /// any other record is reported as not found, before anything runs.
    async fn of_type(
        &self,
        context: &Context,
        type_name: &str,
        record_id: Uuid,
    ) -> Result<(), HandlerError> {
        self.check_type(
            &context.caller,
            &context.workspace_id,
            record_id,
            (&context.namespace, context.version, type_name),
        )
        .await
        .map_err(|e| public(&e))
    }
}

/// What a binding serves: one workspace, one program, one caller.
#[derive(Debug)]
struct Context {
    workspace_id: String,
    namespace: String,
    version: u64,
    caller: Caller,
}

/// What one capability runs.
#[derive(Debug)]
enum Target {
    /// A command of a type.
    Command(String, String),
    /// A record operation of a type.
    Operation(TypeOperation, String),
    View(String),
    Feed,
}

/// An event as the feed capability shows it: no payload, but the task and command of work
/// intents and command executions.
fn event_summary(event: &ChangeEvent) -> Value {
    let mut summary = serde_json::json!({
        "id": event.id,
        "event_id": event.event_id,
        "kind": event.kind,
        "record_id": event.record_id,
        "revision": event.revision,
        "at": event.at,
        "actor": event.actor,
    });
    for key in ["task", "command"] {
        if let Some(value) = event.payload.get(key).filter(|v| v.is_string()) {
            summary[key] = value.clone();
        }
    }
    summary
}

/// The capability's input plus what the binding fixes, as the operation's arguments.
fn args<A: DeserializeOwned>(input: Value, fixed: &[(&str, Value)]) -> Result<A, HandlerError> {
    let mut input = match input {
        Value::Object(map) => map,
        other => {
            return Err(public(&RecordError::InvalidArguments(format!(
                "expected an object, found {other}"
            ))));
        }
    };
    for (key, value) in fixed {
        input.insert((*key).to_owned(), value.clone());
    }
    serde_json::from_value(Value::Object(input))
        .map_err(|e| public(&RecordError::InvalidArguments(e.to_string())))
}

fn reply<T: Serialize>(result: Result<T, RecordError>) -> Result<Value, HandlerError> {
    let value = result.map_err(|e| public(&e))?;
    serde_json::to_value(value).map_err(HandlerError::invalid_output)
}

/// A record error as a failure the consumer reads: its code, its message, its issues.
pub(crate) fn public(error: &RecordError) -> HandlerError {
    if let RecordError::Store(detail) = error {
        // The store's own text stays on the host side.
        tracing::warn!(target: "rcip::relationship", error = %detail, "record store failed");
        return HandlerError::public(error.code(), "the record store failed", Vec::new());
    }
    let issues = match error {
        RecordError::SchemaViolation { issues, .. } => issues.clone(),
        _ => Vec::new(),
    };
    HandlerError::public(error.code(), error, issues)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record error reaches the handler error with its code in a field of its own; the
    /// consumer's message (`"<CODE>: <message>"`) is only made for the outcome.
    #[test]
    fn a_record_error_keeps_its_code_apart() {
        let error = public(&RecordError::InvalidArguments(
            "`limit` must be positive".into(),
        ));
        assert_eq!(error.public_code(), Some("INVALID_ARGUMENTS"));
        assert_eq!(
            error.public_message(),
            Some("invalid arguments: `limit` must be positive")
        );
        assert_eq!(
            error.to_string(),
            "INVALID_ARGUMENTS: invalid arguments: `limit` must be positive"
        );
        assert!(error.issues().is_empty());

        let store = public(&RecordError::Store("disk on fire".into()));
        assert_eq!(store.public_code(), Some("STORE_FAILED"));
        assert_eq!(store.public_message(), Some("the record store failed"));
    }
}
