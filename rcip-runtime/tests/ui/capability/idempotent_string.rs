use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet.
#[capability(effect = "write", idempotent = "yes")]
fn greet(input: Input) -> String {
    input.name
}

fn main() {}
