//! The operation registry: the design's table, strict schemas, typed arguments that are the
//! engine's own types, refusals of unknown operations and arguments, and the generated RCIP
//! capabilities and tool names.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use rcip_platform::{
    Agents, MAX_ECHOED_NAME, PlatformCall, capability_definitions, operation, operations,
    parse_call, platform_definition, read_checked_call, tool_name,
};
use rcip_records::{
    ArchiveRecord, ChangesFeed, CreateRecord, DelegatedScope as S, ExecuteCommand, GetRecord,
    ListCommands, RecordHistory, SearchRecords, UpdateRecord,
};
use rcip_relationship::rcip_core::schema::check_strict;
use rcip_relationship::rcip_core::{Effect, validate_definition};
use rcip_runtime::{MAX_VALIDATION_ISSUES, TRUNCATED_KEYWORD};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

const RECORD: &str = "0191d3f4-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
const OTHER: &str = "0191d3f4-7a2b-7c3d-8e4f-5a6b7c8d9e10";

/// The design's table (docs/platform-design.md, "The operation registry").
const TABLE: &[(&str, Option<S>, Agents)] = &[
    ("capabilities.list", None, Agents::Allowed),
    ("workspace.list", None, Agents::Allowed),
    ("workspace.get", None, Agents::Allowed),
    ("workspace.create", None, Agents::ConsoleOnly),
    ("member.list", None, Agents::Allowed),
    (
        "member.add",
        Some(S::MembersManage),
        Agents::AgentMembersOnly,
    ),
    (
        "member.remove",
        Some(S::MembersManage),
        Agents::AgentMembersOnly,
    ),
    ("collection.list", None, Agents::Allowed),
    (
        "collection.create",
        Some(S::CollectionsManage),
        Agents::Allowed,
    ),
    (
        "collection.grant",
        Some(S::CollectionsManage),
        Agents::Allowed,
    ),
    (
        "collection.revoke",
        Some(S::CollectionsManage),
        Agents::Allowed,
    ),
    ("program.versions", None, Agents::Allowed),
    ("program.get", None, Agents::Allowed),
    ("examples.list", None, Agents::Allowed),
    ("program.draft", Some(S::ProgramsDraft), Agents::Allowed),
    (
        "program.activate",
        Some(S::ProgramsActivate),
        Agents::Allowed,
    ),
    ("record.get", Some(S::RecordsRead), Agents::Allowed),
    ("record.search", Some(S::RecordsRead), Agents::Allowed),
    ("record.history", Some(S::RecordsRead), Agents::Allowed),
    ("record.create", Some(S::RecordsWrite), Agents::Allowed),
    ("record.update", Some(S::RecordsWrite), Agents::Allowed),
    ("record.archive", Some(S::RecordsWrite), Agents::Allowed),
    ("command.list", Some(S::RecordsRead), Agents::Allowed),
    ("command.execute", Some(S::CommandsExecute), Agents::Allowed),
    ("changes.feed", Some(S::RecordsRead), Agents::Allowed),
];

#[test]
fn the_registry_is_the_designs_table() {
    let names: BTreeSet<&str> = operations().iter().map(|s| s.name).collect();
    let expected: BTreeSet<&str> = TABLE.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(names, expected);
    assert_eq!(operations().len(), TABLE.len(), "one row per operation");
    for (name, scope, agents) in TABLE {
        let spec = operation(name).unwrap();
        assert_eq!((spec.scope, spec.agents), (*scope, *agents), "{name}");
    }
}

fn properties(schema: &Value) -> &Map<String, Value> {
    schema["properties"].as_object().unwrap()
}

