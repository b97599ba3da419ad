//! The checker's rules, on the digest's test schemas (T1–T7, X1, X2) and one targeted negative
//! per rule. Every test asserts the exact rule codes (sorted: the order is the walk's).

use proptest::prelude::*;
use rcip_export::Profile;
use rcip_export::check::{Violation, check};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------

/// One entry of `profile`'s wire form with the given name and input schema.
fn entry(profile: Profile, name: &str, schema: Value) -> Value {
    match profile {
        Profile::OpenAi => json!({
            "type": "function", "name": name, "description": "d", "parameters": schema, "strict": true
        }),
        Profile::Anthropic => json!({
            "name": name, "description": "d", "input_schema": schema, "strict": true
        }),
        Profile::Gemini => json!({"name": name, "description": "d", "parameters": schema}),
        Profile::GeminiJsonSchema => {
            json!({"name": name, "description": "d", "parametersJsonSchema": schema})
        }
        _ => json!({
            "name": name, "title": "T", "description": "d", "inputSchema": schema,
            "annotations": {
                "title": "T", "readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false
            }
        }),
    }
}

/// `profile`'s wire list of these entries.
fn list(profile: Profile, entries: Vec<Value>) -> Value {
    match profile {
        Profile::Gemini | Profile::GeminiJsonSchema => json!([{"functionDeclarations": entries}]),
        _ => Value::Array(entries),
    }
}

/// The empty closed object in `profile`'s spelling.
fn empty(profile: Profile) -> Value {
    if profile == Profile::Gemini {
        upper(t4b())
    } else {
        t4b()
    }
}

fn one(profile: Profile, schema: Value) -> Value {
    list(profile, vec![entry(profile, "tool_a", schema)])
}

fn codes_of(result: Result<(), Vec<Violation>>) -> Vec<&'static str> {
    let mut codes: Vec<_> = result
        .err()
        .unwrap_or_default()
        .iter()
        .map(|v| v.rule)
        .collect();
    codes.sort_unstable();
    codes
}

fn codes(profile: Profile, tools: &Value) -> Vec<&'static str> {
    codes_of(check(profile, tools))
}

fn schema_codes(profile: Profile, schema: Value) -> Vec<&'static str> {
    codes(profile, &one(profile, schema))
}

/// Upper-cases every `type` (Gemini `parameters` spelling), as the SDK does.
fn upper(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("type", Value::String(t)) => Value::String(t.to_uppercase()),
                        ("type", Value::Array(ts)) => Value::Array(
                            ts.into_iter()
                                .map(|t| match t {
                                    Value::String(t) => Value::String(t.to_uppercase()),
                                    t => t,
                                })
                                .collect(),
                        ),
                        (_, v) => upper(v),
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(upper).collect()),
        other => other,
    }
}

