//! Regression: a deep in-memory value is refused, not walked into a stack overflow.

use rcip_core::depth::dismantle;
use rcip_core::jcs::{JcsError, MAX_CANONICAL_DEPTH, canonical_json, canonical_object};
use serde_json::{Map, Value, json};

/// `depth` nested arrays around `0`, built iteratively.
fn nested(depth: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// Runs `check` on a thread with a 2 MiB stack (a tokio worker's) and fails if it crashed.
fn on_small_stack(check: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(check)
        .expect("a thread");
    assert!(thread.join().is_ok(), "the check panicked");
}

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

#[test]
fn a_catalog_with_a_deep_schema_has_no_revision() {
    on_small_stack(|| {
        let mut capability = rcip_core::CapabilityDefinition::new(
            "notes.list",
            rcip_core::Effect::Read,
            "List",
            "Lists notes.",
        );
        capability.input_schema = nested(100_000);
        let mut definition = rcip_core::ApplicationDefinition::new("notes", "Notes", "Notes.");
        definition.capabilities.push(capability);
        let error = rcip_core::catalog_revision(&definition).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        assert!(rcip_core::catalog_export(&definition).is_err());
        for capability in std::mem::take(&mut definition.capabilities) {
            dismantle(capability.input_schema);
        }
    });
}
