//! Typed capabilities: what `#[capability]` implements for an annotated function, and what a
//! host does with it (build its definition, bind it with its state).

use std::sync::Arc;

use rcip_core::schema::{SchemaGenerationError, strict_schema_for};
use rcip_core::{CapabilityDefinition, Effect, SchemaRole, UsageExample, UsageGuidance};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::binding::{Binding, HandlerError, InvocationContext};
use crate::support::BoxFuture;

/// A typed capability handler, as generated code hands it over.
pub type TypedHandlerFn<I, O> =
    Box<dyn Fn(I, InvocationContext) -> BoxFuture<Result<O, HandlerError>> + Send + Sync>;

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
    /// The scopes.
    const SCOPES: &'static [&'static str];
    /// The title.
    const TITLE: &'static str;
    /// The description.
    const DESCRIPTION: &'static str;
    /// Discovery tags.
    const TAGS: &'static [&'static str];
    /// Usage guidance.
    const WHEN_TO_USE: Option<&'static str>;
    /// Usage examples: description and JSON input text.
    const EXAMPLES: &'static [(&'static str, &'static str)];

    /// The definition, with strict schemas derived from `Input` and `Output`.
    ///
    /// # Errors
    ///
    /// [`Error::SchemaGeneration`](crate::Error::SchemaGeneration) when a type has no strict
    /// schema (recursive, untyped JSON, non-string map keys, a format).
    fn definition() -> Result<CapabilityDefinition, crate::Error> {
        let schema = |role| {
            strict_schema_for_role::<Self>(role).map_err(|error| crate::Error::SchemaGeneration {
                capability_id: Self::ID.to_owned(),
                error,
            })
        };
        let mut definition = CapabilityDefinition::new(Self::ID, Self::EFFECT)
            .title(Self::TITLE)
            .description(Self::DESCRIPTION)
            .input_schema(schema(SchemaRole::Input)?)
            .output_schema(schema(SchemaRole::Output)?);
        for scope in Self::SCOPES {
            definition = definition.scope(*scope);
        }
        for tag in Self::TAGS {
            definition = definition.tag(*tag);
        }
        if Self::WHEN_TO_USE.is_some() || !Self::EXAMPLES.is_empty() {
            let mut usage = UsageGuidance::new(Self::WHEN_TO_USE.unwrap_or_default());
            for (description, input) in Self::EXAMPLES {
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
}

/// A declared capability with its handler: what `#[capability]` implements for a function.
pub trait Capability: CapabilitySpec {
    /// Application state handed to each call (cloned per call); `()` when none.
    type State: Clone + Send + Sync + 'static;

    /// The typed handler over `state`.
    fn handler(state: Self::State) -> TypedHandlerFn<Self::Input, Self::Output>;

    /// The binding of this capability over `state`.
    fn binding(state: Self::State) -> Binding {
        let handler = Arc::new(Self::handler(state));
        Binding::typed(move |input: Self::Input, context: InvocationContext| {
            handler(input, context)
        })
    }
}

fn strict_schema_for_role<C: CapabilitySpec + ?Sized>(
    role: SchemaRole,
) -> Result<serde_json::Value, SchemaGenerationError> {
    match role {
        SchemaRole::Input => strict_schema_for::<C::Input>(role),
        SchemaRole::Output => strict_schema_for::<C::Output>(role),
    }
}
