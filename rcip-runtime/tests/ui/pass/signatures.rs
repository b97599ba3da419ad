//! Every supported signature form of `#[capability]`.
use rcip_runtime::{CapabilitySpec, HandlerError, InvocationContext, capability};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Output {
    greeting: String,
}

#[derive(Clone)]
struct State;

/// Plain.
#[capability(effect = "read")]
fn plain(input: Input) -> String {
    input.name
}

/// Unit output.
#[capability(effect = "write")]
fn nothing(_input: Input) {}

/// With state.
#[capability(effect = "read", scope = "people")]
fn with_state(_state: State, input: Input) -> Output {
    Output { greeting: input.name }
}

/// With context.
#[capability(effect = "read")]
fn with_context(input: Input, context: InvocationContext) -> String {
    format!("{}{}", input.name, context.invocation_id())
}

/// Everything, async, fallible.
#[capability(effect = "external", scopes = ["people", "greetings"], tags = ["a", "b"])]
async fn everything(
    _state: State,
    input: Input,
    _context: InvocationContext,
) -> Result<Output, HandlerError> {
    Ok(Output { greeting: input.name })
}

/// A std error type.
#[capability(effect = "destructive", id = "people.forget")]
async fn std_error(_input: Input) -> Result<u32, std::io::Error> {
    Ok(1)
}

/// A raw identifier.
#[capability(effect = "read", scope = "people")]
fn r#type(input: Input) -> String {
    input.name
}

fn main() {
    assert_eq!(<plain as CapabilitySpec>::ID, "plain");
    assert_eq!(<with_state as CapabilitySpec>::ID, "people.withState");
    assert_eq!(<everything as CapabilitySpec>::ID, "people.everything");
    assert_eq!(<std_error as CapabilitySpec>::ID, "people.forget");
    assert_eq!(<r#type as CapabilitySpec>::ID, "people.type");
    let _ = (<nothing as CapabilitySpec>::EFFECT, <with_context as CapabilitySpec>::ID);
}