/// A closed object with these properties, all required.
fn closed(properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

// ---------------------------------------------------------------------------------------
// The digest's test schemas.
// ---------------------------------------------------------------------------------------

fn t1() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}, "nick": {"type": ["string", "null"]}},
           "required": ["name"], "additionalProperties": false})
}
fn t1b() -> Value {
    json!({"type": "object",
           "properties": {"name": {"type": "string"}, "nick": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
           "required": ["name"], "additionalProperties": false})
}
fn t1c() -> Value {
    closed(json!({"name": {"type": "string"}, "nick": {"type": ["string", "null"]}}))
}
fn t2() -> Value {
    closed(json!({"q": {"type": "string", "minLength": 1, "maxLength": 64}}))
}
fn t3() -> Value {
    closed(json!({"shape": {"oneOf": [
        closed(json!({"kind": {"type": "string", "const": "circle"}, "r": {"type": "number"}})),
        closed(json!({"kind": {"type": "string", "const": "square"}, "side": {"type": "number"}})),
    ]}}))
}
fn t4() -> Value {
    json!({"type": "object", "additionalProperties": false})
}
fn t4b() -> Value {
    json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
}
fn t5() -> Value {
    closed(json!({
        "n": {"type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64},
        "big": {"type": "integer", "minimum": 0, "maximum": u64::MAX},
    }))
}
fn t6() -> Value {
    closed(
        json!({"id": {"type": "string", "format": "uuid"}, "slug": {"type": "string", "pattern": "^[a-z]+$"}}),
    )
}
fn t7() -> Value {
    let mut schema = closed(json!({"a": {"$ref": "#/$defs/A"}}));
    schema["$defs"] = json!({"A": closed(json!({"x": {"type": "integer"}}))});
    schema
}
fn x1() -> Value {
    json!({"anyOf": [closed(json!({"a": {"type": "string"}})), closed(json!({"b": {"type": "integer"}}))]})
}
fn x2() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

/// (schema, expected codes) for one profile; `gemini` upper-cases the types first.
fn table(profile: Profile, rows: Vec<(&str, Value, Vec<&'static str>)>) {
    for (id, schema, mut expected) in rows {
        let schema = if profile == Profile::Gemini {
            upper(schema)
        } else {
            schema
        };
        expected.sort_unstable();
        assert_eq!(schema_codes(profile, schema), expected, "{profile} {id}");
    }
}

#[test]
fn openai_test_schemas() {
    table(
        Profile::OpenAi,
        vec![
            ("T1", t1(), vec!["openai.required"]),
            ("T1b", t1b(), vec!["openai.required"]),
            ("T1c", t1c(), vec![]),
            ("T2", t2(), vec!["openai.keyword", "openai.keyword"]),
            ("T3", t3(), vec!["openai.keyword"]),
            ("T4", t4(), vec!["openai.properties"]),
            ("T4b", t4b(), vec![]),
            ("T5", t5(), vec![]),
            ("T6", t6(), vec![]),
            ("T7", t7(), vec![]),
            ("X1", x1(), vec!["openai.root", "openai.root"]),
            ("X2", x2(), vec!["openai.root"]),
        ],
    );
}

#[test]
fn anthropic_test_schemas() {
    table(
        Profile::Anthropic,
        vec![
            ("T1", t1(), vec!["anthropic.type_array"]),
            ("T1b", t1b(), vec![]),
            ("T1c", t1c(), vec!["anthropic.type_array"]),
            ("T2", t2(), vec!["anthropic.keyword", "anthropic.keyword"]),
            ("T3", t3(), vec!["anthropic.keyword"]),
            ("T4", t4(), vec!["anthropic.properties"]),
            ("T4b", t4b(), vec![]),
            ("T5", t5(), vec!["anthropic.keyword"; 4]),
            // The API takes `pattern` (the SDK would move it to the description).
            ("T6", t6(), vec![]),
            ("T7", t7(), vec![]),
            ("X1", x1(), vec!["anthropic.root"]),
            ("X2", x2(), vec!["anthropic.root"]),
        ],
    );
}

#[test]
fn gemini_test_schemas() {
    table(
        Profile::Gemini,
        vec![
            ("T1", t1(), vec!["gemini.type"]),
            ("T1b", t1b(), vec![]),
            ("T1c", t1c(), vec!["gemini.type"]),
            ("T2", t2(), vec![]),
            ("T3", t3(), vec!["gemini.keyword"; 3]),
            ("T4", t4(), vec![]),
            ("T4b", t4b(), vec![]),
            ("T5", t5(), vec!["gemini.bound"]),
            ("T6", t6(), vec!["gemini.format"]),
            ("T7", t7(), vec!["gemini.keyword", "gemini.keyword"]),
            ("X1", x1(), vec!["gemini.root"]),
            ("X2", x2(), vec!["gemini.root"]),
        ],
    );
    // The lower-case spelling is not the `parameters` form.
    assert_eq!(
        schema_codes(Profile::Gemini, t4b()),
        vec!["gemini.root", "gemini.type"]
    );
}

#[test]
fn gemini_json_schema_test_schemas() {
    table(
        Profile::GeminiJsonSchema,
        vec![
            ("T1", t1(), vec![]),
            ("T1b", t1b(), vec![]),
            ("T1c", t1c(), vec![]),
            (
                "T2",
                t2(),
                vec!["gemini_json.keyword", "gemini_json.keyword"],
            ),
            ("T3", t3(), vec!["gemini_json.keyword"; 3]),
            ("T4", t4(), vec![]),
            ("T4b", t4b(), vec![]),
            ("T5", t5(), vec!["gemini_json.bound"]),
            (
                "T6",
                t6(),
                vec!["gemini_json.format", "gemini_json.keyword"],
            ),
            ("T7", t7(), vec![]),
            ("X1", x1(), vec!["gemini_json.root"]),
            ("X2", x2(), vec!["gemini_json.root"]),
        ],
    );
}

#[test]
fn mcp_test_schemas() {
    for profile in [Profile::Mcp2025_11_25, Profile::Mcp2026_07_28] {
        table(
            profile,
            vec![
                ("T1", t1(), vec![]),
                ("T1b", t1b(), vec![]),
                ("T1c", t1c(), vec![]),
                ("T2", t2(), vec![]),
                ("T3", t3(), vec![]),
                ("T4", t4(), vec![]),
                ("T4b", t4b(), vec![]),
                ("T5", t5(), vec![]),
                ("T6", t6(), vec![]),
                ("T7", t7(), vec![]),
                ("X1", x1(), vec!["mcp.root"]),
                ("X2", x2(), vec!["mcp.root"]),
            ],
        );
    }
}

// ---------------------------------------------------------------------------------------
// The list, the entries and the names.
// ---------------------------------------------------------------------------------------

#[test]
fn list_shapes() {
    for profile in Profile::ALL {
        assert_eq!(codes(profile, &json!({})), vec!["list.shape"], "{profile}");
        assert_eq!(codes(profile, &json!([])), Vec::<&str>::new(), "{profile}");
    }
    for profile in [Profile::Gemini, Profile::GeminiJsonSchema] {
        assert_eq!(
            codes(profile, &json!([{"functionDeclarations": {}}])),
            vec!["list.shape"]
        );
        assert_eq!(
            codes(profile, &json!([{"functionDeclarations": [], "x": 1}])),
            vec!["list.shape"]
        );
        assert_eq!(codes(profile, &json!([7])), vec!["list.shape"]);
    }
}

#[test]
fn entry_members() {
    for profile in Profile::ALL {
        assert_eq!(
            codes(profile, &list(profile, vec![json!("tool")])),
            vec!["entry.shape"],
            "{profile}"
        );
        let mut extra = entry(profile, "tool_a", empty(profile));
        extra["icons"] = json!([]);
        assert_eq!(
            codes(profile, &list(profile, vec![extra])),
            vec!["entry.member"],
            "{profile}"
        );
        let mut missing = entry(profile, "tool_a", empty(profile));
        if let Some(members) = missing.as_object_mut() {
            members.remove("description");
        }
        assert_eq!(
            codes(profile, &list(profile, vec![missing])),
            vec!["entry.missing"],
            "{profile}"
        );
        let mut wrong = entry(profile, "tool_a", empty(profile));
        wrong["description"] = json!(5);
        assert_eq!(
            codes(profile, &list(profile, vec![wrong])),
            vec!["entry.value"],
            "{profile}"
        );
    }
    let mut not_strict = entry(Profile::OpenAi, "a", t4b());
    not_strict["strict"] = json!(false);
    not_strict["type"] = json!("custom");
    assert_eq!(
        codes(Profile::OpenAi, &json!([not_strict])),
        vec!["entry.value", "entry.value"]
    );
    let mut strict_text = entry(Profile::Anthropic, "a", t4b());
    strict_text["strict"] = json!("yes");
    assert_eq!(
        codes(Profile::Anthropic, &json!([strict_text])),
        vec!["entry.value"]
    );
    let mut nameless = entry(Profile::OpenAi, "a", t4b());
    nameless["name"] = json!(3);
    let violations = check(Profile::OpenAi, &json!([{}, nameless])).expect_err("violations");
    let tools: Vec<(&str, &str)> = violations
        .iter()
        .map(|v| (v.tool.as_str(), v.rule))
        .collect();
    let mut expected = vec![("/0", "entry.missing"); 5];
    expected.push(("/1", "entry.value"));
    assert_eq!(tools, expected);
}

#[test]
fn mcp_entries() {
    for profile in [Profile::Mcp2025_11_25, Profile::Mcp2026_07_28] {
        let mut tool = entry(profile, "polls.create", t1());
        tool["outputSchema"] = x2();
        // An array-rooted output schema: 2025-11-25 needs an object, 2026-07-28 takes any.
        let expected: Vec<&str> = match profile {
            Profile::Mcp2025_11_25 => vec!["mcp.root"],
            _ => Vec::new(),
        };
        assert_eq!(codes(profile, &json!([tool])), expected);
        tool["outputSchema"] = json!("not a schema");
        let expected = match profile {
            Profile::Mcp2025_11_25 => "mcp.root",
            _ => "mcp.schema",
        };
        assert_eq!(codes(profile, &json!([tool])), vec![expected]);
        tool["outputSchema"] = t4();
        tool["inputSchema"] = json!(true);
        assert_eq!(codes(profile, &json!([tool])), vec!["mcp.root"]);
        tool["inputSchema"] = t4();
        tool["annotations"] = json!({"readOnlyHint": "yes", "color": "red", "title": 1});
        assert_eq!(codes(profile, &json!([tool])), vec!["mcp.annotations"; 3]);
        tool["annotations"] = json!([]);
        assert_eq!(codes(profile, &json!([tool])), vec!["mcp.annotations"]);
        tool["annotations"] = json!({});
        assert_eq!(codes(profile, &json!([tool])), Vec::<&str>::new());
    }
}

#[test]
fn names() {
    let cases: [(Profile, &str, bool); 14] = [
        (Profile::OpenAi, "polls_create", true),
        (Profile::OpenAi, "polls.create", false),
        (Profile::OpenAi, &"a".repeat(64), true),
        (Profile::OpenAi, &"a".repeat(65), false),
        (Profile::Anthropic, "polls-create", true),
        (Profile::Anthropic, "", false),
        (Profile::Gemini, "polls.create:v1", true),
        (Profile::Gemini, "1polls", false),
        (Profile::GeminiJsonSchema, "_polls", true),
        (Profile::GeminiJsonSchema, &"a".repeat(65), false),
        (Profile::Mcp2025_11_25, "admin.tools.list", true),
        (Profile::Mcp2025_11_25, "a b", false),
        (Profile::Mcp2026_07_28, &"a".repeat(128), true),
        (Profile::Mcp2026_07_28, &"a".repeat(129), false),
    ];
    for (profile, name, ok) in cases {
        let schema = empty(profile);
        let tools = list(profile, vec![entry(profile, name, schema)]);
        let expected: Vec<&str> = if ok { vec![] } else { vec!["name.pattern"] };
        assert_eq!(codes(profile, &tools), expected, "{profile} {name:?}");
    }
}

#[test]
fn names_are_unique_per_list() {
    for profile in Profile::ALL {
        let schema = empty(profile);
        let tools = list(
            profile,
            vec![
                entry(profile, "same", schema.clone()),
                entry(profile, "other", schema.clone()),
                entry(profile, "same", schema),
            ],
        );
        let violations = check(profile, &tools).expect_err("violations");
        assert_eq!(
            codes_of(Err(violations.clone())),
            vec!["name.unique"],
            "{profile}"
        );
        assert!(violations[0].message.contains("/0"), "{}", violations[0]);
    }
    // Gemini: across wrapper objects too.
    let declaration = entry(Profile::Gemini, "same", upper(t4b()));
    let tools = json!([
        {"functionDeclarations": [declaration.clone()]},
        {"functionDeclarations": [declaration]}
    ]);
    assert_eq!(codes(Profile::Gemini, &tools), vec!["name.unique"]);
}

#[test]
fn display_names_tool_pointer_and_rule() {
    let violations = schema_codes(Profile::OpenAi, t2());
    assert_eq!(violations, vec!["openai.keyword", "openai.keyword"]);
    let violation = check(Profile::OpenAi, &one(Profile::OpenAi, t1()))
        .expect_err("violations")
        .remove(0);
    assert_eq!(violation.pointer, "/parameters/properties/nick");
    assert_eq!(
        violation.to_string(),
        "tool_a at /parameters/properties/nick: openai.required: property \"nick\" is not in required"
    );
    let list_wide = Violation {
        tool: String::new(),
        pointer: String::new(),
        rule: "list.shape",
        message: "m".into(),
    };
    assert_eq!(
        list_wide.to_string(),
        "the tool list at the entry: list.shape: m"
    );
}

// ---------------------------------------------------------------------------------------
// Schema rules, one negative each.
// ---------------------------------------------------------------------------------------

#[test]
fn openai_rules() {
    let p = Profile::OpenAi;
    let prop = |schema: Value| schema_codes(p, closed(json!({"x": schema})));
    assert_eq!(
        prop(json!({"type": "string", "default": "a"})),
        vec!["openai.keyword"]
    );
    assert_eq!(prop(json!({"type": "float"})), vec!["openai.type"]);
    assert_eq!(
        prop(json!({"type": ["string", "null"]})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "string", "format": "uri"})),
        vec!["openai.format"]
    );
    assert_eq!(
        prop(json!({"type": "string", "format": "date-time"})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "string", "pattern": "^(?=a)a$"})),
        vec!["openai.pattern"]
    );
    assert_eq!(
        prop(json!({"type": "string", "pattern": "^(?<!a)b$"})),
        vec!["openai.pattern"]
    );
    // In a class, "(?=" is three characters; backreferences are fine for OpenAI.
    assert_eq!(
        prop(json!({"type": "string", "pattern": "^[(?=]+(a)\\1\\b$"})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "object", "properties": {}, "required": []})),
        vec!["openai.additional_properties"]
    );
    assert_eq!(
        prop(
            json!({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}})
        ),
        vec!["openai.additional_properties"]
    );
    assert_eq!(
        prop(json!({"type": "array", "items": {"type": "object", "additionalProperties": false}})),
        vec!["openai.properties"]
    );
    // Root: nullable, and a union beside type object.
    let mut nullable = t4b();
    nullable["type"] = json!(["object", "null"]);
    assert_eq!(schema_codes(p, nullable), vec!["openai.root"]);
    let mut union = t4b();
    union["anyOf"] = json!([t4b()]);
    assert_eq!(schema_codes(p, union), vec!["openai.root"]);
    // References: siblings, dangling, external; recursion is fine.
    let with_ref = |r: Value| {
        let mut schema = closed(json!({"a": r}));
        schema["$defs"] = json!({"A": t4b()});
        schema_codes(p, schema)
    };
    assert_eq!(
        with_ref(json!({"$ref": "#/$defs/A", "description": "x"})),
        vec!["openai.ref"]
    );
    assert_eq!(with_ref(json!({"$ref": "#/$defs/B"})), vec!["openai.ref"]);
    assert_eq!(
        with_ref(json!({"$ref": "https://example.com/a"})),
        vec!["openai.ref"]
    );
    assert_eq!(schema_codes(p, recursive()), Vec::<&str>::new());
}

