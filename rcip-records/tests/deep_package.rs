//! Regression: a deep in-memory package, record data, command input or rule value is
//! refused, not walked into a stack overflow.
#![allow(clippy::unwrap_used)]

use rcip_core::depth::{dismantle, nested_arrays as nested};
use rcip_records::{
    Actor, Caller, CreateRecord, Engine, ExecuteCommand, ListCommands, RecordError, UpdateRecord,
};
use rcip_relationship::{
    MAX_PACKAGE_DEPTH, ProblemCode, RuleRoots, Scope, parse_package, parse_rule, validate_package,
};
use rcip_test_support::on_small_stack;
use serde_json::{Map, Value, json};

/// `{"a": {"b": … value}}` along `path`, built by moving (`json!` would serialize an
/// interpolated value, recursively).
fn at(path: &[&str], value: Value) -> Value {
    path.iter().rev().fold(value, |inner, name| {
        let mut map = serde_json::Map::new();
        map.insert((*name).to_owned(), inner);
        Value::Object(map)
    })
}

fn codes(package: &Value) -> Vec<ProblemCode> {
    match validate_package(package) {
        Ok(_) => Vec::new(),
        Err(error) => error.problems.iter().map(|p| p.code).collect(),
    }
}

#[test]
fn a_deep_type_schema_is_refused() {
    on_small_stack(|| {
        let package = at(&["types", "note", "schema"], nested(100_000));
        assert_eq!(codes(&package), [ProblemCode::PackageTooDeep]);
        dismantle(package);
    });
}

#[test]
fn a_deep_command_input_is_refused() {
    on_small_stack(|| {
        let package = at(&["commands", "close", "input"], nested(100_000));
        assert_eq!(codes(&package), [ProblemCode::PackageTooDeep]);
        dismantle(package);
    });
}

#[test]
fn a_package_at_the_limit_is_walked() {
    // The root object is one level: within the limit the usual checks run instead.
    let package = at(&["x"], nested(MAX_PACKAGE_DEPTH - 1));
    assert!(!codes(&package).contains(&ProblemCode::PackageTooDeep));
    let package = at(&["x"], nested(MAX_PACKAGE_DEPTH));
    assert_eq!(codes(&package), [ProblemCode::PackageTooDeep]);
    assert_eq!(ProblemCode::PackageTooDeep.as_str(), "PACKAGE_TOO_DEEP");
}

fn polls() -> Engine<rcip_records::MemoryStore> {
    let path = format!(
        "{}/../examples/programs/polls.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let package = parse_package(&std::fs::read_to_string(path).unwrap()).unwrap();
    Engine::in_memory().with_program(package).unwrap()
}

/// Runs an engine call to its end on this thread (the in-memory store answers at once).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

fn args<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).unwrap()
}

/// `{"question": deep}`: a field of the poll schema, holding a value 100,000 deep.
fn deep_fields() -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("question".to_owned(), nested(100_000));
    map
}

fn assert_too_deep(result: Result<impl std::fmt::Debug, RecordError>) {
    let error = result.expect_err("too deep");
    assert_eq!(error.code(), "INVALID_ARGUMENTS");
    assert!(error.to_string().contains("nests more than 128"), "{error}");
}

#[test]
fn record_data_100_000_deep_is_refused() {
    on_small_stack(|| {
        let engine = polls();
        let mut create: CreateRecord = args(json!({
            "workspace_id": "w", "collection_id": "c", "namespace": "polls", "type": "poll",
            "data": {}, "idempotency_key": "k1"}));
        create.data = deep_fields();
        // The engine takes the arguments apart itself: nothing deep is left to drop.
        assert_too_deep(block_on(
            engine.create(&Caller::human(Actor::new("ada")), create),
        ));
    });
}

