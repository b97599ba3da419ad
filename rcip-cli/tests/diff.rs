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
        "breaking input-required-added notes.add/inputSchema/required The property text is now required.\n\
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
    let invalid = rcip(&["diff", good, not_a_catalog.to_str().unwrap()], None);
    assert_eq!(invalid.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&invalid.stderr);
    assert!(
        stderr.contains("list.json: new catalog: no \"capabilities\" list"),
        "{stderr}"
    );
}
