//! `rcip diff` as a process: the JSON report, the text lines, `--fail-on`, and exit codes 0,
//! 1 and 2.
#![allow(clippy::unwrap_used)]

mod common;

use common::{rcip, stdout, write};
use serde_json::{Value, json};

fn catalog(required: &[&str]) -> String {
    json!({
        "application": {"id": "notes"},
        "scopes": [],
        "capabilities": [{
            "id": "notes.add", "effect": "write", "scopeIds": [], "title": "Add",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                            "required": required, "additionalProperties": false},
            "outputSchema": {"type": "null"}
        }]
    })
    .to_string()
}

#[test]
fn reports_and_exit_codes() {
    let old = write("old.json", &catalog(&[]));
    let new = write("new.json", &catalog(&["text"]));
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());

    let json_report = rcip(&["diff", old, new, "--format", "json"], None);
    assert_eq!(
        json_report.status.code(),
        Some(1),
        "a breaking change fails by default"
    );
    let report: Value = serde_json::from_str(&stdout(&json_report)).unwrap();
    assert_eq!(
        report,
        json!({
            "changes": [{
                "severity": "breaking", "rule": "input-required-added", "capability": "notes.add",
                "pointer": "/inputSchema/required",
                "message": "The property text is now required."
            }],
            "summary": {"breaking": 1, "warning": 0, "info": 0}
        })
    );
    let text = rcip(&["diff", old, new, "--fail-on", "never"], None);
    assert_eq!(text.status.code(), Some(0));
    assert_eq!(
        stdout(&text),
        "breaking input-required-added notes.add /inputSchema/required: The property text is now required.\n\
         1 breaking, 0 warning, 0 info"
    );
    // Looser input is info: passes at `breaking` and `warning`.
    let back = rcip(&["diff", new, old], None);
    assert_eq!(back.status.code(), Some(0));
    assert_eq!(
        rcip(&["diff", new, old, "--fail-on", "warning"], None)
            .status
            .code(),
        Some(0)
    );
    // The same catalog: no changes.
    let same = rcip(&["diff", old, old, "--format", "json"], None);
    assert_eq!(same.status.code(), Some(0));
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&same)).unwrap()["summary"],
        json!({"breaking": 0, "warning": 0, "info": 0})
    );
}

#[test]
fn unreadable_or_invalid_input_exits_two_naming_the_file() {
    let good = write("good.json", &catalog(&[]));
    let good = good.to_str().unwrap();
    let missing = rcip(&["diff", "/no/such/catalog.json", good], None);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("/no/such/catalog.json: cannot read"),
        "{stderr}"
    );
    let not_a_catalog = write("list.json", "[1, 2]");
    let not_a_catalog = not_a_catalog.to_str().unwrap();
    let invalid = rcip(&["diff", good, not_a_catalog, "--kind", "catalog"], None);
    assert_eq!(invalid.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        stderr.contains("list.json: not a valid new catalog:\n")
            && stderr.contains("list.json: no \"capabilities\" list"),
        "{stderr}"
    );
    // Not JSON, an unknown kind, both versions from standard input.
    let broken = write("broken.json", "{\"capabilities\": [");
    let broken = rcip(&["diff", good, broken.to_str().unwrap()], None);
    assert_eq!(broken.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&broken.stderr).contains("broken.json: not JSON:"),
        "{}",
        String::from_utf8_lossy(&broken.stderr)
    );
    assert_eq!(
        rcip(&["diff", good, good, "--kind", "poem"], None)
            .status
            .code(),
        Some(2)
    );
    let both = rcip(&["diff", "-", "-"], Some("{}"));
    assert_eq!(both.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&both.stderr)
            .contains("only one of the two versions can come from standard input"),
        "{}",
        String::from_utf8_lossy(&both.stderr)
    );
    // Told by its marks: a list is none of the three.
    let unknown = rcip(&["diff", good, not_a_catalog], None);
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains(
            "list.json: not a catalog export, relationship package or MCPL manifest (pass --kind)"
        ),
        "{stderr}"
    );
    // Two kinds.
    let manifest = write("kinds-manifest.json", r#"{"version": "0.5"}"#);
    let mixed = rcip(&["diff", good, manifest.to_str().unwrap()], None);
    assert_eq!(mixed.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&mixed.stderr).contains("is a catalog,"),
        "{}",
        String::from_utf8_lossy(&mixed.stderr)
    );
}

