//! Tests of the strict schema checker (Ajv 8 strict mode, draft 2020-12).

use rcip_core::schema::{
    MAX_SCHEMA_DEPTH, SUPPORTED_FORMATS, SchemaViolation, StrictRule, check_strict,
};
use serde_json::{Value, json};

#[track_caller]
fn accept(schema: Value) {
    if let Err(violation) = check_strict(&schema) {
        panic!("schema {schema} was rejected: {violation:?}");
    }
}

#[track_caller]
fn reject(schema: Value, rule: StrictRule, pointer: &str) -> SchemaViolation {
    match check_strict(&schema) {
        Ok(()) => panic!("schema {schema} was accepted, expected {rule:?} at {pointer:?}"),
        Err(violation) => {
            assert_eq!(
                (violation.rule, violation.pointer.as_str()),
                (rule, pointer),
                "schema {schema}: {violation:?}"
            );
            violation
        }
    }
}

// ---------------------------------------------------------------- API

#[test]
fn codes_are_stable() {
    let codes = [
        (StrictRule::UnknownKeyword, "UNKNOWN_KEYWORD"),
        (StrictRule::Format, "FORMAT_NOT_SUPPORTED"),
        (StrictRule::UnionType, "UNION_TYPE"),
        (StrictRule::ApplicableType, "APPLICABLE_TYPE_REQUIRED"),
        (StrictRule::ContradictoryTypes, "CONTRADICTORY_TYPES"),
        (StrictRule::RequiredNotDefined, "REQUIRED_NOT_DEFINED"),
        (StrictRule::UnboundedTuple, "UNBOUNDED_TUPLE"),
        (StrictRule::IfWithoutThenElse, "IF_WITHOUT_THEN_ELSE"),
        (StrictRule::ThenElseWithoutIf, "THEN_ELSE_WITHOUT_IF"),
        (
            StrictRule::ContainsBoundWithoutContains,
            "CONTAINS_BOUND_WITHOUT_CONTAINS",
        ),
        (
            StrictRule::PatternPropertyMatchesProperty,
            "PATTERN_PROPERTY_MATCHES_PROPERTY",
        ),
        (StrictRule::Nullable, "NULLABLE_NOT_SUPPORTED"),
        (StrictRule::SchemaDialect, "SCHEMA_DIALECT_NOT_SUPPORTED"),
        (StrictRule::Malformed, "MALFORMED_SCHEMA"),
        (StrictRule::SchemaTooDeep, "SCHEMA_TOO_DEEP"),
    ];
    for (rule, code) in codes {
        assert_eq!(rule.code(), code);
    }
}

#[test]
fn display_names_the_pointer_or_the_root() {
    let at_root = reject(json!({"foo": 1}), StrictRule::UnknownKeyword, "");
    assert_eq!(at_root.to_string(), "unknown keyword \"foo\" at the root");
    let nested = reject(
        json!({"type": "object", "properties": {"a/b~c": {"type": "string", "foo": 1}}}),
        StrictRule::UnknownKeyword,
        "/properties/a~1b~0c",
    );
    assert_eq!(
        nested.to_string(),
        "unknown keyword \"foo\" at /properties/a~1b~0c"
    );
    let error: &dyn std::error::Error = &nested;
    assert_eq!(error.to_string(), nested.to_string());
}

// ---------------------------------------------------------------- UnknownKeyword

#[test]
fn known_keywords_are_accepted() {
    accept(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.invalid/s",
        "$comment": "c",
        "title": "T",
        "description": "D",
        "default": {},
        "examples": [{}],
        "deprecated": false,
        "readOnly": false,
        "writeOnly": false,
        "type": "object",
        "properties": {
            "s": {
                "type": "string",
                "minLength": 1,
                "maxLength": 2,
                "pattern": "^a",
                "contentEncoding": "base64",
                "contentMediaType": "application/json",
                "contentSchema": {"type": "object"}
            },
            "n": {"type": "number", "minimum": 0, "maximum": 9, "exclusiveMinimum": -1,
                  "exclusiveMaximum": 10, "multipleOf": 0.5},
            "a": {"type": "array", "minItems": 0, "maxItems": 3, "uniqueItems": true,
                  "contains": {"const": 1}, "minContains": 1, "maxContains": 2,
                  "items": true, "unevaluatedItems": false},
            "e": {"enum": [1, "x"]},
            "c": {"const": null},
            "r": {"$ref": "#/$defs/d"},
            "y": {"$dynamicRef": "#meta"}
        },
        "propertyNames": {"type": "string", "maxLength": 8},
        "minProperties": 0,
        "maxProperties": 9,
        "dependentRequired": {"s": ["n"]},
        "dependentSchemas": {"a": {"required": ["s"]}},
        "unevaluatedProperties": false,
        "$defs": {"d": {"$anchor": "d", "$dynamicAnchor": "meta", "type": "integer"}}
    }));
}

