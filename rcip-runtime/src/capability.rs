//! Typed capabilities: what `#[capability]` implements for an annotated function, and what a
//! host does with it (build its definition, bind it with its state).

use rcip_core::schema::{SchemaGenerationError, strict_schema_for};
use rcip_core::{
    CapabilityDefinition, Effect, LongRunning, SchemaRole, UsageExample, UsageGuidance,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::binding::{Binding, Handler, HandlerError, InvocationContext};
#[cfg(feature = "typed-text")]
use crate::binding::{Prepared, TypedEntry};
#[cfg(feature = "typed-text")]
use crate::shape::Shape;
use crate::support::BoxFuture;

/// A capability's declaration from Rust types: its id, effect, scopes, texts, usage, and
/// the input and output types its strict schemas are derived from. `#[capability]` on a
/// function implements it (together with [`Capability`]); `#[derive(Capability)]` on an input
/// type implements it alone, for crates that share contracts between host and tools.
///
/// The constants are checked when the macro expands (identifier grammar, effect, non-empty
/// title and description, examples that are JSON); the schemas are derived from `Input` and
/// `Output` by [`strict_schema_for`] when [`definition`](Self::definition) is called.
pub trait CapabilitySpec {
    /// The input type.
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    /// The output type.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// The capability id.
    const ID: &'static str;
    /// The effect.
    const EFFECT: Effect;
    /// Whether it is declared idempotent (`#[capability(idempotent)]`): invoking it again
    /// with the same input has no further effect. Not declared, it is not.
    const IDEMPOTENT: bool = false;
    /// Whether it may run as a task (`#[capability(long_running)]`, or
    /// `long_running = "required"`); not declared, it runs inline.
    const LONG_RUNNING: Option<LongRunning> = None;
    /// The scopes.
    const SCOPES: &'static [&'static str];
    /// The title.
    const TITLE: &'static str;
    /// The description.
    const DESCRIPTION: &'static str;
    /// Discovery tags (`#[capability(tags = [...])]`); none unless declared.
    const TAGS: &'static [&'static str] = &[];
    /// Usage guidance (`when_to_use = "..."`); none unless declared.
    const WHEN_TO_USE: Option<&'static str> = None;
    /// Usage examples: description and JSON input text; none unless declared.
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[];
    /// For a method of a `#[capabilities]` block, every capability of the block (id, and
    /// path as a catalog lists it): `catalog!` refuses to list some of them without the
    /// others, so none silently goes missing. Empty for anything else.
    #[doc(hidden)]
    const BLOCK: &'static [(&'static str, &'static str)] = &[];

    /// The definition, with strict schemas derived from `Input` and `Output`.
    ///
    /// # Errors
    ///
    /// [`Error::SchemaGeneration`](crate::Error::SchemaGeneration) when a type has no strict
    /// schema (recursive, untyped JSON, non-string map keys, a format).
    fn definition() -> Result<CapabilityDefinition, crate::Error> {
        // Thin on purpose: the generic part is the two schema calls; the rest is one shared
        // function, so a catalog of many capabilities compiles one copy of it.
        build_definition(
            Parts {
                id: Self::ID,
                effect: Self::EFFECT,
                idempotent: Self::IDEMPOTENT,
                long_running: Self::LONG_RUNNING,
                scopes: Self::SCOPES,
                title: Self::TITLE,
                description: Self::DESCRIPTION,
                tags: Self::TAGS,
                when_to_use: Self::WHEN_TO_USE,
                examples: Self::EXAMPLES,
            },
            strict_schema_for::<Self::Input>(SchemaRole::Input),
            strict_schema_for::<Self::Output>(SchemaRole::Output),
        )
    }
}

/// A spec's constants, gathered for [`build_definition`].
struct Parts {
    id: &'static str,
    effect: Effect,
    idempotent: bool,
    long_running: Option<LongRunning>,
    scopes: &'static [&'static str],
    title: &'static str,
    description: &'static str,
    tags: &'static [&'static str],
    when_to_use: Option<&'static str>,
    examples: &'static [(&'static str, &'static str)],
}

fn build_definition(
    parts: Parts,
    input: Result<serde_json::Value, SchemaGenerationError>,
    output: Result<serde_json::Value, SchemaGenerationError>,
) -> Result<CapabilityDefinition, crate::Error> {
    let schema = |result: Result<serde_json::Value, SchemaGenerationError>| {
        result.map_err(|error| crate::Error::SchemaGeneration {
            capability_id: parts.id.to_owned(),
            error,
        })
    };
    let mut definition =
        CapabilityDefinition::new(parts.id, parts.effect, parts.title, parts.description)
            .idempotent(parts.idempotent)
            .input_schema(schema(input)?)
            .output_schema(schema(output)?);
    if let Some(long_running) = parts.long_running {
        definition = definition.long_running(long_running);
    }
    for scope in parts.scopes {
        definition = definition.scope(*scope);
    }
    for tag in parts.tags {
        definition = definition.tag(*tag);
    }
    if parts.when_to_use.is_some() || !parts.examples.is_empty() {
        let mut usage = UsageGuidance::new(parts.when_to_use.unwrap_or_default());
        for (description, input) in parts.examples {
            // The macro checked the text is JSON; anything else would be refused at
            // start-up as an invalid example.
            let input = serde_json::from_str(input).unwrap_or(serde_json::Value::Null);
            usage
                .examples
                .get_or_insert_with(Vec::new)
                .push(UsageExample {
                    description: (*description).to_owned(),
                    input,
                });
        }
        definition = definition.usage(usage);
    }
    Ok(definition)
}

