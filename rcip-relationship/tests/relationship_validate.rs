//! Tests of the `relationship/v1` package validator: one test per rule of the form.
//!
//! Every test starts from the same small valid package ([`base`]), breaks exactly one rule and
//! asserts the exact list of `(pointer, code)` pairs the validator reports.

#![allow(clippy::unwrap_used)]

mod common;

use common::{at, pairs};
use rcip_relationship::{
    DEFAULT_MAX_ITEMS, DEFAULT_MAX_LENGTH, Kind, MAX_EMITS, MAX_NAME_BYTES, MAX_PACKAGE_BYTES,
    MAX_PACKAGE_PROBLEMS, MAX_PATH_COMPONENTS, MAX_ROLE_PARTICIPANTS, MAX_RULE_DEPTH,
    MAX_RULE_OPERANDS, MAX_SCHEMA_DEPTH, MAX_STATES, Package, ProblemCode as Code, parse_package,
    validate_package,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

const POLL: &str = "/types/poll";
const POLL_SCHEMA: &str = "/types/poll/schema";
const QUESTION: &str = "/types/poll/schema/properties/question";
const LIFECYCLE: &str = "/types/poll/lifecycle";
const CLOSE: &str = "/types/poll/commands/close";
const BALLOT: &str = "/types/ballot";
const POLL_ROLE: &str = "/types/ballot/roles/poll";
const VIEW: &str = "/views/open_polls";

/// The valid package every test breaks: an entity with a lifecycle and a command, a
/// relationship with two roles, and a view.
fn base() -> Value {
    json!({
        "protocol": "relationship/v1",
        "namespace": "polls",
        "version": 1,
        "types": {
            "ballot": {
                "kind": "relationship",
                "schema": {
                    "type": "object",
                    "properties": {"choice": {"type": "integer", "minimum": 0}},
                    "required": ["choice"],
                    "additionalProperties": false
                },
                "roles": {
                    "poll": {"min": 1, "max": 1, "types": ["polls/poll"]},
                    "voter": {"min": 1, "max": 1, "types": ["people/person"]}
                }
            },
            "poll": {
                "kind": "entity",
                "schema": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "maxLength": 200},
                        "reason": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "votes": {"type": "integer", "minimum": 0}
                    },
                    "required": ["question"],
                    "additionalProperties": false
                },
                "lifecycle": {"initial": "open", "states": ["open", "closed"]},
                "commands": {
                    "close": {
                        "input": {
                            "type": "object",
                            "properties": {"reason": {"type": "string", "maxLength": 500}},
                            "required": [],
                            "additionalProperties": false
                        },
                        "guard": {"gt": [{"path": "data.votes"}, 0]},
                        "from": ["open"],
                        "to": "closed",
                        "set_data": {"reason": {"path": "input.reason"}},
                        "emit": [{"kind": "work.requested", "task": "notify_voters"}]
                    }
                }
            }
        },
        "views": {
            "open_polls": {
                "type": "poll",
                "where": {"eq": [{"path": "state"}, "open"]},
                "fields": ["question"]
            }
        }
    })
}

/// A minimal valid entity type, to add under a new name.
fn entity() -> Value {
    json!({
        "kind": "entity",
        "schema": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}
    })
}

/// A minimal valid command, to add under a new name.
fn command() -> Value {
    json!({
        "input": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}
    })
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Sets the value at `pointer`, adding the last key to its object (or `-` to its array).
fn set(package: &mut Value, pointer: &str, value: Value) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let parent = package
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no parent {parent:?} for {pointer:?}"));
    match parent {
        Value::Object(map) => {
            map.insert(unescape(last), value);
        }
        Value::Array(items) if last == "-" => items.push(value),
        Value::Array(items) => items[last.parse::<usize>().unwrap()] = value,
        other => panic!("cannot set {pointer:?} in {other}"),
    }
}

/// Removes the key at `pointer`.
fn remove(package: &mut Value, pointer: &str) {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let removed = package
        .pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .and_then(|map| map.remove(&unescape(last)));
    assert!(removed.is_some(), "nothing to remove at {pointer:?}");
}

/// The base package with `value` at `pointer`.
fn with(pointer: &str, value: Value) -> Value {
    let mut package = base();
    set(&mut package, pointer, value);
    package
}

/// The base package without the key at `pointer`.
fn without(pointer: &str) -> Value {
    let mut package = base();
    remove(&mut package, pointer);
    package
}

fn problems(package: &Value) -> Vec<(String, Code)> {
    match validate_package(package) {
        Ok(_) => Vec::new(),
        Err(error) => pairs(&error),
    }
}

fn text_problems(text: &str) -> Vec<(String, Code)> {
    match parse_package(text) {
        Ok(_) => Vec::new(),
        Err(error) => pairs(&error),
    }
}

/// Asserts that the package has exactly these problems, in this order.
#[track_caller]
fn assert_problems(package: &Value, expected: &[(&str, Code)]) {
    let expected: Vec<(String, Code)> = expected.iter().map(|(p, c)| at(p, *c)).collect();
    assert_eq!(problems(package), expected, "package: {package:#}");
}

/// Asserts that the package has exactly one problem.
#[track_caller]
fn assert_only(package: &Value, pointer: &str, code: Code) {
    assert_problems(package, &[(pointer, code)]);
}

#[track_caller]
fn assert_valid(package: &Value) -> Package {
    match validate_package(package) {
        Ok(package) => package,
        Err(error) => panic!("expected a valid package, got:\n{error}\npackage: {package:#}"),
    }
}

/// The one message reported for `package`.
#[track_caller]
fn only_message(package: &Value) -> String {
    let error = validate_package(package).expect_err("expected a problem");
    assert_eq!(error.problems.len(), 1, "{error}");
    error.problems[0].message.clone()
}

fn name(first: char, bytes: usize) -> String {
    let mut name = String::from(first);
    name.push_str(&"a".repeat(bytes - 1));
    name
}

// ---------------------------------------------------------------- valid packages

#[test]
fn base_package_is_valid() {
    let package = assert_valid(&base());
    assert_eq!(package.namespace, "polls");
    assert_eq!(package.version, 1);
    let names: Vec<&str> = package.types.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["ballot", "poll"]);
    let poll = package.type_def("poll").unwrap();
    assert_eq!(poll.kind, Kind::Entity);
    let close = poll.command("close").unwrap();
    assert_eq!(close.from.as_ref(), ["open"]);
    assert_eq!(close.to.as_deref(), Some("closed"));
    assert_eq!(close.emit.len(), 1);
    assert_eq!(close.emit[0].task, "notify_voters");
    assert_eq!(close.set_data.len(), 1);
    assert!(close.guard.is_some());
    let ballot = package.type_def("ballot").unwrap();
    assert_eq!(ballot.kind, Kind::Relationship);
    assert_eq!(ballot.role("voter").unwrap().types[0].namespace, "people");
    assert_eq!(
        package.view("open_polls").unwrap().fields.as_ref(),
        ["question"]
    );
}