#[test]
fn unknown_keyword_is_rejected() {
    let v = reject(
        json!({"type": "object", "properties": {"a": {"type": "string", "foo": 1}}}),
        StrictRule::UnknownKeyword,
        "/properties/a",
    );
    assert_eq!(v.message, "unknown keyword \"foo\"");
}

#[test]
fn pre_2020_keywords_are_unknown() {
    for keyword in [
        "additionalItems",
        "definitions",
        "dependencies",
        "$recursiveRef",
        "id",
    ] {
        let mut schema = serde_json::Map::new();
        schema.insert(keyword.to_owned(), json!({}));
        let v = reject(Value::Object(schema), StrictRule::UnknownKeyword, "");
        assert_eq!(v.message, format!("unknown keyword \"{keyword}\""));
    }
}

// ---------------------------------------------------------------- Format

#[test]
fn unsupported_formats_are_rejected() {
    let v = reject(
        json!({"type": "object", "properties": {"host": {"type": "string", "format": "hostname"}}}),
        StrictRule::Format,
        "/properties/host",
    );
    assert_eq!(
        v.message,
        "format \"hostname\" is not supported: rcip validates only \"uuid\", \"date-time\", \"date\", \"email\" and \"uri\""
    );
    // Integer formats are not validated either (the generator turns them into bounds).
    reject(
        json!({"type": "integer", "format": "int32"}),
        StrictRule::Format,
        "",
    );
    // A format must be a string naming a supported format.
    reject(
        json!({"type": "string", "format": 5}),
        StrictRule::Format,
        "",
    );
    reject(
        json!({"type": "string", "format": "UUID"}),
        StrictRule::Format,
        "",
    );
}

#[test]
fn supported_formats_are_accepted_on_strings() {
    for format in SUPPORTED_FORMATS {
        accept(json!({"type": "string", "format": format}));
        accept(json!({"type": ["string", "null"], "format": format}));
        accept(json!({
            "type": "object",
            "properties": {"at": {"type": "string", "format": format}},
            "additionalProperties": false
        }));
    }
    // Like `pattern`, `format` needs a string type for the instance (strictTypes).
    let v = reject(json!({"format": "uuid"}), StrictRule::ApplicableType, "");
    assert!(v.message.contains("\"format\""), "{}", v.message);
    reject(
        json!({"type": "integer", "format": "date"}),
        StrictRule::ApplicableType,
        "",
    );
}

#[test]
fn string_without_format_is_accepted() {
    accept(json!({"type": "string", "pattern": "^[a-z]+@[a-z.]+$"}));
}

// ---------------------------------------------------------------- UnionType

#[test]
fn union_with_null_is_accepted() {
    accept(json!({"type": ["object", "null"]}));
    accept(json!({"type": ["null", "string"]}));
    accept(json!({"type": ["integer"]}));
    accept(json!({"type": "null"}));
}

#[test]
fn other_unions_are_rejected() {
    let v = reject(
        json!({"type": "object", "properties": {"x": {"type": ["string", "number"]}}}),
        StrictRule::UnionType,
        "/properties/x",
    );
    assert_eq!(
        v.message,
        "union type [\"string\",\"number\"] is not allowed; only a union with \"null\" is (use anyOf)"
    );
    reject(json!({"type": ["null", "null"]}), StrictRule::UnionType, "");
    reject(
        json!({"type": ["string", "string"]}),
        StrictRule::UnionType,
        "",
    );
    reject(json!({"type": []}), StrictRule::UnionType, "");
    reject(
        json!({"type": ["string", "number", "null"]}),
        StrictRule::UnionType,
        "",
    );
    reject(
        json!({"type": ["number", "integer"]}),
        StrictRule::UnionType,
        "",
    );
}