#[test]
fn a_deep_update_command_input_or_preview_is_refused() {
    on_small_stack(|| {
        let engine = polls();
        let actor = Caller::human(Actor::new("ada"));
        let poll = block_on(engine.create(
            &actor,
            args(
                json!({"workspace_id": "w", "collection_id": "c", "namespace": "polls",
                    "type": "poll", "data": {"question": "Q", "options": ["a", "b"],
                    "vote_count": 0}, "idempotency_key": "k1"}),
            ),
        ))
        .unwrap();
        let mut update: UpdateRecord = args(json!({"workspace_id": "w", "record_id": poll.id,
            "expected_revision": 1, "idempotency_key": "k2", "patch": {"set": {}}}));
        update.patch.set = deep_fields();
        assert_too_deep(block_on(engine.update(&actor, update)));
        let mut execute: ExecuteCommand = args(json!({"workspace_id": "w",
            "record_id": poll.id, "command": "close", "expected_revision": 1,
            "idempotency_key": "k3", "input": {}}));
        execute.input = deep_fields();
        assert_too_deep(block_on(engine.execute(&actor, execute)));
        let mut list: ListCommands =
            args(json!({"workspace_id": "w", "record_id": poll.id, "input": {}}));
        list.input = Some(deep_fields());
        assert_too_deep(block_on(engine.list_commands(&actor, list)));
    });
}

#[test]
fn record_data_at_the_limit_reaches_the_schema() {
    // The map is one level: 127 arrays in a field is the most, and the schema judges it.
    let engine = polls();
    for (depth, code) in [
        (MAX_PACKAGE_DEPTH - 1, "SCHEMA_VIOLATION"),
        (MAX_PACKAGE_DEPTH, "INVALID_ARGUMENTS"),
    ] {
        let mut create: CreateRecord = args(json!({
            "workspace_id": "w", "collection_id": "c", "namespace": "polls", "type": "poll",
            "data": {}, "idempotency_key": format!("k{depth}")}));
        create.data.insert("question".to_owned(), nested(depth));
        let error = block_on(engine.create(&Caller::human(Actor::new("ada")), create)).unwrap_err();
        assert_eq!(error.code(), code);
    }
}

#[test]
fn a_rule_evaluating_to_a_deep_value_is_absent() {
    on_small_stack(|| {
        let rule = parse_rule(&json!({"path": "data.deep"}), RuleRoots::VIEW).unwrap();
        let mut data = Map::new();
        data.insert("deep".to_owned(), nested(100_000));
        let data = Value::Object(data);
        let scope = Scope {
            data: Some(&data),
            input: None,
            state: None,
        };
        // A copy of it would recurse; comparing it stops at the evaluator's depth.
        assert_eq!(rule.evaluate(&scope), None);
        assert!(!rule.passes(&scope));
        let equal = parse_rule(
            &json!({"eq": [{"path": "data.deep"}, {"path": "data.deep"}]}),
            RuleRoots::VIEW,
        )
        .unwrap();
        assert!(!equal.passes(&scope));
        dismantle(data);
        // A shallow one is copied as before.
        let data = json!({"deep": [[1]]});
        let scope = Scope {
            data: Some(&data),
            input: None,
            state: None,
        };
        assert_eq!(rule.evaluate(&scope), Some(json!([[1]])));
    });
}

#[test]
fn parse_rule_refuses_a_rule_100_000_deep() {
    // Already safe: the rule walker counts its depth and stops at `MAX_RULE_DEPTH`.
    const DEPTH: usize = 100_000;
    on_small_stack(|| {
        // Nested operators, and a deep constant operand.
        let mut rule = json!(true);
        for _ in 0..DEPTH {
            rule = Value::Object(Map::from_iter([("not".to_owned(), rule)]));
        }
        let error = parse_rule(&rule, RuleRoots::VIEW).unwrap_err();
        assert!(
            error
                .problems
                .iter()
                .any(|p| p.code == ProblemCode::RuleTooDeep),
            "{:?}",
            error.problems.iter().map(|p| p.code).collect::<Vec<_>>()
        );
        dismantle(rule);
        let rule = Value::Object(Map::from_iter([(
            "eq".to_owned(),
            Value::Array(vec![json!({"path": "data.x"}), nested(DEPTH)]),
        )]));
        let error = parse_rule(&rule, RuleRoots::VIEW).unwrap_err();
        assert!(!error.problems.is_empty());
        dismantle(rule);
    });
}