/// A linked list through `$defs`.
fn recursive() -> Value {
    let mut schema = closed(json!({"node": {"$ref": "#/$defs/N"}}));
    schema["$defs"] = json!({"N": closed(json!({
        "next": {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}
    }))});
    schema
}

#[test]
fn openai_limits() {
    let p = Profile::OpenAi;
    // 5000 properties are fine, 5001 are not.
    let many = |n: usize, name_len: usize| {
        let properties: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("{i:0>name_len$}"), json!({"type": "string"})))
            .collect();
        closed(Value::Object(properties))
    };
    assert_eq!(schema_codes(p, many(5000, 5)), Vec::<&str>::new());
    assert_eq!(
        schema_codes(p, many(5001, 5)),
        vec!["openai.limit.properties"]
    );
    // 100 names of 1200 characters are 120,000; one more character is over.
    assert_eq!(schema_codes(p, many(100, 1200)), Vec::<&str>::new());
    let mut over = many(99, 1200);
    over["properties"][&"y".repeat(1201)] = json!({"type": "string"});
    if let Some(required) = over["required"].as_array_mut() {
        required.push(json!("y".repeat(1201)));
    }
    assert_eq!(schema_codes(p, over), vec!["openai.limit.string_length"]);
    // Depth: 10 levels fine, 11 not; arrays count.
    let nested = |levels: usize, arrays: bool| {
        let mut schema = t4b();
        for level in 1..levels {
            schema = if arrays && level % 2 == 1 {
                json!({"type": "array", "items": schema})
            } else {
                closed(json!({"a": schema}))
            };
        }
        schema
    };
    assert_eq!(schema_codes(p, nested(10, false)), Vec::<&str>::new());
    assert_eq!(
        schema_codes(p, nested(11, false)),
        vec!["openai.limit.depth"]
    );
    assert_eq!(
        schema_codes(p, nested(11, true)),
        vec!["openai.limit.depth"]
    );
    // Enum values: 1000 in the whole schema, counted across enums.
    let enums = |a: usize, b: usize| {
        closed(json!({
            "a": {"type": "integer", "enum": (0..a).collect::<Vec<_>>()},
            "b": {"type": "integer", "enum": (0..b).collect::<Vec<_>>()},
        }))
    };
    assert_eq!(schema_codes(p, enums(500, 500)), Vec::<&str>::new());
    assert_eq!(
        schema_codes(p, enums(500, 501)),
        vec!["openai.limit.enum_values"]
    );
    // A string enum over 250 values: 15,000 characters.
    let strings = |n: usize, len: usize| {
        let values: Vec<String> = (0..n).map(|i| format!("{i:0>len$}")).collect();
        closed(json!({"e": {"type": "string", "enum": values}}))
    };
    assert_eq!(schema_codes(p, strings(250, 100)), Vec::<&str>::new());
    assert_eq!(schema_codes(p, strings(251, 59)), Vec::<&str>::new());
    assert_eq!(
        schema_codes(p, strings(251, 60)),
        vec!["openai.limit.enum_string_length"]
    );
}

