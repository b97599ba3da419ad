use rcip_runtime::Capability;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(serde::Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Greet: the derive's keys go in `#[rcip(...)]`, not `#[capability(...)]`.
#[derive(Deserialize, JsonSchema, Capability)]
#[capability(id = "people.greet", effect = "read", output = Out)]
struct Greet {
    name: String,
}

fn main() {}
