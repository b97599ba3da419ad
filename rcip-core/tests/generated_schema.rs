//! Tests of the strict schema generator, `rcip_core::schema::strict_schema_for`.
#![allow(clippy::unwrap_used, dead_code, missing_docs, unreachable_pub)]

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use rcip_core::SchemaRole;
use rcip_core::schema::{SchemaGenerationError, check_strict, strict_schema_for};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn input<T: JsonSchema>() -> Value {
    let schema = strict_schema_for::<T>(SchemaRole::Input).unwrap();
    assert_eq!(check_strict(&schema), Ok(()));
    schema
}

fn input_err<T: JsonSchema>() -> SchemaGenerationError {
    strict_schema_for::<T>(SchemaRole::Input).unwrap_err()
}

/// Every schema object below `schema`, with its JSON Pointer.
fn objects<'a>(schema: &'a Value, pointer: String, out: &mut Vec<(String, &'a Value)>) {
    match schema {
        Value::Object(map) => {
            out.push((pointer.clone(), schema));
            for (k, v) in map {
                if k == "enum" || k == "const" || k == "default" || k == "examples" {
                    continue;
                }
                objects(v, format!("{pointer}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                objects(v, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Keys found anywhere in `schema`.
fn has_key(schema: &Value, key: &str) -> bool {
    match schema {
        Value::Object(map) => map.contains_key(key) || map.values().any(|v| has_key(v, key)),
        Value::Array(items) => items.iter().any(|v| has_key(v, key)),
        _ => false,
    }
}

/// A plain payload.
#[derive(JsonSchema, Deserialize)]
struct Plain {
    /// The name.
    name: String,
    /// A small number.
    small: u8,
    count: u32,
    offset: i64,
    ratio: f64,
    flag: bool,
    tags: Vec<String>,
    /// A note, absent or null.
    note: Option<String>,
}

#[test]
fn plain_struct_exact() {
    assert_eq!(
        input::<Plain>(),
        json!({
            "description": "A plain payload.",
            "type": "object",
            "properties": {
                "name": { "description": "The name.", "type": "string" },
                "small": {
                    "description": "A small number.",
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 255
                },
                "count": { "type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64 },
                "offset": {
                    "type": "integer",
                    "minimum": i64::MIN,
                    "maximum": i64::MAX
                },
                "ratio": { "type": "number" },
                "flag": { "type": "boolean" },
                "tags": { "type": "array", "items": { "type": "string" } },
                "note": { "description": "A note, absent or null.", "type": ["string", "null"] }
            },
            "required": ["name", "small", "count", "offset", "ratio", "flag", "tags"],
            "additionalProperties": false
        })
    );
}

#[test]
fn output_role_requires_option_fields() {
    #[derive(JsonSchema, Serialize)]
    struct Out {
        a: u8,
        b: Option<String>,
    }
    let schema = strict_schema_for::<Out>(SchemaRole::Output).unwrap();
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(schema["properties"]["b"]["type"], json!(["string", "null"]));
    let schema = strict_schema_for::<Out>(SchemaRole::Input).unwrap();
    assert_eq!(schema["required"], json!(["a"]));
}

#[derive(JsonSchema, Deserialize)]
struct Point {
    x: i32,
    y: i32,
}

#[derive(JsonSchema, Deserialize)]
struct Shape {
    origin: Point,
    corners: Vec<Point>,
    label: Option<Label>,
}

#[derive(JsonSchema, Deserialize)]
struct Label {
    text: String,
    at: Point,
}

#[test]
fn nested_structs_are_inlined_and_closed() {
    let schema = input::<Shape>();
    assert!(!has_key(&schema, "$ref"));
    assert!(!has_key(&schema, "$defs"));
    assert!(!has_key(&schema, "$schema"));
    assert!(!has_key(&schema, "format"));
    let mut all = Vec::new();
    objects(&schema, String::new(), &mut all);
    let with_properties: Vec<_> = all
        .iter()
        .filter(|(_, s)| s.get("properties").is_some())
        .collect();
    // Shape, origin, corners items, label, label.at.
    assert_eq!(with_properties.len(), 5, "{with_properties:?}");
    for (pointer, s) in with_properties {
        assert_eq!(s["additionalProperties"], json!(false), "at {pointer}");
    }
    assert_eq!(
        schema["properties"]["origin"],
        json!({
            "type": "object",
            "properties": {
                "x": { "type": "integer", "minimum": i32::MIN, "maximum": i32::MAX },
                "y": { "type": "integer", "minimum": i32::MIN, "maximum": i32::MAX }
            },
            "required": ["x", "y"],
            "additionalProperties": false
        })
    );
    assert_eq!(
        schema["properties"]["label"]["type"],
        json!(["object", "null"])
    );
}

#[derive(JsonSchema, Deserialize, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Color {
    Red,
    Green,
    Blue,
}

#[test]
fn unit_enum_is_a_string_enum() {
    assert_eq!(
        input::<Color>(),
        json!({ "type": "string", "enum": ["Red", "Green", "Blue"] })
    );
}

#[derive(JsonSchema, Deserialize, Debug, PartialEq)]
#[serde(tag = "kind", deny_unknown_fields)]
enum Command {
    Move { dx: i16, dy: i16 },
    Say { text: String },
    Stop,
}

#[test]
fn internally_tagged_enum() {
    let schema = input::<Command>();
    assert_eq!(
        schema,
        json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "kind": { "type": "string", "const": "Move" },
                        "dx": { "type": "integer", "minimum": -32768, "maximum": 32767 },
                        "dy": { "type": "integer", "minimum": -32768, "maximum": 32767 }
                    },
                    "required": ["kind", "dx", "dy"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": { "type": "string", "const": "Say" },
                        "text": { "type": "string" }
                    },
                    "required": ["kind", "text"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": { "kind": { "type": "string", "const": "Stop" } },
                    "required": ["kind"],
                    "additionalProperties": false
                }
            ]
        })
    );
}

#[test]
fn camel_case_names_and_defaults() {
    #[derive(JsonSchema, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Renamed {
        first_name: String,
        #[serde(default)]
        retry_count: u32,
        #[serde(default)]
        tags_list: Vec<String>,
    }
    let schema = input::<Renamed>();
    let names: Vec<_> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, ["firstName", "retryCount", "tagsList"]);
    assert_eq!(schema["required"], json!(["firstName"]));
    assert_eq!(schema["properties"]["retryCount"]["default"], json!(0));
}