#[test]
fn anthropic_rules() {
    let p = Profile::Anthropic;
    let prop = |schema: Value| schema_codes(p, closed(json!({"x": schema})));
    assert_eq!(
        prop(json!({"type": "string", "default": "a"})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "integer", "multipleOf": 2})),
        vec!["anthropic.keyword"]
    );
    assert_eq!(prop(json!({"type": "float"})), vec!["anthropic.type"]);
    assert_eq!(
        prop(json!({"type": "string", "format": "uri"})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "string", "format": "int32"})),
        vec!["anthropic.format"]
    );
    assert_eq!(
        prop(json!({"type": "string", "pattern": "^(?!a)"})),
        vec!["anthropic.pattern"]
    );
    assert_eq!(
        prop(json!({"type": "string", "pattern": "(a)\\1"})),
        vec!["anthropic.pattern"]
    );
    assert_eq!(
        prop(json!({"type": "string", "pattern": "\\bword"})),
        vec!["anthropic.pattern"]
    );
    // An escaped backslash followed by b is a literal, not a word boundary.
    assert_eq!(
        prop(json!({"type": "string", "pattern": "\\\\b[\\b]"})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"enum": ["a", 1, true, null]})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"enum": [{"a": 1}, [1]]})),
        vec!["anthropic.enum"; 2]
    );
    assert_eq!(
        prop(
            json!({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}})
        ),
        vec!["anthropic.additional_properties"]
    );
    assert_eq!(
        prop(json!({"type": "array", "items": {"type": "string"}, "minItems": 1})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "array", "items": {"type": "string"}, "minItems": 2})),
        vec!["anthropic.min_items"]
    );
    assert_eq!(
        prop(json!({"type": "array", "items": {"type": "string"}, "maxItems": 2})),
        vec!["anthropic.keyword"]
    );
    // References: local only, resolving, not under allOf; no recursion.
    let mut all_of = closed(json!({"a": {"allOf": [{"$ref": "#/$defs/A"}]}}));
    all_of["$defs"] = json!({"A": t4b()});
    assert_eq!(schema_codes(p, all_of), vec!["anthropic.ref"]);
    assert_eq!(
        prop(json!({"$ref": "#/$defs/Missing"})),
        vec!["anthropic.ref"]
    );
    assert_eq!(prop(json!({"$ref": "other.json"})), vec!["anthropic.ref"]);
    assert_eq!(schema_codes(p, recursive()), vec!["anthropic.recursion"]);
    assert_eq!(prop(json!({"$ref": "#"})), vec!["anthropic.recursion"]);
    assert_eq!(schema_codes(p, t7()), Vec::<&str>::new());
}