// ---------------------------------------------------------------- ApplicableType

#[test]
fn applicable_types_are_accepted() {
    accept(json!({"type": "integer", "minimum": 0, "multipleOf": 2}));
    accept(json!({"type": ["string", "null"], "maxLength": 5}));
    // The type of a parent schema for the same instance applies.
    accept(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "allOf": [{"properties": {"b": {"type": "string"}}}],
        "anyOf": [{"minProperties": 1}],
        "oneOf": [{"maxProperties": 3}],
        "not": {"required": ["a"]},
        "if": {"minProperties": 2},
        "then": {"maxProperties": 2},
        "else": {"maxProperties": 1}
    }));
}

#[test]
fn keyword_without_type_is_rejected() {
    let v = reject(
        json!({"properties": {"a": {"type": "string"}}}),
        StrictRule::ApplicableType,
        "",
    );
    assert_eq!(
        v.message,
        "keyword \"properties\" requires \"type\": \"object\" at the same or a parent schema"
    );
    let v = reject(
        json!({"type": "string", "minimum": 1}),
        StrictRule::ApplicableType,
        "",
    );
    assert_eq!(
        v.message,
        "keyword \"minimum\" requires \"type\": \"number\" or \"integer\" at the same or a parent schema"
    );
}

#[test]
fn a_new_instance_location_forgets_the_type() {
    reject(
        json!({"type": "object", "properties": {"a": {"maxLength": 3}}}),
        StrictRule::ApplicableType,
        "/properties/a",
    );
    reject(
        json!({"type": "array", "items": {"minItems": 1}}),
        StrictRule::ApplicableType,
        "/items",
    );
    reject(
        json!({"type": "string", "$defs": {"d": {"minLength": 1}}}),
        StrictRule::ApplicableType,
        "/$defs/d",
    );
    reject(
        json!({"type": "string", "contentSchema": {"minLength": 1}}),
        StrictRule::ApplicableType,
        "/contentSchema",
    );
}

#[test]
fn narrowed_type_is_used_by_subschemas() {
    reject(
        json!({"type": ["string", "null"], "anyOf": [{"type": "null", "minLength": 1}]}),
        StrictRule::ApplicableType,
        "/anyOf/0",
    );
}

// ---------------------------------------------------------------- ContradictoryTypes

#[test]
fn compatible_types_are_accepted() {
    accept(json!({"type": "number", "allOf": [{"type": "integer"}]}));
    accept(json!({"type": ["integer", "null"], "allOf": [{"type": "integer", "minimum": 1}]}));
    accept(json!({"type": ["string", "null"], "anyOf": [{"type": "string"}, {"type": "null"}]}));
    // Another instance location has its own type.
    accept(json!({"type": "object", "properties": {"a": {"type": "string"}}}));
}

#[test]
fn contradictory_types_are_rejected() {
    let v = reject(
        json!({"type": "string", "allOf": [{"type": "number"}]}),
        StrictRule::ContradictoryTypes,
        "/allOf/0",
    );
    assert_eq!(
        v.message,
        "\"type\" \"number\" allows a type that the parent schema's types [\"string\"] for the same instance do not"
    );
    // As in Ajv: a child may only narrow its parent's types, never widen them.
    reject(
        json!({"type": "integer", "allOf": [{"type": "number", "minimum": 1}]}),
        StrictRule::ContradictoryTypes,
        "/allOf/0",
    );
    reject(
        json!({"type": "string", "anyOf": [{"type": ["string", "null"]}]}),
        StrictRule::ContradictoryTypes,
        "/anyOf/0",
    );
    reject(
        json!({"type": "object", "not": {"type": "array"}}),
        StrictRule::ContradictoryTypes,
        "/not",
    );
    reject(
        json!({"type": "object", "dependentSchemas": {"a": {"type": ["string", "null"]}}}),
        StrictRule::ContradictoryTypes,
        "/dependentSchemas/a",
    );
}

// ---------------------------------------------------------------- RequiredNotDefined

