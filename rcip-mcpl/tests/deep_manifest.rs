//! Regression: a deep in-memory manifest, vocabulary file or feature set is refused or
//! passed over, not walked into a stack overflow.

use rcip_core::depth::{dismantle, nested_arrays};
use rcip_mcpl::{
    DisabledReason, GrantState, MAX_MANIFEST_DEPTH, VOCABULARY, changed_domains,
    feature_set_states, manifest_canonical_json, manifest_digest, parse_vocabulary,
};
use rcip_test_support::on_small_stack;
use serde_json::{Map, Value, json};

/// `{key: value}`, built by moving: `json!` would serialize an interpolated value,
/// recursively.
fn member(key: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

/// A manifest whose vendor member nests `depth` arrays, built iteratively (the root object
/// is one more level).
fn manifest(depth: usize) -> Value {
    let mut root = member("x-deep", nested_arrays(depth));
    root["version"] = json!("0.5");
    root
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

#[test]
fn a_vocabulary_file_100_000_deep_is_refused_at_its_form() {
    // The file is read only to the depth of its form: a deep value where a path or a name
    // belongs is a `WRONG_TYPE` or `INVALID_NAME`, found without descending.
    on_small_stack(|| {
        for key in ["paths", "advertisedOutside", "vocabulary", "x-other"] {
            let mut file = member(key, nested_arrays(100_000));
            if key != "paths" {
                file["paths"] = json!(["a"]);
            }
            file["vocabulary"] = if key == "vocabulary" {
                std::mem::take(&mut file["vocabulary"])
            } else {
                json!("demo/1")
            };
            let problems = parse_vocabulary(&file).expect_err("refused");
            let codes: Vec<&str> = problems.iter().map(|p| p.code).collect();
            let expected = match key {
                "vocabulary" => "INVALID_NAME",
                "x-other" => "UNKNOWN_KEY",
                _ => "WRONG_TYPE",
            };
            assert!(codes.contains(&expected), "{key}: {codes:?}");
            dismantle(file);
        }
        // A deep path item too.
        let mut file = member("paths", Value::Array(vec![nested_arrays(100_000)]));
        file["vocabulary"] = json!("demo/1");
        let problems = parse_vocabulary(&file).expect_err("refused");
        assert_eq!(problems[0].pointer, "/paths/0");
        assert_eq!(problems[0].code, "WRONG_TYPE");
        dismantle(file);
    });
}

#[test]
fn a_path_of_100_000_segments_is_refused() {
    // The tree is built by recursion per segment: the segments are bounded first.
    on_small_stack(|| {
        let path = vec!["a"; 100_000].join(".");
        let problems = parse_vocabulary(&json!({"vocabulary": "demo/1", "paths": [path]}))
            .expect_err("too deep");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].code, "PATH_TOO_DEEP");
        let at_limit = vec!["a"; rcip_mcpl::MAX_PATH_SEGMENTS].join(".");
        assert!(parse_vocabulary(&json!({"vocabulary": "demo/1", "paths": [at_limit]})).is_ok());
    });
}

#[test]
fn a_feature_set_with_a_deep_use_is_invalid_without_recursion() {
    on_small_stack(|| {
        let uses = member("uses", Value::Array(vec![nested_arrays(100_000)]));
        let sets = member("deep", uses);
        let states = feature_set_states(&sets, &VOCABULARY, &GrantState::initial());
        let Some(Err(DisabledReason::InvalidUses { unrecognized })) = states.get("deep") else {
            panic!("expected invalid uses")
        };
        assert_eq!(unrecognized.len(), 1);
        assert!(
            unrecognized[0].contains("more than 128"),
            "{unrecognized:?}"
        );
        dismantle(sets);
        // A shallow one is written as JSON, as before.
        let sets = json!({"shallow": {"uses": [[1]]}});
        let states = feature_set_states(&sets, &VOCABULARY, &GrantState::initial());
        assert_eq!(
            states["shallow"],
            Err(DisabledReason::InvalidUses {
                unrecognized: vec!["[1]".to_owned()]
            })
        );
    });
}

#[test]
fn advertisement_walks_only_the_vocabulary_tree() {
    on_small_stack(|| {
        let mut mcpl = member("contextHooks", nested_arrays(100_000));
        mcpl["pushEvents"] = member("x", nested_arrays(100_000));
        let paths = VOCABULARY.advertised(&mcpl, Some(&mcpl));
        assert!(paths.iter().any(|p| p == "pushEvents"), "{paths:?}");
        dismantle(mcpl);
    });
}
