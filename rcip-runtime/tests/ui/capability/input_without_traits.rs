use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

struct Plain {
    name: String,
}

/// Greet.
#[capability(effect = "read")]
fn greet(input: Plain) -> String {
    input.name
}

fn main() {}
