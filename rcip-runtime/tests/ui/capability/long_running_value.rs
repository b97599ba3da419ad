use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet.
#[capability(effect = "read", long_running = "sometimes")]
fn greet(input: Input) -> String {
    input.name
}

fn main() {}
