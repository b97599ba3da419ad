//! Regression: a deep in-memory package is refused, not walked into a stack overflow.

use rcip_core::depth::dismantle;
use rcip_relationship::{MAX_PACKAGE_DEPTH, ProblemCode, validate_package};
use serde_json::{Value, json};

/// `{"a": {"b": … value}}` along `path`, built by moving (`json!` would serialize an
/// interpolated value, recursively).
fn at(path: &[&str], value: Value) -> Value {
    path.iter().rev().fold(value, |inner, name| {
        let mut map = serde_json::Map::new();
        map.insert((*name).to_owned(), inner);
        Value::Object(map)
    })
}

/// `depth` nested arrays, built iteratively.
fn nested(depth: usize) -> Value {
    let mut value = json!(0);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

fn on_small_stack(check: impl FnOnce() + Send + 'static) {
    let thread = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(check)
        .expect("a thread");
    assert!(thread.join().is_ok(), "the check panicked");
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