#[test]
fn required_defined_here_or_above_is_accepted() {
    accept(json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}));
    accept(json!({
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "anyOf": [{"required": ["a"]}]
    }));
}

#[test]
fn required_not_defined_is_rejected() {
    let v = reject(
        json!({"type": "object", "properties": {"a": {}}, "required": ["a", "b"]}),
        StrictRule::RequiredNotDefined,
        "",
    );
    assert!(v.message.contains("\"b\""), "{}", v.message);
    assert!(!v.message.contains("\"a\""), "{}", v.message);
    // `properties` of another instance location does not count.
    reject(
        json!({"type": "object", "properties": {"a": {"type": "object", "required": ["a"]}}}),
        StrictRule::RequiredNotDefined,
        "/properties/a",
    );
}

// ---------------------------------------------------------------- UnboundedTuple

#[test]
fn full_tuples_are_accepted() {
    accept(json!({
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "number"}],
        "minItems": 2,
        "maxItems": 2
    }));
    accept(json!({
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "minItems": 1.0,
        "items": false
    }));
}

#[test]
fn unbounded_tuples_are_rejected() {
    reject(
        json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]}),
        StrictRule::UnboundedTuple,
        "",
    );
    reject(
        json!({"type": "array", "prefixItems": [true, true], "minItems": 2}),
        StrictRule::UnboundedTuple,
        "",
    );
    reject(
        json!({"type": "array", "prefixItems": [true, true], "minItems": 1, "maxItems": 2}),
        StrictRule::UnboundedTuple,
        "",
    );
    reject(
        json!({"type": "array", "prefixItems": [true], "minItems": 1, "items": true}),
        StrictRule::UnboundedTuple,
        "",
    );
}

// ---------------------------------------------------------------- if / then / else

#[test]
fn if_with_then_or_else_is_accepted() {
    accept(json!({"if": {"type": "string"}, "then": {"type": "string", "minLength": 1}}));
    accept(json!({"if": {"type": "string"}, "else": {"type": "number"}}));
}

#[test]
fn if_without_then_else_is_rejected() {
    let v = reject(
        json!({"if": {"type": "string"}}),
        StrictRule::IfWithoutThenElse,
        "",
    );
    assert_eq!(v.message, "\"if\" without \"then\" and \"else\" is ignored");
}

#[test]
fn then_or_else_without_if_is_rejected() {
    let v = reject(
        json!({"then": {"type": "string"}}),
        StrictRule::ThenElseWithoutIf,
        "",
    );
    assert_eq!(v.message, "\"then\" without \"if\" is ignored");
    reject(
        json!({"type": "object", "properties": {"a": {"else": false}}}),
        StrictRule::ThenElseWithoutIf,
        "/properties/a",
    );
}

// ---------------------------------------------------------------- minContains / maxContains

#[test]
fn contains_bounds_with_contains_are_accepted() {
    accept(json!({"type": "array", "contains": {"type": "string"}, "minContains": 2}));
}

#[test]
fn contains_bounds_without_contains_are_rejected() {
    reject(
        json!({"type": "array", "minContains": 1}),
        StrictRule::ContainsBoundWithoutContains,
        "",
    );
    let v = reject(
        json!({"type": "array", "items": {"type": "array", "maxContains": 1}}),
        StrictRule::ContainsBoundWithoutContains,
        "/items",
    );
    assert_eq!(v.message, "\"maxContains\" without \"contains\" is ignored");
}

// ---------------------------------------------------------------- patternProperties

#[test]
fn non_matching_patterns_are_accepted() {
    accept(json!({
        "type": "object",
        "properties": {"foo": {"type": "string"}},
        "patternProperties": {"^bar$": true, "^x": true, "z$": true, "qq": true}
    }));
    // Patterns that cannot be decided without a regex engine are not
    // reported (a documented limitation), even when they match.
    accept(json!({
        "type": "object",
        "properties": {"abc": {"type": "string"}},
        "patternProperties": {"^[a-z]+$": true}
    }));
    // `.` does not match a line terminator.
    accept(json!({
        "type": "object",
        "properties": {"a\nb": true},
        "patternProperties": {"^.*$": true}
    }));
}