#[derive(JsonSchema, Deserialize)]
struct Tree {
    value: u32,
    children: Vec<Tree>,
}

#[derive(JsonSchema, Deserialize)]
struct Forest {
    trees: Vec<Tree>,
}

#[test]
fn recursive_types_are_refused() {
    let error = input_err::<Tree>();
    assert_eq!(error.code(), "RECURSIVE_TYPE");
    assert_eq!(
        error,
        SchemaGenerationError::RecursiveType {
            pointer: "/properties/children/items".into(),
            reference: "#".into()
        }
    );
    let error = input_err::<Forest>();
    assert_eq!(error.code(), "RECURSIVE_TYPE");
    assert!(error.to_string().contains("recursive type"), "{error}");
}

#[test]
fn untyped_values_are_refused() {
    #[derive(JsonSchema, Deserialize)]
    struct WithValue {
        id: u32,
        /// Anything.
        data: Value,
    }
    let error = input_err::<WithValue>();
    assert_eq!(
        error,
        SchemaGenerationError::UntypedValue {
            pointer: "/properties/data".into()
        }
    );
    assert_eq!(error.code(), "UNTYPED_VALUE");
    assert_eq!(error.to_string(), "untyped JSON value at /properties/data");

    #[derive(JsonSchema, Deserialize)]
    struct WithOptionalValue {
        data: Option<Value>,
    }
    assert_eq!(
        input_err::<WithOptionalValue>().pointer(),
        "/properties/data"
    );

    #[derive(JsonSchema, Deserialize)]
    struct WithValueMap {
        data: HashMap<String, Value>,
    }
    assert_eq!(
        input_err::<WithValueMap>().pointer(),
        "/properties/data/additionalProperties"
    );
    assert_eq!(input_err::<Value>().pointer(), "");
    assert_eq!(input_err::<Vec<Value>>().pointer(), "/items");
}

#[test]
fn string_keyed_maps_are_accepted() {
    #[derive(JsonSchema, Deserialize)]
    struct Counts {
        counts: HashMap<String, u32>,
    }
    let schema = input::<Counts>();
    assert_eq!(
        schema["properties"]["counts"],
        json!({
            "type": "object",
            "additionalProperties": { "type": "integer", "minimum": 0, "maximum": 4_294_967_295_u64 }
        })
    );
    assert_eq!(schema["additionalProperties"], json!(false));

    // Unit-enum keys: every key is an optional property.
    let schema = input::<BTreeMap<Color, bool>>();
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(schema["properties"]["Red"], json!({ "type": "boolean" }));
    assert!(schema.get("required").is_none());
}

