//! `#[capability]` by trait, not by name: capabilities without an input, return types through
//! aliases and foreign error types, extractors in any order, `&self` methods of a
//! `#[capabilities]` block, inherent constants, `catalog!`'s `bind_all` and `runtime`, and
//! `RuntimeOptions::require_all_bound`.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use rcip_runtime::{
    CancellationSignal, CapabilitySpec, Effect, Error, ErrorCode, HandlerError, InvocationContext,
    InvocationRequest, NoInput, OutcomeStatus, PolicyDecision, Principal, RcipClientExt, Runtime,
    RuntimeOptions, capabilities, capability, catalog, policy_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Name {
    name: String,
}

/// Tell the time.
#[capability(effect = "read", scope = "clock")]
fn now() -> u64 {
    42
}

type Res<T> = Result<T, HandlerError>;

/// Refuse through an alias.
#[capability(effect = "read", scope = "clock")]
fn refuse(_input: Name) -> Res<u32> {
    Err(HandlerError::aborted())
}

/// Fail with anyhow.
#[capability(effect = "read", scope = "clock")]
async fn fail_anyhow(input: Name) -> anyhow::Result<String> {
    if input.name.is_empty() {
        anyhow::bail!("secret anyhow detail");
    }
    Ok(input.name)
}

/// Read a file.
#[capability(effect = "read", scope = "clock")]
fn read_io(_input: Name) -> std::io::Result<u32> {
    Err(std::io::Error::other("secret io detail"))
}

/// Fail with a boxed error.
#[capability(effect = "read", scope = "clock")]
fn boxed(_input: Name) -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Ok(7)
}

/// Echo the invocation id, context first.
#[capability(effect = "read", scope = "clock")]
fn context_first(context: InvocationContext, cancellation: CancellationSignal) -> String {
    format!(
        "{}:{}",
        context.invocation_id(),
        cancellation.is_cancelled()
    )
}

/// Echo the invocation id, cancellation first, with state and input.
#[capability(effect = "read", scope = "clock")]
fn cancellation_first(
    counter: Arc<AtomicU32>,
    input: Name,
    cancellation: CancellationSignal,
    context: InvocationContext,
) -> String {
    counter.fetch_add(1, Ordering::Relaxed);
    format!(
        "{}:{}:{}",
        input.name,
        context.invocation_id(),
        cancellation.is_cancelled()
    )
}

/// Who is calling, principal first: no principal, no call.
#[capability(effect = "read", scope = "clock")]
fn whoami(principal: Principal, context: InvocationContext) -> String {
    format!("{}@{}", principal.id(), context.invocation_id())
}

/// Who is calling, context first: the principal is optional.
#[capability(effect = "read", scope = "clock")]
fn whoami_maybe(context: InvocationContext, principal: Option<Principal>) -> String {
    let who = principal.as_ref().map_or("anonymous", Principal::id);
    format!("{who}@{}", context.invocation_id())
}

/// A greeter service whose methods are capabilities.
struct Greeter {
    greeting: String,
    calls: AtomicU32,
}

#[capabilities]
impl Greeter {
    /// Greet someone.
    ///
    /// Answers with this greeter's greeting.
    #[capability(effect = "read", scope = "clock")]
    fn greet(&self, input: Name) -> String {
        self.calls.fetch_add(1, Ordering::Relaxed);
        format!("{}, {}!", self.greeting, input.name)
    }

    /// Count the greetings so far.
    #[capability(effect = "read", scope = "clock", id = "clock.greetings")]
    async fn count(&self, context: InvocationContext) -> Result<u32, HandlerError> {
        let _ = context.invocation_id();
        Ok(self.calls.load(Ordering::Relaxed))
    }

    /// Not a capability: stays a plain method.
    fn greeting(&self) -> &str {
        &self.greeting
    }
}

catalog! {
    struct Clock {
        id = "clock",
        name = "Clock",
        description = "Tells the time.",
        scopes = [("clock", "Clock", "The clock.")],
        capabilities = [
            now, refuse, fail_anyhow, read_io, boxed, context_first, cancellation_first,
            greeter::greet, greeter::count, whoami, whoami_maybe,
        ],
    }
}

fn allow_all() -> RuntimeOptions {
    RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow))
}

