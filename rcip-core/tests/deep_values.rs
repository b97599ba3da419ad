//! Regression: a deep in-memory value is refused, not walked into a stack overflow.

use rcip_core::depth::{dismantle, nested_arrays as nested};
use rcip_core::jcs::{JcsError, MAX_CANONICAL_DEPTH, canonical_json, canonical_object};
use rcip_core::schema::{StrictRule, check_strict};
use rcip_core::{SchemaIds, SchemaRole, check_schema};
use rcip_test_support::on_small_stack;
use serde_json::{Map, Value, json};

#[test]
fn canonical_json_refuses_a_value_100_000_deep() {
    on_small_stack(|| {
        let value = nested(100_000);
        let error = canonical_json(&value).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        assert_eq!(
            error,
            JcsError::TooDeep {
                limit: MAX_CANONICAL_DEPTH
            }
        );
        // serde_json's `Value` drops recursively: taken apart iteratively instead.
        dismantle(value);
    });
}

#[test]
fn canonical_object_refuses_a_value_100_000_deep() {
    on_small_stack(|| {
        let mut map = Map::new();
        map.insert("deep".to_owned(), nested(100_000));
        let error = canonical_object(&map).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        dismantle(Value::Object(map));
    });
}

#[test]
fn the_limit_itself_is_canonicalized() {
    let value = nested(MAX_CANONICAL_DEPTH);
    let text = canonical_json(&value).expect("at the limit");
    assert_eq!(text.len(), 2 * MAX_CANONICAL_DEPTH + 1);
    assert!(canonical_json(&nested(MAX_CANONICAL_DEPTH + 1)).is_err());
    // An object is one level too: 127 arrays inside it is the most.
    let mut map = Map::new();
    map.insert("a".to_owned(), nested(MAX_CANONICAL_DEPTH - 1));
    assert!(canonical_object(&map).is_ok());
    map.insert("a".to_owned(), nested(MAX_CANONICAL_DEPTH));
    assert!(canonical_object(&map).is_err());
}

/// An application with one capability of these input and output schemas.
fn notes(input_schema: Value, output_schema: Value) -> rcip_core::ApplicationDefinition {
    let mut capability = rcip_core::CapabilityDefinition::new(
        "notes.list",
        rcip_core::Effect::Read,
        "List",
        "Lists notes.",
    );
    capability.input_schema = input_schema.into();
    capability.output_schema = output_schema.into();
    let mut definition = rcip_core::ApplicationDefinition::new("notes", "Notes", "Notes.");
    definition.capabilities.push(capability);
    definition
}

#[test]
fn a_catalog_with_a_deep_schema_has_no_revision() {
    on_small_stack(|| {
        let mut definition = notes(nested(100_000), json!({}));
        let error = rcip_core::catalog_revision(&definition).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        assert!(rcip_core::catalog_export(&definition).is_err());
        for capability in std::mem::take(&mut definition.capabilities) {
            dismantle(capability.input_schema.into_value());
        }
    });
}

/// `{key: value}`, built by moving (`json!` would serialize an interpolated value).
fn member(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

#[test]
fn check_strict_stops_a_subschema_chain_100_000_deep() {
    on_small_stack(|| {
        let mut schema = json!(true);
        for _ in 0..100_000 {
            schema = member("not", schema);
        }
        let violation = check_strict(&schema).expect_err("too deep");
        assert_eq!(violation.rule.code(), "SCHEMA_TOO_DEEP");
        dismantle(schema);
    });
}

#[test]
fn check_strict_never_walks_a_deep_annotation() {
    // `default`, `const`, `enum` and `examples` are values, not subschemas: the walk never
    // enters them, so one 100,000 deep costs nothing (check_schema refuses it, below).
    on_small_stack(|| {
        for keyword in ["default", "const", "enum", "examples", "$schema", "type"] {
            let schema = member(keyword, nested(100_000));
            // Any answer will do, as long as it comes back.
            let _ = check_strict(&schema);
            dismantle(schema);
        }
    });
}

#[test]
fn check_schema_refuses_a_schema_100_000_deep() {
    on_small_stack(|| {
        let mut ids = SchemaIds::default();
        // The same deep `$id` schema twice would be compared (recursively) for the `$id`
        // rule; each is refused before that.
        let schema = member("default", nested(100_000));
        let Value::Object(mut map) = schema else {
            unreachable!()
        };
        map.insert("$id".to_owned(), json!("urn:deep"));
        let schema = Value::Object(map);
        for _ in 0..2 {
            let error = check_schema("notes.list", SchemaRole::Input, &schema, &mut ids)
                .expect_err("too deep");
            assert_eq!(error.code(), "INVALID_SCHEMA");
            let rcip_core::DefinitionError::InvalidSchema { rule, pointer, .. } = &error else {
                panic!("{error:?}")
            };
            assert_eq!(*rule, StrictRule::SchemaTooDeep.code());
            assert_eq!(pointer, "");
        }
        dismantle(schema);
    });
}

#[test]
fn check_schema_takes_a_schema_at_the_value_limit() {
    let mut ids = SchemaIds::default();
    // The root object is one level: 127 arrays beneath it is the most.
    let schema = member("default", nested(rcip_core::depth::MAX_VALUE_DEPTH - 1));
    assert_eq!(
        check_schema("notes.list", SchemaRole::Input, &schema, &mut ids),
        Ok(())
    );
    let schema = member("default", nested(rcip_core::depth::MAX_VALUE_DEPTH));
    assert!(check_schema("notes.list", SchemaRole::Input, &schema, &mut ids).is_err());
}

#[test]
fn validate_definition_refuses_a_deep_schema() {
    on_small_stack(|| {
        let mut definition = notes(json!({}), member("const", nested(100_000)));
        let error = rcip_core::validate_definition(&definition).expect_err("too deep");
        assert_eq!(error.code(), "INVALID_SCHEMA");
        for capability in std::mem::take(&mut definition.capabilities) {
            dismantle(capability.output_schema.into_value());
        }
    });
}