#[test]
fn integer_keyed_maps_are_refused() {
    #[derive(JsonSchema, Deserialize)]
    struct ByNumber {
        counts: HashMap<u32, u32>,
    }
    let error = input_err::<ByNumber>();
    assert_eq!(
        error,
        SchemaGenerationError::NonStringMapKeys {
            pointer: "/properties/counts".into()
        }
    );
    assert_eq!(error.code(), "NON_STRING_MAP_KEYS");
    assert_eq!(
        input_err::<HashMap<i64, String>>().code(),
        "NON_STRING_MAP_KEYS"
    );
}

/// A manual impl emitting a format rcip does not validate.
struct Host;

impl JsonSchema for Host {
    fn schema_name() -> Cow<'static, str> {
        "Host".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "hostname" })
    }
}

/// The supported formats are kept where schemars puts them, from the uuid and chrono
/// features and from attributes.
#[test]
fn supported_formats_are_kept() {
    #[derive(JsonSchema, Deserialize)]
    struct Event {
        id: uuid::Uuid,
        at: chrono::DateTime<chrono::Utc>,
        day: chrono::NaiveDate,
        #[schemars(extend("format" = "email"))]
        contact: String,
        #[schemars(extend("format" = "uri"))]
        link: Option<String>,
        related: Vec<uuid::Uuid>,
    }
    let schema = input::<Event>();
    let format = |pointer: &str| schema.pointer(pointer).cloned();
    assert_eq!(format("/properties/id/format"), Some(json!("uuid")));
    assert_eq!(format("/properties/at/format"), Some(json!("date-time")));
    assert_eq!(format("/properties/day/format"), Some(json!("date")));
    assert_eq!(format("/properties/contact/format"), Some(json!("email")));
    assert_eq!(format("/properties/link/format"), Some(json!("uri")));
    assert_eq!(
        format("/properties/link/type"),
        Some(json!(["string", "null"]))
    );
    assert_eq!(
        format("/properties/related/items/format"),
        Some(json!("uuid"))
    );
    assert_eq!(
        format("/properties/id"),
        Some(json!({"type": "string", "format": "uuid"}))
    );
}

#[test]
fn other_formats_are_refused() {
    #[derive(JsonSchema, Deserialize)]
    struct Event {
        #[schemars(with = "String")]
        #[schemars(extend("format" = "time"))]
        at: String,
    }
    let error = input_err::<Event>();
    assert_eq!(
        error,
        SchemaGenerationError::UnsupportedFormat {
            pointer: "/properties/at".into(),
            format: "\"time\"".into()
        }
    );
    assert_eq!(error.code(), "UNSUPPORTED_FORMAT");
    assert_eq!(
        error.to_string(),
        "unsupported format \"time\" at /properties/at"
    );

    #[derive(JsonSchema)]
    struct Contact {
        hosts: Vec<Host>,
    }
    let error = input_err::<Contact>();
    assert_eq!(error.pointer(), "/properties/hosts/items");
    assert!(error.to_string().contains("\"hostname\""));
    assert_eq!(
        input_err::<std::net::Ipv4Addr>(),
        SchemaGenerationError::UnsupportedFormat {
            pointer: String::new(),
            format: "\"ipv4\"".into()
        }
    );
    // chrono's NaiveDateTime is a "partial-date-time", which no validator checks.
    assert_eq!(
        input_err::<chrono::NaiveDateTime>().code(),
        "UNSUPPORTED_FORMAT"
    );
}

#[test]
fn integer_formats_become_exact_bounds() {
    assert_eq!(
        input::<u64>(),
        json!({ "type": "integer", "minimum": 0, "maximum": u64::MAX })
    );
    assert_eq!(input::<u64>()["maximum"].as_u64(), Some(u64::MAX));
    assert_eq!(
        input::<usize>(),
        json!({ "type": "integer", "minimum": 0, "maximum": u64::MAX })
    );
    assert_eq!(
        input::<isize>(),
        json!({ "type": "integer", "minimum": i64::MIN, "maximum": i64::MAX })
    );
    assert_eq!(
        input::<i128>(),
        json!({ "type": "integer", "minimum": -(2f64.powi(127)), "exclusiveMaximum": 2f64.powi(127) })
    );
    assert_eq!(
        input::<u128>(),
        json!({ "type": "integer", "minimum": 0, "exclusiveMaximum": 2f64.powi(128) })
    );
    assert_eq!(input::<f32>(), json!({ "type": "number" }));
    assert_eq!(
        input::<Option<u16>>(),
        json!({ "type": ["integer", "null"], "minimum": 0, "maximum": 65535 })
    );
}

