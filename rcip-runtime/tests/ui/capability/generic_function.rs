use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet.
#[capability(effect = "read")]
fn greet<T>(input: Input, _extra: Option<T>) -> String {
    input.name
}

fn main() {}