#[test]
fn matching_patterns_are_rejected() {
    for pattern in ["^foo$", "^fo", "oo$", "o", ".*", "", "^.*$"] {
        let mut patterns = serde_json::Map::new();
        patterns.insert(pattern.to_owned(), json!({"type": "string"}));
        let v = reject(
            json!({
                "type": "object",
                "properties": {"foo": {"type": "string"}},
                "patternProperties": patterns
            }),
            StrictRule::PatternPropertyMatchesProperty,
            "",
        );
        assert_eq!(
            v.message,
            format!("property \"foo\" matches \"patternProperties\" pattern \"{pattern}\"")
        );
    }
}

// ---------------------------------------------------------------- nullable

#[test]
fn null_union_instead_of_nullable_is_accepted() {
    accept(json!({"type": ["string", "null"]}));
}

#[test]
fn nullable_is_rejected() {
    let v = reject(
        json!({"type": "object", "properties": {"a": {"type": "string", "nullable": true}}}),
        StrictRule::Nullable,
        "/properties/a",
    );
    assert!(
        v.message.contains("\"type\": [T, \"null\"]"),
        "{}",
        v.message
    );
}

// ---------------------------------------------------------------- $schema

#[test]
fn draft_2020_12_dialect_is_accepted() {
    accept(json!({"$schema": "https://json-schema.org/draft/2020-12/schema"}));
    accept(json!({"$schema": "https://json-schema.org/draft/2020-12/schema#"}));
}

#[test]
fn other_dialects_are_rejected() {
    reject(
        json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        StrictRule::SchemaDialect,
        "",
    );
    reject(json!({"$schema": 7}), StrictRule::SchemaDialect, "");
    let v = reject(
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"d": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}
        }),
        StrictRule::SchemaDialect,
        "/$defs/d",
    );
    assert_eq!(v.message, "\"$schema\" is only allowed at the root");
}

// ---------------------------------------------------------------- Malformed

#[test]
fn malformed_values_are_rejected_without_panic() {
    let cases = [
        (json!(5), ""),
        (json!("string"), ""),
        (json!(null), ""),
        (json!([]), ""),
        (json!({"type": "object", "properties": 5}), ""),
        (json!({"properties": 5}), ""),
        (json!({"type": "object", "required": "x"}), ""),
        (json!({"required": [1]}), ""),
        (json!({"type": 3}), ""),
        (json!({"type": "strin"}), ""),
        (json!({"type": ["string", 3]}), ""),
        (json!({"type": ["nul", "string"]}), ""),
        (json!({"allOf": []}), ""),
        (json!({"anyOf": {}}), ""),
        (json!({"oneOf": [5]}), "/oneOf/0"),
        (json!({"not": "x"}), "/not"),
        (
            json!({"type": "object", "properties": {"a": 5}}),
            "/properties/a",
        ),
        (json!({"type": "array", "items": []}), "/items"),
        (json!({"type": "array", "prefixItems": []}), ""),
        (json!({"type": "array", "prefixItems": {}}), ""),
        (
            json!({"type": "array", "prefixItems": [true], "minItems": "1"}),
            "",
        ),
        (
            json!({"type": "array", "prefixItems": [true], "minItems": -1}),
            "",
        ),
        (
            json!({"type": "array", "prefixItems": [true], "minItems": 1.5}),
            "",
        ),
        (json!({"$defs": []}), ""),
        (json!({"$ref": 1}), ""),
        (
            json!({"type": "object", "dependentRequired": {"a": "b"}}),
            "",
        ),
        (
            json!({"type": "object", "patternProperties": {"^a": 1}}),
            "/patternProperties/^a",
        ),
    ];
    for (schema, pointer) in cases {
        let v = reject(schema, StrictRule::Malformed, pointer);
        assert!(!v.message.is_empty());
    }
}

#[test]
fn malformed_messages_name_the_keyword() {
    let v = reject(json!({"properties": 5}), StrictRule::Malformed, "");
    assert_eq!(
        v.message,
        "\"properties\" must be an object whose values are schemas, found a number"
    );
    let v = reject(json!(5), StrictRule::Malformed, "");
    assert_eq!(
        v.message,
        "a schema must be an object or a boolean, found a number"
    );
}

