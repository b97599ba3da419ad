//! MCPL advertisement (SPEC §5.1) over the MCPL 0.5 vocabulary file rcip ships: every
//! shorthand level, objects at path nodes, unknown members, values that advertise nothing,
//! `tools` only from the outer capabilities; and the vocabulary file checks.
#![allow(clippy::unwrap_used)]

mod common;

use common::mcpl;
use rcip_mcpl::parse_vocabulary;
use serde_json::{Value, json};

fn advertised(object: Value) -> Vec<String> {
    mcpl().advertised(&object, None).into_iter().collect()
}

const INJECT: [&str; 3] = [
    "contextHooks.beforeInference.inject.afterUser",
    "contextHooks.beforeInference.inject.beforeUser",
    "contextHooks.beforeInference.inject.system",
];

#[test]
fn the_shipped_vocabulary_has_the_seventeen_paths() {
    let vocabulary = mcpl();
    assert_eq!(vocabulary.paths.len(), 17);
    assert_eq!(vocabulary.name, "mcpl/0.5");
    assert_eq!(vocabulary.advertised_outside.as_ref(), ["tools"]);
    // Interior nodes that are not paths.
    for node in [
        "contextHooks",
        "contextHooks.beforeInference",
        "contextHooks.beforeInference.inject",
        "channels",
    ] {
        assert!(!vocabulary.contains(node), "{node}");
    }
}

#[test]
fn true_at_every_level_advertises_every_leaf_beneath() {
    let everything: Vec<String> = advertised(json!({
        "pushEvents": true, "modelInfo": true, "inferenceRequest": true, "inferenceLifecycle": true,
        "contextHooks": true, "channels": true
    }));
    assert_eq!(everything.len(), 16, "all but tools: {everything:?}");
    assert_eq!(advertised(json!({"contextHooks": true})).len(), 4);
    let before = advertised(json!({"contextHooks": {"beforeInference": true}}));
    assert_eq!(before.len(), 4);
    assert_eq!(
        advertised(json!({"contextHooks": {"beforeInference": {"inject": true}}})),
        INJECT
    );
    assert_eq!(
        advertised(json!({"contextHooks": {"beforeInference": {"inject": {"system": true}}}})),
        ["contextHooks.beforeInference.inject.system"]
    );
    assert_eq!(advertised(json!({"channels": true})).len(), 7);
    assert_eq!(
        advertised(json!({"inferenceRequest": true})),
        ["inferenceRequest", "inferenceRequest.streaming"]
    );
}

#[test]
fn an_object_at_a_path_node_advertises_the_path() {
    assert_eq!(
        advertised(json!({"inferenceRequest": {}})),
        ["inferenceRequest"]
    );
    assert_eq!(
        advertised(json!({"inferenceRequest": {"streaming": false}})),
        ["inferenceRequest"]
    );
    // An object at a node that is not a path advertises nothing by itself.
    assert!(
        advertised(json!({"channels": {}, "contextHooks": {"beforeInference": {}}})).is_empty()
    );
}

#[test]
fn false_null_other_values_and_unknown_members_advertise_nothing() {
    for value in [
        json!(false),
        json!(null),
        json!("yes"),
        json!(1),
        json!([true]),
    ] {
        assert!(advertised(json!({"pushEvents": value.clone(), "channels": value})).is_empty());
    }
    assert!(
        advertised(json!({
            "version": "0.5", "revision": "sha256:x", "featureSets": true, "demoVendor": true,
            "contextHooks": {"afterInference": true}, "channels": {"observe": true}
        }))
        .is_empty()
    );
    assert!(advertised(json!("not an object")).is_empty());
}

#[test]
fn tools_only_from_the_outer_capabilities() {
    let vocabulary = mcpl();
    assert!(advertised(json!({"tools": true})).is_empty());
    assert!(advertised(json!({"tools": {}})).is_empty());
    let outer = json!({"tools": {}, "experimental": {}});
    assert_eq!(
        vocabulary
            .advertised(&json!({"pushEvents": true}), Some(&outer))
            .into_iter()
            .collect::<Vec<_>>(),
        ["pushEvents", "tools"]
    );
    assert!(
        vocabulary
            .advertised(&json!({}), Some(&json!({"tools": null})))
            .is_empty()
    );
}

#[test]
fn vocabulary_files_are_checked() {
    let problems = |file: Value| -> Vec<String> {
        parse_vocabulary(&file)
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect()
    };
    assert_eq!(
        problems(json!({"vocabulary": "x", "paths": ["a", "a", "b c", "d..e"], "extra": 1})),
        [
            "/extra: unknown key \"extra\" (allowed: vocabulary, paths, advertisedOutside)",
            "/paths/1: path \"a\" is listed twice",
            "/paths/2: invalid path \"b c\": segments of [A-Za-z0-9_-] joined by '.'",
            "/paths/3: invalid path \"d..e\": segments of [A-Za-z0-9_-] joined by '.'",
        ]
    );
    assert_eq!(
        problems(
            json!({"vocabulary": "x", "paths": ["a", "a.b"], "advertisedOutside": ["a", "z"]})
        ),
        [
            "/advertisedOutside/0: \"a\" has paths beneath it; only a leaf can be advertised outside",
            "/advertisedOutside/1: \"z\" is not a path of this vocabulary",
        ]
    );
    assert_eq!(problems(json!({"paths": []})).len(), 2);
    assert_eq!(
        problems(json!([])),
        ["<root>: a vocabulary is a JSON object".replace("<root>", "")]
    );
}
