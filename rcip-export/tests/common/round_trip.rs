//! The round-trip property, shared by this crate's tests and the examples' agent corpus test
//! (`examples/tests/agent_exports.rs` includes this file by path): instances valid for the base
//! schema, shaped as each profile's consumer sends them, validate against the profile's schema
//! and come back through `arguments_to_input` as the original instance.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fmt::Debug;

use proptest::prelude::*;
use proptest::strategy::Union;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use rcip_core::{CapabilityDefinition, Effect};
use rcip_export::{Profile, export};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// Instances from a base-form JSON Schema.

fn bound(schema: &Value, keyword: &str) -> Option<i128> {
    let n = schema.get(keyword)?;
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn int_value(i: i128) -> Value {
    if let Ok(v) = i64::try_from(i) {
        json!(v)
    } else {
        json!(u64::try_from(i).unwrap_or(u64::MAX))
    }
}

fn of_type(schema: &Value, t: &str) -> BoxedStrategy<Value> {
    match t {
        "null" => Just(Value::Null).boxed(),
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => {
            let lo = bound(schema, "minimum").unwrap_or(i128::from(i64::MIN));
            let hi = bound(schema, "maximum").unwrap_or(i128::from(i64::MAX));
            prop_oneof![Just(lo), Just(hi), lo..=hi]
                .prop_map(int_value)
                .boxed()
        }
        "number" => {
            let lo = schema
                .get("minimum")
                .and_then(Value::as_f64)
                .unwrap_or(-1.0e6);
            let hi = schema
                .get("maximum")
                .and_then(Value::as_f64)
                .unwrap_or(1.0e6);
            prop_oneof![Just(lo), Just(hi), lo..=hi]
                .prop_map(|f| json!(f))
                .boxed()
        }
        "string" if schema.get("format").is_some() => {
            let format = schema["format"].as_str().unwrap();
            let samples: Vec<&str> = match format {
                "uuid" => vec![
                    "67e55044-10b1-426f-9247-bb680e5fe0c8",
                    "00000000-0000-0000-0000-000000000000",
                ],
                "date-time" => vec!["2026-12-01T11:37:00Z", "1999-01-31T23:59:59.5+02:00"],
                "date" => vec!["2026-12-01", "2000-02-29"],
                "email" => vec!["ann@example.com", "b.c@d.org"],
                "uri" => vec!["https://example.com/a?b=c", "urn:isbn:0451450523"],
                other => panic!("no instances for format {other}"),
            };
            proptest::sample::select(samples)
                .prop_map(|s| json!(s))
                .boxed()
        }
        "string" if schema.get("pattern").is_some() => {
            let pattern = schema["pattern"].as_str().unwrap();
            // ECMA-262's classes are ASCII (as the validator reads them); the generator's
            // regex crate reads them as Unicode classes.
            let body = pattern
                .trim_start_matches('^')
                .trim_end_matches('$')
                .replace("\\d", "[0-9]")
                .replace("\\w", "[A-Za-z0-9_]");
            let body = body.as_str();
            let lo = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let hi = schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .map_or(usize::MAX, |m| m as usize);
            proptest::string::string_regex(body)
                .unwrap()
                .prop_filter("within the length bounds", move |s| {
                    (lo..=hi).contains(&s.chars().count())
                })
                .prop_map(Value::String)
                .boxed()
        }
        "string" => {
            let lo = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            let hi = schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .map_or(lo + 8, |m| m as usize);
            let chars: Vec<char> = "abcXYZ019 ._-é".chars().collect();
            proptest::collection::vec(proptest::sample::select(chars), lo..=hi)
                .prop_map(|cs| Value::String(cs.into_iter().collect()))
                .boxed()
        }
        "array" if schema.get("prefixItems").is_some() => {
            // A closed tuple: one instance per position.
            let items: Vec<BoxedStrategy<Value>> = schema["prefixItems"]
                .as_array()
                .unwrap()
                .iter()
                .map(instances)
                .collect();
            items.prop_map(Value::Array).boxed()
        }
        "array" => {
            let lo = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let hi = schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(lo + 3, |m| (m as usize).min(lo + 3));
            let items = schema
                .get("items")
                .map_or_else(|| Just(Value::Null).boxed(), instances);
            let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
            proptest::collection::vec(items, lo..=hi)
                .prop_map(move |mut items| {
                    if unique {
                        let mut seen = Vec::new();
                        items.retain(|item| {
                            let first = !seen.contains(item);
                            seen.push(item.clone());
                            first
                        });
                    }
                    items
                })
                .prop_filter("enough distinct items", move |items| items.len() >= lo)
                .prop_map(Value::Array)
                .boxed()
        }
        "object" => object(schema),
        other => panic!("no instances for type {other}"),
    }
}

fn object(schema: &Value) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for (name, prop) in props {
            let name = name.clone();
            let value = instances(prop);
            if required.contains(&name.as_str()) {
                fields.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
            } else {
                fields
                    .push(proptest::option::of(value.prop_map(move |v| (name.clone(), v))).boxed());
            }
        }
    }
    let extra = match schema.get("additionalProperties") {
        Some(ap @ Value::Object(_)) => {
            proptest::collection::btree_map("[a-z]{1,4}", instances(ap), 0..3).boxed()
        }
        _ => Just(BTreeMap::new()).boxed(),
    };
    (fields, extra)
        .prop_map(|(fields, extra)| {
            let mut map: Map<String, Value> = extra.into_iter().collect();
            map.extend(fields.into_iter().flatten());
            Value::Object(map)
        })
        .boxed()
}