#[test]
fn bad_values_of_unchecked_keywords_do_not_panic() {
    // The meta-schema check rejects these; the strict check only must not crash.
    for schema in [
        json!({"type": "string", "maxLength": "x", "pattern": 3}),
        json!({"type": "array", "minItems": {}, "uniqueItems": "yes"}),
        json!({"enum": 5, "const": {"a": [1, {"b": null}]}, "$vocabulary": 1}),
        json!({"type": "object", "properties": {"a": true}, "required": [], "patternProperties": {}}),
    ] {
        assert_eq!(check_strict(&schema), Ok(()), "{schema}");
    }
}

// ---------------------------------------------------------------- depth

/// Builds `levels` nested `{"type": "array", "items": ...}` with a `true` leaf.
fn nested_items(levels: usize, typed: bool) -> Value {
    let mut schema = Value::Bool(true);
    for _ in 0..levels {
        let mut object = serde_json::Map::new();
        if typed {
            object.insert("type".to_owned(), json!("array"));
        }
        object.insert("items".to_owned(), schema);
        schema = Value::Object(object);
    }
    schema
}

/// Drops a deeply nested `items` or `allOf` chain without recursing.
fn drop_nested(mut schema: Value) {
    while let Value::Object(mut object) = schema {
        schema = match object.remove("items").or_else(|| object.remove("allOf")) {
            Some(Value::Array(mut items)) => items.pop().unwrap_or(Value::Null),
            Some(inner) => inner,
            None => Value::Null,
        };
    }
}

#[test]
fn very_deep_schema_is_rejected_without_overflow() {
    let schema = nested_items(10_000, true);
    let v = check_strict(&schema).expect_err("too deep");
    assert_eq!(v.rule, StrictRule::SchemaTooDeep);
    assert_eq!(v.pointer, "/items".repeat(MAX_SCHEMA_DEPTH));
    drop_nested(schema);

    // Without types the first violation is at the root, found before any descent.
    let schema = nested_items(10_000, false);
    let v = check_strict(&schema).expect_err("untyped items");
    assert_eq!(
        (v.rule, v.pointer.as_str()),
        (StrictRule::ApplicableType, "")
    );
    drop_nested(schema);
}

#[test]
fn depth_limit_is_exact() {
    // The leaf `true` sits at depth `levels`.
    let schema = nested_items(MAX_SCHEMA_DEPTH - 1, true);
    assert_eq!(check_strict(&schema), Ok(()));
    let schema = nested_items(MAX_SCHEMA_DEPTH, true);
    let v = check_strict(&schema).expect_err("too deep");
    assert_eq!(v.rule, StrictRule::SchemaTooDeep);
    assert_eq!(v.pointer, "/items".repeat(MAX_SCHEMA_DEPTH));
}

#[test]
fn deep_same_location_nesting_is_rejected() {
    // Built by hand: `json!` would serialize (recursively) an interpolated value.
    let mut schema = json!({"type": "string"});
    for _ in 0..10_000 {
        let mut object = serde_json::Map::new();
        object.insert("allOf".to_owned(), Value::Array(vec![schema]));
        schema = Value::Object(object);
    }
    let v = check_strict(&schema).expect_err("too deep");
    assert_eq!(v.rule, StrictRule::SchemaTooDeep);
    assert_eq!(v.pointer, "/allOf/0".repeat(MAX_SCHEMA_DEPTH));
    drop_nested(schema);
}

// ---------------------------------------------------------------- order

#[test]
fn first_violation_is_reported_parent_first_then_in_key_order() {
    // Keys are written in sorted order so the expectation holds with and
    // without serde_json's `preserve_order`.
    reject(
        json!({"allOf": [{"foo": 1}], "bar": 1}),
        StrictRule::UnknownKeyword,
        "",
    );
    reject(
        json!({"allOf": [{"foo": 1}], "anyOf": [{"bar": 1}]}),
        StrictRule::UnknownKeyword,
        "/allOf/0",
    );
    // `type` is checked before the other keywords of its schema object.
    reject(
        json!({"maxLength": 3, "type": "strin"}),
        StrictRule::Malformed,
        "",
    );
}

// ---------------------------------------------------------------- realistic schemas