fn polls_package(version: u64, states: &[&str]) -> String {
    let mut package: Value =
        serde_json::from_str(include_str!("../../examples/programs/polls.json")).unwrap();
    package["version"] = json!(version);
    package["types"]["poll"]["lifecycle"]["states"] = json!(states);
    package.to_string()
}

#[test]
fn packages_are_checked_then_compared() {
    let old = write("polls-v1.json", &polls_package(1, &["open", "closed"]));
    let new = write(
        "polls-v2.json",
        &polls_package(2, &["open", "closed", "archived"]),
    );
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let added = rcip(&["diff", old, new, "--format", "json"], None);
    // Harmless to records, but every record read returns a state the old schema refuses.
    assert_eq!(added.status.code(), Some(1), "a state added widens outputs");
    let report: Value = serde_json::from_str(&stdout(&added)).unwrap();
    assert_eq!(report["changes"][1]["rule"], "package-state-added");
    assert_eq!(report["changes"][1]["severity"], "info");
    assert_eq!(report["changes"][1]["capability"], Value::Null);
    let get = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["capability"] == "polls.poll.get")
        .unwrap();
    assert_eq!(get["rule"], "output-enum-changed");
    assert_eq!(get["severity"], "breaking");
    let removed = rcip(&["diff", new, old], None);
    assert_eq!(
        removed.status.code(),
        Some(1),
        "a state removed is breaking"
    );
    assert!(
        stdout(&removed).contains(
            "breaking package-state-removed /types/poll/lifecycle/states: The state archived of poll was removed: records can be in it."
        ),
        "{}",
        stdout(&removed)
    );
    // An invalid package (a command that moves to a state the lifecycle lacks) is refused with
    // the validator's problem, not compared.
    let invalid = write("polls-invalid.json", &polls_package(2, &["open"]));
    let refused = rcip(&["diff", old, invalid.to_str().unwrap()], None);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("polls-invalid.json: /types/poll"),
        "{stderr}"
    );
    // --profile is for catalogs: said before anything is compared, invalid packages too.
    for (a, b) in [(old, new), (old, invalid.to_str().unwrap())] {
        let profile = rcip(&["diff", a, b, "--profile", "openai"], None);
        assert_eq!(profile.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&profile.stderr).trim(),
            "--profile compares catalog exports, not a package"
        );
    }
}

#[test]
fn manifests_by_domain() {
    let old = write(
        "manifest-old.json",
        r#"{"version": "0.5", "pushEvents": true, "featureSets": {"chat": {"uses": ["pushEvents"]}}}"#,
    );
    let new = write(
        "manifest-new.json",
        r#"{"version": "0.5", "pushEvents": true, "featureSets": {"chat": {"uses": ["pushEvents", "tools"]}}}"#,
    );
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let out = rcip(&["diff", old, new], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "breaking mcpl-feature-set-uses-added tools /featureSets/chat/uses: The feature set chat now uses tools: a grant given for the old set did not consent to it.\n\
         1 breaking, 0 warning, 0 info"
    );
    assert_eq!(rcip(&["diff", new, old], None).status.code(), Some(0));
    assert_eq!(
        rcip(&["diff", new, old, "--fail-on", "warning"], None)
            .status
            .code(),
        Some(1),
        "a use removed is a warning"
    );
}

#[test]
fn provider_profile_tool_names() {
    let tool = |id: &str| {
        json!({"id": id, "title": "T", "description": "D.", "effect": "read", "scopeIds": [],
               "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false},
               "outputSchema": {"type": "null"}})
    };
    let old = write(
        "names-old.json",
        &json!({"capabilities": [tool("notes.list")]}).to_string(),
    );
    let new = write(
        "names-new.json",
        &json!({"capabilities": [tool("notes_list")]}).to_string(),
    );
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let rules = |profile: &str| -> Vec<String> {
        let out = rcip(
            &[
                "diff",
                old,
                new,
                "--profile",
                profile,
                "--format",
                "json",
                "--fail-on",
                "never",
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(0));
        let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
        report["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["rule"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        rules("openai"),
        ["capability-removed", "capability-added", "tool-retargeted"]
    );
    assert_eq!(
        rules("mcp-2025-11-25"),
        ["capability-removed", "capability-added"]
    );
}
