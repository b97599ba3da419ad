//! `#[derive(Capability)]`'s helper is `#[rcip(...)]`: importing the `capability` attribute
//! beside the derive is no ambiguity (it was E0659 when the helper was `capability`).
//! Like every derive helper (serde's `#[serde]`), it comes after the derive.
#![allow(unused_imports)]
use rcip_runtime::{Capability, CapabilitySpec, capability};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

/// Greet.
#[derive(Deserialize, JsonSchema, Capability)]
#[rcip(id = "people.greet", effect = "read", output = Out)]
#[serde(deny_unknown_fields)]
struct Greet {
    name: String,
}

fn main() {
    assert_eq!(<Greet as CapabilitySpec>::ID, "people.greet");
}
