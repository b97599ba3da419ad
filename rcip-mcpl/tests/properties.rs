//! Bounded property tests of the manifest digest: no panic on any JSON, the digest does not
//! depend on member order, and canonical JSON re-parsed digests (and canonicalizes) the same.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use proptest::sample::Index;
use rcip_mcpl::{manifest_canonical_json, manifest_digest};
use serde_json::{Map, Value};

/// Strings that are valid identifiers most of the time, so generated `featureSets` reach
/// the sorting and deduplication instead of failing the identifier check.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9._:*-]{0,6}",
        1 => ".{0,4}",
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Short decimals, and any f64 (the workspace turns on serde_json's `float_roundtrip`,
        // so its shortest text reads back exactly).
        (any::<i32>(), 0..6u32).prop_map(|(m, e)| Value::from(f64::from(m) / 10f64.powi(e as i32))),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        name().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((name(), inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// A manifest-shaped object: the root members the digest treats specially, plus others.
fn manifest() -> impl Strategy<Value = Value> {
    let feature_set = prop::collection::vec((name(), json()), 0..4).prop_map(|members| {
        let mut set: Map<String, Value> = members.into_iter().collect();
        set.insert(
            "uses".into(),
            Value::Array(vec!["b".into(), "a".into(), "b".into()]),
        );
        Value::Object(set)
    });
    (
        prop::collection::vec((name(), json()), 0..4),
        prop::collection::vec((name(), feature_set), 0..3),
        prop::option::of(name()),
    )
        .prop_map(|(members, sets, revision)| {
            let mut root: Map<String, Value> = members.into_iter().collect();
            root.insert(
                "featureSets".into(),
                Value::Object(sets.into_iter().collect()),
            );
            if let Some(revision) = revision {
                root.insert("revision".into(), Value::String(revision));
            }
            Value::Object(root)
        })
}

/// `value` as JSON text with every object's members in an order drawn from `shuffle`
/// (`serde_json::Map` may keep or sort members; text is what a peer actually sends).
fn shuffled_text(value: &Value, shuffle: &[Index], at: &mut usize) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|i| shuffled_text(i, shuffle, at))
                .collect();
            format!("[{}]", items.join(","))
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            // A Fisher-Yates pass driven by the generated indices.
            for i in (1..members.len()).rev() {
                let j = shuffle[*at % shuffle.len()].index(i + 1);
                *at += 1;
                members.swap(i, j);
            }
            let members: Vec<String> = members
                .into_iter()
                .map(|(k, v)| {
                    let key = serde_json::to_string(k).unwrap();
                    format!("{key}:{}", shuffled_text(v, shuffle, at))
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
        other => serde_json::to_string(other).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any JSON gives a digest or an error, and both functions agree on which.
    #[test]
    fn any_json_digests_or_errors(value in json()) {
        prop_assert_eq!(manifest_digest(&value).is_ok(), manifest_canonical_json(&value).is_ok());
    }

    /// The digest of a manifest is the same whatever the order of its members.
    #[test]
    fn digest_ignores_member_order(
        manifest in manifest(),
        shuffle in prop::collection::vec(any::<Index>(), 1..16),
    ) {
        let text = shuffled_text(&manifest, &shuffle, &mut 0);
        let reordered: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(manifest_digest(&reordered), manifest_digest(&manifest), "{}", text);
    }

    /// Canonical JSON parses back to a manifest with the same digest and canonical form.
    #[test]
    fn canonical_json_round_trips(manifest in manifest()) {
        if let Ok(canonical) = manifest_canonical_json(&manifest) {
            let reparsed: Value = serde_json::from_str(&canonical).unwrap();
            prop_assert_eq!(manifest_digest(&reparsed), manifest_digest(&manifest));
            prop_assert_eq!(manifest_canonical_json(&reparsed), Ok(canonical));
        }
    }
}