fn required(schema: &Value) -> BTreeSet<&str> {
    schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// Every object schema below `schema` declares `additionalProperties`: `false` with its
/// required names among its properties, a schema (a map), or `true` only where the program
/// validates the value later (`free`).
fn walk_objects(schema: &Value, path: &str, free: &[&str], found: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if object.get("type") == Some(&json!("object")) {
        match object.get("additionalProperties") {
            Some(Value::Bool(false)) => {
                let props = object["properties"].as_object().unwrap();
                for name in required(schema) {
                    assert!(
                        props.contains_key(name),
                        "{path}: required {name} is not a property"
                    );
                }
            }
            Some(Value::Bool(true)) => {
                assert!(
                    free.contains(&path),
                    "{path}: an open object where none is expected"
                );
            }
            Some(Value::Object(_)) => {}
            other => found.push(format!("{path}: additionalProperties {other:?}")),
        }
    }
    for (key, value) in object {
        match key.as_str() {
            "properties" => {
                for (name, sub) in value.as_object().unwrap() {
                    walk_objects(sub, &format!("{path}/{name}"), free, found);
                }
            }
            "items" | "additionalProperties" => {
                walk_objects(value, &format!("{path}/*"), free, found)
            }
            "anyOf" => {
                for sub in value.as_array().unwrap() {
                    walk_objects(sub, path, free, found);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn every_input_schema_is_strict() {
    // The values the program validates (data, input, a package) are the only open objects.
    let free = ["/data", "/input", "/patch/set", "/package"];
    for spec in operations() {
        let input = &spec.input;
        check_strict(input).unwrap_or_else(|v| panic!("{}: {v:?}", spec.name));
        assert_eq!(input["type"], "object", "{}", spec.name);
        assert_eq!(input["additionalProperties"], false, "{}", spec.name);
        let mut problems = Vec::new();
        walk_objects(input, "", &free, &mut problems);
        assert!(problems.is_empty(), "{}: {problems:?}", spec.name);
        let required = required(input);
        let props = properties(input);
        if spec.is_mutation() {
            assert!(
                required.contains("idempotency_key"),
                "{}: mutations take a key",
                spec.name
            );
        } else {
            assert!(!props.contains_key("idempotency_key"), "{}", spec.name);
        }
        if spec.in_workspace {
            assert!(required.contains("workspace_id"), "{}", spec.name);
        }
        // Lists page with limit 1..100 and a cursor.
        if spec.output["properties"].get("items").is_some() && spec.name != "examples.list" {
            assert_eq!(props["limit"]["minimum"], 1, "{}", spec.name);
            assert_eq!(props["limit"]["maximum"], 100, "{}", spec.name);
            assert_eq!(props["cursor"]["type"], "string", "{}", spec.name);
        }
    }
    for name in ["record.update", "record.archive", "command.execute"] {
        assert!(
            required(&operation(name).unwrap().input).contains("expected_revision"),
            "{name}"
        );
    }
}

#[test]
fn every_output_schema_is_an_object() {
    for spec in operations() {
        check_strict(&spec.output).unwrap_or_else(|v| panic!("{}: {v:?}", spec.name));
        assert_eq!(spec.output["type"], "object", "{}", spec.name);
    }
    assert_eq!(
        required(&operation("command.list").unwrap().output),
        ["commands"].into()
    );
    assert!(required(&operation("changes.feed").unwrap().output).contains("checkpoint"));
}

#[test]
fn effects_follow_what_operations_do() {
    for spec in operations() {
        let reads = spec.name.ends_with(".list")
            || spec.name.ends_with(".get")
            || [
                "record.search",
                "record.history",
                "changes.feed",
                "program.versions",
            ]
            .contains(&spec.name);
        assert_eq!(spec.effect == Effect::Read, reads, "{}", spec.name);
    }
    for name in ["record.archive", "member.remove", "collection.revoke"] {
        assert_eq!(
            operation(name).unwrap().effect,
            Effect::Destructive,
            "{name}"
        );
    }
}

/// Parses `arguments` for `name`, checks the typed call is `T` read by serde from the same
/// JSON (the engine's own type), and that nothing is lost on the way back.
fn same_as_serde<T>(name: &str, arguments: Value, pick: fn(PlatformCall) -> Option<T>)
where
    T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug,
{
    let (spec, call) = parse_call(name, &arguments).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(spec.name, name);
    let typed = pick(call).unwrap_or_else(|| panic!("{name}: wrong variant"));
    let direct: T = serde_json::from_value(arguments.clone()).unwrap();
    assert_eq!(typed, direct, "{name}");
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        arguments,
        "{name}: round trip"
    );
    // The example names every property of the schema, so each one is known to serde.
    let keys: BTreeSet<&String> = arguments.as_object().unwrap().keys().collect();
    let props: BTreeSet<&String> = properties(&spec.input).keys().collect();
    assert_eq!(keys, props, "{name}: the example covers the schema");
}

#[test]
fn record_operations_take_the_engines_argument_types() {
    use PlatformCall as C;
    let ws = "acme";
    same_as_serde::<CreateRecord>(
        "record.create",
        json!({"workspace_id": ws, "collection_id": "inbox", "namespace": "hiring", "version": 2,
               "type": "application", "data": {"note": "hi"}, "roles": {"candidate": [RECORD]},
               "idempotency_key": "k1"}),
        |c| {
            if let C::RecordCreate(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<GetRecord>(
        "record.get",
        json!({"workspace_id": ws, "record_id": RECORD}),
        |c| {
            if let C::RecordGet(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<UpdateRecord>(
        "record.update",
        json!({"workspace_id": ws, "record_id": RECORD, "expected_revision": 3, "idempotency_key": "k2",
               "patch": {"set": {"note": "x"}, "remove": ["old"]},
               "roles": {"add": {"voter": [OTHER]}, "remove": {"voter": [RECORD]}}}),
        |c| {
            if let C::RecordUpdate(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<ArchiveRecord>(
        "record.archive",
        json!({"workspace_id": ws, "record_id": RECORD, "expected_revision": 1, "idempotency_key": "k3"}),
        |c| {
            if let C::RecordArchive(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<ExecuteCommand>(
        "command.execute",
        json!({"workspace_id": ws, "record_id": RECORD, "command": "close", "expected_revision": 2,
               "idempotency_key": "k4", "input": {"reason": "done"}}),
        |c| {
            if let C::CommandExecute(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<ListCommands>(
        "command.list",
        json!({"workspace_id": ws, "record_id": RECORD, "input": {"reason": "why"}}),
        |c| {
            if let C::CommandList(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<SearchRecords>(
        "record.search",
        json!({"workspace_id": ws, "namespace": "polls", "type": "poll", "version": 1, "state": "open",
               "collection_id": "inbox", "query": "lunch", "view": {"namespace": "polls", "version": 1, "view": "open_polls"},
               "limit": 100, "cursor": "c2abc"}),
        |c| {
            if let C::RecordSearch(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<RecordHistory>(
        "record.history",
        json!({"workspace_id": ws, "record_id": RECORD, "limit": 1, "cursor": "c2abc"}),
        |c| {
            if let C::RecordHistory(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
    same_as_serde::<ChangesFeed>(
        "changes.feed",
        json!({"workspace_id": ws, "cursor": "c2abc", "limit": 20, "namespace": "polls"}),
        |c| {
            if let C::ChangesFeed(a) = c {
                Some(a)
            } else {
                None
            }
        },
    );
}

#[test]
fn every_operation_has_a_minimal_valid_call() {
    let minimal = |name: &str| -> Value {
        let spec = operation(name).unwrap();
        let mut arguments = Map::new();
        for field in required(&spec.input) {
            let value = match field {
                "record_id" | "draft_id" => json!(RECORD),
                "expected_revision" | "version" => json!(1),
                "data" | "package" => json!({}),
                "kind" => json!("agent"),
                "access" => json!("read"),
                "namespace" | "type" | "command" => json!("polls"),
                _ => json!("acme"),
            };
            arguments.insert(field.to_owned(), value);
        }
        if name == "program.activate" {
            arguments.insert("draft_id".into(), json!(RECORD));
        }
        Value::Object(arguments)
    };
    for spec in operations() {
        let arguments = minimal(spec.name);
        let (parsed, call) =
            parse_call(spec.name, &arguments).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        assert_eq!(parsed.name, spec.name);
        assert_eq!(
            call.workspace_id().is_some(),
            arguments.get("workspace_id").is_some(),
            "{}",
            spec.name
        );
        assert_eq!(
            call.idempotency_key().is_some(),
            spec.is_mutation(),
            "{}",
            spec.name
        );
    }
}

#[test]
fn unknown_operations_are_refused_naming_them_within_a_bound() {
    let error = parse_call("record.delete", &json!({})).unwrap_err();
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("UNKNOWN_OPERATION", 400)
    );
    assert!(error.message.contains("record.delete"), "{}", error.message);
    // Tool spellings are not operation names.
    assert_eq!(
        parse_call("record_get", &json!({})).unwrap_err().code,
        "UNKNOWN_OPERATION"
    );
    let long = "x".repeat(10_000);
    let error = parse_call(&long, &json!({})).unwrap_err();
    assert!(
        error.message.len() < MAX_ECHOED_NAME + 40,
        "{} bytes",
        error.message.len()
    );
    assert!(error.message.contains(&"x".repeat(MAX_ECHOED_NAME)));
}

fn invalid(name: &str, arguments: Value) -> Vec<(String, String)> {
    let error = parse_call(name, &arguments).unwrap_err();
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("INVALID_ARGUMENTS", 400),
        "{name} {arguments}"
    );
    error
        .issues
        .into_iter()
        .map(|i| (i.instance_path, i.keyword))
        .collect()
}

#[test]
fn unknown_and_malformed_arguments_are_refused_with_their_issues() {
    let get = json!({"workspace_id": "acme", "record_id": RECORD});
    let mut extra = get.clone();
    extra["recordId"] = json!(RECORD);
    assert_eq!(
        invalid("record.get", extra),
        [(String::new(), "additionalProperties".to_owned())]
    );
    assert_eq!(
        invalid("examples.list", json!({"x": 1})),
        [(String::new(), "additionalProperties".to_owned())]
    );
    assert_eq!(
        invalid("record.get", json!({"workspace_id": "acme"})),
        [(String::new(), "required".to_owned())]
    );
    assert_eq!(
        invalid(
            "record.get",
            json!({"workspace_id": "acme", "record_id": "nope"})
        ),
        [("/record_id".to_owned(), "format".to_owned())]
    );
    for value in [json!(null), json!([]), json!("acme")] {
        assert_eq!(invalid("record.get", value)[0].1, "type");
    }
    // Mutations need their key, record changes their revision.
    let archive = json!({"workspace_id": "acme", "record_id": RECORD, "expected_revision": 1});
    assert_eq!(
        invalid("record.archive", archive),
        [(String::new(), "required".to_owned())]
    );
    let execute = json!({"workspace_id": "acme", "record_id": RECORD, "command": "close", "idempotency_key": "k"});
    assert_eq!(
        invalid("command.execute", execute),
        [(String::new(), "required".to_owned())]
    );
    // Paging bounds.
    for limit in [0, 101] {
        let search = json!({"workspace_id": "acme", "limit": limit});
        assert_eq!(invalid("record.search", search)[0].0, "/limit");
    }
    // Nested objects are closed too.
    let patch = json!({"workspace_id": "acme", "record_id": RECORD, "expected_revision": 1,
                       "idempotency_key": "k", "patch": {"set": {}, "state": "closed"}});
    assert_eq!(
        invalid("record.update", patch),
        [("/patch".to_owned(), "additionalProperties".to_owned())]
    );
    // Beyond u64: the schema admits the integer, the type does not.
    let huge = json!({"workspace_id": "acme", "namespace": "polls", "version": 18_446_744_073_709_551_616_f64});
    assert!(parse_call("program.get", &huge).is_err());
}

#[test]
fn rules_across_arguments_are_refused_as_invalid_arguments() {
    let base = json!({"workspace_id": "acme", "idempotency_key": "k"});
    let mut neither = base.clone();
    assert_eq!(invalid("program.activate", neither.clone())[0].1, "oneOf");
    neither["draft_id"] = json!(RECORD);
    neither["package"] = json!({});
    assert_eq!(invalid("program.activate", neither)[0].1, "oneOf");
    let human_with_scopes = json!({"workspace_id": "acme", "principal_id": "cy", "kind": "human",
                                   "scopes": ["records:read"], "idempotency_key": "k"});
    assert_eq!(invalid("member.add", human_with_scopes)[0].0, "/scopes");
    let agent_with_role = json!({"workspace_id": "acme", "principal_id": "bot", "kind": "agent",
                                 "role": "owner", "idempotency_key": "k"});
    assert_eq!(invalid("member.add", agent_with_role)[0].0, "/role");
    let unknown_scope = json!({"workspace_id": "acme", "principal_id": "bot", "kind": "agent",
                               "scopes": ["records:delete"], "idempotency_key": "k"});
    assert_eq!(invalid("member.add", unknown_scope)[0].0, "/scopes/0");
    let bad_id = json!({"workspace_id": "Acme Corp", "name": "Acme", "idempotency_key": "k"});
    assert_eq!(invalid("workspace.create", bad_id)[0].0, "/workspace_id");
}

#[test]
fn issues_are_bounded() {
    let mut arguments = Map::new();
    for i in 0..(MAX_VALIDATION_ISSUES * 3) {
        arguments.insert(format!("unknown_{i}"), json!(i));
    }
    let error = parse_call("record.get", &Value::Object(arguments)).unwrap_err();
    assert_eq!(error.issues.len(), MAX_VALIDATION_ISSUES + 1);
    assert_eq!(error.issues.last().unwrap().keyword, TRUNCATED_KEYWORD);
}

#[test]
fn capabilities_and_tools_are_generated_from_the_table() {
    let definition = platform_definition();
    validate_definition(&definition).unwrap();
    let capabilities = capability_definitions();
    assert_eq!(capabilities.len(), operations().len());
    for (capability, spec) in capabilities.iter().zip(operations()) {
        assert_eq!(capability.id, spec.name);
        assert_eq!(capability.effect, spec.effect);
        assert_eq!(capability.input_schema, spec.input);
        assert_eq!(capability.output_schema, spec.output);
        let console = capability
            .tags
            .as_ref()
            .is_some_and(|t| t.iter().any(|t| t == "console-only"));
        assert_eq!(console, spec.agents == Agents::ConsoleOnly, "{}", spec.name);
    }
    let tools: BTreeSet<String> = operations().iter().map(|s| s.tool_name()).collect();
    assert_eq!(tools.len(), operations().len(), "tool names are unique");
    for tool in &tools {
        assert!(
            tool.len() <= 64 && tool.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "{tool}"
        );
    }
    assert!(tools.contains("record_get") && tools.contains("changes_feed"));
    assert_eq!(tool_name("program.activate"), "program_activate");
}

/// The MCP door reads calls its runtime already checked: sound only while every capability
/// carries exactly its operation's input schema. The checked read still applies the rules
/// across arguments and the types, and skips only the schema pass.
#[test]
fn a_checked_call_skips_only_the_schema_pass_the_runtime_made() {
    for (spec, capability) in operations().iter().zip(capability_definitions()) {
        assert_eq!(capability.id, spec.name);
        assert_eq!(capability.input_schema, spec.input, "{}", spec.name);
    }
    let get = json!({"workspace_id": "acme", "record_id": RECORD});
    let (spec, checked) = read_checked_call("record.get", &get).unwrap();
    assert_eq!(spec.name, "record.get");
    let (_, parsed) = parse_call("record.get", &get).unwrap();
    assert_eq!(format!("{checked:?}"), format!("{parsed:?}"));
    // A workspace id the schema's pattern refuses (a NUL): refused by the full parse, read by
    // the checked one (its caller checked the schema).
    let unchecked = json!({"workspace_id": "ac\u{0}me", "record_id": RECORD});
    assert_eq!(
        invalid("record.get", unchecked.clone())[0].0,
        "/workspace_id"
    );
    assert!(read_checked_call("record.get", &unchecked).is_ok());
    // The rules across arguments and the types still hold.
    let neither = json!({"workspace_id": "acme", "idempotency_key": "k"});
    let refused = read_checked_call("program.activate", &neither).unwrap_err();
    assert_eq!(refused.code, "INVALID_ARGUMENTS");
    let untyped = json!({"workspace_id": "acme", "record_id": 7});
    assert_eq!(
        read_checked_call("record.get", &untyped).unwrap_err().code,
        "INVALID_ARGUMENTS"
    );
    assert_eq!(
        read_checked_call("record.gone", &get).unwrap_err().code,
        "UNKNOWN_OPERATION"
    );
}
