//! Round trip, by property tests: instances valid for the base schema, shaped as each profile's
//! consumer sends them (absent optionals as `null` for OpenAI, renamed properties and string
//! enum values for Gemini `parameters`, the `{"input": ...}` wrapper), validate against the
//! profile's schema (where it is JSON Schema), and `arguments_to_input` gives back the original
//! instance, which the base schema accepts and serde parses into the same Rust value.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::fmt::Debug;

use common::round_trip::{round_trip, same_rust_value};
use rcip_core::SchemaRole;
use rcip_core::schema::strict_schema_for;
use rcip_export::Profile;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn typed<T: JsonSchema + DeserializeOwned + PartialEq + Debug>(
    label: &str,
    refused_by: &[Profile],
) {
    let schema = strict_schema_for::<T>(SchemaRole::Input).unwrap();
    round_trip(label, &schema, refused_by, Some(&same_rust_value::<T>));
}

// ---------------------------------------------------------------------------------------------
// A dozen Rust types.

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Simple {
    name: String,
    nick: Option<String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Widths {
    #[schemars(length(min = 1, max = 8))]
    q: String,
    small: u8,
    signed: i16,
    big: u64,
    neg: i64,
    ratio: f64,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "kind", deny_unknown_fields)]
enum Shape {
    Circle { r: f64 },
    Square { side: u32, label: Option<String> },
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c", deny_unknown_fields)]
enum Adjacent {
    Count(u8),
    Name(String),
    Nothing,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    Num(i32),
    Text(String),
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Inner {
    a: u16,
    b: Option<bool>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nested {
    inner: Inner,
    #[schemars(length(max = 3))]
    items: Vec<Inner>,
    maybe: Option<Inner>,
    color: Option<Color>,
    shape: Option<Shape>,
    any: Untagged,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Defaults {
    #[serde(default)]
    count: u32,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WithMap {
    scores: BTreeMap<String, u8>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Bounded {
    #[schemars(length(min = 1, max = 3))]
    values: Vec<i8>,
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
enum External {
    Unit,
    Tuple(u8),
    Struct { x: Option<i64> },
}

#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Renamed {
    #[serde(rename = "user-name")]
    user_name: String,
    #[serde(rename = "9lives")]
    lives: Option<u8>,
    #[serde(rename = "x.y")]
    xy: Vec<Shape>,
}

#[test]
fn rust_types_round_trip_under_every_profile() {
    typed::<Simple>("Simple", &[]);
    typed::<Widths>("Widths", &[]);
    typed::<Shape>("Shape (root oneOf)", &[]);
    typed::<Color>("Color (root enum)", &[]);
    typed::<Adjacent>("Adjacent", &[]);
    typed::<Untagged>("Untagged", &[]);
    typed::<Nested>("Nested", &[]);
    typed::<Defaults>("Defaults", &[]);
    typed::<WithMap>("WithMap", &[]);
    typed::<Bounded>("Bounded", &[]);
    typed::<External>("External", &[]);
    typed::<Renamed>("Renamed", &[]);
    typed::<Vec<Simple>>("Vec<Simple> (root array)", &[]);
}

#[test]
fn hand_written_schemas_round_trip() {
    let int_enum = json!({"type":"object","additionalProperties":false,"required":["level"],"properties":{
        "level":{"type":"integer","enum":[1,2,3]},
        "opt":{"type":["integer","null"],"enum":[7,8,null]}}});
    round_trip("integer enums", &int_enum, &[], None);
    let x1 = json!({"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false},{"type":"string"}]});
    round_trip("X1 root anyOf", &x1, &[], None);
    let formats = json!({"type":"object","additionalProperties":false,"required":["id","at","code"],"properties":{
        "id":{"type":"string","format":"uuid"},
        "at":{"type":"string","format":"date-time"},
        "day":{"type":["string","null"],"format":"date"},
        "mail":{"type":"string","format":"email"},
        "link":{"type":"string","format":"uri"},
        "code":{"type":"string","pattern":"^[A-Z]{2}[0-9]{3}$","maxLength":5}}});
    round_trip("formats and patterns", &formats, &[], None);
}

/// Every capability of the polls example's committed catalog and of the relationship example
/// packages, under every profile.
#[test]
fn example_catalogs_round_trip() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let catalog: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("polls.catalog.json")).unwrap())
            .unwrap();
    let mut schemas: Vec<(String, Value)> = catalog["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["inputSchema"].clone(),
            )
        })
        .collect();
    for file in ["hiring.json", "polls.json"] {
        let text = std::fs::read_to_string(root.join("programs").join(file)).unwrap();
        let package = rcip_relationship::parse_package(&text).unwrap();
        for capability in rcip_relationship::package_capabilities(&package) {
            schemas.push((
                capability.id.clone(),
                capability.input_schema.as_value().clone(),
            ));
        }
    }
    assert!(schemas.len() > 20, "{}", schemas.len());
    for (id, schema) in &schemas {
        round_trip(id, schema, &[], None);
    }
}

/// Closed tuples go as objects of their items (`item_0`, ...) where the profile has no
/// `prefixItems`, and come back as arrays.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Tuples {
    pair: (u8, String),
    nested: Vec<(bool, Option<i32>)>,
    maybe: Option<(String, Simple)>,
}

#[test]
fn tuples_round_trip_under_every_profile() {
    typed::<Tuples>("Tuples", &[]);
}