#[test]
fn anthropic_recursion_is_found_through_definitions() {
    let p = Profile::Anthropic;
    let with_defs = |defs: Value| {
        let mut schema = closed(json!({"a": {"$ref": "#/$defs/A"}}));
        schema["$defs"] = defs;
        schema_codes(p, schema)
    };
    // A -> B -> A: both references are on the cycle; the root's is not.
    assert_eq!(
        with_defs(json!({
            "A": closed(json!({"b": {"$ref": "#/$defs/B"}})),
            "B": closed(json!({"a": {"$ref": "#/$defs/A"}})),
        })),
        vec!["anthropic.recursion"; 2]
    );
    // A -> B -> (a property inside A's schema): still a cycle.
    assert_eq!(
        with_defs(json!({
            "A": closed(json!({"b": {"$ref": "#/$defs/B"}, "x": {"type": "string"}})),
            "B": closed(json!({"x": {"$ref": "#/$defs/A/properties/x"}})),
        })),
        vec!["anthropic.recursion"; 2]
    );
    // A long chain without a cycle, checked in linear time.
    let chain: serde_json::Map<String, Value> = (0..5000)
        .map(|i| {
            let next = if i + 1 < 5000 {
                json!({"$ref": format!("#/$defs/D{}", i + 1)})
            } else {
                json!({"type": "string"})
            };
            (format!("D{i}"), closed(json!({"n": next})))
        })
        .collect();
    let mut schema = closed(json!({"a": {"$ref": "#/$defs/D0"}}));
    schema["$defs"] = Value::Object(chain);
    assert_eq!(schema_codes(p, schema.clone()), Vec::<&str>::new());
    // ... and its last link turned back to the first.
    schema["$defs"]["D4999"] = closed(json!({"n": {"$ref": "#/$defs/D0"}}));
    assert_eq!(schema_codes(p, schema), vec!["anthropic.recursion"; 5000]);
}