fn service() -> Arc<Greeter> {
    Arc::new(Greeter {
        greeting: "Hello".to_owned(),
        calls: AtomicU32::new(0),
    })
}

#[test]
fn capability_types_have_inherent_constants() {
    assert_eq!(now::ID, "clock.now");
    assert_eq!(now::EFFECT, Effect::Read);
    assert_eq!(now::SCOPES, ["clock"]);
    assert_eq!(greeter::greet::ID, "clock.greet");
    assert_eq!(greeter::count::ID, "clock.greetings");
    assert_eq!(now::ID, <now as CapabilitySpec>::ID);
}

#[test]
fn a_function_without_input_takes_the_empty_strict_object() {
    let definition = <now as CapabilitySpec>::definition().unwrap();
    assert_eq!(
        definition.input_schema,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(
        <context_first as CapabilitySpec>::definition()
            .unwrap()
            .input_schema,
        definition.input_schema
    );
    // `NoInput` itself: `{}` only.
    assert!(serde_json::from_value::<NoInput>(json!({})).is_ok());
    assert!(serde_json::from_value::<NoInput>(json!({"a": 1})).is_err());
    assert!(serde_json::from_value::<NoInput>(json!(null)).is_err());
    assert_eq!(serde_json::to_value(NoInput).unwrap(), json!({}));
}

#[test]
fn result_outputs_are_typed_by_their_success_type() {
    for schema in [
        <refuse as CapabilitySpec>::definition()
            .unwrap()
            .output_schema,
        <read_io as CapabilitySpec>::definition()
            .unwrap()
            .output_schema,
        <boxed as CapabilitySpec>::definition()
            .unwrap()
            .output_schema,
    ] {
        assert_eq!(schema["type"], json!("integer"), "{schema}");
    }
    assert_eq!(
        <fail_anyhow as CapabilitySpec>::definition()
            .unwrap()
            .output_schema,
        json!({"type": "string"})
    );
}

#[tokio::test]
async fn bind_all_binds_every_capability_over_its_state_and_invokes() {
    let counter = Arc::new(AtomicU32::new(0));
    let greeter = service();
    let runtime = Clock::runtime(
        allow_all().require_all_bound(true),
        (counter.clone(), greeter.clone()),
    )
    .unwrap();
    let client = runtime.client();
    let invoke = |id: &str, input: serde_json::Value| {
        client.invoke(InvocationRequest::new(id, input).with_id(format!("inv-{id}")))
    };

    assert_eq!(invoke(now::ID, json!({})).await.output(), Some(&json!(42)));
    let extra = invoke(now::ID, json!({"unexpected": 1})).await;
    assert_eq!(extra.error_code(), Some(ErrorCode::InputInvalid));

    let refused = invoke(refuse::ID, json!({"name": "x"})).await;
    assert_eq!(refused.error_code(), Some(ErrorCode::ExecutionAborted));

    let anyhow_failed = invoke(fail_anyhow::ID, json!({"name": ""})).await;
    assert_eq!(anyhow_failed.error_code(), Some(ErrorCode::ExecutionFailed));
    assert!(
        !serde_json::to_string(&anyhow_failed)
            .unwrap()
            .contains("secret")
    );
    let anyhow_ok = invoke(fail_anyhow::ID, json!({"name": "Ada"})).await;
    assert_eq!(anyhow_ok.output(), Some(&json!("Ada")));

    let io_failed = invoke(read_io::ID, json!({"name": "x"})).await;
    assert_eq!(io_failed.error_code(), Some(ErrorCode::ExecutionFailed));
    assert_eq!(
        invoke(boxed::ID, json!({"name": "x"})).await.output(),
        Some(&json!(7))
    );

    assert_eq!(
        invoke(context_first::ID, json!({})).await.output(),
        Some(&json!("inv-clock.contextFirst:false"))
    );
    assert_eq!(
        invoke(cancellation_first::ID, json!({"name": "Ada"}))
            .await
            .output(),
        Some(&json!("Ada:inv-clock.cancellationFirst:false"))
    );
    assert_eq!(counter.load(Ordering::Relaxed), 1);

    let greeted = client
        .invoke_typed::<greeter::greet>(&Name {
            name: "Ada".to_owned(),
        })
        .await;
    assert_eq!(greeted.output(), Some(&"Hello, Ada!".to_owned()));
    let counted = client.invoke_typed::<greeter::count>(&NoInput).await;
    assert_eq!(counted.output(), Some(&1));
    // The state is the service itself, shared.
    assert_eq!(greeter.calls.load(Ordering::Relaxed), 1);
    assert_eq!(greeter.greeting(), "Hello");
}

#[tokio::test]
async fn bind_all_returns_guards_that_unbind_on_drop() {
    let runtime = Runtime::new(Clock::definition().unwrap(), allow_all()).unwrap();
    let host = runtime.host();
    let guards = Clock::bind_all(&host, (Arc::new(AtomicU32::new(0)), service())).unwrap();
    assert_eq!(guards.len(), Clock::CAPABILITY_COUNT);
    assert!(runtime.check_bound().is_ok());
    // Binding twice is refused, as with `bind`.
    let again = Clock::bind_all(&host, (Arc::new(AtomicU32::new(0)), service()));
    assert_eq!(
        again.unwrap_err(),
        Error::AlreadyBound("clock.now".to_owned())
    );
    drop(guards);
    let outcome = runtime
        .client()
        .invoke(InvocationRequest::new(now::ID, json!({})))
        .await;
    assert_eq!(outcome.status(), OutcomeStatus::Failed);
    assert_eq!(outcome.error_code(), Some(ErrorCode::CapabilityUnbound));
}

#[test]
fn require_all_bound_names_the_unbound_capabilities() {
    let unbound = Runtime::with_bindings(
        Clock::definition().unwrap(),
        RuntimeOptions::default().require_all_bound(true),
        |host| {
            host.bind_capability::<now>(())?.keep();
            host.bind_capability::<greeter::greet>(service())?.keep();
            Ok(())
        },
    )
    .unwrap_err();
    assert_eq!(unbound.code(), "CAPABILITIES_UNBOUND");
    assert_eq!(
        unbound.to_string(),
        "RCIP capabilities are declared but not bound: clock.refuse, clock.failAnyhow, \
         clock.readIo, clock.boxed, clock.contextFirst, clock.cancellationFirst, clock.greetings, \
         clock.whoami, clock.whoamiMaybe"
    );
    // `Runtime::new` binds nothing, so it names every capability.
    let all = Runtime::new(
        Clock::definition().unwrap(),
        RuntimeOptions::default().require_all_bound(true),
    )
    .unwrap_err();
    assert_eq!(
        all,
        Error::Unbound(
            Clock::CAPABILITY_IDS
                .iter()
                .map(|id| (*id).to_owned())
                .collect()
        )
    );
    // Off by default: the same runtime serves, unbound capabilities fail when invoked.
    assert!(Runtime::new(Clock::definition().unwrap(), RuntimeOptions::default()).is_ok());
}

#[tokio::test]
async fn principal_and_context_extractors_work_in_either_order() {
    let runtime = Clock::runtime(allow_all(), (Arc::new(AtomicU32::new(0)), service())).unwrap();
    let client = runtime.client();
    let as_user = |id: &str| {
        InvocationRequest::new(id, json!({}))
            .with_id("inv-1")
            .with_extension(Principal::new("user-7"))
    };
    assert_eq!(
        client.invoke(as_user(whoami::ID)).await.output(),
        Some(&json!("user-7@inv-1"))
    );
    assert_eq!(
        client.invoke(as_user(whoami_maybe::ID)).await.output(),
        Some(&json!("user-7@inv-1"))
    );

    // Without a principal: `Option<Principal>` is `None`, `Principal` refuses publicly.
    let anonymous = client
        .invoke(InvocationRequest::new(whoami_maybe::ID, json!({})).with_id("inv-2"))
        .await;
    assert_eq!(anonymous.output(), Some(&json!("anonymous@inv-2")));
    let refused = client
        .invoke(InvocationRequest::new(whoami::ID, json!({})))
        .await;
    assert_eq!(refused.error_code(), Some(ErrorCode::ExecutionFailed));
    let error = serde_json::to_value(&refused).unwrap();
    assert_eq!(
        error["error"]["message"],
        json!("PRINCIPAL_REQUIRED: this capability needs an authenticated caller"),
        "{error}"
    );
}
