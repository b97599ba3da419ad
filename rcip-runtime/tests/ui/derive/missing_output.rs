use rcip_runtime::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(serde::Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Greet.
#[derive(Deserialize, JsonSchema, Capability)]
#[rcip(id = "people.greet", effect = "read")]
struct Greet {
    name: String,
}

fn main() {}
