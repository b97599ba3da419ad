//! JSON near the test types of the typed fast path (`src/shape.rs`'s unit tests and
//! `tests/typed_fast_path.rs` share it): objects with their member names, arrays, scalars
//! at the types' bounds, nested, and text forms of each; and the types.

use std::collections::BTreeMap;

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A struct with `deny_unknown_fields`.
#[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Note {
    pub(crate) title: String,
    pub(crate) count: Option<u32>,
    pub(crate) tags: Option<Vec<String>>,
}

/// No `deny_unknown_fields`, an alias, a default, an enum, a nested struct, a map.
#[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Loose {
    #[serde(alias = "name")]
    title: String,
    #[serde(default)]
    small: u8,
    offset: Option<i64>,
    ratio: Option<f64>,
    color: Option<Color>,
    at: Option<Point>,
    labels: Option<BTreeMap<String, bool>>,
}

#[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
enum Color {
    Red,
    Blue,
}

#[derive(Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Point {
    x: i16,
    y: i16,
}

pub(crate) fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3_i64..300).prop_map(Value::from),
        prop_oneof![
            Just(i64::MIN),
            Just(-32769),
            Just(32768),
            Just(4_294_967_296)
        ]
        .prop_map(Value::from),
        Just(Value::from(u64::MAX)),
        prop_oneof![Just(7.0), Just(-0.5), Just(1e20), Just(2.5)].prop_map(Value::from),
        "[a-zé😀]{0,6}".prop_map(Value::from),
        prop_oneof![Just("Red"), Just("Blue"), Just("red"), Just("")].prop_map(Value::from),
    ]
}

pub(crate) fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("title"),
        Just("name"),
        Just("count"),
        Just("tags"),
        Just("small"),
        Just("offset"),
        Just("ratio"),
        Just("color"),
        Just("at"),
        Just("x"),
        Just("y"),
        Just("labels"),
        Just("Red"),
        Just("other"),
    ]
    .prop_map(str::to_owned)
}

/// JSON near the types: objects with their member names (the title mostly present),
/// arrays, scalars, nested.
pub(crate) fn near() -> impl Strategy<Value = Value> {
    let value = scalar().prop_recursive(3, 30, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    (value, any::<bool>()).prop_map(|(mut value, titled)| {
        if titled && let Value::Object(map) = &mut value {
            map.entry("title").or_insert_with(|| json!("a"));
        }
        value
    })
}

/// The text forms of a value: as written, with its first member twice, and cut short.
pub(crate) fn texts(value: &Value) -> Vec<String> {
    let text = value.to_string();
    let mut texts = vec![
        text.clone(),
        format!("{text} "),
        text[..text.len() - 1].to_owned(),
    ];
    if let Value::Object(map) = value
        && let Some((name, member)) = map.iter().next()
    {
        let first = format!("{}:{member}", Value::from(name.as_str()));
        texts.push(format!("{{{first},{}", &text[1..]));
    }
    texts
}