#[test]
fn example_polls_package_is_valid() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/programs/polls.json"
    ));
    let package = parse_package(text)
        .map_err(|e| e.in_file("programs/polls.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(package.namespace, "polls");
    assert!(package.type_def("poll").unwrap().command("close").is_some());
    assert!(package.view("open_polls").is_some());
}

#[test]
fn example_hiring_package_is_valid() {
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/programs/hiring.json"
    ));
    let package = parse_package(text)
        .map_err(|e| e.in_file("programs/hiring.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(package.namespace, "hiring");
    assert_eq!(package.version, 2);
    let application = package.type_def("application").unwrap();
    assert_eq!(application.kind, Kind::Relationship);
    assert_eq!(application.roles.len(), 3);
    assert!(package.view("shortlist").is_some());
}

// ---------------------------------------------------------------- text, size, hostile input

#[test]
fn text_that_is_not_json_is_invalid_json() {
    assert_eq!(
        text_problems("{\"protocol\": "),
        [at("", Code::InvalidJson)]
    );
    assert_eq!(text_problems("not json"), [at("", Code::InvalidJson)]);
    assert_eq!(text_problems(""), [at("", Code::InvalidJson)]);
}

#[test]
fn a_valid_package_as_text_parses() {
    let package = parse_package(&base().to_string()).unwrap();
    assert_eq!(package.namespace, "polls");
}

#[test]
fn a_package_over_max_package_bytes_is_package_too_large() {
    let mut text = base().to_string();
    text.push_str(&" ".repeat(MAX_PACKAGE_BYTES + 1 - text.len()));
    assert_eq!(text.len(), MAX_PACKAGE_BYTES + 1);
    assert_eq!(text_problems(&text), [at("", Code::PackageTooLarge)]);
}

#[test]
fn a_package_of_exactly_max_package_bytes_is_read() {
    let mut text = base().to_string();
    text.push_str(&" ".repeat(MAX_PACKAGE_BYTES - text.len()));
    assert_eq!(text.len(), MAX_PACKAGE_BYTES);
    assert!(parse_package(&text).is_ok());
}

#[test]
fn deeply_nested_brackets_are_invalid_json_not_a_crash() {
    let open = "[".repeat(100_000);
    assert_eq!(text_problems(&open), [at("", Code::InvalidJson)]);
    let balanced = format!("{open}{}", "]".repeat(100_000));
    assert_eq!(text_problems(&balanced), [at("", Code::InvalidJson)]);
    let objects = "{\"a\":".repeat(100_000);
    assert_eq!(text_problems(&objects), [at("", Code::InvalidJson)]);
}

#[test]
fn deeply_nested_values_inside_a_package_are_reported_not_a_crash() {
    // As deep as the JSON parser allows, in a schema and in a rule.
    let deep = |levels: usize, open: &str, close: &str, inner: &str| {
        format!("{}{inner}{}", open.repeat(levels), close.repeat(levels))
    };
    let schema = deep(
        50,
        r#"{"type":"object","properties":{"x":"#,
        "}}",
        r#"{"type":"null"}"#,
    );
    let rule = deep(100, r#"{"not":"#, "}", "true");
    let mut package = base();
    set(
        &mut package,
        "/types/ballot/schema/properties/choice",
        json!("SCHEMA"),
    );
    set(&mut package, &format!("{CLOSE}/guard"), json!("RULE"));
    let text = package
        .to_string()
        .replacen(r#""SCHEMA""#, &schema, 1)
        .replacen(r#""RULE""#, &rule, 1);
    let codes: Vec<Code> = text_problems(&text).into_iter().map(|(_, c)| c).collect();
    assert!(codes.contains(&Code::SchemaTooDeep), "{codes:?}");
    assert!(codes.contains(&Code::RuleTooDeep), "{codes:?}");
}

#[test]
fn a_package_that_is_not_an_object_is_wrong_type() {
    assert_only(&json!([]), "", Code::WrongType);
    assert_only(&json!("relationship/v1"), "", Code::WrongType);
}

/// Many unknown fields against many declared properties: the report stays proportionate to
/// the input (a message does not list every declared property).
#[test]
fn a_hostile_package_gives_a_proportionate_report() {
    let mut package = base();
    let properties = package
        .pointer_mut("/types/poll/schema/properties")
        .and_then(Value::as_object_mut)
        .unwrap();
    for i in 0..2_000 {
        properties.insert(format!("p{i}"), json!({"type": "null"}));
    }
    let fields: Vec<String> = (0..2_000).map(|i| format!("x{i}")).collect();
    set(&mut package, &format!("{VIEW}/fields"), json!(fields));
    let error = validate_package(&package).unwrap_err();
    // The first `MAX_PACKAGE_PROBLEMS` of the 2,000, then the marker.
    assert_eq!(error.problems.len(), MAX_PACKAGE_PROBLEMS + 1);
    let (last, listed) = error.problems.split_last().unwrap();
    assert!(listed.iter().all(|p| p.code == Code::UnknownField));
    assert_eq!(last.code, Code::TooManyProblems);
    let longest = error.problems.iter().map(|p| p.message.len()).max();
    assert!(longest < Some(300), "a message of {longest:?} bytes");
    assert_eq!(
        error.problems[0].message,
        "field \"x0\" is not declared by the type's schema (declared: p0, p1, p10, p100, \
         p1000, p1001, p1002, p1003, p1004, p1005, p1006, p1007, p1008, p1009, p101, p1010, \
         p1011, p1012, p1013, p1014, ... (1984 more))"
    );
}

/// Long lists are checked in reasonable time (no quadratic duplicate checks).
#[test]
fn long_lists_are_checked_quickly() {
    let many: Vec<String> = (0..100_000).map(|i| format!("s{i}")).collect();
    let mut package = base();
    let properties: serde_json::Map<String, Value> = many
        .iter()
        .map(|name| (name.clone(), json!({"type": "null"})))
        .collect();
    set(
        &mut package,
        "/types/ballot/schema/properties",
        Value::Object(properties),
    );
    set(&mut package, "/types/ballot/schema/required", json!([]));
    set(
        &mut package,
        "/views/ballots",
        json!({"type": "ballot", "fields": many}),
    );
    set(&mut package, &format!("{LIFECYCLE}/states"), json!(many));
    // With the long lists that are all wrong too.
    let mut hostile = package.clone();
    set(&mut hostile, &format!("{CLOSE}/from"), json!(many));
    set(&mut hostile, &format!("{VIEW}/fields"), json!(many));
    set(
        &mut hostile,
        &format!("{POLL_SCHEMA}/required"),
        json!(many),
    );
    let started = std::time::Instant::now();
    let error = validate_package(&hostile).unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    // Far more than are listed.
    assert_eq!(error.problems.len(), MAX_PACKAGE_PROBLEMS + 1);
    assert_eq!(error.problems.last().unwrap().code, Code::TooManyProblems);
    // Without them, the states are too many, and the view of 100 000 declared fields is fine.
    let error = validate_package(&package).unwrap_err();
    assert!(
        error
            .problems
            .iter()
            .any(|p| p.pointer == format!("{LIFECYCLE}/states") && p.code == Code::TooMany)
    );
    assert!(
        !error
            .problems
            .iter()
            .any(|p| p.pointer.starts_with("/views/ballots"))
    );
}

// ---------------------------------------------------------------- package level

#[test]
fn protocol_must_be_relationship_v1() {
    assert_only(
        &with("/protocol", json!("relationship/v2")),
        "/protocol",
        Code::WrongProtocol,
    );
    assert_only(
        &with("/protocol", json!(1)),
        "/protocol",
        Code::WrongProtocol,
    );
    assert_eq!(
        only_message(&with("/protocol", json!("rcip/1"))),
        r#"expected "relationship/v1", found "rcip/1""#
    );
}

#[test]
fn package_requires_protocol_namespace_version_and_types() {
    for key in ["protocol", "namespace", "version"] {
        assert_only(&without(&format!("/{key}")), "", Code::MissingKey);
    }
    // Without types, the view's type is not declared either.
    assert_problems(
        &without("/types"),
        &[
            ("", Code::MissingKey),
            ("/views/open_polls/type", Code::UnknownType),
        ],
    );
    let mut package = without("/types");
    remove(&mut package, "/views");
    assert_only(&package, "", Code::MissingKey);
    assert_eq!(
        only_message(&without("/namespace")),
        r#"a package needs "namespace""#
    );
}

#[test]
fn package_description_and_views_are_optional() {
    assert_valid(&without("/views"));
    assert_valid(&with("/description", json!("Polls.")));
}

#[test]
fn unknown_package_key_is_refused() {
    assert_only(&with("/author", json!("me")), "/author", Code::UnknownKey);
}

#[test]
fn package_description_must_be_a_string() {
    assert_only(
        &with("/description", json!(1)),
        "/description",
        Code::WrongType,
    );
}

#[test]
fn namespace_must_be_a_valid_name() {
    for bad in [
        "Polls", "2polls", "_polls", "polls-x", "polls.x", "", "pölls",
    ] {
        assert_only(
            &with("/namespace", json!(bad)),
            "/namespace",
            Code::InvalidName,
        );
    }
    assert_only(&with("/namespace", json!(7)), "/namespace", Code::WrongType);
}

#[test]
fn namespace_must_have_an_identifier_form() {
    assert_only(
        &with("/namespace", json!("my__polls")),
        "/namespace",
        Code::UnmappableName,
    );
    assert_only(
        &with("/namespace", json!("polls_")),
        "/namespace",
        Code::UnmappableName,
    );
    assert_valid(&with("/namespace", json!("my_polls_2")));
}

#[test]
fn version_must_be_a_positive_integer() {
    for bad in [json!(0), json!(-1), json!(1.5), json!("1"), json!(null)] {
        assert_only(&with("/version", bad), "/version", Code::InvalidVersion);
    }
    assert_eq!(
        assert_valid(&with("/version", json!(u64::MAX))).version,
        u64::MAX
    );
}

#[test]
fn types_must_be_a_non_empty_object() {
    let mut package = without("/views");
    set(&mut package, "/types", json!({}));
    assert_only(&package, "/types", Code::Empty);
    set(&mut package, "/types", json!([]));
    assert_only(&package, "/types", Code::WrongType);
    // A view of a type that is not declared is reported as well.
    assert_problems(
        &with("/types", json!({})),
        &[
            ("/types", Code::Empty),
            ("/views/open_polls/type", Code::UnknownType),
        ],
    );
}

// ---------------------------------------------------------------- names

/// Where each kind of name lives in the base package, and the package with `name` there.
fn named_everywhere(name: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    out.push(("/namespace".to_owned(), with("/namespace", json!(name))));
    let type_at = format!("/types/{name}");
    out.push((type_at.clone(), with(&type_at, entity())));
    let command_at = format!("{POLL}/commands/{name}");
    out.push((command_at.clone(), with(&command_at, command())));
    let role_at = format!("{BALLOT}/roles/{name}");
    out.push((
        role_at.clone(),
        with(
            &role_at,
            json!({"min": 0, "max": 1, "types": ["people/person"]}),
        ),
    ));
    let view_at = format!("/views/{name}");
    out.push((
        view_at.clone(),
        with(&view_at, json!({"type": "poll", "fields": ["question"]})),
    ));
    out.push((
        format!("{LIFECYCLE}/states/2"),
        with(&format!("{LIFECYCLE}/states/-"), json!(name)),
    ));
    out.push((
        format!("{CLOSE}/emit/0/task"),
        with(&format!("{CLOSE}/emit/0/task"), json!(name)),
    ));
    out
}

#[test]
fn names_of_64_bytes_are_accepted() {
    let name = name('n', MAX_NAME_BYTES);
    assert_eq!(name.len(), 64);
    for (pointer, package) in named_everywhere(&name) {
        assert_eq!(problems(&package), [], "a 64-byte name at {pointer}");
    }
}

#[test]
fn names_of_65_bytes_are_invalid_names() {
    let name = name('n', MAX_NAME_BYTES + 1);
    for (pointer, package) in named_everywhere(&name) {
        assert_eq!(problems(&package), [at(&pointer, Code::InvalidName)]);
    }
}

#[test]
fn names_outside_the_grammar_are_invalid_everywhere() {
    for (pointer, package) in named_everywhere("Bad") {
        assert_eq!(problems(&package), [at(&pointer, Code::InvalidName)]);
    }
    assert_eq!(
        only_message(&with("/types/Bad", entity())),
        r#"invalid type name "Bad": expected [a-z][a-z0-9_]*, at most 64 bytes"#
    );
}

#[test]
fn invalid_name_pointers_are_escaped() {
    assert_only(
        &with("/types/a~1b", entity()),
        "/types/a~1b",
        Code::InvalidName,
    );
    assert_only(
        &with("/types/a~0b", entity()),
        "/types/a~0b",
        Code::InvalidName,
    );
}

#[test]
fn type_names_must_have_an_identifier_form() {
    assert_only(
        &with("/types/my__poll", entity()),
        "/types/my__poll",
        Code::UnmappableName,
    );
    assert_only(
        &with("/types/poll_", entity()),
        "/types/poll_",
        Code::UnmappableName,
    );
}

#[test]
fn command_names_must_have_an_identifier_form() {
    let at = format!("{POLL}/commands/close__now");
    assert_only(&with(&at, command()), &at, Code::UnmappableName);
    let at = format!("{POLL}/commands/close_");
    assert_only(&with(&at, command()), &at, Code::UnmappableName);
}

#[test]
fn names_with_double_underscore_are_fine_where_nothing_is_generated() {
    // Roles, tasks and states are not mapped to capability ids.
    let mut package = base();
    set(
        &mut package,
        &format!("{BALLOT}/roles/co__voter"),
        json!({"min": 0, "max": 1, "types": ["people/person"]}),
    );
    set(
        &mut package,
        &format!("{CLOSE}/emit/0/task"),
        json!("notify__"),
    );
    assert_valid(&package);
}

#[test]
fn view_names_need_an_identifier_form_and_may_not_collide() {
    let view = json!({"type": "poll", "fields": ["question"]});
    assert_only(
        &with("/views/all__polls", view.clone()),
        "/views/all__polls",
        Code::UnmappableName,
    );
    let mut package = base();
    set(&mut package, "/views/open2", view.clone());
    set(&mut package, "/views/open_2", view);
    assert_only(&package, "/views/open_2", Code::NameCollision);
}

#[test]
fn commands_may_not_take_the_name_of_a_record_operation() {
    for name in rcip_relationship::TYPE_OPERATIONS {
        let at = format!("{POLL}/commands/{name}");
        assert_only(&with(&at, command()), &at, Code::ReservedName);
    }
    let at = format!("{POLL}/commands/create");
    let problems = validate_package(&with(&at, command()))
        .unwrap_err()
        .problems;
    assert_eq!(
        problems[0].message,
        "a command may not be called \"create\": every type has a `create` capability \
         (reserved: get, search, commands, create, update, archive)"
    );
}

#[test]
fn no_view_may_take_the_feeds_name() {
    let view = json!({"type": "poll", "fields": ["question"]});
    assert_only(
        &with("/views/changes", view),
        "/views/changes",
        Code::ReservedName,
    );
}

#[test]
fn type_names_with_the_same_camel_form_collide() {
    let mut package = base();
    set(&mut package, "/types/poll2", entity());
    set(&mut package, "/types/poll_2", entity());
    assert_only(&package, "/types/poll_2", Code::NameCollision);
    let message = validate_package(&package).unwrap_err().problems[0]
        .message
        .clone();
    assert_eq!(
        message,
        r#"type "poll_2" and type "poll2" both become `poll2`"#
    );
}

#[test]
fn command_names_with_the_same_camel_form_collide() {
    let mut package = base();
    set(&mut package, &format!("{POLL}/commands/close2"), command());
    set(&mut package, &format!("{POLL}/commands/close_2"), command());
    assert_only(
        &package,
        &format!("{POLL}/commands/close_2"),
        Code::NameCollision,
    );
}

#[test]
fn commands_of_different_types_may_share_a_name() {
    let mut package = base();
    set(
        &mut package,
        &format!("{BALLOT}/commands"),
        json!({"close": command()}),
    );
    assert_valid(&package);
}

#[test]
fn state_names_with_the_same_pascal_form_collide() {
    let states = format!("{LIFECYCLE}/states");
    assert_only(
        &with(&states, json!(["open", "closed", "open_2", "open2"])),
        &format!("{states}/3"),
        Code::NameCollision,
    );
    assert_only(
        &with(&states, json!(["open", "closed", "closed_"])),
        &format!("{states}/2"),
        Code::NameCollision,
    );
}

// ---------------------------------------------------------------- types, kinds, roles

#[test]
fn unknown_keys_are_refused_at_every_level() {
    for parent in [
        "",
        POLL,
        POLL_ROLE,
        LIFECYCLE,
        CLOSE,
        &format!("{CLOSE}/emit/0"),
        VIEW,
    ] {
        let pointer = format!("{parent}/extra");
        assert_only(&with(&pointer, json!(1)), &pointer, Code::UnknownKey);
    }
    assert_eq!(
        only_message(&with(&format!("{VIEW}/filter"), json!(true))),
        r#"unknown key "filter" in a view (allowed: type, where, fields)"#
    );
}

#[test]
fn required_keys_are_required_at_every_level() {
    for (parent, key) in [
        (POLL, "kind"),
        (POLL, "schema"),
        (POLL_ROLE, "min"),
        (POLL_ROLE, "max"),
        (POLL_ROLE, "types"),
        (LIFECYCLE, "initial"),
        (LIFECYCLE, "states"),
        (CLOSE, "input"),
        (&format!("{CLOSE}/emit/0"), "kind"),
        (&format!("{CLOSE}/emit/0"), "task"),
        (VIEW, "type"),
        (VIEW, "fields"),
    ] {
        assert_only(
            &without(&format!("{parent}/{key}")),
            parent,
            Code::MissingKey,
        );
    }
}

#[test]
fn optional_keys_may_be_left_out() {
    for pointer in [
        format!("{POLL}/lifecycle"),
        format!("{POLL}/commands"),
        format!("{CLOSE}/guard"),
        format!("{CLOSE}/set_data"),
        format!("{CLOSE}/emit"),
        format!("{VIEW}/where"),
    ] {
        let mut package = without(&pointer);
        if pointer.ends_with("/lifecycle") {
            remove(&mut package, &format!("{CLOSE}/from"));
            remove(&mut package, &format!("{CLOSE}/to"));
        }
        assert_valid(&package);
    }
}

#[test]
fn kind_is_entity_or_relationship() {
    assert_only(
        &with(&format!("{POLL}/kind"), json!("thing")),
        &format!("{POLL}/kind"),
        Code::InvalidKind,
    );
    assert_only(
        &with(&format!("{POLL}/kind"), json!(1)),
        &format!("{POLL}/kind"),
        Code::InvalidKind,
    );
}

#[test]
fn type_must_be_an_object() {
    assert_only(
        &with("/types/extra", json!("entity")),
        "/types/extra",
        Code::WrongType,
    );
}

#[test]
fn relationship_without_roles_key_is_roles_required() {
    assert_only(
        &without(&format!("{BALLOT}/roles")),
        BALLOT,
        Code::RolesRequired,
    );
}

#[test]
fn relationship_with_empty_roles_is_roles_required() {
    let roles = format!("{BALLOT}/roles");
    assert_only(&with(&roles, json!({})), &roles, Code::RolesRequired);
}

#[test]
fn entity_with_roles_is_roles_not_allowed() {
    let roles = format!("{POLL}/roles");
    let role = json!({"voter": {"min": 1, "max": 1, "types": ["people/person"]}});
    assert_only(&with(&roles, role), &roles, Code::RolesNotAllowed);
    assert_only(&with(&roles, json!({})), &roles, Code::RolesNotAllowed);
}

#[test]
fn role_min_is_a_non_negative_integer() {
    let min = format!("{POLL_ROLE}/min");
    assert_only(&with(&min, json!(-1)), &min, Code::RoleBounds);
    assert_only(&with(&min, json!(0.5)), &min, Code::RoleBounds);
    assert_only(&with(&min, json!("1")), &min, Code::RoleBounds);
    assert_valid(&with(&min, json!(0)));
}

#[test]
fn role_max_is_at_least_max_of_min_and_one() {
    let max = format!("{POLL_ROLE}/max");
    let bounds = |min: u64, max: u64| {
        let mut package = base();
        set(&mut package, &format!("{POLL_ROLE}/min"), json!(min));
        set(&mut package, &format!("{POLL_ROLE}/max"), json!(max));
        package
    };
    assert_only(&bounds(0, 0), &max, Code::RoleBounds);
    assert_only(&bounds(3, 2), &max, Code::RoleBounds);
    assert_valid(&bounds(0, 1));
    assert_valid(&bounds(2, 2));
    assert_eq!(
        only_message(&bounds(3, 2)),
        "max 2 must be at least max(min, 1) = 3 and at most 100"
    );
}

#[test]
fn role_max_is_at_most_100() {
    let bounds = |min: u64, max: u64| {
        let mut package = base();
        set(&mut package, &format!("{POLL_ROLE}/min"), json!(min));
        set(&mut package, &format!("{POLL_ROLE}/max"), json!(max));
        package
    };
    let package = assert_valid(&bounds(0, MAX_ROLE_PARTICIPANTS));
    assert_eq!(
        package
            .type_def("ballot")
            .unwrap()
            .role("poll")
            .unwrap()
            .max,
        100
    );
    assert_valid(&bounds(100, 100));
    let max = format!("{POLL_ROLE}/max");
    assert_only(
        &bounds(0, MAX_ROLE_PARTICIPANTS + 1),
        &max,
        Code::RoleBounds,
    );
    assert_only(&bounds(101, 101), &max, Code::RoleBounds);
    assert_only(&bounds(0, u64::MAX), &max, Code::RoleBounds);
}

#[test]
fn role_types_is_a_non_empty_list() {
    let types = format!("{POLL_ROLE}/types");
    assert_only(&with(&types, json!([])), &types, Code::Empty);
    assert_only(&with(&types, json!("polls/poll")), &types, Code::WrongType);
    assert_only(
        &with(&types, json!([1])),
        &format!("{types}/0"),
        Code::WrongType,
    );
}

#[test]
fn role_targets_are_namespace_slash_type() {
    let types = format!("{POLL_ROLE}/types");
    for bad in [
        "poll",
        "polls/",
        "/poll",
        "polls/Poll",
        "Polls/poll",
        "a/b/c",
        "",
    ] {
        assert_only(
            &with(&types, json!([bad])),
            &format!("{types}/0"),
            Code::InvalidTarget,
        );
    }
}

#[test]
fn role_targets_in_own_namespace_name_declared_types() {
    let types = format!("{POLL_ROLE}/types");
    assert_only(
        &with(&types, json!(["polls/pole"])),
        &format!("{types}/0"),
        Code::UnknownType,
    );
    assert_eq!(
        only_message(&with(&types, json!(["polls/pole"]))),
        r#"type "pole" is not declared in this package (declared: ballot, poll)"#
    );
    // Other namespaces are not checked here.
    assert_valid(&with(&types, json!(["people/pole"])));
}

#[test]
fn role_targets_are_not_listed_twice() {
    let types = format!("{POLL_ROLE}/types");
    assert_only(
        &with(&types, json!(["polls/poll", "polls/poll"])),
        &format!("{types}/1"),
        Code::Duplicate,
    );
}

#[test]
fn role_target_cycles_are_allowed() {
    let mut package = base();
    // A ballot may point at ballots, and two relationships at each other.
    set(
        &mut package,
        &format!("{POLL_ROLE}/types"),
        json!(["polls/poll", "polls/ballot", "polls/link"]),
    );
    let mut link = entity();
    link["kind"] = json!("relationship");
    link["roles"] = json!({"ballot": {"min": 1, "max": 1, "types": ["polls/ballot"]}});
    set(&mut package, "/types/link", link);
    assert_valid(&package);
}

// ---------------------------------------------------------------- lifecycle

#[test]
fn lifecycle_states_is_non_empty() {
    let states = format!("{LIFECYCLE}/states");
    assert_only(&with(&states, json!([])), &states, Code::Empty);
}

#[test]
fn lifecycle_states_are_unique() {
    let states = format!("{LIFECYCLE}/states");
    assert_only(
        &with(&states, json!(["open", "closed", "open"])),
        &format!("{states}/2"),
        Code::Duplicate,
    );
}

#[test]
fn lifecycle_states_are_names() {
    let states = format!("{LIFECYCLE}/states");
    assert_only(
        &with(&states, json!(["open", "closed", "Done"])),
        &format!("{states}/2"),
        Code::InvalidName,
    );
    assert_only(
        &with(&states, json!(["open", "closed", 3])),
        &format!("{states}/2"),
        Code::WrongType,
    );
    assert_only(&with(&states, json!("open")), &states, Code::WrongType);
}

fn states(count: usize) -> Vec<String> {
    let mut states = vec!["open".to_owned(), "closed".to_owned()];
    states.extend((2..count).map(|i| format!("s{i}")));
    states
}

#[test]
fn lifecycle_may_declare_32_states() {
    let package = assert_valid(&with(
        &format!("{LIFECYCLE}/states"),
        json!(states(MAX_STATES)),
    ));
    assert_eq!(
        package
            .type_def("poll")
            .unwrap()
            .lifecycle
            .as_ref()
            .unwrap()
            .states
            .len(),
        32
    );
}

#[test]
fn lifecycle_with_33_states_is_too_many() {
    let states_at = format!("{LIFECYCLE}/states");
    assert_only(
        &with(&states_at, json!(states(MAX_STATES + 1))),
        &states_at,
        Code::TooMany,
    );
}

#[test]
fn lifecycle_initial_is_a_declared_state() {
    let initial = format!("{LIFECYCLE}/initial");
    assert_only(
        &with(&initial, json!("draft")),
        &initial,
        Code::UnknownState,
    );
    assert_eq!(
        only_message(&with(&initial, json!("draft"))),
        r#"unknown state "draft" (declared: open, closed)"#
    );
    assert_only(&with(&initial, json!(1)), &initial, Code::WrongType);
}

#[test]
fn lifecycle_must_be_an_object() {
    // Without a lifecycle, the command's from/to are not checked again.
    assert_only(
        &with(LIFECYCLE, json!(["open"])),
        LIFECYCLE,
        Code::WrongType,
    );
}

#[test]
fn lifecycle_keeps_the_package_order_of_states() {
    let package = assert_valid(&with(
        &format!("{LIFECYCLE}/states"),
        json!(["open", "closed", "archived"]),
    ));
    let lifecycle = package.type_def("poll").unwrap().lifecycle.clone().unwrap();
    assert_eq!(lifecycle.states.as_ref(), ["open", "closed", "archived"]);
    assert_eq!(lifecycle.initial, "open");
}

// ---------------------------------------------------------------- commands

#[test]
fn command_to_names_a_declared_state() {
    let to = format!("{CLOSE}/to");
    assert_only(&with(&to, json!("archived")), &to, Code::UnknownState);
    let error = validate_package(&with(&to, json!("archived")))
        .unwrap_err()
        .in_file("programs/polls.json");
    assert_eq!(
        error.to_string(),
        r#"programs/polls.json: /types/poll/commands/close/to: unknown state "archived" (declared: open, closed)"#
    );
    assert_only(&with(&to, json!(["closed"])), &to, Code::WrongType);
}

#[test]
fn command_from_names_declared_states() {
    let from = format!("{CLOSE}/from");
    assert_only(
        &with(&from, json!(["open", "archived"])),
        &format!("{from}/1"),
        Code::UnknownState,
    );
}

#[test]
fn command_from_is_a_non_empty_list_of_unique_names() {
    let from = format!("{CLOSE}/from");
    assert_only(&with(&from, json!([])), &from, Code::Empty);
    assert_only(&with(&from, json!("open")), &from, Code::WrongType);
    assert_only(
        &with(&from, json!(["open", "open"])),
        &format!("{from}/1"),
        Code::Duplicate,
    );
    assert_only(
        &with(&from, json!(["Open"])),
        &format!("{from}/0"),
        Code::InvalidName,
    );
}

#[test]
fn command_from_needs_a_lifecycle() {
    let mut package = without(LIFECYCLE);
    remove(&mut package, &format!("{CLOSE}/to"));
    assert_only(&package, &format!("{CLOSE}/from"), Code::LifecycleRequired);
}

#[test]
fn command_to_needs_a_lifecycle() {
    let mut package = without(LIFECYCLE);
    remove(&mut package, &format!("{CLOSE}/from"));
    assert_only(&package, &format!("{CLOSE}/to"), Code::LifecycleRequired);
}

#[test]
fn command_without_from_runs_in_any_state() {
    let package = assert_valid(&without(&format!("{CLOSE}/from")));
    assert!(
        package
            .type_def("poll")
            .unwrap()
            .command("close")
            .unwrap()
            .from
            .is_empty()
    );
}

#[test]
fn command_must_be_an_object() {
    let at = format!("{POLL}/commands/open");
    assert_only(&with(&at, json!(true)), &at, Code::WrongType);
    let commands = format!("{POLL}/commands");
    assert_only(&with(&commands, json!([])), &commands, Code::WrongType);
}

#[test]
fn command_description_must_be_a_string() {
    let at = format!("{CLOSE}/description");
    assert_only(&with(&at, json!(["x"])), &at, Code::WrongType);
}

#[test]
fn set_data_keys_are_declared_properties() {
    let set_data = format!("{CLOSE}/set_data");
    assert_only(
        &with(&format!("{set_data}/closed_by"), json!("me")),
        &format!("{set_data}/closed_by"),
        Code::UnknownField,
    );
    assert_eq!(
        only_message(&with(&format!("{set_data}/closed_by"), json!("me"))),
        r#"field "closed_by" is not declared by the type's schema (declared: question, reason, tags, votes)"#
    );
    // The pointer of an odd key is escaped.
    assert_only(
        &with(&format!("{set_data}/a~1b"), json!(1)),
        &format!("{set_data}/a~1b"),
        Code::UnknownField,
    );
    assert_only(&with(&set_data, json!([])), &set_data, Code::WrongType);
}

#[test]
fn set_data_values_are_expressions() {
    let set_data = format!("{CLOSE}/set_data");
    let mut package = base();
    set(
        &mut package,
        &format!("{set_data}/votes"),
        json!({"path": "data.votes"}),
    );
    set(&mut package, &format!("{set_data}/tags"), json!(["a", "b"]));
    set(&mut package, &format!("{set_data}/question"), json!("Why?"));
    assert_eq!(
        assert_valid(&package)
            .type_def("poll")
            .unwrap()
            .command("close")
            .unwrap()
            .set_data
            .len(),
        4
    );
    let reason = format!("{set_data}/reason");
    assert_only(
        &with(&reason, json!({"value": 1})),
        &format!("{reason}/value"),
        Code::RuleOperator,
    );
    assert_only(
        &with(&reason, json!({"path": "input.nope"})),
        &format!("{reason}/path"),
        Code::UnknownField,
    );
}

#[test]
fn emit_may_have_10_entries() {
    let emit: Vec<Value> = (0..MAX_EMITS)
        .map(|i| json!({"kind": "work.requested", "task": format!("task{i}")}))
        .collect();
    let package = assert_valid(&with(&format!("{CLOSE}/emit"), json!(emit)));
    assert_eq!(
        package
            .type_def("poll")
            .unwrap()
            .command("close")
            .unwrap()
            .emit
            .len(),
        10
    );
}

#[test]
fn emit_with_11_entries_is_too_many() {
    let emit: Vec<Value> = (0..=MAX_EMITS)
        .map(|i| json!({"kind": "work.requested", "task": format!("task{i}")}))
        .collect();
    let at = format!("{CLOSE}/emit");
    assert_only(&with(&at, json!(emit)), &at, Code::TooMany);
}

#[test]
fn emit_kind_is_work_requested() {
    let kind = format!("{CLOSE}/emit/0/kind");
    assert_only(
        &with(&kind, json!("work.done")),
        &kind,
        Code::UnknownEmitKind,
    );
    assert_only(&with(&kind, json!(1)), &kind, Code::UnknownEmitKind);
}

#[test]
fn emit_task_is_a_name() {
    let task = format!("{CLOSE}/emit/0/task");
    assert_only(&with(&task, json!("Notify")), &task, Code::InvalidName);
    assert_only(&with(&task, json!(1)), &task, Code::WrongType);
}

#[test]
fn emit_entries_are_objects_in_a_list() {
    let emit = format!("{CLOSE}/emit");
    assert_only(
        &with(&format!("{emit}/0"), json!("notify")),
        &format!("{emit}/0"),
        Code::WrongType,
    );
    assert_only(
        &with(&emit, json!({"kind": "work.requested", "task": "x"})),
        &emit,
        Code::WrongType,
    );
}

#[test]
fn command_input_is_an_object_schema() {
    let input = format!("{CLOSE}/input");
    let mut package = with(&input, json!({"type": "string"}));
    remove(&mut package, &format!("{CLOSE}/set_data"));
    assert_only(&package, &input, Code::SchemaNotObject);
    assert_eq!(
        only_message(&package),
        r#"a command's input must be an object schema ("type": "object")"#
    );
}

#[test]
fn guard_paths_name_declared_fields() {
    let guard = format!("{CLOSE}/guard");
    assert_only(
        &with(&guard, json!({"present": "data.closed_by"})),
        &format!("{guard}/present"),
        Code::UnknownField,
    );
    assert_only(
        &with(&guard, json!({"present": "input.closed_by"})),
        &format!("{guard}/present"),
        Code::UnknownField,
    );
    assert_eq!(
        only_message(&with(&guard, json!({"present": "input.closed_by"}))),
        r#"field "closed_by" is not declared by the command's input schema (declared: reason)"#
    );
    // Only the first component after the root is checked; `data` alone is the whole record.
    assert_valid(&with(&guard, json!({"present": "data.tags.0.anything"})));
    assert_valid(&with(&guard, json!({"present": "data"})));
}

// ---------------------------------------------------------------- rules in a package

#[test]
fn expression_with_no_or_two_operators_is_rule_operator() {
    let guard = format!("{CLOSE}/guard");
    assert_only(&with(&guard, json!({})), &guard, Code::RuleOperator);
    assert_only(
        &with(&guard, json!({"present": "data.votes", "not": true})),
        &guard,
        Code::RuleOperator,
    );
    assert_only(
        &with(&guard, json!({"xor": [true, false]})),
        &format!("{guard}/xor"),
        Code::RuleOperator,
    );
}

#[test]
fn comparisons_take_exactly_two_operands() {
    let guard = format!("{CLOSE}/guard");
    for op in ["eq", "ne", "gt", "gte", "lt", "lte"] {
        let at = format!("{guard}/{op}");
        assert_only(&with(&guard, json!({op: [1]})), &at, Code::RuleArity);
        assert_only(&with(&guard, json!({op: [1, 2, 3]})), &at, Code::RuleArity);
        assert_only(&with(&guard, json!({op: 1})), &at, Code::WrongType);
        assert_valid(&with(&guard, json!({op: [{"path": "data.votes"}, 1]})));
    }
}

#[test]
fn all_and_any_take_1_to_30_expressions() {
    let guard = format!("{CLOSE}/guard");
    for op in ["all", "any"] {
        let at = format!("{guard}/{op}");
        assert_valid(&with(&guard, json!({op: [true]})));
        assert_valid(&with(&guard, json!({op: vec![true; MAX_RULE_OPERANDS]})));
        assert_only(
            &with(&guard, json!({op: vec![true; MAX_RULE_OPERANDS + 1]})),
            &at,
            Code::RuleArity,
        );
        assert_only(&with(&guard, json!({op: []})), &at, Code::RuleArity);
        assert_only(&with(&guard, json!({op: true})), &at, Code::WrongType);
    }
}

#[test]
fn not_takes_one_expression() {
    let guard = format!("{CLOSE}/guard");
    assert_valid(&with(&guard, json!({"not": {"present": "data.votes"}})));
    // A list is a constant array, and objects are never constants.
    assert_only(
        &with(&guard, json!({"not": [{"present": "data.votes"}]})),
        &format!("{guard}/not/0"),
        Code::RuleObjectConstant,
    );
}

#[test]
fn path_and_present_take_a_dotted_path_string() {
    let guard = format!("{CLOSE}/guard");
    for op in ["path", "present"] {
        let at = format!("{guard}/{op}");
        assert_only(
            &with(&guard, json!({op: ["data", "votes"]})),
            &at,
            Code::WrongType,
        );
        for bad in [
            "votes",
            "record.votes",
            "",
            "data.",
            ".data",
            "data..votes",
            "state.name",
            "Data.votes",
        ] {
            assert_only(&with(&guard, json!({op: bad})), &at, Code::RulePath);
        }
    }
}

#[test]
fn paths_have_at_most_8_components() {
    let guard = format!("{CLOSE}/guard");
    let eight = "data.tags.0.b.c.d.e.f";
    assert_eq!(eight.split('.').count(), MAX_PATH_COMPONENTS);
    assert_valid(&with(&guard, json!({"present": eight})));
    let nine = format!("{eight}.g");
    assert_only(
        &with(&guard, json!({"present": nine})),
        &format!("{guard}/present"),
        Code::RulePath,
    );
    assert_eq!(
        only_message(&with(&guard, json!({"present": nine}))),
        r#"invalid path "data.tags.0.b.c.d.e.f.g": at most 8 components, found 9"#
    );
}

/// `levels` expressions nested with `not`, the innermost one a constant.
fn nested_nots(levels: usize) -> Value {
    let mut expr = json!(false);
    for _ in 1..levels {
        expr = json!({"not": expr});
    }
    expr
}

#[test]
fn rules_may_nest_10_levels() {
    let guard = format!("{CLOSE}/guard");
    assert_valid(&with(&guard, nested_nots(MAX_RULE_DEPTH)));
    // Ten levels through all/any as well: nine of them around `present`.
    let mut expr = json!({"present": "data.votes"});
    for i in 0..9 {
        expr = if i % 2 == 0 {
            json!({"all": [expr]})
        } else {
            json!({"any": [true, expr]})
        };
    }
    assert_valid(&with(&guard, expr));
}

#[test]
fn rules_nested_11_levels_are_too_deep() {
    let guard = format!("{CLOSE}/guard");
    let deepest = format!("{guard}{}", "/not".repeat(MAX_RULE_DEPTH));
    assert_only(
        &with(&guard, nested_nots(MAX_RULE_DEPTH + 1)),
        &deepest,
        Code::RuleTooDeep,
    );
    let mut expr = json!({"present": "data.votes"}); // level 11
    for _ in 0..10 {
        expr = json!({"all": [expr]});
    }
    let deepest = format!("{guard}{}", "/all/0".repeat(10));
    assert_only(&with(&guard, expr), &deepest, Code::RuleTooDeep);
}

#[test]
fn constant_arrays_count_towards_rule_depth() {
    let guard = format!("{CLOSE}/guard");
    // eq is level 1 and its operands level 2: nine arrays reach level 10, ten level 11.
    let nested = |levels: usize| {
        let mut value = json!(1);
        for _ in 0..levels {
            value = json!([value]);
        }
        value
    };
    assert_valid(&with(
        &guard,
        json!({"eq": [{"path": "data.tags"}, nested(9)]}),
    ));
    let deepest = format!("{guard}/eq/1{}", "/0".repeat(9));
    assert_only(
        &with(&guard, json!({"eq": [{"path": "data.tags"}, nested(10)]})),
        &deepest,
        Code::RuleTooDeep,
    );
}

#[test]
fn objects_are_never_constants() {
    let guard = format!("{CLOSE}/guard");
    assert_only(
        &with(
            &guard,
            json!({"eq": [{"path": "data.tags"}, ["a", {"b": 1}]]}),
        ),
        &format!("{guard}/eq/1/1"),
        Code::RuleObjectConstant,
    );
    // A bare object is read as an expression, never as a constant.
    assert_only(
        &with(&guard, json!({"eq": [{"path": "data.votes"}, {"b": 1}]})),
        &format!("{guard}/eq/1/b"),
        Code::RuleOperator,
    );
}

#[test]
fn scalar_and_array_constants_are_expressions() {
    let guard = format!("{CLOSE}/guard");
    for constant in [
        json!(true),
        json!(null),
        json!(1),
        json!(-1.5),
        json!("x"),
        json!([1, "a", [null]]),
    ] {
        assert_valid(&with(&guard, constant));
    }
}

// ---------------------------------------------------------------- views

#[test]
fn view_type_names_a_declared_type() {
    let type_at = format!("{VIEW}/type");
    assert_only(&with(&type_at, json!("pole")), &type_at, Code::UnknownType);
    assert_eq!(
        only_message(&with(&type_at, json!("pole"))),
        r#"type "pole" is not declared in this package (declared: ballot, poll)"#
    );
    assert_only(&with(&type_at, json!(["poll"])), &type_at, Code::WrongType);
}

#[test]
fn view_fields_are_declared_properties() {
    let fields = format!("{VIEW}/fields");
    assert_only(
        &with(&fields, json!(["question", "owner"])),
        &format!("{fields}/1"),
        Code::UnknownField,
    );
    assert_only(&with(&fields, json!([])), &fields, Code::Empty);
    assert_only(
        &with(&fields, json!(["question", "question"])),
        &format!("{fields}/1"),
        Code::Duplicate,
    );
    assert_only(
        &with(&fields, json!([1])),
        &format!("{fields}/0"),
        Code::WrongType,
    );
    assert_only(&with(&fields, json!("question")), &fields, Code::WrongType);
}

#[test]
fn view_where_may_use_data_and_state_paths() {
    let filter =
        json!({"all": [{"eq": [{"path": "state"}, "open"]}, {"gt": [{"path": "data.votes"}, 0]}]});
    let package = assert_valid(&with(&format!("{VIEW}/where"), filter));
    assert!(package.view("open_polls").unwrap().filter.is_some());
}

#[test]
fn view_where_may_not_use_input_paths() {
    let filter = format!("{VIEW}/where");
    assert_only(
        &with(&filter, json!({"eq": [{"path": "input.reason"}, "x"]})),
        &format!("{filter}/eq/0/path"),
        Code::RuleRoot,
    );
    assert_only(
        &with(&filter, json!({"present": "input"})),
        &format!("{filter}/present"),
        Code::RuleRoot,
    );
}

#[test]
fn view_where_paths_name_declared_fields() {
    let filter = format!("{VIEW}/where");
    assert_only(
        &with(&filter, json!({"present": "data.owner"})),
        &format!("{filter}/present"),
        Code::UnknownField,
    );
}

#[test]
fn views_must_be_objects() {
    assert_only(&with("/views", json!([])), "/views", Code::WrongType);
    assert_only(&with(VIEW, json!("poll")), VIEW, Code::WrongType);
}

// ---------------------------------------------------------------- schema subset

#[test]
fn schema_keywords_outside_the_subset_are_refused() {
    for keyword in [
        "pattern",
        "$schema",
        "$ref",
        "oneOf",
        "default",
        "const",
        "exclusiveMinimum",
        "title",
    ] {
        let at = format!("{QUESTION}/{keyword}");
        assert_only(&with(&at, json!("x")), &at, Code::SchemaKeyword);
    }
}

#[test]
fn schema_keyword_pointer_is_escaped() {
    let at = format!("{QUESTION}/a~1b");
    assert_only(&with(&at, json!(1)), &at, Code::SchemaKeyword);
}

#[test]
fn schema_declares_one_known_type() {
    let type_at = format!("{QUESTION}/type");
    assert_only(
        &with(&type_at, json!(["string", "null"])),
        &type_at,
        Code::SchemaType,
    );
    assert_only(&with(&type_at, json!("date")), &type_at, Code::SchemaType);
    assert_only(&with(&type_at, json!(1)), &type_at, Code::SchemaType);
    assert_only(&without(&type_at), QUESTION, Code::SchemaType);
}

#[test]
fn every_type_of_the_subset_is_accepted() {
    let mut package = base();
    for (name, schema) in [
        ("a", json!({"type": "string"})),
        ("b", json!({"type": "integer"})),
        ("c", json!({"type": "number"})),
        ("d", json!({"type": "boolean"})),
        ("e", json!({"type": "null"})),
        ("f", json!({"type": "array", "items": {"type": "integer"}})),
        (
            "g",
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
        ),
    ] {
        set(
            &mut package,
            &format!("{POLL_SCHEMA}/properties/{name}"),
            schema,
        );
    }
    assert_valid(&package);
}

#[test]
fn schema_keywords_apply_to_their_type_only() {
    let votes = format!("{POLL_SCHEMA}/properties/votes");
    for (keyword, value) in [
        ("minLength", json!(1)),
        ("maxLength", json!(1)),
        ("format", json!("date-time")),
        ("items", json!({"type": "string"})),
        ("minItems", json!(1)),
        ("maxItems", json!(1)),
        ("properties", json!({})),
        ("required", json!([])),
        ("additionalProperties", json!(false)),
    ] {
        let at = format!("{votes}/{keyword}");
        assert_only(&with(&at, value), &at, Code::SchemaKeywordForType);
    }
    for keyword in ["minimum", "maximum"] {
        let at = format!("{QUESTION}/{keyword}");
        assert_only(&with(&at, json!(1)), &at, Code::SchemaKeywordForType);
    }
}

#[test]
fn enum_does_not_apply_to_objects_arrays_or_null() {
    let props = format!("{POLL_SCHEMA}/properties");
    for schema in [
        json!({"type": "null", "enum": [null]}),
        json!({"type": "array", "items": {"type": "string"}, "enum": [["a"]]}),
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false, "enum": [{}]}),
    ] {
        assert_only(
            &with(&format!("{props}/x"), schema),
            &format!("{props}/x/enum"),
            Code::SchemaKeywordForType,
        );
    }
}

#[test]
fn object_schemas_declare_properties() {
    assert_only(
        &without(&format!("{POLL_SCHEMA}/properties")),
        POLL_SCHEMA,
        Code::SchemaIncomplete,
    );
    let properties = format!("{POLL_SCHEMA}/properties");
    assert_only(&with(&properties, json!([])), &properties, Code::WrongType);
}

#[test]
fn object_schemas_declare_required() {
    assert_only(
        &without(&format!("{POLL_SCHEMA}/required")),
        POLL_SCHEMA,
        Code::SchemaIncomplete,
    );
    let required = format!("{POLL_SCHEMA}/required");
    assert_only(
        &with(&required, json!("question")),
        &required,
        Code::WrongType,
    );
    assert_only(
        &with(&required, json!([1])),
        &format!("{required}/0"),
        Code::WrongType,
    );
}

#[test]
fn object_schemas_declare_additional_properties_false() {
    let at = format!("{POLL_SCHEMA}/additionalProperties");
    assert_only(&without(&at), POLL_SCHEMA, Code::SchemaIncomplete);
    assert_only(&with(&at, json!(true)), &at, Code::SchemaIncomplete);
    assert_only(
        &with(&at, json!({"type": "string"})),
        &at,
        Code::SchemaIncomplete,
    );
}

#[test]
fn nested_object_schemas_are_complete_too() {
    let at = format!("{POLL_SCHEMA}/properties/meta");
    assert_problems(
        &with(&at, json!({"type": "object"})),
        &[
            (&at, Code::SchemaIncomplete),
            (&at, Code::SchemaIncomplete),
            (&at, Code::SchemaIncomplete),
        ],
    );
}

#[test]
fn required_names_are_declared_properties() {
    let required = format!("{POLL_SCHEMA}/required");
    assert_only(
        &with(&required, json!(["question", "owner"])),
        &format!("{required}/1"),
        Code::SchemaRequiredUndeclared,
    );
    assert_only(
        &with(&required, json!(["question", "question"])),
        &format!("{required}/1"),
        Code::Duplicate,
    );
}

#[test]
fn array_schemas_declare_items() {
    let tags = format!("{POLL_SCHEMA}/properties/tags");
    assert_only(
        &without(&format!("{tags}/items")),
        &tags,
        Code::SchemaIncomplete,
    );
    assert_only(
        &with(&format!("{tags}/items"), json!([{"type": "string"}])),
        &format!("{tags}/items"),
        Code::WrongType,
    );
}

#[test]
fn format_is_date_time_only() {
    let format = format!("{QUESTION}/format");
    assert_valid(&with(&format, json!("date-time")));
    for bad in [json!("email"), json!("date"), json!(1)] {
        assert_only(&with(&format, bad), &format, Code::SchemaFormat);
    }
}

#[test]
fn length_and_item_bounds_are_non_negative_integers() {
    let tags = format!("{POLL_SCHEMA}/properties/tags");
    for (at, value) in [
        (format!("{QUESTION}/minLength"), json!(-1)),
        (format!("{QUESTION}/maxLength"), json!(1.5)),
        (format!("{QUESTION}/maxLength"), json!("200")),
        (format!("{tags}/minItems"), json!(-1)),
        (format!("{tags}/maxItems"), json!(null)),
    ] {
        assert_only(&with(&at, value), &at, Code::SchemaBound);
    }
}

#[test]
fn lower_bounds_may_not_exceed_upper_bounds() {
    let tags = format!("{POLL_SCHEMA}/properties/tags");
    let votes = format!("{POLL_SCHEMA}/properties/votes");
    assert_only(
        &with(&format!("{QUESTION}/minLength"), json!(201)),
        &format!("{QUESTION}/minLength"),
        Code::SchemaBound,
    );
    assert_valid(&with(&format!("{QUESTION}/minLength"), json!(200)));
    let mut package = with(&format!("{tags}/minItems"), json!(3));
    set(&mut package, &format!("{tags}/maxItems"), json!(2));
    assert_only(&package, &format!("{tags}/minItems"), Code::SchemaBound);
    let mut package = with(&format!("{votes}/maximum"), json!(-1));
    assert_only(&package, &format!("{votes}/minimum"), Code::SchemaBound);
    set(&mut package, &format!("{votes}/maximum"), json!(0));
    assert_valid(&package);
}

#[test]
fn numeric_bounds_are_numbers() {
    let votes = format!("{POLL_SCHEMA}/properties/votes");
    assert_only(
        &with(&format!("{votes}/minimum"), json!("0")),
        &format!("{votes}/minimum"),
        Code::SchemaBound,
    );
    assert_valid(&with(&format!("{votes}/maximum"), json!(9.5)));
    assert_valid(&with(&format!("{votes}/minimum"), json!(-3)));
}

#[test]
fn min_length_above_the_default_max_length_is_schema_bound() {
    let reason = format!("{POLL_SCHEMA}/properties/reason");
    let at = format!("{reason}/minLength");
    assert_only(&with(&at, json!(5000)), &at, Code::SchemaBound);
    assert_eq!(
        only_message(&with(&at, json!(5000))),
        r#""minLength" 5000 is above "maxLength" 4000 (the default)"#
    );
    assert_valid(&with(&at, json!(DEFAULT_MAX_LENGTH)));
    let mut package = with(&at, json!(5000));
    set(&mut package, &format!("{reason}/maxLength"), json!(6000));
    assert_valid(&package);
}

#[test]
fn min_items_above_the_default_max_items_is_schema_bound() {
    let at = format!("{POLL_SCHEMA}/properties/tags/minItems");
    assert_only(&with(&at, json!(101)), &at, Code::SchemaBound);
    assert_valid(&with(&at, json!(DEFAULT_MAX_ITEMS)));
}

#[test]
fn enum_values_match_the_declared_type() {
    let props = format!("{POLL_SCHEMA}/properties");
    for (schema, bad_index) in [
        (json!({"type": "string", "enum": ["a", 1]}), 1),
        (json!({"type": "integer", "enum": [1, 1.5]}), 1),
        (json!({"type": "integer", "enum": ["1"]}), 0),
        (json!({"type": "number", "enum": [1.5, true]}), 1),
        (json!({"type": "boolean", "enum": [true, null]}), 1),
    ] {
        assert_only(
            &with(&format!("{props}/x"), schema),
            &format!("{props}/x/enum/{bad_index}"),
            Code::SchemaEnum,
        );
    }
    for schema in [
        json!({"type": "string", "enum": ["a", "b"]}),
        json!({"type": "integer", "enum": [1, -2, 3.0]}),
        json!({"type": "number", "enum": [1, 2.5]}),
        json!({"type": "boolean", "enum": [true]}),
    ] {
        assert_valid(&with(&format!("{props}/x"), schema));
    }
}

#[test]
fn enum_is_a_non_empty_array() {
    let at = format!("{QUESTION}/enum");
    assert_only(&with(&at, json!([])), &at, Code::SchemaEnum);
    assert_only(&with(&at, json!("a")), &at, Code::SchemaEnum);
}

#[test]
fn schema_description_is_a_string() {
    let at = format!("{QUESTION}/description");
    assert_valid(&with(&at, json!("What the poll asks.")));
    assert_only(&with(&at, json!(1)), &at, Code::WrongType);
}

#[test]
fn schemas_must_be_objects() {
    assert_only(
        &with(&format!("{POLL}/schema"), json!(true)),
        &format!("{POLL}/schema"),
        Code::WrongType,
    );
    assert_only(&with(QUESTION, json!("string")), QUESTION, Code::WrongType);
}

#[test]
fn type_schema_is_an_object_schema() {
    let mut package = base();
    set(
        &mut package,
        "/types/extra",
        json!({"kind": "entity", "schema": {"type": "string"}}),
    );
    assert_only(&package, "/types/extra/schema", Code::SchemaNotObject);
}

/// A schema nesting `levels` levels: objects down to a string.
fn nested_schema(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 1..levels {
        schema = json!({
            "type": "object",
            "properties": {"x": schema},
            "required": [],
            "additionalProperties": false
        });
    }
    schema
}

#[test]
fn schemas_may_nest_10_levels() {
    let mut package = base();
    set(
        &mut package,
        "/types/deep",
        json!({"kind": "entity", "schema": nested_schema(MAX_SCHEMA_DEPTH)}),
    );
    assert_valid(&package);
}

#[test]
fn schemas_nested_11_levels_are_too_deep() {
    let mut package = base();
    set(
        &mut package,
        "/types/deep",
        json!({"kind": "entity", "schema": nested_schema(MAX_SCHEMA_DEPTH + 1)}),
    );
    let deepest = format!(
        "/types/deep/schema{}",
        "/properties/x".repeat(MAX_SCHEMA_DEPTH)
    );
    assert_only(&package, &deepest, Code::SchemaTooDeep);
}

#[test]
fn array_items_count_towards_schema_depth() {
    // The type's schema is level 1, `grid` level 2, and `grid(n)` reaches level n + 1.
    let grid = |levels: usize| {
        let mut items = json!({"type": "string"});
        for _ in 1..levels {
            items = json!({"type": "array", "items": items});
        }
        items
    };
    let at = format!("{POLL_SCHEMA}/properties/grid");
    assert_valid(&with(&at, grid(MAX_SCHEMA_DEPTH - 1)));
    assert_only(
        &with(&at, grid(MAX_SCHEMA_DEPTH)),
        &format!("{at}{}", "/items".repeat(MAX_SCHEMA_DEPTH - 1)),
        Code::SchemaTooDeep,
    );
}

#[test]
fn input_schemas_follow_the_same_subset() {
    let reason = format!("{CLOSE}/input/properties/reason");
    assert_only(
        &with(&format!("{reason}/pattern"), json!("x")),
        &format!("{reason}/pattern"),
        Code::SchemaKeyword,
    );
    assert_only(
        &without(&format!("{CLOSE}/input/additionalProperties")),
        &format!("{CLOSE}/input"),
        Code::SchemaIncomplete,
    );
}

// ---------------------------------------------------------------- normalized schema

fn normalized(package: &Package, type_name: &str) -> Value {
    let json = &package.type_def(type_name).unwrap().schema.json;
    serde_json::from_str(json).unwrap()
}

#[test]
fn strings_without_max_length_get_4000() {
    let package = assert_valid(&base());
    let schema = normalized(&package, "poll");
    assert_eq!(
        schema.pointer("/properties/reason/maxLength"),
        Some(&json!(DEFAULT_MAX_LENGTH))
    );
    assert_eq!(
        schema.pointer("/properties/reason/maxLength"),
        Some(&json!(4000))
    );
    // Nested strings too.
    assert_eq!(
        schema.pointer("/properties/tags/items/maxLength"),
        Some(&json!(4000))
    );
    // A given bound is kept.
    assert_eq!(
        schema.pointer("/properties/question/maxLength"),
        Some(&json!(200))
    );
    // Nothing else is bounded.
    assert_eq!(schema.pointer("/properties/votes/maxLength"), None);
    assert_eq!(schema.pointer("/properties/reason/minLength"), None);
}

#[test]
fn arrays_without_max_items_get_100() {
    let mut package = base();
    set(
        &mut package,
        &format!("{POLL_SCHEMA}/properties/bounded"),
        json!({"type": "array", "items": {"type": "integer"}, "maxItems": 7}),
    );
    let package = assert_valid(&package);
    let schema = normalized(&package, "poll");
    assert_eq!(
        schema.pointer("/properties/tags/maxItems"),
        Some(&json!(DEFAULT_MAX_ITEMS))
    );
    assert_eq!(
        schema.pointer("/properties/tags/maxItems"),
        Some(&json!(100))
    );
    assert_eq!(
        schema.pointer("/properties/bounded/maxItems"),
        Some(&json!(7))
    );
    assert_eq!(schema.pointer("/properties/tags/minItems"), None);
    assert_eq!(schema.pointer("/maxItems"), None);
}

#[test]
fn normalized_schema_keeps_the_rest_of_the_schema() {
    let package = assert_valid(&base());
    let schema = normalized(&package, "poll");
    let mut expected = base().pointer(POLL_SCHEMA).unwrap().clone();
    set(&mut expected, "/properties/reason/maxLength", json!(4000));
    set(&mut expected, "/properties/tags/maxItems", json!(100));
    set(
        &mut expected,
        "/properties/tags/items/maxLength",
        json!(4000),
    );
    assert_eq!(schema, expected);
    let properties = &package.type_def("poll").unwrap().schema.properties;
    assert_eq!(properties.as_ref(), ["question", "reason", "tags", "votes"]);
}

#[test]
fn input_schemas_are_normalized_too() {
    let mut package = base();
    set(
        &mut package,
        &format!("{CLOSE}/input/properties/note"),
        json!({"type": "string"}),
    );
    let package = assert_valid(&package);
    let input: Value = serde_json::from_str(
        &package
            .type_def("poll")
            .unwrap()
            .command("close")
            .unwrap()
            .input
            .json,
    )
    .unwrap();
    assert_eq!(
        input.pointer("/properties/note/maxLength"),
        Some(&json!(4000))
    );
    assert_eq!(
        input.pointer("/properties/reason/maxLength"),
        Some(&json!(500))
    );
}

// ---------------------------------------------------------------- reporting

#[test]
fn independent_problems_are_all_reported_at_once() {
    let mut package = base();
    set(&mut package, "/protocol", json!("relationship/v2"));
    set(&mut package, "/version", json!(0));
    set(&mut package, &format!("{BALLOT}/kind"), json!("link"));
    set(
        &mut package,
        &format!("{BALLOT}/schema/properties/choice/pattern"),
        json!("^x"),
    );
    set(
        &mut package,
        &format!("{CLOSE}/guard"),
        json!({"present": "data.owner"}),
    );
    set(&mut package, &format!("{CLOSE}/to"), json!("archived"));
    set(
        &mut package,
        &format!("{CLOSE}/emit/0/kind"),
        json!("work.done"),
    );
    set(&mut package, &format!("{VIEW}/fields"), json!(["owner"]));
    assert_problems(
        &package,
        &[
            ("/protocol", Code::WrongProtocol),
            ("/version", Code::InvalidVersion),
            ("/types/ballot/kind", Code::InvalidKind),
            (
                "/types/ballot/schema/properties/choice/pattern",
                Code::SchemaKeyword,
            ),
            (
                "/types/poll/commands/close/guard/present",
                Code::UnknownField,
            ),
            ("/types/poll/commands/close/to", Code::UnknownState),
            (
                "/types/poll/commands/close/emit/0/kind",
                Code::UnknownEmitKind,
            ),
            ("/views/open_polls/fields/0", Code::UnknownField),
        ],
    );
}

#[test]
fn views_are_checked_even_when_their_type_has_other_problems() {
    let mut package = base();
    set(&mut package, &format!("{CLOSE}/to"), json!("archived"));
    set(
        &mut package,
        &format!("{VIEW}/where"),
        json!({"present": "data.owner"}),
    );
    set(&mut package, &format!("{VIEW}/fields"), json!(["owner"]));
    assert_problems(
        &package,
        &[
            ("/types/poll/commands/close/to", Code::UnknownState),
            ("/views/open_polls/where/present", Code::UnknownField),
            ("/views/open_polls/fields/0", Code::UnknownField),
        ],
    );
}

#[test]
fn views_of_a_type_with_a_broken_schema_are_not_checked_against_it() {
    let mut package = base();
    set(&mut package, &format!("{QUESTION}/pattern"), json!("^x"));
    set(&mut package, &format!("{VIEW}/fields"), json!(["owner"]));
    assert_only(
        &package,
        &format!("{QUESTION}/pattern"),
        Code::SchemaKeyword,
    );
}

#[test]
fn package_error_displays_one_line_per_problem() {
    let mut package = base();
    set(&mut package, "/protocol", json!("x"));
    set(&mut package, &format!("{CLOSE}/to"), json!("archived"));
    let error = validate_package(&package).unwrap_err();
    assert_eq!(
        error.to_string(),
        "/protocol: expected \"relationship/v1\", found \"x\"\n\
         /types/poll/commands/close/to: unknown state \"archived\" (declared: open, closed)"
    );
    assert_eq!(
        error.in_file("programs/polls.json").to_string(),
        "programs/polls.json: /protocol: expected \"relationship/v1\", found \"x\"\n\
         programs/polls.json: /types/poll/commands/close/to: unknown state \"archived\" (declared: open, closed)"
    );
}

#[test]
fn whole_document_problems_display_without_a_pointer() {
    let error = parse_package("[").unwrap_err().in_file("programs/x.json");
    let text = error.to_string();
    assert!(text.starts_with("programs/x.json: not JSON: "), "{text}");
}

#[test]
fn problem_codes_have_stable_spellings() {
    assert_eq!(Code::InvalidJson.as_str(), "INVALID_JSON");
    assert_eq!(
        Code::SchemaKeywordForType.to_string(),
        "SCHEMA_KEYWORD_FOR_TYPE"
    );
    for code in Code::ALL {
        let text = code.as_str();
        assert!(
            text.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
            "{text}"
        );
        assert_eq!(
            Code::ALL.iter().filter(|c| c.as_str() == text).count(),
            1,
            "{text}"
        );
    }
}

/// One broken package per code: together they cover every code the validator has.
#[test]
fn every_problem_code_is_emitted_by_some_package() {
    let texts = ["{".to_owned(), " ".repeat(MAX_PACKAGE_BYTES + 1)];
    let packages = [
        with("/protocol", json!(1)),
        with("/extra", json!(1)),
        without("/types"),
        with("/namespace", json!("Polls")),
        with("/namespace", json!("a__b")),
        {
            let mut p = with("/types/a1", entity());
            set(&mut p, "/types/a_1", entity());
            p
        },
        with("/version", json!(0)),
        with("/types", json!({})),
        with("/types", json!([])),
        with(
            &format!("{LIFECYCLE}/states"),
            json!(["open", "closed", "open"]),
        ),
        with(&format!("{LIFECYCLE}/states"), json!(states(33))),
        with(&format!("{POLL}/kind"), json!("x")),
        without(&format!("{BALLOT}/roles")),
        with(&format!("{POLL}/roles"), json!({})),
        with(&format!("{POLL_ROLE}/max"), json!(0)),
        with(&format!("{POLL_ROLE}/types"), json!(["x"])),
        with(&format!("{VIEW}/type"), json!("x")),
        with(&format!("{CLOSE}/to"), json!("x")),
        {
            let mut p = without(LIFECYCLE);
            remove(&mut p, &format!("{CLOSE}/to"));
            p
        },
        with(&format!("{VIEW}/fields"), json!(["x"])),
        with(&format!("{CLOSE}/emit/0/kind"), json!("x")),
        with(&format!("{QUESTION}/x"), json!(1)),
        with(&format!("{QUESTION}/type"), json!("x")),
        with(&format!("{QUESTION}/minimum"), json!(1)),
        without(&format!("{POLL_SCHEMA}/additionalProperties")),
        with(&format!("{POLL_SCHEMA}/required"), json!(["x"])),
        with(&format!("{QUESTION}/format"), json!("x")),
        with(&format!("{QUESTION}/minLength"), json!(-1)),
        with(&format!("{QUESTION}/enum"), json!([1])),
        with(
            &format!("{POLL_SCHEMA}/properties/deep"),
            nested_schema(MAX_SCHEMA_DEPTH),
        ),
        with(
            "/types/x",
            json!({"kind": "entity", "schema": {"type": "null"}}),
        ),
        with(&format!("{CLOSE}/guard"), json!({})),
        with(&format!("{CLOSE}/guard"), json!({"all": []})),
        with(&format!("{CLOSE}/guard"), json!({"path": "x"})),
        with(&format!("{VIEW}/where"), json!({"path": "input"})),
        with(&format!("{CLOSE}/guard"), json!([{}])),
        with(&format!("{CLOSE}/guard"), nested_nots(11)),
        with(&format!("{POLL}/commands/get"), command()),
        // Deeper than any text can be (serde_json stops at 128), so built as a value.
        with(
            &format!("{POLL_SCHEMA}/properties/question/description"),
            (0..200).fold(json!(0), |inner, _| json!([inner])),
        ),
        // More problems than are listed: 101 unknown keys.
        {
            let mut p = with("/x0", json!(1));
            for i in 1..=MAX_PACKAGE_PROBLEMS {
                set(&mut p, &format!("/x{i}"), json!(1));
            }
            p
        },
    ];
    let mut seen: Vec<Code> = texts
        .iter()
        .flat_map(|text| text_problems(text))
        .chain(packages.iter().flat_map(problems))
        .map(|(_, code)| code)
        .collect();
    // Packages checked together: one version with two contents.
    let together = [
        with("/description", json!("one")),
        with("/description", json!("two")),
    ]
    .map(|p| {
        (
            std::path::PathBuf::from("p.json"),
            parse_package(&p.to_string()).unwrap(),
        )
    });
    seen.extend(
        rcip_relationship::duplicate_namespaces(&together)
            .iter()
            .flat_map(pairs)
            .map(|(_, code)| code),
    );
    seen.sort_by_key(|c| c.as_str());
    seen.dedup();
    let missing: Vec<&str> = Code::ALL
        .iter()
        .filter(|c| !seen.contains(c))
        .map(|c| c.as_str())
        .collect();
    assert_eq!(missing, Vec::<&str>::new());
}
