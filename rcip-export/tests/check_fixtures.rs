//! The Rust checker against the interop fixtures the provider SDKs are run on
//! (tests/interop/fixtures/agent-schemas): the tools every SDK accepts pass the Rust checker
//! too, and the tools an SDK refuses are refused by it as well, except for the listed places
//! where an SDK is stricter than the provider's documented rules.

use std::path::PathBuf;

use rcip_export::Profile;
use rcip_export::check::check;
use serde_json::{Value, json};

/// Refused by the SDK check, accepted by the documented rules (and so by the Rust checker).
const SDK_STRICTER: &[(&str, &str, &str)] = &[
    (
        "anthropic",
        "const_with_type",
        "transform_schema drops the `type` beside a `const`; the API takes both",
    ),
    (
        "gemini-json-schema",
        "prefix_items",
        "types.JSONSchema has no prefixItems; Gemini's documented subset lists it",
    ),
];

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/interop/fixtures/agent-schemas")
}

fn read(name: &str) -> Value {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Each tool of a wire list, as a one-tool wire list, with its name.
fn single_tools(profile: Profile, wire: &Value) -> Vec<(String, Value)> {
    let gemini = matches!(profile, Profile::Gemini | Profile::GeminiJsonSchema);
    let mut tools = Vec::new();
    for item in wire.as_array().into_iter().flatten() {
        let entries: Vec<&Value> = if gemini {
            item["functionDeclarations"]
                .as_array()
                .into_iter()
                .flatten()
                .collect()
        } else {
            vec![item]
        };
        for entry in entries {
            let name = entry["name"].as_str().unwrap_or("?").to_owned();
            let list = if gemini {
                json!([{"functionDeclarations": [entry]}])
            } else {
                json!([entry])
            };
            tools.push((name, list));
        }
    }
    tools
}

#[test]
fn sdk_accepted_fixtures_pass_the_rust_checker() {
    for profile in Profile::ALL {
        let wire = read(&format!("{profile}.json"));
        assert!(!single_tools(profile, &wire).is_empty(), "{profile}");
        if let Err(violations) = check(profile, &wire) {
            let lines: Vec<String> = violations.iter().map(ToString::to_string).collect();
            panic!("{profile}:\n{}", lines.join("\n"));
        }
    }
}

#[test]
fn sdk_refused_fixtures_are_refused_by_the_rust_checker() {
    for profile in Profile::ALL {
        let wire = read(&format!("{profile}.refused.json"));
        let tools = single_tools(profile, &wire);
        assert!(!tools.is_empty(), "{profile}");
        for (name, list) in tools {
            let stricter = SDK_STRICTER
                .iter()
                .any(|(p, tool, _)| *p == profile.name() && *tool == name);
            let result = check(profile, &list);
            if stricter {
                assert_eq!(result, Ok(()), "{profile} {name}: listed as SDK-only");
            } else {
                assert!(result.is_err(), "{profile} {name}: accepted");
            }
        }
    }
}
