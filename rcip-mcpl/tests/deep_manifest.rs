//! Regression: a deep in-memory manifest is refused, not walked into a stack overflow.

use rcip_core::depth::dismantle;
use rcip_mcpl::{MAX_MANIFEST_DEPTH, changed_domains, manifest_canonical_json, manifest_digest};
use serde_json::{Value, json};

/// A manifest whose vendor member nests `depth` arrays, built iteratively (the root object
/// is one more level).
fn manifest(depth: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    // Inserted, not interpolated: `json!` would serialize the value, recursively.
    let mut root = serde_json::Map::new();
    root.insert("version".to_owned(), json!("0.5"));
    root.insert("x-deep".to_owned(), value);
    Value::Object(root)
}

fn on_small_stack(check: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(check)
        .expect("a thread");
    assert!(thread.join().is_ok(), "the check panicked");
}

#[test]
fn a_manifest_100_000_deep_has_no_digest() {
    on_small_stack(|| {
        let deep = manifest(100_000);
        let error = manifest_digest(&deep).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        let error = manifest_canonical_json(&deep).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        let error = changed_domains(None, &deep).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        let error = changed_domains(Some(&deep), &json!({})).expect_err("too deep");
        assert_eq!(error.code(), "value_too_deep");
        let code = rcip_mcpl::ManifestTracker::new(&deep).map_err(|error| error.code());
        assert!(matches!(code, Err("value_too_deep")));
        // serde_json's `Value` drops recursively: taken apart iteratively instead.
        dismantle(deep);
    });
}

#[test]
fn a_manifest_at_the_limit_has_a_digest() {
    assert!(manifest_digest(&manifest(MAX_MANIFEST_DEPTH - 1)).is_ok());
    assert!(changed_domains(None, &manifest(MAX_MANIFEST_DEPTH - 1)).is_ok());
    assert!(manifest_digest(&manifest(MAX_MANIFEST_DEPTH)).is_err());
}
