//! Tool names: the rule per profile, collisions, over-long ids, the reverse table.
#![allow(clippy::unwrap_used)]

use rcip_core::{CapabilityDefinition, Effect};
use rcip_export::{Profile, ToolNames, export};
use sha2::{Digest, Sha256};

#[test]
fn dots_map_per_rule() {
    let ids = ["polls.create", "polls.vote-cast", "a_b"];
    let expect = [
        (Profile::OpenAi, ["polls_create", "polls_vote-cast", "a_b"]),
        (
            Profile::Anthropic,
            ["polls_create", "polls_vote-cast", "a_b"],
        ),
        (Profile::Gemini, ["polls.create", "polls.vote-cast", "a_b"]),
        (
            Profile::GeminiJsonSchema,
            ["polls.create", "polls.vote-cast", "a_b"],
        ),
        (
            Profile::Mcp2025_11_25,
            ["polls.create", "polls.vote-cast", "a_b"],
        ),
    ];
    for (profile, names) in expect {
        let table = ToolNames::new(profile, ids).unwrap();
        for (id, name) in ids.iter().zip(names) {
            assert_eq!(table.name(id), Some(name), "{profile}");
            assert_eq!(table.capability(name), Some(*id), "{profile}");
        }
    }
}

#[test]
fn collision_names_both_ids() {
    let a = CapabilityDefinition::new("a.b", Effect::Read, "T", "D.");
    let b = CapabilityDefinition::new("a_b", Effect::Read, "T", "D.");
    let error = export(Profile::OpenAi, [(&a).into(), (&b).into()]).unwrap_err();
    assert_eq!(error.code(), "NAME_COLLISION");
    let text = error.to_string();
    assert!(
        text.contains("\"a.b\"") && text.contains("\"a_b\"") && text.contains("\"a_b\""),
        "{text}"
    );
    // The same ids do not collide where dots are allowed.
    assert!(export(Profile::Gemini, [(&a).into(), (&b).into()]).is_ok());
    assert!(export(Profile::Mcp2026_07_28, [(&a).into(), (&b).into()]).is_ok());
}

#[test]
fn over_long_ids_keep_a_prefix_and_a_hash() {
    let id = format!("app.{}", "x".repeat(100));
    let digest = Sha256::digest(id.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let table = ToolNames::new(Profile::OpenAi, [id.as_str()]).unwrap();
    let name = table.name(&id).unwrap();
    assert_eq!(name.len(), 64);
    assert_eq!(name, format!("app_{}_{hex}", "x".repeat(51)));
    assert_eq!(table.capability(name), Some(id.as_str()));
    // MCP allows 128: the same id is kept.
    let mcp = ToolNames::new(Profile::Mcp2025_11_25, [id.as_str()]).unwrap();
    assert_eq!(mcp.name(&id), Some(id.as_str()));
    // Two long ids sharing the prefix stay distinct.
    let other = format!("app.{}y", "x".repeat(100));
    let both = ToolNames::new(Profile::OpenAi, [id.as_str(), other.as_str()]).unwrap();
    assert_ne!(both.name(&id), both.name(&other));
}

#[test]
fn gemini_needs_a_letter_or_underscore_first() {
    let table = ToolNames::new(Profile::Gemini, ["9lives.get", "-x"]).unwrap();
    assert_eq!(table.name("9lives.get"), Some("_9lives.get"));
    assert_eq!(table.name("-x"), Some("_-x"));
    let openai = ToolNames::new(Profile::OpenAi, ["9lives.get"]).unwrap();
    assert_eq!(openai.name("9lives.get"), Some("9lives_get"));
}

/// A profile, its allowed characters, whether a letter or `_` comes first, the maximum.
type Rule = (Profile, fn(char) -> bool, bool, usize);

#[test]
fn every_name_matches_its_rule() {
    let ids = ["a.b", "x-y_z", "über.set", "0.a:b", &"q".repeat(200)];
    let rules: [Rule; 3] = [
        (
            Profile::OpenAi,
            |c| c.is_ascii_alphanumeric() || "_-".contains(c),
            false,
            64,
        ),
        (
            Profile::Gemini,
            |c| c.is_ascii_alphanumeric() || "_.:-".contains(c),
            true,
            64,
        ),
        (
            Profile::Mcp2026_07_28,
            |c| c.is_ascii_alphanumeric() || "_.-".contains(c),
            false,
            128,
        ),
    ];
    for (profile, allowed, letter_first, max) in rules {
        let table = ToolNames::new(profile, ids).unwrap();
        for id in ids {
            let name = table.name(id).unwrap();
            assert!(!name.is_empty() && name.len() <= max, "{profile} {name}");
            assert!(name.chars().all(allowed), "{profile} {name}");
            if letter_first {
                let first = name.chars().next().unwrap();
                assert!(first.is_ascii_alphabetic() || first == '_', "{name}");
            }
        }
    }
}

#[test]
fn unknown_tool_and_non_object_arguments() {
    let a = CapabilityDefinition::new("a.b", Effect::Read, "T", "D.");
    let e = export(Profile::OpenAi, [(&a).into()]).unwrap();
    assert_eq!(
        e.arguments_to_input("a.b", serde_json::json!({}))
            .unwrap_err()
            .code(),
        "UNKNOWN_TOOL"
    );
    assert_eq!(
        e.arguments_to_input("a_b", serde_json::json!([1]))
            .unwrap_err()
            .code(),
        "ARGUMENTS_NOT_OBJECT"
    );
    assert_eq!(
        e.arguments_to_input("a_b", serde_json::json!({}))
            .unwrap()
            .0,
        "a.b"
    );
}
