//! Programs at run time: drafting errors with their pointers, content identity, activation
//! immutability, the bundled examples, and the platform error's conversions.
#![allow(clippy::unwrap_used)]

use rcip_platform::{
    Applied, DirectoryChange, DirectoryError, DirectoryStore, EXAMPLE_PACKAGES, MemoryDirectory,
    PlatformError, ProgramVersion, Workspace, activation, check_package, example_packages,
    package_digest,
};
use rcip_records::{Activation, RecordError};
use rcip_relationship::rcip_core::ValidationIssue;
use rcip_relationship::{MAX_PACKAGE_BYTES, MAX_PACKAGE_DEPTH};
use serde_json::{Value, json};

fn polls() -> Value {
    serde_json::from_str(EXAMPLE_PACKAGES[0].1).unwrap()
}

fn issues(error: &PlatformError) -> Vec<(&str, &str)> {
    error
        .issues
        .iter()
        .map(|i| (i.instance_path.as_str(), i.keyword.as_str()))
        .collect()
}

#[test]
fn a_valid_package_is_checked_with_its_digest() {
    let package = polls();
    let checked = check_package(&package).unwrap();
    assert_eq!((checked.namespace(), checked.version()), ("polls", 1));
    // The engine's identity: the normalized package's.
    assert_eq!(checked.digest, checked.package.digest());
    assert_eq!(package_digest(&package).unwrap(), checked.digest);
    // Key order and whitespace are not content.
    let reordered: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&package).unwrap()).unwrap();
    let mut reversed = serde_json::Map::new();
    for (k, v) in reordered.as_object().unwrap().iter().rev() {
        reversed.insert(k.clone(), v.clone());
    }
    assert_eq!(
        package_digest(&Value::Object(reversed)).unwrap(),
        checked.digest
    );
    // Any other change is.
    let mut edited = package.clone();
    edited["description"] = json!("Polls, edited.");
    assert_ne!(package_digest(&edited).unwrap(), checked.digest);
}

#[test]
fn every_drafting_problem_comes_with_its_pointer_under_package() {
    let mut package = polls();
    package["types"]["poll"]["commands"]["close"]["to"] = json!("archived");
    package["version"] = json!(0);
    package["colour"] = json!("blue");
    let error = check_package(&package).unwrap_err();
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("PROGRAM_INVALID", 422)
    );
    let found = issues(&error);
    for expected in [
        ("/package/version", "INVALID_VERSION"),
        ("/package/colour", "UNKNOWN_KEY"),
        ("/package/types/poll/commands/close/to", "UNKNOWN_STATE"),
    ] {
        assert!(found.contains(&expected), "{expected:?} in {found:?}");
    }
    assert!(
        error.message.contains(&format!("{} problems", found.len())),
        "{}",
        error.message
    );
    // The same problems the one validator reports, none lost.
    let direct = rcip_relationship::validate_package(&package).unwrap_err();
    assert_eq!(direct.problems.len(), error.issues.len());
    for (problem, issue) in direct.problems.iter().zip(&error.issues) {
        assert_eq!(issue.instance_path, format!("/package{}", problem.pointer));
        assert_eq!(issue.keyword, problem.code.as_str());
        assert_eq!(issue.message, problem.message);
    }
}

#[test]
fn a_package_that_is_no_object_too_deep_or_too_large_is_invalid() {
    let error = check_package(&json!([1, 2])).unwrap_err();
    assert_eq!(error.code, "PROGRAM_INVALID");
    assert_eq!(error.issues[0].instance_path, "/package");

    let mut deep = json!(1);
    for _ in 0..(MAX_PACKAGE_DEPTH + 5) {
        deep = json!([deep]);
    }
    let error = check_package(&json!({"protocol": "relationship/v1", "deep": deep})).unwrap_err();
    assert_eq!(issues(&error), [("/package", "PACKAGE_TOO_DEEP")]);
    assert!(package_digest(&json!({"deep": deep})).is_err());

    let mut large = polls();
    large["description"] = json!("x".repeat(MAX_PACKAGE_BYTES));
    let error = check_package(&large).unwrap_err();
    assert_eq!(issues(&error), [("/package", "PACKAGE_TOO_LARGE")]);
}

fn active(workspace: Option<&str>, package: &Value) -> ProgramVersion {
    let checked = check_package(package).unwrap();
    ProgramVersion {
        workspace_id: workspace.map(str::to_owned),
        namespace: checked.namespace().to_owned(),
        version: checked.version(),
        digest: checked.digest,
        package: package.clone(),
        activated_at: 1,
        activated_by: "ada".into(),
    }
}

