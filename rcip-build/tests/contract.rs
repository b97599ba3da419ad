//! `rcip_build::Contract` in a real build: a crate whose `build.rs` checks its committed
//! catalog export against its contract lock. A breaking change fails `cargo build` with the
//! changes listed; a major version bump, or the accept variable, lets it pass; an addition
//! passes and leaves the lock alone. Runs `cargo` as a subprocess, offline, in `target/tmp`.
#![allow(clippy::unwrap_used)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use support::{cargo, copy_fixture};

use rcip_build::ACCEPT_BREAKING_ENV;
use serde_json::{Value, json};

/// A copy of `tests/contract_fixture` named `name`, at `version`, exporting `export`, with
/// `lock` as its contract lock when given.
fn fixture(name: &str, version: &str, export: &Value, lock: Option<(&str, &Value)>) -> PathBuf {
    let dir = copy_fixture(
        "contract_fixture",
        name,
        &[("@VERSION@", version)],
        &["build.rs", "src/lib.rs"],
    );
    write_export(&dir, export);
    if let Some((version, catalog)) = lock {
        let lock = json!({"version": version, "catalog": catalog});
        fs::write(
            dir.join("app.contract.lock"),
            serde_json::to_string_pretty(&lock).unwrap(),
        )
        .unwrap();
    }
    dir
}

fn write_export(dir: &Path, export: &Value) {
    fs::write(
        dir.join("app.catalog.json"),
        serde_json::to_string_pretty(export).unwrap() + "\n",
    )
    .unwrap();
}

/// The lock's contents as JSON.
fn lock(dir: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(dir.join("app.contract.lock")).unwrap()).unwrap()
}

