use rcip_runtime::{Capability, capability};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(serde::Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Greet.
#[capability(id = "people.greet", effect = "read", output = Out)]
#[derive(Deserialize, JsonSchema, Capability)]
struct Greet {
    name: String,
}

fn main() {}