#[test]
fn the_activation_rule() {
    let v1 = active(None, &polls());
    assert_eq!(
        activation([&v1], "polls", 1, &v1.digest).unwrap(),
        Activation::AlreadyActive
    );
    assert_eq!(
        activation([&v1], "polls", 2, "sha256:other").unwrap(),
        Activation::New
    );
    assert_eq!(
        activation([&v1], "hiring", 1, "sha256:other").unwrap(),
        Activation::New
    );
    assert_eq!(
        activation(std::iter::empty(), "polls", 1, "x").unwrap(),
        Activation::New
    );
    let conflict = activation([&v1], "polls", 1, "sha256:other").unwrap_err();
    let error = PlatformError::from(conflict);
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("VERSION_CONFLICT", 409)
    );
    assert!(error.message.contains("polls/1"), "{}", error.message);
}

#[tokio::test]
async fn an_activated_version_is_immutable() {
    let directory = MemoryDirectory::new();
    let workspace = Workspace {
        workspace_id: "acme".into(),
        name: "Acme".into(),
        created_at: 0,
    };
    directory
        .apply(
            DirectoryChange::CreateWorkspace {
                workspace,
                owner: "ada".into(),
            },
            None,
        )
        .await
        .unwrap();
    let activate = |v| DirectoryChange::ActivateProgram { version: v };
    let package = polls();
    assert_eq!(
        directory
            .apply(activate(active(Some("acme"), &package)), None)
            .await
            .unwrap(),
        Applied::Applied
    );
    // Re-activating the same content, even written differently, is a no-op.
    let rewritten: Value =
        serde_json::from_str(&serde_json::to_string_pretty(&package).unwrap()).unwrap();
    assert_eq!(
        directory
            .apply(activate(active(Some("acme"), &rewritten)), None)
            .await
            .unwrap(),
        Applied::Unchanged
    );
    // Other content under polls/1 is refused; the active version is unchanged.
    let mut changed = package.clone();
    changed["description"] = json!("Changed.");
    let error = directory
        .apply(activate(active(Some("acme"), &changed)), None)
        .await
        .unwrap_err();
    assert!(
        matches!(error, DirectoryError::VersionConflict { ref namespace, version: 1 } if namespace == "polls")
    );
    let stored = directory
        .program("acme", "polls", 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.package, package);
    // As a new version it is fine, and both stay listed.
    changed["version"] = json!(2);
    directory
        .apply(activate(active(Some("acme"), &changed)), None)
        .await
        .unwrap();
    let versions = directory
        .program_versions("acme", Some("polls"))
        .await
        .unwrap();
    assert_eq!(
        versions.iter().map(|v| v.version).collect::<Vec<_>>(),
        [1, 2]
    );
}

#[test]
fn the_bundled_examples_are_valid_and_listed() {
    let examples = example_packages();
    assert_eq!(
        examples.len(),
        EXAMPLE_PACKAGES.len(),
        "every bundled package passes the validator"
    );
    let listed: Vec<(&str, &str, u64)> = examples
        .iter()
        .map(|e| (e.name, e.namespace.as_str(), e.version))
        .collect();
    assert_eq!(listed, [("polls", "polls", 1), ("hiring", "hiring", 2)]);
    for example in examples {
        assert_eq!(example.digest, package_digest(&example.package).unwrap());
    }
}

#[test]
fn the_bundled_examples_are_the_projects_examples() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/programs");
    if !folder.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs in the workspace: {} is missing",
            folder.display()
        );
        println!(
            "skipped: {} is absent (the crate is built on its own)",
            folder.display()
        );
        return;
    }
    for (name, text) in EXAMPLE_PACKAGES {
        let original = std::fs::read_to_string(folder.join(format!("{name}.json"))).unwrap();
        assert_eq!(
            text, original,
            "packages/{name}.json differs from examples/programs/{name}.json: copy it again"
        );
    }
}

#[test]
fn record_and_directory_errors_become_platform_errors() {
    let issue = ValidationIssue::new("/data/question", "required", "missing");
    let error = PlatformError::from(RecordError::SchemaViolation {
        message: "bad data".into(),
        issues: vec![issue.clone()],
    });
    assert_eq!(
        (error.code, error.status.as_u16(), error.message.as_str()),
        ("SCHEMA_VIOLATION", 422, "bad data")
    );
    assert_eq!(error.issues, [issue]);
    let error = PlatformError::from(RecordError::NotFound);
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("RECORD_NOT_FOUND", 404)
    );
    let error = PlatformError::from(RecordError::StaleRevision {
        expected: 1,
        actual: 2,
    });
    assert_eq!((error.code, error.status.as_u16()), ("STALE_REVISION", 409));
    assert!(error.message.contains("expected 1"));
    let error = PlatformError::from(DirectoryError::LastOwner);
    assert_eq!((error.code, error.status.as_u16()), ("LAST_OWNER", 409));
    let wire =
        serde_json::to_value(PlatformError::from(DirectoryError::WorkspaceNotFound)).unwrap();
    assert_eq!(
        wire,
        json!({"code": "WORKSPACE_NOT_FOUND", "status": 404, "message": "workspace not found"})
    );
}
