use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Greet.
#[capability(effect = "read")]
fn greet(a: u8, b: u8, input: Input) -> String {
    let _ = (a, b);
    input.name
}

fn main() {}
