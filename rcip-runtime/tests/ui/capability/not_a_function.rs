use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet.
#[capability(effect = "read")]
struct Greeting;

fn main() {}
