use rcip_runtime::capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[capability(effect = "mutate", id = "Bad", colour = "blue", example(description = "x", input = "nope"))]
fn greet(input: &Input) -> String {
    input.name.clone()
}

fn main() {}
