//! Bounded property tests of the package validator and rules: no panic on generated JSON,
//! and every problem pointer of a rejected package resolves in the input (missing keys are
//! reported at the object that lacks them, so there is no "parent of" case).
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use rcip_relationship::{RuleRoots, Scope, parse_package, parse_rule, validate_package};
use serde_json::{Value, json};

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "protocol", "namespace", "version", "types", "views", "kind", "schema", "roles",
            "lifecycle", "commands", "initial", "states", "from", "to", "guard", "path", "eq",
            "all", "not", "a/b", "t~1", "",
        ]).prop_map(str::to_owned),
        1 => ".{0,5}",
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        prop::sample::select(vec![
            "relationship/v1",
            "entity",
            "open",
            "data.votes",
            "state"
        ])
        .prop_map(Value::from),
        ".{0,5}".prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 64, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// A package-shaped document: the right top level with generated parts.
fn package() -> impl Strategy<Value = Value> {
    (json(), json(), prop::option::of(json())).prop_map(|(types, entity, views)| {
        let mut package = json!({
            "protocol": "relationship/v1",
            "namespace": "polls",
            "version": 1,
            "types": {"poll": {"kind": "entity", "schema": entity}, "other": types},
        });
        if let Some(views) = views {
            package["views"] = views;
        }
        package
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn rejected_package_pointers_resolve(value in prop_oneof![json(), package()]) {
        let text = value.to_string();
        let parsed = parse_package(&text);
        let validated = validate_package(&value);
        prop_assert_eq!(parsed.is_ok(), validated.is_ok());
        if let Err(error) = validated {
            prop_assert!(!error.problems.is_empty());
            for problem in &error.problems {
                prop_assert!(
                    value.pointer(&problem.pointer).is_some(),
                    "{:?} ({}) not in {}", problem.pointer, problem.code.as_str(), text
                );
            }
        }
    }

    #[test]
    fn rules_parse_and_evaluate_without_panic(
        rule in json(), data in json(), input in json(), state in ".{0,4}",
    ) {
        if let Ok(expr) = parse_rule(&rule, RuleRoots::COMMAND) {
            let scope = Scope { data: Some(&data), input: Some(&input), state: Some(&state) };
            prop_assert_eq!(
                expr.passes(&scope),
                expr.evaluate(&scope) == Some(Value::Bool(true))
            );
        }
    }
}