#[test]
fn anthropic_strict_limits() {
    let p = Anthropic::P;
    let tools = |n: usize, schema: &Value| {
        Value::Array(
            (0..n)
                .map(|i| entry(p, &format!("t{i}"), schema.clone()))
                .collect(),
        )
    };
    assert_eq!(codes(p, &tools(20, &t4b())), Vec::<&str>::new());
    assert_eq!(
        codes(p, &tools(21, &t4b())),
        vec!["anthropic.limit.strict_tools"]
    );
    // A strict:false tool is neither counted nor held to the strict subset (only to an
    // object root).
    let mut lenient = entry(p, "lenient", t1());
    lenient["strict"] = json!(false);
    let mut list = tools(20, &t4b());
    if let Some(entries) = list.as_array_mut() {
        entries.push(lenient.clone());
    }
    assert_eq!(codes(p, &list), Vec::<&str>::new());
    lenient["input_schema"] = x2();
    assert_eq!(codes(p, &json!([lenient])), vec!["anthropic.root"]);
    // 24 optional parameters across the strict tools, 25 not.
    let optional = |n: usize| {
        let properties: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("o{i}"), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": properties, "required": [], "additionalProperties": false})
    };
    assert_eq!(
        codes(
            p,
            &json!([entry(p, "a", optional(12)), entry(p, "b", optional(12))])
        ),
        Vec::<&str>::new()
    );
    assert_eq!(
        codes(
            p,
            &json!([entry(p, "a", optional(12)), entry(p, "b", optional(13))])
        ),
        vec!["anthropic.limit.optional_params"]
    );
    // 16 union-typed parameters, 17 not.
    let unions = |n: usize| {
        let properties: serde_json::Map<String, Value> = (0..n)
            .map(|i| {
                (
                    format!("u{i}"),
                    json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
                )
            })
            .collect();
        closed(Value::Object(properties))
    };
    assert_eq!(
        codes(p, &json!([entry(p, "a", unions(16))])),
        Vec::<&str>::new()
    );
    assert_eq!(
        codes(
            p,
            &json!([entry(p, "a", unions(8)), entry(p, "b", unions(9))])
        ),
        vec!["anthropic.limit.union_params"]
    );
}

/// Short name for the profile in the limit test.
struct Anthropic;
impl Anthropic {
    const P: Profile = Profile::Anthropic;
}

