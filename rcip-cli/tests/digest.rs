//! `rcip digest` as a process: revisions, canonical JSON, standard input, exit codes.
#![allow(clippy::unwrap_used)]

mod common;

use common::{rcip, stdout, write};

#[test]
fn prints_the_revision_and_the_canonical_json() {
    let file = write(
        "manifest.json",
        r#"{ "version": "0.5", "revision": "sha256:stale", "b": 1.0, "a": true }"#,
    );
    let digest = rcip(&["digest", file.to_str().unwrap()], None);
    assert_eq!(digest.status.code(), Some(0));
    let revision = stdout(&digest);
    assert!(
        revision.starts_with("sha256:") && revision.len() == 7 + 43,
        "{revision}"
    );
    let canonical = rcip(&["digest", "--canonical", file.to_str().unwrap()], None);
    assert_eq!(stdout(&canonical), r#"{"a":true,"b":1,"version":"0.5"}"#);
    // Standard input gives the same revision; the empty manifest has the spec's digest.
    let piped = rcip(
        &["digest", "-"],
        Some(r#"{"a":true,"version":"0.5","b":1}"#),
    );
    assert_eq!(stdout(&piped), revision);
    assert_eq!(
        stdout(&rcip(&["digest", "-"], Some("{}"))),
        "sha256:RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
    );
}

#[test]
fn refusals_exit_one_with_the_code() {
    let bad = rcip(
        &["digest", "-"],
        Some(r#"{"featureSets": {"demo/messaging": {}}}"#),
    );
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(stdout(&bad), "identifier_charset");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("featureSets.demo/messaging"));
    let array = rcip(&["digest", "-"], Some("[]"));
    assert_eq!(array.status.code(), Some(1));
    assert_eq!(stdout(&array), "manifest_not_object");
}

#[test]
fn unreadable_or_invalid_input_exits_two() {
    assert_eq!(
        rcip(&["digest", "/nonexistent/manifest.json"], None)
            .status
            .code(),
        Some(2)
    );
    let invalid = rcip(&["digest", "-"], Some("{\"a\": "));
    assert_eq!(invalid.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&invalid.stderr).contains("not JSON"));
    assert_eq!(rcip(&["digest"], None).status.code(), Some(2));
}
