//! A package's capabilities bound to an engine: what `rcip-build`'s capability sets declare
//! (commands and record operations), executed by the engine's operations.

use std::sync::Arc;

use rcip_relationship::{
    FEED_OPERATION, Package, TypeOperation, command_capability_id, operation_capability_id,
    view_capability_id,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::args::ChangesFeed;
use super::engine::Engine;
use super::error::RecordError;
use super::principal::Caller;
use super::store::RecordStore;
use rcip_relationship::EVENT_SUMMARY_FIELDS;
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
    /// The program is one this engine knows: installed, or activated through
    /// [`Engine::activate`]. Under a platform (`rcip_platform::Platform`), programs are
    /// activated in the directory (`program.activate`, on any instance) and every record check
    /// needs the access of a platform call, so there `Platform::bind_package` binds them: an engine binding would be refused everything (the platform's authority
    /// fails closed outside a call).
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
        let context = Context::new(&package, workspace_id, caller);
        bind_capabilities(host, &package, &context, self)
    }

    async fn run_capability(
        &self,
        context: &Context,
        target: &Target,
        input: Value,
    ) -> Result<Value, HandlerError> {
        let request = context.request(target, input)?;
        let caller = &context.caller;
        if let Some((record_id, type_name)) = request.of_type {
            self.check_type(
                caller,
                &context.workspace_id,
                record_id,
                (&context.namespace, context.version, type_name),
            )
            .await
            .map_err(|e| public(&e))?;
        }
        let arguments = request.arguments;
        match request.call {
            Call::Execute => reply(self.execute(caller, args(arguments)?).await),
            Call::Get => reply(self.get(caller, args(arguments)?).await),
            Call::Search => reply(self.search(caller, args(arguments)?).await),
            Call::Commands => reply(self.list_commands(caller, args(arguments)?).await),
            Call::Create => reply(self.create(caller, args(arguments)?).await),
            Call::Update => reply(self.update(caller, args(arguments)?).await),
            Call::Archive => reply(self.archive(caller, args(arguments)?).await),
            Call::Feed => {
                reply(self.feed(caller, args::<ChangesFeed>(arguments)?).await).map(feed_summary)
            }
        }
    }
}

impl<S: RecordStore + 'static> RunCapability for Engine<S> {
    fn run<'a>(
        &'a self,
        context: &'a Context,
        target: &'a Target,
        input: Value,
    ) -> CapabilityFuture<'a> {
        Box::pin(self.run_capability(context, target, input))
    }
}

/// What a capability call's future is.
pub type CapabilityFuture<'a> =
    std::pin::Pin<Box<dyn Future<Output = Result<Value, HandlerError>> + Send + 'a>>;

/// What runs a program's capabilities: the engine itself, or the platform (through its
/// one decision).
pub trait RunCapability: Send + Sync + 'static {
    /// Runs `target`'s operation for `input`.
    fn run<'a>(
        &'a self,
        context: &'a Context,
        target: &'a Target,
        input: Value,
    ) -> CapabilityFuture<'a>;
}

/// Binds every capability of `package` on `host`, each run by `runner`.
pub fn bind_capabilities<R: RunCapability>(
    host: &Host,
    package: &Package,
    context: &Arc<Context>,
    runner: &Arc<R>,
) -> Result<Vec<BindingGuard>, rcip_runtime::Error> {
    let namespace = &context.namespace;
    let mut bound = Vec::new();
    let mut bind = |id: String, target: Target| -> Result<(), rcip_runtime::Error> {
        let (runner, context, target) = (Arc::clone(runner), Arc::clone(context), Arc::new(target));
        let binding = Binding::new(move |input: Value, _: InvocationContext| {
            let (runner, context, target) = (
                Arc::clone(&runner),
                Arc::clone(&context),
                Arc::clone(&target),
            );
            async move { runner.run(&context, &target, input).await }
        });
        bound.push(host.bind(&id, binding)?);
        Ok(())
    };
    for type_def in package.types.iter() {
        for command in type_def.commands.iter() {
            // The validator refuses names without an id.
            if let Some(id) = command_capability_id(namespace, &type_def.name, &command.name) {
                let target = Target::Command(type_def.name.to_string(), command.name.to_string());
                bind(id, target)?;
            }
        }
        for operation in TypeOperation::ALL {
            if let Some(id) = operation_capability_id(namespace, &type_def.name, operation) {
                bind(id, Target::Operation(operation, type_def.name.to_string()))?;
            }
        }
    }
    for view in package.views.iter() {
        if let Some(id) = view_capability_id(namespace, &view.name) {
            bind(id, Target::View(view.name.to_string()))?;
        }
    }
    if let Some(id) = view_capability_id(namespace, FEED_OPERATION) {
        bind(id, Target::Feed)?;
    }
    Ok(bound)
}

/// What a binding serves: one workspace, one program, one caller.
#[derive(Debug)]
pub struct Context {
    /// The workspace every call of the binding is in.
    pub workspace_id: String,
    namespace: String,
    version: u64,
    /// Who the calls are made as.
    pub caller: Caller,
}

impl Context {
    /// The context of `package`'s capabilities in `workspace_id`, called as `caller`.
    pub fn new(package: &Package, workspace_id: &str, caller: &Caller) -> Arc<Self> {
        Arc::new(Self {
            workspace_id: workspace_id.to_owned(),
            namespace: package.namespace.to_string(),
            version: package.version,
            caller: caller.clone(),
        })
    }