#[test]
fn object_with_closed_properties_is_accepted() {
    accept(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "id": {"type": "string", "minLength": 1, "maxLength": 64},
            "count": {"type": "integer", "minimum": 0},
            "ratio": {"type": "number", "exclusiveMaximum": 1},
            "enabled": {"type": "boolean"}
        },
        "required": ["id", "count"],
        "additionalProperties": false
    }));
}

#[test]
fn nested_arrays_of_objects_are_accepted() {
    accept(json!({
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "maxItems": 100,
                "items": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"x": {"type": "number"}, "label": {"type": "string"}},
                        "required": ["x"],
                        "additionalProperties": false
                    }
                }
            }
        }
    }));
}

#[test]
fn any_of_typed_branches_is_accepted() {
    accept(json!({
        "anyOf": [
            {"type": "string", "maxLength": 10},
            {"type": "integer", "minimum": 0},
            {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}
        ]
    }));
}

#[test]
fn nullable_string_with_max_length_is_accepted() {
    accept(json!({
        "type": "object",
        "properties": {"note": {"type": ["string", "null"], "maxLength": 280}}
    }));
}

#[test]
fn defs_and_ref_are_accepted() {
    accept(json!({
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/address"},
            "work": {"$ref": "#/$defs/address", "description": "office"}
        },
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
                "required": ["street"]
            }
        }
    }));
}

#[test]
fn full_tuple_is_accepted() {
    accept(json!({
        "type": "object",
        "properties": {
            "point": {
                "type": "array",
                "prefixItems": [{"type": "number"}, {"type": "number"}, {"type": ["string", "null"]}],
                "minItems": 3,
                "items": false
            }
        }
    }));
}

#[test]
fn boolean_schemas_are_accepted() {
    accept(json!(true));
    accept(json!(false));
    accept(json!({
        "type": "object",
        "properties": {"any": true, "never": false},
        "additionalProperties": false,
        "allOf": [true],
        "not": false
    }));
}

#[test]
fn if_then_else_with_types_is_accepted() {
    accept(json!({
        "type": "object",
        "properties": {"kind": {"type": "string"}, "size": {"type": "integer"}},
        "if": {"properties": {"kind": {"const": "big"}}, "required": ["kind"]},
        "then": {"properties": {"size": {"type": "integer", "minimum": 100}}},
        "else": {"properties": {"size": {"type": "integer", "maximum": 99}}}
    }));
}

#[test]
fn data_values_are_not_walked() {
    accept(json!({
        "type": "object",
        "properties": {
            "format": {"type": "string", "const": "x"},
            "nullable": {"type": "boolean"}
        },
        "required": ["format", "nullable"],
        "const": {"format": "email", "nullable": true, "foo": {"items": 5}},
        "enum": [{"format": "date", "$schema": "x"}, {"type": ["a", "b"]}],
        "default": {"format": "uri", "if": {}},
        "examples": [{"format": "uuid", "properties": 5}]
    }));
}

/// MCP's `x-mcp-header` (SEP-2243): a header-name token on an integer, string or boolean
/// property; anything else is refused.
#[test]
fn an_mcp_header_is_a_token_on_a_scalar_property() {
    let property = |p: Value| json!({"type": "object", "properties": {"v": p}});
    for ty in ["string", "integer", "boolean"] {
        accept(property(json!({"type": ty, "x-mcp-header": "Value"})));
    }
    for bad in [
        json!(""),
        json!("Two Words"),
        json!("a\r\nb"),
        json!(7),
        json!("a:b"),
    ] {
        reject(
            property(json!({"type": "string", "x-mcp-header": bad})),
            StrictRule::McpHeader,
            "/properties/v",
        );
    }
    assert_eq!(StrictRule::McpHeader.code(), "MCP_HEADER_INVALID");
    // Not on a number, an object, an array, or without a type of its own.
    for p in [
        json!({"type": "number", "x-mcp-header": "Value"}),
        json!({"type": "object", "x-mcp-header": "Value"}),
        json!({"type": "array", "x-mcp-header": "Value"}),
        json!({"x-mcp-header": "Value"}),
    ] {
        reject(property(p), StrictRule::McpHeader, "/properties/v");
    }
}