/// `cargo build` of the fixture, with the accept variable set when `accept`.
fn build(dir: &Path, accept: bool) -> (bool, String) {
    let mut command = cargo(dir, &["build"]);
    if accept {
        command.env(ACCEPT_BREAKING_ENV, "1");
    } else {
        command.env_remove(ACCEPT_BREAKING_ENV);
    }
    let Output { status, stderr, .. } = command.output().unwrap();
    (
        status.success(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// A small catalog: `notes.add` with its `text` input optional or required, and `notes.list`
/// when `list`.
fn catalog(text_required: bool, list: bool) -> Value {
    let required: &[&str] = if text_required { &["text"] } else { &[] };
    let mut capabilities = vec![json!({
        "id": "notes.add", "title": "Add a note", "effect": "write", "scopeIds": ["notes"],
        "inputSchema": {"type": "object", "additionalProperties": false,
                        "properties": {"text": {"type": "string"}}, "required": required},
        "outputSchema": {"type": "null"}
    })];
    if list {
        capabilities.push(json!({
            "id": "notes.list", "title": "List notes", "effect": "read", "scopeIds": ["notes"],
            "inputSchema": {"type": "object", "additionalProperties": false},
            "outputSchema": {"type": "array", "items": {"type": "string"}}
        }));
    }
    json!({"application": {"id": "notes", "name": "Notes"},
           "scopes": [{"id": "notes", "title": "Notes"}], "capabilities": capabilities})
}

/// The published contract, and a change of it that breaks twice: an input made required and
/// a capability removed.
fn published() -> Value {
    catalog(false, true)
}
fn broken() -> Value {
    catalog(true, false)
}

/// The `breaking ...` lines rcip-diff's report gives for `published()` → `broken()`, as the
/// build prints them.
fn breaking_lines() -> Vec<String> {
    let report = rcip_diff::diff_catalogs(&published(), &broken()).unwrap();
    let lines = vec![
        format!(
            "breaking input-required-added notes.add /inputSchema/required: {}",
            report.changes[0].message
        ),
        "breaking capability-removed notes.list: The capability notes.list was removed (a \
         rename is a removal and an addition)."
            .to_owned(),
    ];
    assert_eq!(
        report.changes.iter().map(|c| c.rule).collect::<Vec<_>>(),
        ["input-required-added", "capability-removed"]
    );
    lines
}

/// Cargo prints a build script's `cargo::error` and `cargo::warning` lines as
/// `<level>: <package>@<version>: <line>`.
fn has_line(stderr: &str, level: &str, version: &str, line: &str) -> bool {
    let prefix = format!("{level}: rcip-contract-fixture@{version}: ");
    stderr
        .lines()
        .any(|l| l.strip_prefix(&prefix) == Some(line))
}

#[test]
fn a_breaking_change_fails_the_build_with_the_changes_listed() {
    let dir = fixture(
        "contract-breaking",
        "0.1.0",
        &broken(),
        Some(("0.1.0", &published())),
    );
    let before = fs::read(dir.join("app.contract.lock")).unwrap();
    let (success, stderr) = build(&dir, false);
    assert!(!success, "a breaking change built:\n{stderr}");
    let mut expected = vec![
        "app.catalog.json breaks the contract locked in app.contract.lock at version 0.1.0: 2 \
         breaking changes"
            .to_owned(),
    ];
    expected.extend(breaking_lines());
    expected.extend([
        "app.catalog.json is the committed copy of the code's catalog export, `cargo run -- \
         export > app.catalog.json`; either"
            .to_owned(),
        "- keep the contract: undo the change in the code, then regenerate app.catalog.json"
            .to_owned(),
        "- or publish the break as a major version: the crate's version from 0.1.0 to 0.2.0"
            .to_owned(),
        format!(
            "- or accept it in this version: `{ACCEPT_BREAKING_ENV}=1 cargo build -p \
             rcip-contract-fixture` rewrites app.contract.lock (commit it)"
        ),
    ]);
    for line in &expected {
        assert!(
            has_line(&stderr, "error", "0.1.0", line),
            "missing {line:?} in:\n{stderr}"
        );
    }
    // Nothing else went wrong: no panic, no compile error, and the lock is untouched.
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("error["), "{stderr}");
    assert_eq!(fs::read(dir.join("app.contract.lock")).unwrap(), before);
}

#[test]
fn a_major_version_bump_passes_the_breaking_change() {
    let dir = fixture(
        "contract-major",
        "0.2.0",
        &broken(),
        Some(("0.1.0", &published())),
    );
    let before = fs::read(dir.join("app.contract.lock")).unwrap();
    let (success, stderr) = build(&dir, false);
    assert!(success, "a major version bump failed:\n{stderr}");
    // It says what the bump accepts, and leaves the lock for after the publication.
    let mut expected = vec![
        "app.catalog.json: version 0.2.0 is a major move from 0.1.0, the locked contract's; it \
         accepts 2 breaking changes:"
            .to_owned(),
    ];
    expected.extend(breaking_lines());
    for line in &expected {
        assert!(
            has_line(&stderr, "warning", "0.2.0", line),
            "missing {line:?} in:\n{stderr}"
        );
    }
    assert_eq!(fs::read(dir.join("app.contract.lock")).unwrap(), before);
}

#[test]
fn the_accept_variable_rewrites_the_lock_with_the_new_export() {
    let dir = fixture(
        "contract-accept",
        "0.1.0",
        &broken(),
        Some(("0.1.0", &published())),
    );
    let (success, stderr) = build(&dir, true);
    assert!(success, "accepting failed:\n{stderr}");
    assert!(
        has_line(
            &stderr,
            "warning",
            "0.1.0",
            &format!(
                "{ACCEPT_BREAKING_ENV}: app.contract.lock now holds the contract of \
                 app.catalog.json at version 0.1.0 (commit it); it accepts 2 breaking changes \
                 since 0.1.0:"
            )
        ),
        "{stderr}"
    );
    assert_eq!(lock(&dir), json!({"version": "0.1.0", "catalog": broken()}));
    // The accepted contract is the one checked from now on: without the variable, it passes.
    let (success, stderr) = build(&dir, false);
    assert!(success, "{stderr}");
}

#[test]
fn the_first_build_locks_the_contract_and_an_addition_leaves_it_alone() {
    let dir = fixture("contract-first", "0.1.0", &catalog(false, false), None);
    let (success, stderr) = build(&dir, false);
    assert!(success, "{stderr}");
    assert!(
        has_line(
            &stderr,
            "warning",
            "0.1.0",
            "app.contract.lock: no lock existed; it now holds the contract of app.catalog.json \
             at version 0.1.0 (commit it)"
        ),
        "{stderr}"
    );
    assert_eq!(
        lock(&dir),
        json!({"version": "0.1.0", "catalog": catalog(false, false)})
    );
    let before = fs::read(dir.join("app.contract.lock")).unwrap();

    // A capability added breaks no consumer: the build passes, the lock stays the published
    // contract.
    write_export(&dir, &catalog(false, true));
    let (success, stderr) = build(&dir, false);
    assert!(success, "an addition failed:\n{stderr}");
    assert!(!stderr.contains("breaking"), "{stderr}");
    assert_eq!(fs::read(dir.join("app.contract.lock")).unwrap(), before);
}
