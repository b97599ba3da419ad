//! `rcip check` as a process: output and exit codes.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;
use std::path::Path;

use common::{rcip, stdout, write};

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/programs")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn valid_packages_exit_zero() {
    let output = rcip(
        &["check", &example("polls.json"), &example("hiring.json")],
        None,
    );
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(
        text.contains("polls.json: ok (polls v1: 2 types, 3 commands, 1 views)"),
        "{text}"
    );
    assert!(
        text.contains("hiring.json: ok (hiring v2: 3 types, 4 commands, 1 views)"),
        "{text}"
    );
    let quiet = rcip(&["check", "--quiet", &example("polls.json")], None);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(stdout(&quiet), "");
}

#[test]
fn invalid_packages_exit_one_with_every_problem() {
    let polls = fs::read_to_string(example("polls.json")).unwrap();
    let broken = polls
        .replace("\"to\": \"closed\"", "\"to\": \"archived\"")
        .replace("\"version\": 1", "\"version\": 0");
    let file = write("broken.json", &broken);
    let output = rcip(
        &["check", &example("hiring.json"), file.to_str().unwrap()],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    let file = file.display();
    assert_eq!(
        stdout(&output)
            .lines()
            .filter(|l| l.starts_with(&file.to_string()))
            .collect::<Vec<_>>(),
        [
            format!("{file}: /version: expected a positive integer, found 0"),
            format!(
                "{file}: /types/poll/commands/close/to: unknown state \"archived\" (declared: open, closed)"
            ),
        ]
    );
    // The valid file is still reported as valid.
    assert!(stdout(&output).contains("hiring.json: ok"));
}

#[test]
fn malformed_json_is_a_problem_not_a_crash() {
    let file = write("malformed.json", "{\"protocol\": ");
    let output = rcip(&["check", file.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains(": not JSON: EOF while parsing a value at line 1 column 13"));
    let deep = write("deep.json", &"[".repeat(100_000));
    let output = rcip(&["check", deep.to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("not JSON: recursion limit exceeded"));
}

#[test]
fn unreadable_files_and_bad_usage_exit_two() {
    let missing = rcip(&["check", "/nonexistent/polls.json"], None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/polls.json: cannot read:")
    );
    // An unreadable file outranks an invalid one.
    let file = write("invalid.json", "[]");
    let both = rcip(
        &["check", file.to_str().unwrap(), "/nonexistent/polls.json"],
        None,
    );
    assert_eq!(both.status.code(), Some(2));
    assert!(stdout(&both).contains("expected a package (an object), found an array"));
    assert_eq!(rcip(&["check"], None).status.code(), Some(2));
    assert_eq!(rcip(&[], None).status.code(), Some(2));
    assert_eq!(rcip(&["frobnicate"], None).status.code(), Some(2));
}

#[test]
fn packages_checked_together_agree_on_each_version() {
    let polls = fs::read_to_string(example("polls.json")).unwrap();
    // Another version of `polls`: fine together (content identity, not one per folder).
    let v2 = write(
        "polls-v2.json",
        &polls.replace("\"version\": 1", "\"version\": 2"),
    );
    let together = rcip(
        &[
            "check",
            "--quiet",
            &example("polls.json"),
            v2.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(together.status.code(), Some(0), "{}", stdout(&together));
    // Version 1 again with other content: refused, with a stable code at `/version`.
    let changed = write(
        "polls-changed.json",
        &polls.replacen("Polls people vote in", "Polls people answer", 1),
    );
    assert_ne!(fs::read_to_string(&changed).unwrap(), polls);
    let output = rcip(
        &["check", &example("polls.json"), changed.to_str().unwrap()],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("polls-changed.json: /version: polls v1 is already declared by"),
        "{text}"
    );
    // Each alone is fine.
    let alone = rcip(&["check", "--quiet", changed.to_str().unwrap()], None);
    assert_eq!(alone.status.code(), Some(0));
}