/// A declared capability with its handler: what `#[capability]` implements for a function.
pub trait Capability: CapabilitySpec {
    /// Application state handed to each call (cloned per call); `()` when none.
    type State: Clone + Send + Sync + 'static;

    /// Runs the function once (`state` is this call's own copy) and serializes its output:
    /// the future ends with the output as a JSON value, or the handler's failure
    /// (`HandlerError::invalid_output` for an output that does not serialize).
    ///
    /// A plain associated function rather than a closure the macro builds: each annotated
    /// function then compiles to one small item, and [`binding`](Self::binding) adapts it to
    /// a [`Binding`] through a pointer to a function that calls it on a `Value` input, with
    /// no closure or adapter type per capability. It ends with a `Value` rather than
    /// `Self::Output` so that an invocation allocates one future for the call, not a second
    /// one around it that converts the output.
    fn call(
        state: Self::State,
        input: Self::Input,
        context: InvocationContext,
    ) -> BoxFuture<Result<serde_json::Value, HandlerError>>;

    /// The binding of this capability over `state`.
    fn binding(state: Self::State) -> Binding {
        Binding::new(CapabilityHandler {
            state,
            call: call_value::<Self>,
            #[cfg(feature = "typed-text")]
            typed: TypedCalls {
                parse: Prepared::parse::<Self::Input>,
                call: call_prepared::<Self>,
            },
        })
    }
}

/// The handler of a bound [`Capability`]: what [`Binding::typed`] does for a closure, with
/// pointers to per-capability functions in place of the closure. Compile time is a feature:
/// this is generic in the state type only (most capabilities of an application share it), so
/// its allocation and vtable are compiled once per state type; what each capability adds is
/// [`call_value`] (the input's `Value` deserializer and one call) and its own `call` (which
/// serializes the output inside the future it returns, so a call is one boxed future), and
/// with `typed-text` the typed parse of its input and [`call_prepared`].
///
/// Same behaviour as `Binding::typed`: an input serde refuses after the schema accepted it is
/// `HandlerError::failed` (schema and type disagree: a host defect), the function runs when
/// the handler is called, and, with the `call` that `#[capability]` writes, an output that
/// does not serialize is `HandlerError::invalid_output`.
struct CapabilityHandler<S> {
    state: S,
    call: ValueCall<S>,
    #[cfg(feature = "typed-text")]
    typed: TypedCalls<S>,
}

/// A capability's call on a `Value` input: [`call_value`] of that capability.
type ValueCall<S> = fn(S, serde_json::Value, InvocationContext) -> CallFuture;

/// What a capability's call returns: its output as a JSON value, or its failure.
type CallFuture = BoxFuture<Result<serde_json::Value, HandlerError>>;

/// The typed text path's two per-capability functions.
#[cfg(feature = "typed-text")]
struct TypedCalls<S> {
    /// [`Prepared::parse`] of the capability's input type.
    parse: fn(&str, &Shape) -> Option<Prepared>,
    /// [`call_prepared`] of the capability.
    call: fn(S, Prepared, InvocationContext) -> CallFuture,
}

/// `C::call` on a schema-valid `Value` input, deserialized into `C::Input` (see
/// [`CapabilityHandler`] for a value serde refuses). What `run_value` does for
/// `Binding::typed`, written out rather than called with a closure: a closure would be one
/// more instance of `run_value` and of the closure per capability, the code this handler
/// exists to avoid.
fn call_value<C: Capability + ?Sized>(
    state: C::State,
    input: serde_json::Value,
    context: InvocationContext,
) -> CallFuture {
    match C::Input::deserialize(input) {
        Ok(input) => C::call(state, input, context),
        Err(error) => crate::__private::ready(Err(HandlerError::failed(error))),
    }
}

/// `C::call` on an input [`Prepared::parse`] made of `C::Input`.
#[cfg(feature = "typed-text")]
fn call_prepared<C: Capability + ?Sized>(
    state: C::State,
    input: Prepared,
    context: InvocationContext,
) -> CallFuture {
    match input.take::<C::Input>() {
        Some(input) => C::call(state, input, context),
        None => crate::__private::ready(Err(Prepared::foreign_input())),
    }
}

impl<S> Handler for CapabilityHandler<S>
where
    S: Clone + Send + Sync + 'static,
{
    fn call(&self, input: serde_json::Value, context: InvocationContext) -> CallFuture {
        (self.call)(self.state.clone(), input, context)
    }

    #[cfg(feature = "typed-text")]
    fn typed_entry(&self) -> Option<&dyn TypedEntry> {
        Some(self)
    }
}

/// The typed fast path for macro capabilities (feature `typed-text`): raw JSON text goes
/// straight into the input type, checked against the input schema's shape on the way (as
/// for `Binding::typed`). Off by default because it is what a capability costs most to
/// compile: a second `Deserialize` instantiation per input type, over serde_json's text
/// parser (200 capabilities: 12.5 s clean without it 8.9 s, docs/performance.md); without it
/// text input is parsed into a `Value` first, as before the fast path.
#[cfg(feature = "typed-text")]
impl<S> TypedEntry for CapabilityHandler<S>
where
    S: Clone + Send + Sync + 'static,
{
    fn parse_text(&self, text: &str, shape: &Shape) -> Option<Prepared> {
        (self.typed.parse)(text, shape)
    }

    fn call_prepared(&self, input: Prepared, context: InvocationContext) -> CallFuture {
        (self.typed.call)(self.state.clone(), input, context)
    }
}
