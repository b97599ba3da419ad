use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(serde::Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet.
#[capability(effect = "read", output = Out)]
fn greet(input: Input) -> String {
    input.name
}

fn main() {}
