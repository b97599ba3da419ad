//! `rcip export` as a process: every profile's tool list, and its refusals with exit codes.
#![allow(clippy::unwrap_used)]

mod common;

use common::{rcip, stdout, write};
use rcip_export::{Profile, check::check};
use serde_json::{Value, json};

/// A catalog as `polls -- export` prints it: a dotted id, an optional field, a bounded string.
fn catalog(second_id: &str) -> String {
    let capability = |id: &str| {
        json!({
            "id": id, "title": "Create a poll", "description": "Creates a poll.",
            "effect": "write", "scopeIds": ["polls"],
            "inputSchema": {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "minLength": 1, "maxLength": 200},
                    "note": {"type": ["string", "null"]}
                },
                "required": ["question"],
                "additionalProperties": false
            },
            "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}},
                             "required": ["id"], "additionalProperties": false}
        })
    };
    json!({
        "application": {"id": "polls", "name": "Polls", "version": "0.1.0", "description": "Polls."},
        "capabilities": [capability("polls.create"), capability(second_id)],
        "revision": "sha256:ignored"
    })
    .to_string()
}

#[test]
fn every_profile_prints_a_tool_list_its_checker_accepts() {
    let file = write("catalog.json", &catalog("polls.poll-create"));
    for profile in Profile::ALL {
        let output = rcip(
            &[
                "export",
                "--profile",
                profile.name(),
                file.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(output.status.code(), Some(0), "{profile}: {output:?}");
        let tools: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(check(profile, &tools), Ok(()), "{profile}: {tools:#}");
        let text = tools.to_string();
        match profile {
            Profile::OpenAi | Profile::Anthropic => {
                assert!(text.contains("\"polls_create\""), "{text}");
            }
            _ => assert!(text.contains("\"polls.create\""), "{text}"),
        }
    }
    // Standard input reads the same.
    let piped = rcip(
        &["export", "--profile", "openai", "-"],
        Some(&catalog("b.c")),
    );
    assert_eq!(piped.status.code(), Some(0));
}

#[test]
fn colliding_names_exit_one_naming_both_ids() {
    let output = rcip(
        &["export", "--profile", "openai", "-"],
        Some(&catalog("polls_create")),
    );
    assert_eq!(output.status.code(), Some(1));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("NAME_COLLISION"), "{error}");
    assert!(
        error.contains("polls.create") && error.contains("polls_create"),
        "{error}"
    );
    // MCP keeps dots: no collision there.
    let mcp = rcip(
        &["export", "--profile", "mcp-2025-11-25", "-"],
        Some(&catalog("polls_create")),
    );
    assert_eq!(mcp.status.code(), Some(0));
}

#[test]
fn bad_input_exits_with_a_clear_error() {
    let not_json = rcip(&["export", "--profile", "openai", "-"], Some("{"));
    assert_eq!(not_json.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_json.stderr).contains("not JSON"));

    let no_capabilities = rcip(&["export", "--profile", "openai", "-"], Some("{}"));
    assert_eq!(no_capabilities.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_capabilities.stderr).contains("INVALID_CATALOG"));

    let unknown = rcip(&["export", "--profile", "claude", "-"], None);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown profile \"claude\""));

    let missing = rcip(
        &["export", "--profile", "openai", "/nonexistent/catalog.json"],
        None,
    );
    assert_eq!(missing.status.code(), Some(2));
}
