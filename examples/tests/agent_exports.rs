//! The agent corpus (`rcip_examples::agent_corpus`: 54 Rust input types, the polls catalog
//! and the hiring package) under every export profile: every tool list is accepted by that
//! profile's checker (`rcip_export::check`), the capabilities some profiles cannot express are
//! refused with the capability and a pointer, and provider-shaped arguments come back to
//! inputs that parse into the same Rust values.
#![allow(clippy::unwrap_used)]

#[path = "../../rcip-export/tests/common/round_trip.rs"]
mod round_trip;

use rcip_examples::agent_corpus::{
    EDGE_IDS, corpus, edge_corpus, full_corpus, reparse, same_rust_value,
};
use rcip_export::{ExportError, Profile, check::check, export, export_definition};
use serde_json::Value;

/// The number of tools in a profile's wire array.
fn tool_count(profile: Profile, tools: &Value) -> usize {
    match profile {
        Profile::Gemini | Profile::GeminiJsonSchema => {
            tools[0]["functionDeclarations"].as_array().unwrap().len()
        }
        _ => tools.as_array().unwrap().len(),
    }
}

#[test]
fn every_profile_exports_the_whole_corpus_and_its_checker_accepts_it() {
    let definition = full_corpus();
    let total = definition.capabilities.len();
    assert!(total >= 54 + 24, "{total}");
    for profile in Profile::ALL {
        let tools = export_definition(profile, &definition)
            .unwrap_or_else(|error| panic!("{profile}: {error}"))
            .to_json();
        let accepted = tool_count(profile, &tools);
        if let Err(violations) = check(profile, &tools) {
            let list: Vec<String> = violations.iter().map(ToString::to_string).collect();
            panic!("{profile}: {} violations:\n{}", list.len(), list.join("\n"));
        }
        assert_eq!(accepted, total, "{profile}");
        println!("{profile}: {accepted}/{total} accepted by the checker");
    }
}

/// What a profile cannot express is an error naming the capability and the keyword; what it
/// exports passes its checker. Exactly one edge refuses: the flattened tagged enum closes its
/// variants with `unevaluatedProperties`, which only the MCP profiles keep (JSON Schema
/// 2020-12); every other edge (a tagged enum at the root, a unit struct, a tuple, a newtype)
/// has a way there and back in every profile.
#[test]
fn the_edge_corpus_is_exported_or_refused_clearly() {
    let refused_by = |profile: Profile, id: &str| {
        id == "corpus.flatten_enum"
            && matches!(
                profile,
                Profile::OpenAi | Profile::Anthropic | Profile::Gemini | Profile::GeminiJsonSchema
            )
    };
    let definition = edge_corpus();
    assert_eq!(definition.capabilities.len(), EDGE_IDS.len());
    for profile in Profile::ALL {
        for capability in &definition.capabilities {
            let outcome = export(profile, [capability.into()]);
            if refused_by(profile, &capability.id) {
                let Err(ExportError::UnsupportedSchema(issue)) = outcome else {
                    panic!("{profile} {}: exported, expected a refusal", capability.id)
                };
                assert_eq!(issue.capability, capability.id);
                assert_eq!(issue.pointer, "/unevaluatedProperties", "{issue:?}");
                assert!(issue.reason.contains("unevaluatedProperties"), "{issue:?}");
            } else {
                let exported =
                    outcome.unwrap_or_else(|e| panic!("{profile} {}: {e}", capability.id));
                assert_eq!(
                    check(profile, &exported.to_json()),
                    Ok(()),
                    "{profile} {}",
                    capability.id
                );
            }
        }
    }
}

/// Arguments generated for each corpus type, shaped as each profile's consumer sends them,
/// validate against the profile's schema and normalize to an input the original schema
/// accepts and serde parses into the same Rust value as the original.
#[test]
fn corpus_arguments_round_trip_under_every_profile() {
    for capability in &corpus().capabilities {
        let id = capability.id.clone();
        // Where the schema is looser than serde (schemars does not constrain the keys of an
        // enum-keyed map), an original serde refuses must be refused after the way back too.
        let same = move |original: &Value, normalized: &Value| match (
            reparse(&id, original),
            reparse(&id, normalized),
        ) {
            (Some(Err(_)), Some(Err(_))) => Ok(()),
            _ => match same_rust_value(&id, original, normalized) {
                Some(Ok(true)) => Ok(()),
                Some(Ok(false)) => {
                    Err(format!("{original} and {normalized} differ as Rust values"))
                }
                Some(Err(error)) => Err(error),
                None => Err("not a corpus capability".to_owned()),
            },
        };
        round_trip::round_trip(&capability.id, &capability.input_schema, &[], Some(&same));
    }
}