/// Instances of a base-form schema (the keywords the strict generator emits).
fn instances(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(value) = schema.get("const") {
        return Just(value.clone()).boxed();
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return proptest::sample::select(values.clone()).boxed();
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword) {
            return Union::new(branches.iter().map(instances)).boxed();
        }
    }
    match schema.get("type") {
        Some(Value::String(t)) => of_type(schema, t),
        Some(Value::Array(ts)) => {
            Union::new(ts.iter().map(|t| of_type(schema, t.as_str().unwrap()))).boxed()
        }
        _ => panic!("no instances for {schema}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Shaping: what the profile's consumer sends for an instance (the test's own model).

/// A draft 2020-12 validator that checks formats too (as the runtime does for rcip's formats).
fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap()
}

fn valid(schema: &Value, instance: &Value) -> bool {
    validator(schema).is_valid(instance)
}

fn gemini_property(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        out.insert(0, '_');
    }
    out
}

fn shape(profile: Profile, schema: &Value, instance: &Value) -> Value {
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword) {
            let branch = branches.iter().find(|b| valid(b, instance)).unwrap();
            return shape(profile, branch, instance);
        }
    }
    let is_map = schema
        .get("additionalProperties")
        .is_some_and(Value::is_object)
        && schema.get("properties").is_none();
    let entries = matches!(
        profile,
        Profile::OpenAi | Profile::Anthropic | Profile::Gemini
    );
    let mcp = matches!(profile, Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28);
    match instance {
        Value::Object(map) if is_map && entries => Value::Array(
            map.iter()
                .map(|(k, v)| json!({"key": k, "value": shape(profile, &schema["additionalProperties"], v)}))
                .collect(),
        ),
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for (key, value) in map {
                let (name, sub) = match props.and_then(|p| p.get(key)) {
                    Some(sub) if profile == Profile::Gemini => (gemini_property(key), sub),
                    Some(sub) => (key.clone(), sub),
                    None => (key.clone(), schema.get("additionalProperties").unwrap()),
                };
                out.insert(name, shape(profile, sub, value));
            }
            if profile == Profile::OpenAi {
                for name in props.into_iter().flat_map(|p| p.keys()) {
                    out.entry(name.clone()).or_insert(Value::Null);
                }
            }
            Value::Object(out)
        }
        // A tuple goes as an object of its items for every profile but MCP.
        Value::Array(items) if schema.get("prefixItems").is_some() && !mcp => Value::Object(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let sub = &schema["prefixItems"][i];
                    (format!("item_{i}"), shape(profile, sub, item))
                })
                .collect(),
        ),
        Value::Array(items) if schema.get("prefixItems").is_some() => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| shape(profile, &schema["prefixItems"][i], item))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| shape(profile, &schema["items"], i))
                .collect(),
        ),
        Value::Number(n) if profile == Profile::Gemini && schema.get("enum").is_some() => {
            Value::String(n.to_string())
        }
        other => other.clone(),
    }
}

/// The base schema narrowed to what the profile lets a model send: OpenAI and
/// gemini-json-schema clamp integer bounds to ±(2^53 − 1) (documented), so values beyond
/// cannot come from them.
fn sendable(profile: Profile, schema: &Value) -> Value {
    const SAFE: i128 = 9_007_199_254_740_991;
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, value) in map {
                let clamp = matches!(profile, Profile::OpenAi | Profile::GeminiJsonSchema)
                    && matches!(key.as_str(), "minimum" | "maximum");
                let value = match bound(schema, key).filter(|_| clamp) {
                    Some(b) => int_value(b.clamp(-SAFE, SAFE)),
                    None => sendable(profile, value),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| sendable(profile, i)).collect()),
        other => other.clone(),
    }
}

