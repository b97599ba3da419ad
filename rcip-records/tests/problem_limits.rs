//! Every list an input can grow stops at its limit and says that it stopped.
#![allow(clippy::unwrap_used)]

use rcip_records::{Actor, Caller, CreateRecord, Engine, RecordError};
use rcip_relationship::{MAX_PACKAGE_PROBLEMS, ProblemCode, parse_package, validate_package};
use rcip_runtime::{MAX_VALIDATION_ISSUES, TRUNCATED_KEYWORD};
use serde_json::{Map, Value, json};

/// A package with `count` types, each with a bad name and a bad value: two problems apiece.
fn many_bad_types(count: usize) -> Value {
    let types: Map<String, Value> = (0..count).map(|i| (format!("Bad{i}"), json!(i))).collect();
    json!({"protocol": "relationship/v1", "namespace": "polls", "version": 1, "types": types})
}

#[test]
fn a_package_with_100_000_bad_types_lists_the_first_problems_and_a_marker() {
    let error = validate_package(&many_bad_types(100_000)).unwrap_err();
    assert_eq!(error.problems.len(), MAX_PACKAGE_PROBLEMS + 1);
    let last = error.problems.last().unwrap();
    assert_eq!(last.code, ProblemCode::TooManyProblems);
    assert_eq!(last.code.as_str(), "TOO_MANY_PROBLEMS");
    assert_eq!(last.pointer, "");
    assert!(
        error.problems[..MAX_PACKAGE_PROBLEMS]
            .iter()
            .all(|p| p.code != ProblemCode::TooManyProblems)
    );
    // Small: the report of 200,000 problems is a hundred lines.
    assert!(
        error.to_string().len() < 20_000,
        "{}",
        error.to_string().len()
    );
}

#[test]
fn a_schema_with_100_000_unknown_keywords_is_cut_too() {
    let mut schema: Map<String, Value> = (0..100_000)
        .map(|i| (format!("x-{i}"), json!(true)))
        .collect();
    schema.insert("type".to_owned(), json!("object"));
    let package = json!({"protocol": "relationship/v1", "namespace": "polls", "version": 1,
        "types": {"poll": {"kind": "entity", "schema": schema}}});
    let error = validate_package(&package).unwrap_err();
    assert_eq!(error.problems.len(), MAX_PACKAGE_PROBLEMS + 1);
    assert_eq!(
        error.problems.last().unwrap().code,
        ProblemCode::TooManyProblems
    );
}

#[test]
fn exactly_the_limit_has_no_marker() {
    // 50 types of two problems each: 100, all listed.
    let error = validate_package(&many_bad_types(MAX_PACKAGE_PROBLEMS / 2)).unwrap_err();
    assert_eq!(error.problems.len(), MAX_PACKAGE_PROBLEMS);
    assert!(
        error
            .problems
            .iter()
            .all(|p| p.code != ProblemCode::TooManyProblems)
    );
    // One more is cut.
    let error = validate_package(&many_bad_types(MAX_PACKAGE_PROBLEMS / 2 + 1)).unwrap_err();
    assert_eq!(error.problems.len(), MAX_PACKAGE_PROBLEMS + 1);
}

#[tokio::test]
async fn a_relationship_with_100_000_unknown_roles_lists_the_first_issues_and_a_marker() {
    let path = format!(
        "{}/../examples/programs/polls.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let package = parse_package(&std::fs::read_to_string(path).unwrap()).unwrap();
    let engine = Engine::in_memory().with_program(package).unwrap();
    let mut create: CreateRecord = serde_json::from_value(json!({
        "workspace_id": "w", "collection_id": "c", "namespace": "polls", "type": "ballot",
        "data": {"choice": 1}, "idempotency_key": "k1"}))
    .unwrap();
    for i in 0..100_000 {
        create.roles.insert(format!("role{i}"), Vec::new());
    }
    // And a known role with far more participants than its `max` of 1: only the first is
    // looked up.
    let ids = (0..100_000u128).map(uuid::Uuid::from_u128).collect();
    create.roles.insert("poll".to_owned(), ids);
    let error = engine
        .create(&Caller::human(Actor::new("ada")), create)
        .await
        .unwrap_err();
    let RecordError::SchemaViolation { issues, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(issues.len(), MAX_VALIDATION_ISSUES + 1);
    assert_eq!(issues.last().unwrap().keyword, TRUNCATED_KEYWORD);
    assert!(serde_json::to_string(issues).unwrap().len() < 20_000);
}
