//! Property tests: a schema of the strict subset compared with itself has no changes; made
//! stricter, every change is stricter (breaking as input, info as output); made looser, the
//! reverse.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use rcip_diff::{Severity, diff_catalogs};
use serde_json::{Value, json};

/// A property schema of the subset: a typed leaf with optional bounds or values.
fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0u32..5, 5u32..50)
            .prop_map(|(min, max)| json!({"type": "string", "minLength": min, "maxLength": max})),
        (0i64..10, 10i64..100)
            .prop_map(|(min, max)| json!({"type": "integer", "minimum": min, "maximum": max})),
        Just(json!({"type": "boolean"})),
        prop::collection::btree_set("[a-d]", 2..4).prop_map(
            |values| json!({"type": "string", "enum": values.into_iter().collect::<Vec<_>>()})
        ),
    ]
}

/// A closed object of 1 to 5 such properties, some required.
fn object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-h]{1,3}", leaf(), 1..5).prop_flat_map(|properties| {
        let names: Vec<String> = properties.keys().cloned().collect();
        let count = names.len();
        (Just(properties), Just(names), prop::collection::vec(any::<bool>(), count))
    })
    .prop_map(|(properties, names, required)| {
        let required: Vec<&String> = names.iter().zip(required).filter(|(_, r)| *r).map(|(n, _)| n).collect();
        json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
    })
}

/// One change that only narrows what `schema` accepts, at property `index` (mod the count).
fn stricter(schema: &Value, index: usize, kind: u8) -> Value {
    let mut schema = schema.clone();
    let names: Vec<String> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let name = &names[index % names.len()];
    let property = &mut schema["properties"][name];
    match (kind % 3, property["type"].as_str().unwrap()) {
        (0, "string") if property.get("minLength").is_some() => {
            property["minLength"] = json!(property["minLength"].as_u64().unwrap() + 1);
        }
        (1, "integer") => property["maximum"] = json!(property["maximum"].as_i64().unwrap() - 1),
        (_, "string") if property.get("enum").is_some() => {
            let mut values = property["enum"].as_array().unwrap().clone();
            values.pop();
            property["enum"] = json!(values);
        }
        _ => {
            // Required, if it was not; else a lower bound of its own kind.
            let required = schema["required"].as_array_mut().unwrap();
            if !required.contains(&json!(name)) {
                required.push(json!(name));
            } else {
                let property = &mut schema["properties"][name];
                if property["type"] == "integer" {
                    property["minimum"] = json!(property["minimum"].as_i64().unwrap() + 1);
                } else if property["type"] == "boolean" {
                    property["const"] = json!(true);
                } else if property.get("enum").is_none() {
                    property["format"] = json!("uuid");
                } else {
                    property["maxLength"] = json!(1);
                }
            }
        }
    }
    schema
}

fn wrap(key: &str, schema: &Value) -> Value {
    json!({"application": {"id": "a"}, "scopes": [], "capabilities": [
        {"id": "c", "effect": "read", "scopeIds": [], key: schema}
    ]})
}

fn severities(key: &str, old: &Value, new: &Value) -> Vec<Severity> {
    diff_catalogs(&wrap(key, old), &wrap(key, new))
        .unwrap()
        .changes
        .iter()
        .map(|c| c.severity)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_schema_against_itself_has_no_changes(schema in object()) {
        prop_assert!(severities("inputSchema", &schema, &schema).is_empty());
        prop_assert!(severities("outputSchema", &schema, &schema).is_empty());
    }

    #[test]
    fn stricter_and_looser_are_classified_by_role(schema in object(), index in 0usize..5, kind in 0u8..3) {
        let narrowed = stricter(&schema, index, kind);
        prop_assume!(narrowed != schema);
        // Stricter: breaking as input, info as output.
        let input = severities("inputSchema", &schema, &narrowed);
        prop_assert!(!input.is_empty() && input.iter().all(|s| *s == Severity::Breaking), "{input:?}");
        let output = severities("outputSchema", &schema, &narrowed);
        prop_assert!(output.iter().all(|s| *s == Severity::Info), "{output:?}");
        // The same change undone is looser: info as input, breaking as output.
        let input = severities("inputSchema", &narrowed, &schema);
        prop_assert!(input.iter().all(|s| *s == Severity::Info), "{input:?}");
        let output = severities("outputSchema", &narrowed, &schema);
        prop_assert!(!output.is_empty() && output.iter().all(|s| *s == Severity::Breaking), "{output:?}");
    }
}