/// What the way back gives for `instance` under `profile`: the instance itself, except that
/// for OpenAI an optional property sent as `null` cannot be told from an absent one and comes
/// back absent (the same Rust value: `None` either way).
fn expected(profile: Profile, schema: &Value, instance: &Value) -> Value {
    if profile != Profile::OpenAi {
        return instance.clone();
    }
    for keyword in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = schema.get(keyword) {
            let branch = branches.iter().find(|b| valid(b, instance)).unwrap();
            return expected(profile, branch, instance);
        }
    }
    match instance {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            for (key, value) in map {
                match props.and_then(|p| p.get(key)) {
                    Some(_) if value.is_null() && !required.contains(&key.as_str()) => {}
                    Some(sub) => {
                        out.insert(key.clone(), expected(profile, sub, value));
                    }
                    None => {
                        out.insert(
                            key.clone(),
                            expected(profile, &schema["additionalProperties"], value),
                        );
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(n, i)| match schema.get("prefixItems") {
                    Some(prefix) => expected(profile, &prefix[n], i),
                    None => expected(profile, &schema["items"], i),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Gemini's OpenAPI `Schema` as the JSON Schema it stands for, to validate shaped arguments:
/// lower-case types, `nullable` as a type array, `format: "enum"` values as the strings sent.
fn openapi_as_json_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(node) => {
            let mut out = Map::new();
            for (key, value) in node {
                out.insert(key.clone(), openapi_as_json_schema(value));
            }
            if let Some(Value::String(t)) = node.get("type") {
                out.insert("type".to_owned(), json!(t.to_ascii_lowercase()));
            }
            if node.get("format") == Some(&json!("enum")) {
                out.remove("format");
                out.insert("type".to_owned(), json!("string"));
            }
            if out.remove("nullable") == Some(json!(true)) {
                let t = out["type"].clone();
                out.insert("type".to_owned(), json!([t, "null"]));
                if let Some(Value::Array(values)) = out.get_mut("enum") {
                    values.push(Value::Null);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(openapi_as_json_schema).collect()),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// The property.

/// Whether the original instance and the normalized input parse into the same Rust value.
pub type SerdeCheck<'a> = &'a dyn Fn(&Value, &Value) -> Result<(), String>;

pub fn same_rust_value<T: DeserializeOwned + PartialEq + Debug>(
    original: &Value,
    normalized: &Value,
) -> Result<(), String> {
    let a: T = serde_json::from_value(original.clone()).map_err(|e| format!("original: {e}"))?;
    let b: T =
        serde_json::from_value(normalized.clone()).map_err(|e| format!("normalized: {e}"))?;
    if a == b {
        Ok(())
    } else {
        Err(format!("{a:?} != {b:?}"))
    }
}

/// Runs the property for one base schema under every profile; returns how many profiles refused it.
pub fn round_trip(
    label: &str,
    base: &Value,
    refused_by: &[Profile],
    serde_check: Option<SerdeCheck<'_>>,
) {
    let capability = CapabilityDefinition::new("rt.case", Effect::Write, "Case", "A case.")
        .input_schema(base.clone());
    let base_validator = validator(base);
    for profile in Profile::ALL {
        let exported = match export(profile, [(&capability).into()]) {
            Ok(exported) => {
                assert!(
                    !refused_by.contains(&profile),
                    "{label}: {profile} was expected to refuse"
                );
                exported
            }
            Err(error) => {
                assert!(
                    refused_by.contains(&profile),
                    "{label}: {profile} refused: {error}"
                );
                assert_eq!(error.code(), "UNSUPPORTED_SCHEMA", "{label}");
                continue;
            }
        };
        let tool = &exported.tools()[0];
        let profile_schema = if profile == Profile::Gemini {
            openapi_as_json_schema(tool.input_schema())
        } else {
            tool.input_schema().clone()
        };
        let profile_validator = validator(&profile_schema);
        let wrapped = tool.input_wrapped();
        let mut runner = TestRunner::new(Config {
            cases: 48,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&instances(&sendable(profile, base)), |instance| {
            prop_assert!(
                base_validator.is_valid(&instance),
                "generated instance invalid: {instance}"
            );
            let mut arguments = shape(profile, base, &instance);
            if wrapped {
                arguments = json!({ "input": arguments });
            }
            {
                let validator = &profile_validator;
                prop_assert!(
                    validator.is_valid(&arguments),
                    "{profile}: {arguments} invalid for {}",
                    tool.input_schema()
                );
            }
            let (id, input) = exported
                .arguments_to_input(tool.name(), arguments.clone())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(id.as_str(), "rt.case");
            prop_assert_eq!(
                &input,
                &expected(profile, base, &instance),
                "{} via {}",
                profile,
                arguments
            );
            prop_assert!(base_validator.is_valid(&input));
            if let Some(check) = serde_check {
                check(&instance, &input).map_err(TestCaseError::fail)?;
            }
            Ok(())
        });
        if let Err(error) = result {
            panic!("{label} under {profile}: {error}");
        }
    }
}