#[test]
fn gemini_rules() {
    let p = Profile::Gemini;
    let prop = |schema: Value| schema_codes(p, upper(closed(json!({"x": schema}))));
    assert_eq!(
        prop(json!({"type": "string", "nullable": true, "minLength": 1})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "string", "const": "a"})),
        vec!["gemini.keyword"]
    );
    assert_eq!(
        prop(json!({"allOf": [{"type": "string"}]})),
        vec!["gemini.keyword"]
    );
    assert_eq!(
        prop(json!({"type": "string", "exclusiveMinimum": 1})),
        vec!["gemini.keyword"]
    );
    assert_eq!(prop(json!({"type": "FLOAT"})), vec!["gemini.type"]);
    assert_eq!(
        prop(json!({"type": "string", "enum": ["a", "b"]})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "integer", "enum": [1, 2]})),
        vec!["gemini.enum"; 2]
    );
    assert_eq!(
        prop(json!({"type": "integer", "format": "enum", "enum": ["1", "2"]})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "string", "format": "date-time"})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "string", "format": "email"})),
        vec!["gemini.format"]
    );
    assert_eq!(
        prop(json!({"type": "integer", "format": "double"})),
        vec!["gemini.format"]
    );
    assert_eq!(
        prop(json!({"type": "object", "properties": {}, "additionalProperties": true})),
        vec!["gemini.additional_properties"]
    );
    assert_eq!(
        prop(
            json!({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}})
        ),
        vec!["gemini.additional_properties"]
    );
    let names = |name: &str| schema_codes(p, upper(closed(json!({name: {"type": "string"}}))));
    assert_eq!(names("_ok_1"), Vec::<&str>::new());
    assert_eq!(names("a-b"), vec!["gemini.property_name"]);
    assert_eq!(names("1a"), vec!["gemini.property_name"]);
    assert_eq!(names(&"a".repeat(65)), vec!["gemini.property_name"]);
    assert_eq!(
        prop(json!({"type": "integer", "minimum": -9_007_199_254_740_991_i64})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "integer", "minimum": -9_007_199_254_740_992_i64})),
        vec!["gemini.bound"]
    );
    assert_eq!(
        prop(json!({"type": "number", "maximum": 1.0e300})),
        Vec::<&str>::new()
    );
    // defs: at the root only.
    let mut root_defs = upper(t4b());
    root_defs["defs"] = json!({"A": {"type": "STRING"}});
    assert_eq!(schema_codes(p, root_defs), Vec::<&str>::new());
    assert_eq!(
        prop(json!({"type": "object", "properties": {}, "defs": {}})),
        vec!["gemini.defs"]
    );
    // The response schema need not be an object.
    let mut declaration = entry(p, "tool_a", upper(t4b()));
    declaration["response"] = json!({"type": "STRING"});
    assert_eq!(
        codes(p, &list(p, vec![declaration.clone()])),
        Vec::<&str>::new()
    );
    declaration["response"] = json!({"type": "STRING", "oneOf": []});
    assert_eq!(
        codes(p, &list(p, vec![declaration])),
        vec!["gemini.keyword"]
    );
}

#[test]
fn gemini_json_schema_rules() {
    let p = Profile::GeminiJsonSchema;
    let prop = |schema: Value| schema_codes(p, closed(json!({"x": schema})));
    assert_eq!(
        prop(
            json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}, "minItems": 1, "maxItems": 2})
        ),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": ["string", "integer"]})),
        vec!["gemini_json.type"]
    );
    assert_eq!(
        prop(json!({"type": ["string", "null", "integer"]})),
        vec!["gemini_json.type"]
    );
    assert_eq!(prop(json!({"type": "STRING"})), vec!["gemini_json.type"]);
    assert_eq!(
        prop(json!({"type": "string", "format": "date"})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"type": "string", "format": "email"})),
        vec!["gemini_json.format"]
    );
    assert_eq!(prop(json!({"enum": [[1]]})), vec!["gemini_json.enum"]);
    assert_eq!(
        prop(json!({"type": "integer", "enum": [1, 2]})),
        Vec::<&str>::new()
    );
    assert_eq!(
        prop(json!({"allOf": [{"type": "string"}]})),
        vec!["gemini_json.keyword"]
    );
    assert_eq!(
        prop(json!({"type": "integer", "maximum": 9_007_199_254_740_992_u64})),
        vec!["gemini_json.bound"]
    );
    assert_eq!(
        prop(json!({"$ref": "#/$defs/Nope"})),
        vec!["gemini_json.ref"]
    );
    // Recursion is fine for Gemini's JSON Schema.
    assert_eq!(schema_codes(p, recursive()), Vec::<&str>::new());
    let mut declaration = entry(p, "tool_a", t4b());
    declaration["responseJsonSchema"] = json!({"type": "integer", "const": 1});
    assert_eq!(
        codes(p, &list(p, vec![declaration])),
        vec!["gemini_json.keyword"]
    );
}

#[test]
fn empty_enums() {
    for (profile, code) in [
        (Profile::OpenAi, "openai.enum"),
        (Profile::Anthropic, "anthropic.enum"),
        (Profile::Gemini, "gemini.enum"),
        (Profile::GeminiJsonSchema, "gemini_json.enum"),
    ] {
        let schema = closed(json!({"e": {"type": "string", "enum": []}}));
        let schema = if profile == Profile::Gemini {
            upper(schema)
        } else {
            schema
        };
        assert_eq!(schema_codes(profile, schema), vec![code], "{profile}");
    }
}

