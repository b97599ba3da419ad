use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[capability(effect = "read")]
fn greet(input: Input) -> String {
    input.name
}

fn main() {}