#[test]
fn stricter_bounds_are_kept() {
    #[derive(JsonSchema, Deserialize)]
    struct Ranged {
        #[schemars(range(min = 1, max = 10))]
        a: u64,
        #[schemars(range(min = -1000, max = 1000))]
        b: i8,
    }
    let schema = input::<Ranged>();
    assert_eq!(
        schema["properties"]["a"],
        json!({ "type": "integer", "minimum": 1, "maximum": 10 })
    );
    assert_eq!(
        schema["properties"]["b"],
        json!({ "type": "integer", "minimum": -128, "maximum": 127 })
    );
}

#[test]
fn root_title_policy() {
    #[derive(JsonSchema)]
    #[schemars(title = "A point")]
    struct Titled {
        x: bool,
    }
    assert_eq!(input::<Titled>()["title"], json!("A point"));
    assert!(input::<Point>().get("title").is_none());
}

/// serde refuses `deny_unknown_fields` together with `flatten` (every value fails), so
/// this type has no `deny_unknown_fields` and the agreement table has no unknown fields.
#[derive(JsonSchema, Deserialize, Debug, PartialEq)]
struct Flattened {
    id: u8,
    #[serde(flatten)]
    command: Command,
}

#[test]
fn flattened_enum_is_closed_with_unevaluated_properties() {
    let schema = input::<Flattened>();
    assert_eq!(schema["unevaluatedProperties"], json!(false));
    assert!(schema.get("additionalProperties").is_none());
    let branches = schema["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), 3, "one branch per variant");
    for branch in branches {
        assert!(branch.get("additionalProperties").is_none());
    }
}

#[test]
fn errors_have_stable_codes() {
    let violation = check_strict(&json!({ "nullable": true })).unwrap_err();
    let error = SchemaGenerationError::NotStrict(violation);
    assert_eq!(error.code(), "NOT_STRICT");
    assert!(
        error
            .to_string()
            .starts_with("generated schema is not strict: ")
    );
    assert_eq!(error.pointer(), "");
}

// ---- serde agreement ----

/// A payload with every serde feature the agreement covers.
#[derive(JsonSchema, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateNote {
    title: String,
    priority: u8,
    due_in_days: Option<u32>,
    #[serde(default)]
    tags: Vec<String>,
    color: Color,
    position: Option<StrictPoint>,
}

#[derive(JsonSchema, Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct StrictPoint {
    x: i32,
    y: i32,
}

fn assert_agreement<T: JsonSchema + DeserializeOwned + std::fmt::Debug>(values: &[Value]) {
    let schema = input::<T>();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let mut accepted = 0;
    for value in values {
        let by_serde = serde_json::from_value::<T>(value.clone());
        let by_schema = validator.is_valid(value);
        assert_eq!(
            by_serde.is_ok(),
            by_schema,
            "{value}: serde {by_serde:?}, schema {by_schema}"
        );
        accepted += usize::from(by_schema);
    }
    // The table has both accepted and refused values.
    assert!(accepted > 0 && accepted < values.len());
}

#[test]
fn schema_agrees_with_serde_on_a_struct() {
    assert_agreement::<CreateNote>(&[
        json!({ "title": "a", "priority": 1, "color": "Red" }),
        json!({ "title": "a", "priority": 255, "color": "Blue", "dueInDays": null }),
        json!({ "title": "a", "priority": 0, "color": "Green", "dueInDays": 4294967295_u64 }),
        json!({ "title": "a", "priority": 0, "color": "Green", "dueInDays": 4294967296_u64 }),
        json!({ "title": "a", "priority": 256, "color": "Red" }),
        json!({ "title": "a", "priority": -1, "color": "Red" }),
        json!({ "title": "a", "priority": 1.5, "color": "Red" }),
        json!({ "title": "a", "priority": 1, "color": "red" }),
        json!({ "title": "a", "priority": 1, "color": "Red", "extra": 1 }),
        json!({ "title": "a", "priority": 1, "color": "Red", "due_in_days": 1 }),
        json!({ "priority": 1, "color": "Red" }),
        json!({ "title": null, "priority": 1, "color": "Red" }),
        json!({ "title": "a", "priority": 1, "color": "Red", "tags": ["x", "y"] }),
        json!({ "title": "a", "priority": 1, "color": "Red", "tags": null }),
        json!({ "title": "a", "priority": 1, "color": "Red", "tags": [1] }),
        json!({ "title": "a", "priority": 1, "color": "Red", "position": { "x": -5, "y": 7 } }),
        json!({ "title": "a", "priority": 1, "color": "Red", "position": null }),
        json!({ "title": "a", "priority": 1, "color": "Red", "position": { "x": 1 } }),
        json!({ "title": "a", "priority": 1, "color": "Red", "position": { "x": 1, "y": 2, "z": 3 } }),
        json!({ "title": "a", "priority": 1, "color": "Red", "position": { "x": 2147483648_i64, "y": 0 } }),
        json!([]),
        json!("a"),
        json!(null),
    ]);
}