#[test]
fn untyped_schemas() {
    for (profile, code) in [
        (Profile::OpenAi, "openai.untyped"),
        (Profile::Anthropic, "anthropic.untyped"),
    ] {
        let any = closed(json!({"v": {}, "w": {"description": "anything"}}));
        assert_eq!(schema_codes(profile, any), vec![code; 2], "{profile}");
        let typed = closed(
            json!({"e": {"enum": [1]}, "c": {"const": 1}, "u": {"anyOf": [{"type": "null"}]}}),
        );
        assert_eq!(
            schema_codes(profile, typed),
            Vec::<&str>::new(),
            "{profile}"
        );
    }
    // Gemini's JSON Schema and MCP take an untyped schema.
    for profile in [Profile::GeminiJsonSchema, Profile::Mcp2025_11_25] {
        assert_eq!(
            schema_codes(profile, closed(json!({"v": {}}))),
            Vec::<&str>::new()
        );
    }
}

#[test]
fn required_names_only_properties() {
    for (profile, code) in [
        (Profile::OpenAi, "openai.required"),
        (Profile::Anthropic, "anthropic.required"),
        (Profile::Gemini, "gemini.required"),
        (Profile::GeminiJsonSchema, "gemini_json.required"),
    ] {
        let mut schema = empty(profile);
        schema["required"] = json!(["ghost"]);
        assert_eq!(schema_codes(profile, schema), vec![code], "{profile}");
        let mut schema = empty(profile);
        schema.as_object_mut().map(|m| m.remove("properties"));
        schema["required"] = json!(["ghost"]);
        let found = schema_codes(profile, schema);
        assert!(found.contains(&code), "{profile}: {found:?}");
    }
}

#[test]
fn malformed_schemas() {
    for profile in [
        Profile::OpenAi,
        Profile::Anthropic,
        Profile::GeminiJsonSchema,
    ] {
        let mut properties_array = t4b();
        properties_array["properties"] = json!([]);
        assert_eq!(
            schema_codes(profile, properties_array),
            vec!["schema.malformed"],
            "{profile}"
        );
        let mut anyof_object = closed(json!({"a": {"anyOf": {}}}));
        anyof_object["x"] = json!(null);
        let found = schema_codes(profile, anyof_object);
        assert!(found.contains(&"schema.malformed"), "{profile}: {found:?}");
        assert_eq!(
            schema_codes(profile, closed(json!({"a": 5}))),
            vec!["schema.malformed"],
            "{profile}"
        );
        let mut required_text = t4b();
        required_text["required"] = json!("a");
        assert_eq!(
            schema_codes(profile, required_text),
            vec!["schema.malformed"],
            "{profile}"
        );
    }
}

#[test]
fn deep_schemas_are_refused_not_walked() {
    for profile in Profile::ALL {
        // 200 levels: past the 128 the checker walks.
        let mut schema = json!({"type": "string"});
        for _ in 0..200 {
            schema = json!({"type": "array", "items": schema});
        }
        let mut root = t4b();
        root["properties"] = json!({"deep": schema});
        let tools = one(profile, root);
        assert!(
            codes(profile, &tools).contains(&"schema.depth"),
            "{profile}"
        );
    }
    // 100,000 levels, built and taken apart without recursion.
    let mut deep = json!({});
    for _ in 0..100_000 {
        let mut wrapper = serde_json::Map::new();
        wrapper.insert("items".into(), deep);
        deep = Value::Object(wrapper);
    }
    // (json! would serialize the value recursively: insert it instead.)
    let mut tool = entry(Profile::OpenAi, "deep", t4b());
    tool["parameters"] = deep;
    let tools = Value::Array(vec![tool]);
    assert_eq!(codes(Profile::OpenAi, &tools), vec!["schema.depth"]);
    rcip_core::depth::dismantle(tools);
}

// ---------------------------------------------------------------------------------------
// Never panics.
// ---------------------------------------------------------------------------------------

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "defs",
        "ref",
        "enum",
        "const",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "minItems",
        "additionalProperties",
        "name",
        "functionDeclarations",
        "parameters",
        "input_schema",
        "inputSchema",
        "outputSchema",
        "annotations",
        "strict",
        "parametersJsonSchema",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(vec![
            "object",
            "OBJECT",
            "string",
            "array",
            "null",
            "#",
            "#/$defs/a",
            "#/",
            "(?=",
            "\\",
            "a.b",
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(keys.clone(), inner, 0..6).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #[test]
    fn never_panics(value in arbitrary_json()) {
        for profile in Profile::ALL {
            let wrapped = json!([value.clone()]);
            let gemini = json!([{"functionDeclarations": [value.clone()]}]);
            for tools in [&value, &wrapped, &gemini] {
                if let Err(violations) = check(profile, tools) {
                    prop_assert!(!violations.is_empty());
                    for violation in &violations {
                        prop_assert!(!violation.to_string().is_empty());
                    }
                }
            }
        }
    }
}