    /// The operation a capability runs for `input`: the capability's input plus what the
    /// binding fixes (workspace, command, namespace, type, version, view), and the record
    /// whose type must be the capability's.
    pub fn request<'t>(
        &self,
        target: &'t Target,
        input: Value,
    ) -> Result<Request<'t>, HandlerError> {
        let mut arguments = match input {
            Value::Object(map) => map,
            other => {
                return Err(public(&RecordError::InvalidArguments(format!(
                    "expected an object, found {other}"
                ))));
            }
        };
        let fix = |arguments: &mut Map<String, Value>, fixed: &[(&str, Value)]| {
            for (key, value) in fixed {
                arguments.insert((*key).to_owned(), value.clone());
            }
        };
        fix(
            &mut arguments,
            &[("workspace_id", Value::from(self.workspace_id.clone()))],
        );
        let namespace = ("namespace", Value::from(self.namespace.clone()));
        // A capability of one type acts only on records of that type (and program version):
        // any other record is reported as not found, before anything runs. Without a valid
        // id, the operation's own argument check answers.
        let record_id = arguments
            .get("record_id")
            .and_then(Value::as_str)
            .and_then(|id| Uuid::parse_str(id).ok());
        let (call, of_type) = match target {
            Target::Command(type_name, command) => {
                // The command capabilities' input is `ExecuteCommand` without the workspace
                // and the command, which the binding fixes.
                fix(&mut arguments, &[("command", Value::from(command.clone()))]);
                (Call::Execute, Some(type_name))
            }
            Target::Operation(operation, type_name) => {
                use TypeOperation as Op;
                let call = match operation {
                    Op::Get => Call::Get,
                    Op::Search => Call::Search,
                    Op::Commands => Call::Commands,
                    Op::Create => Call::Create,
                    Op::Update => Call::Update,
                    Op::Archive => Call::Archive,
                };
                if matches!(operation, Op::Search | Op::Create) {
                    let of_type = [
                        namespace,
                        ("type", Value::from(type_name.clone())),
                        ("version", Value::from(self.version)),
                    ];
                    fix(&mut arguments, &of_type);
                    (call, None)
                } else {
                    (call, Some(type_name))
                }
            }
            Target::View(view) => {
                let view = serde_json::json!({
                    "namespace": self.namespace, "version": self.version, "view": view,
                });
                fix(&mut arguments, &[("view", view)]);
                (Call::Search, None)
            }
            Target::Feed => {
                fix(&mut arguments, &[namespace]);
                (Call::Feed, None)
            }
        };
        Ok(Request {
            call,
            arguments: Value::Object(arguments),
            of_type: of_type
                .zip(record_id)
                .map(|(type_name, id)| (id, type_name.as_str())),
        })
    }

    /// Whether `record` (a record view) is of the binding's program version and `type_name`.
    pub fn is_of_type(&self, record: &Value, type_name: &str) -> bool {
        record["namespace"] == self.namespace.as_str()
            && record["version"] == self.version
            && record["type"] == type_name
    }
}

/// What one capability runs.
#[derive(Debug)]
pub enum Target {
    /// A command of a type.
    Command(String, String),
    /// A record operation of a type.
    Operation(TypeOperation, String),
    /// A view of the program.
    View(String),
    /// The program's change feed.
    Feed,
}

/// The operation a capability call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `command.execute`.
    Execute,
    /// `record.get`.
    Get,
    /// `record.search` (and views).
    Search,
    /// `command.list`.
    Commands,
    /// `record.create`.
    Create,
    /// `record.update`.
    Update,
    /// `record.archive`.
    Archive,
    /// `changes.feed`.
    Feed,
}

impl Call {
    /// Its name in the platform's registry.
    pub const fn operation(self) -> &'static str {
        match self {
            Call::Execute => "command.execute",
            Call::Get => "record.get",
            Call::Search => "record.search",
            Call::Commands => "command.list",
            Call::Create => "record.create",
            Call::Update => "record.update",
            Call::Archive => "record.archive",
            Call::Feed => "changes.feed",
        }
    }
}

/// One capability call, as an operation with its arguments.
#[derive(Debug)]
pub struct Request<'t> {
    pub call: Call,
    pub arguments: Value,
    /// The record (when the input names one) and the type it must be of.
    pub of_type: Option<(Uuid, &'t str)>,
}

/// A page of the feed as the feed capability shows it: events without their payload, but
/// with the task and command of work intents and command executions.
pub fn feed_summary(mut page: Value) -> Value {
    if let Some(items) = page.get_mut("items").and_then(Value::as_array_mut) {
        for event in items {
            let mut summary = Map::new();
            for key in EVENT_SUMMARY_FIELDS {
                summary.insert(key.to_owned(), event[key].take());
            }
            for key in ["task", "command"] {
                if let Some(value) = event["payload"].get(key).filter(|v| v.is_string()) {
                    summary.insert(key.to_owned(), value.clone());
                }
            }
            *event = Value::Object(summary);
        }
    }
    page
}

/// A call's arguments as the operation's.
fn args<A: DeserializeOwned>(arguments: Value) -> Result<A, HandlerError> {
    serde_json::from_value(arguments)
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