#[test]
fn schema_agrees_with_serde_on_a_tagged_enum() {
    assert_agreement::<Command>(&[
        json!({ "kind": "Move", "dx": 1, "dy": -1 }),
        json!({ "kind": "Move", "dx": 32767, "dy": -32768 }),
        json!({ "kind": "Move", "dx": 32768, "dy": 0 }),
        json!({ "kind": "Move", "dx": 1 }),
        json!({ "kind": "Move", "dx": 1, "dy": 1, "text": "x" }),
        json!({ "kind": "Say", "text": "hi" }),
        json!({ "kind": "Say", "text": 3 }),
        json!({ "kind": "Say" }),
        json!({ "kind": "Stop" }),
        json!({ "kind": "Say", "text": "hi", "extra": true }),
        json!({ "kind": "stop" }),
        json!({ "kind": null }),
        json!({ "dx": 1, "dy": 1 }),
        json!({}),
        json!("Stop"),
        json!(null),
    ]);
}

#[test]
fn known_disagreements_schema_is_stricter() {
    let schema = input::<Command>();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    // serde ignores other fields of a unit variant of an internally tagged enum, even
    // with `deny_unknown_fields`; the schema refuses them.
    let value = json!({ "kind": "Stop", "extra": true });
    assert_eq!(
        serde_json::from_value::<Command>(value.clone()).unwrap(),
        Command::Stop
    );
    assert!(!validator.is_valid(&value));

    // Without `deny_unknown_fields`, serde ignores unknown fields; the schema refuses them.
    let schema = input::<Flattened>();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let value = json!({ "id": 1, "kind": "Stop", "other": 1 });
    assert!(serde_json::from_value::<Flattened>(value.clone()).is_ok());
    assert!(!validator.is_valid(&value));
    assert!(validator.is_valid(&json!({ "id": 1, "kind": "Say", "text": "x" })));
}

#[test]
fn schema_agrees_with_serde_on_a_flattened_enum() {
    assert_agreement::<Flattened>(&[
        json!({ "id": 1, "kind": "Stop" }),
        json!({ "id": 1, "kind": "Say", "text": "x" }),
        json!({ "id": 1, "kind": "Say" }),
        json!({ "kind": "Stop" }),
        json!({ "id": 1, "kind": "Move", "dx": 1, "dy": 2 }),
        json!({ "id": 1, "kind": "Move", "dx": 1, "dy": 40000 }),
        json!({ "id": 1, "kind": "Jump" }),
        json!({ "id": 1 }),
        json!({ "id": 300, "kind": "Stop" }),
    ]);
}

/// A type whose schema function generates another type's strict schema on the way, then
/// panics if asked to.
struct Nested;

thread_local! {
    static NESTED_PANICS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl JsonSchema for Nested {
    fn schema_name() -> Cow<'static, str> {
        "Nested".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let inner = strict_schema_for::<Tree>(SchemaRole::Input);
        assert!(inner.is_err(), "Tree is recursive");
        assert!(!NESTED_PANICS.with(std::cell::Cell::get), "asked to panic");
        let name = generator.subschema_for::<String>();
        json_schema!({
            "type": "object",
            "properties": {"name": name},
            "required": ["name"],
            "additionalProperties": false
        })
    }
}

#[test]
fn generation_is_reentrant_and_survives_a_panicking_schema() {
    // Generation inside generation: the outer type's schema is still its own.
    let outer = input::<Nested>();
    assert_eq!(
        outer,
        json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": false
        }),
        "no title: the root was still `Nested` when its title was written"
    );
    // A schema function that panics leaves nothing behind: the next generation is normal.
    NESTED_PANICS.with(|p| p.set(true));
    let panicked = std::panic::catch_unwind(|| strict_schema_for::<Nested>(SchemaRole::Input));
    NESTED_PANICS.with(|p| p.set(false));
    assert!(panicked.is_err());
    assert_eq!(input::<Nested>(), outer);
    let tree = input_err::<Tree>();
    assert_eq!(tree.code(), "RECURSIVE_TYPE");
}
