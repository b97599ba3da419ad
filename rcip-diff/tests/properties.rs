//! Property tests over the strict subset of JSON Schema that rcip emits: no `$ref`, every
//! object closed with `additionalProperties: false`, nullable written as schemars writes an
//! `Option<T>` (`type: [T, "null"]`, `null` among the `enum` values, a `const` turned into
//! `enum: [c, null]`), supported formats only, 64-bit bounds as exact JSON integers.
//!
//! - A schema compared with itself has no changes.
//! - One stricter change, at a random depth (a property of a nested object, an array's
//!   items), is reported, at that place, as breaking for input and info for output; the same
//!   change undone (looser) is info for input and breaking for output.
//! - A rewrite that is neither stricter nor looser (a pattern or format replaced by another, a
//!   new required property in a closed object, ...) is breaking in both roles.
//! - A rewrite that accepts exactly the same values (enum values, a type union or required
//!   names reordered, `const: c` as `enum: [c]`, `uniqueItems: false` written out) has no
//!   changes.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use rcip_diff::{Severity, diff_catalogs};
use serde_json::{Number, Value, json};

/// The formats rcip keeps (`rcip_core::schema::SUPPORTED_FORMATS`).
const FORMATS: [&str; 5] = ["uuid", "date-time", "date", "email", "uri"];
const PATTERNS: [&str; 4] = ["^[a-z]+$", "^p[0-9]+$", "^[A-Z]{2}-[0-9]{4}$", "^\\S+$"];

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

/// An integer bound: small ones mostly, and 64-bit edges, which rcip writes as exact JSON
/// integers and where neighbouring integers round to one `f64` (past 2^53).
fn integer_bound() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-100i64..100).prop_map(Value::from),
        1 => prop::sample::select(vec![
            json!(i64::MIN),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(u64::MAX - 1),
            json!(1u64 << 53),
            json!((1u64 << 53) + 1),
            json!(-(1i64 << 53)),
        ]),
    ]
}

/// A `number` bound: an integer one or a fraction.
fn number_bound() -> impl Strategy<Value = Value> {
    prop_oneof![integer_bound(), (-1.0e6f64..1.0e6).prop_map(Value::from)]
}

/// Adds each present keyword to `schema`.
fn with(mut schema: Value, keywords: Vec<(&str, Option<Value>)>) -> Value {
    for (key, value) in keywords {
        if let Some(value) = value {
            schema[key] = value;
        }
    }
    schema
}

fn maybe<S: Strategy>(strategy: S) -> impl Strategy<Value = Option<S::Value>> {
    prop::option::weighted(0.35, strategy)
}

/// A scalar schema: a string (length bounds, format, pattern), an integer or a number
/// (inclusive and exclusive bounds), a boolean, an enum, a const.
fn leaf() -> impl Strategy<Value = Value> {
    let string = (
        maybe(0u64..4),
        maybe(4u64..64),
        maybe(prop::sample::select(FORMATS.to_vec())),
        maybe(prop::sample::select(PATTERNS.to_vec())),
    )
        .prop_map(|(min, max, format, pattern)| {
            with(
                json!({"type": "string"}),
                vec![
                    ("minLength", min.map(Value::from)),
                    ("maxLength", max.map(Value::from)),
                    ("format", format.map(Value::from)),
                    ("pattern", pattern.map(Value::from)),
                ],
            )
        });
    let numeric = |bound: BoxedStrategy<Value>| {
        (
            prop::sample::select(vec!["integer", "number"]),
            maybe(bound.clone()),
            maybe(bound.clone()),
            maybe(bound.clone()),
            maybe(bound),
        )
            .prop_map(|(kind, min, max, xmin, xmax)| {
                with(
                    json!({"type": kind}),
                    vec![
                        ("minimum", min),
                        ("maximum", max),
                        ("exclusiveMinimum", xmin),
                        ("exclusiveMaximum", xmax),
                    ],
                )
            })
    };
    let integer = numeric(integer_bound().boxed());
    let number = numeric(number_bound().boxed());
    let enumeration = prop_oneof![
        prop::collection::btree_set("[a-e]", 1..5)
            .prop_map(|values| json!({"type": "string", "enum": Vec::from_iter(values)})),
        prop::collection::btree_set(-5i64..5, 1..5)
            .prop_map(|values| json!({"type": "integer", "enum": Vec::from_iter(values)})),
    ];
    let constant = prop_oneof![
        "[a-e]".prop_map(|value| json!({"type": "string", "const": value})),
        (-5i64..5).prop_map(|value| json!({"type": "integer", "const": value})),
        Just(json!({"type": "boolean", "const": true})),
    ];
    prop_oneof![
        3 => string,
        2 => integer,
        1 => number,
        1 => Just(json!({"type": "boolean"})),
        2 => enumeration,
        1 => constant,
    ]
}

/// `schema` made nullable as schemars writes an `Option<T>` (its `allow_null`).
fn nullable(mut schema: Value) -> Value {
    if let Some(Value::String(name)) = schema.get("type") {
        schema["type"] = json!([name, "null"]);
    }
    let object = schema.as_object_mut().unwrap();
    if let Some(value) = object.remove("const") {
        object.insert("enum".to_owned(), json!([value, null]));
    } else if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.push(Value::Null);
    }
    schema
}

/// An array of `items`, with optional item-count bounds and `uniqueItems` (true, or
/// rarely an explicit false).
fn array(items: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    (
        items,
        maybe(0u64..3),
        maybe(3u64..10),
        prop_oneof![4 => Just(None), 2 => Just(Some(true)), 1 => Just(Some(false))],
    )
        .prop_map(|(items, min, max, unique)| {
            with(
                json!({"type": "array", "items": items}),
                vec![
                    ("minItems", min.map(Value::from)),
                    ("maxItems", max.map(Value::from)),
                    ("uniqueItems", unique.map(Value::from)),
                ],
            )
        })
}

/// A property name; now and then one that needs escaping in a JSON pointer.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![8 => "[a-h]{1,3}", 1 => Just("a/b~c".to_owned())]
}

/// A closed object of `count` properties of `property`, some required (`required` left
/// out when empty, as schemars does).
fn object(
    property: BoxedStrategy<Value>,
    count: std::ops::Range<usize>,
) -> impl Strategy<Value = Value> {
    prop::collection::btree_map(name(), property, count)
        .prop_flat_map(|properties| {
            let count = properties.len();
            (
                Just(properties),
                prop::collection::vec(any::<bool>(), count),
            )
        })
        .prop_map(|(properties, flags)| {
            let required: Vec<&String> = properties
                .keys()
                .zip(flags)
                .filter(|(_, r)| *r)
                .map(|(n, _)| n)
                .collect();
            let mut schema =
                json!({"type": "object", "properties": properties, "additionalProperties": false});
            if !required.is_empty() {
                schema["required"] = json!(required);
            }
            schema
        })
}

/// A schema of the subset, nested at most `depth` arrays or objects deep; a quarter of them
/// nullable.
fn schema(depth: u32) -> BoxedStrategy<Value> {
    let inner = if depth == 0 {
        leaf().boxed()
    } else {
        prop_oneof![
            2 => leaf(),
            1 => array(schema(depth - 1)),
            1 => object(schema(depth - 1), 1..4),
        ]
        .boxed()
    };
    (inner, prop::bool::weighted(0.25))
        .prop_map(|(schema, null)| if null { nullable(schema) } else { schema })
        .boxed()
}

/// A capability's schema: a closed object whose properties nest up to four levels more.
fn root() -> impl Strategy<Value = Value> {
    object(schema(3), 1..5)
}

// ---------------------------------------------------------------------------------------
// Walking and mutating
// ---------------------------------------------------------------------------------------

/// A JSON pointer token (RFC 6901).
fn token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The pointer of every subschema of `schema` (itself, its properties', its items'), parents
/// before children.
fn subschemas(schema: &Value, at: &str, out: &mut Vec<String>) {
    out.push(at.to_owned());
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            subschemas(property, &format!("{at}/properties/{}", token(name)), out);
        }
    }
    if let Some(items) = schema.get("items") {
        subschemas(items, &format!("{at}/items"), out);
    }
}

fn pointers(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    subschemas(schema, "", &mut out);
    out
}

/// The types a schema allows, as written.
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn is_leaf(schema: &Value) -> bool {
    !types(schema)
        .iter()
        .any(|t| *t == "object" || *t == "array")
}

/// Whether a string schema can take a format or pattern (not one of fixed values).
fn free_string(schema: &Value) -> bool {
    types(schema).contains(&"string")
        && schema.get("enum").is_none()
        && schema.get("const").is_none()
}

/// The optional properties of a closed object.
fn optional(schema: &Value) -> Vec<String> {
    let required = schema.get("required").and_then(Value::as_array);
    let is_required = |name: &str| required.is_some_and(|r| r.contains(&json!(name)));
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().filter(|n| !is_required(n)).cloned().collect())
        .unwrap_or_default()
}

/// The number just above `n`: the next integer, exact (past `u64::MAX`, the next `f64`).
fn raised(n: &Number) -> Value {
    if let Some(u) = n.as_u64() {
        u.checked_add(1)
            .map_or_else(|| json!((u as f64).next_up()), Value::from)
    } else if let Some(i) = n.as_i64() {
        json!(i + 1)
    } else {
        let f = n.as_f64().unwrap();
        json!(if f + 1.0 > f { f + 1.0 } else { f.next_up() })
    }
}

/// The number just below `n` (below `i64::MIN`, the next `f64` down).
fn lowered(n: &Number) -> Value {
    if let Some(i) = n.as_i64() {
        i.checked_sub(1)
            .map_or_else(|| json!((i as f64).next_down()), Value::from)
    } else if let Some(u) = n.as_u64() {
        json!(u - 1)
    } else {
        let f = n.as_f64().unwrap();
        json!(if f - 1.0 < f { f - 1.0 } else { f.next_down() })
    }
}

/// The kinds of stricter change, one per arm of [`narrow`].
const STRICTER: [&str; 12] = [
    "an optional property made required",
    "an optional property removed from a closed object",
    "null no longer allowed",
    "number narrowed to integer",
    "an enum value removed",
    "a const added",
    "a lower bound raised",
    "an upper bound lowered",
    "a bound added",
    "a format added",
    "a pattern added",
    "uniqueItems set",
];

/// Applies the stricter change `kind` to `schema` itself (not its subschemas), choosing
/// among candidates with `pick`; false when it does not apply.
fn narrow(schema: &mut Value, kind: usize, pick: usize) -> bool {
    let types: Vec<String> = types(schema).into_iter().map(str::to_owned).collect();
    let has = |t: &str| types.iter().any(|n| n == t);
    let object = schema.as_object_mut().unwrap();
    match kind {
        0 | 1 => {
            let optional = optional(&Value::Object(object.clone()));
            if optional.is_empty() {
                return false;
            }
            let name = &optional[pick % optional.len()];
            if kind == 0 {
                let required = object.entry("required").or_insert_with(|| json!([]));
                required.as_array_mut().unwrap().push(json!(name));
            } else {
                // A value carrying it was accepted; the closed object now refuses it.
                object["properties"].as_object_mut().unwrap().remove(name);
            }
        }
        2 => {
            // The inverse of schemars' `allow_null`: `[T, "null"]` to `T`, `null` out of the
            // enum (which may become the `const` it was made from).
            if !has("null") || types.len() != 2 {
                return false;
            }
            let other = types.iter().find(|t| *t != "null").unwrap();
            object.insert("type".to_owned(), json!(other));
            if let Some(Value::Array(values)) = object.get_mut("enum") {
                values.retain(|v| !v.is_null());
                if values.len() == 1 && pick.is_multiple_of(2) {
                    let value = values[0].clone();
                    object.remove("enum");
                    object.insert("const".to_owned(), value);
                }
            }
        }
        3 => {
            let Some(at) = types.iter().position(|t| t == "number") else {
                return false;
            };
            let mut narrowed = types.clone();
            narrowed[at] = "integer".to_owned();
            let narrowed = if narrowed.len() == 1 {
                json!(narrowed[0])
            } else {
                json!(narrowed)
            };
            object.insert("type".to_owned(), narrowed);
        }
        4 => {
            let Some(Value::Array(values)) = object.get_mut("enum") else {
                return false;
            };
            if values.len() < 2 {
                return false;
            }
            let at = pick % values.len();
            values.remove(at);
        }
        5 => {
            if !is_leaf(&Value::Object(object.clone()))
                || object.contains_key("const")
                || object.contains_key("enum")
            {
                return false;
            }
            let value = if has("boolean") {
                json!(true)
            } else if has("string") {
                json!("k")
            } else {
                json!(3)
            };
            object.insert("const".to_owned(), value);
        }
        6 | 7 => {
            let keys: &[&str] = if kind == 6 {
                &["minimum", "exclusiveMinimum", "minLength", "minItems"]
            } else {
                &["maximum", "exclusiveMaximum", "maxLength", "maxItems"]
            };
            let present: Vec<&str> = keys
                .iter()
                .copied()
                .filter(|k| object.get(*k).is_some_and(Value::is_number))
                // A length or count of 0 cannot be lowered.
                .filter(|k| {
                    let count = k.ends_with("Length") || k.ends_with("Items");
                    kind == 6 || !count || object[*k] != 0
                })
                .collect();
            if present.is_empty() {
                return false;
            }
            let key = present[pick % present.len()];
            let n = object[key].as_number().unwrap().clone();
            object.insert(
                key.to_owned(),
                if kind == 6 { raised(&n) } else { lowered(&n) },
            );
        }
        8 => {
            let mut candidates: Vec<(&str, Value)> = Vec::new();
            if has("string") && object.get("enum").is_none() && object.get("const").is_none() {
                candidates.extend([("minLength", json!(1)), ("maxLength", json!(16))]);
            }
            if has("integer") || has("number") {
                candidates.extend([
                    ("minimum", json!(0)),
                    ("maximum", json!(100)),
                    ("exclusiveMinimum", json!(-1)),
                    ("exclusiveMaximum", json!(1000)),
                ]);
            }
            if has("array") {
                candidates.extend([("minItems", json!(1)), ("maxItems", json!(8))]);
            }
            candidates.retain(|(k, _)| !object.contains_key(*k));
            if candidates.is_empty() {
                return false;
            }
            let (key, value) = candidates.swap_remove(pick % candidates.len());
            object.insert(key.to_owned(), value);
        }
        9 | 10 => {
            let (key, values): (&str, &[&str]) = if kind == 9 {
                ("format", &FORMATS)
            } else {
                ("pattern", &PATTERNS)
            };
            if !free_string(&Value::Object(object.clone())) || object.contains_key(key) {
                return false;
            }
            object.insert(key.to_owned(), json!(values[pick % values.len()]));
        }
        11 => {
            if !has("array") || object.get("uniqueItems") == Some(&json!(true)) {
                return false;
            }
            object.insert("uniqueItems".to_owned(), json!(true));
        }
        _ => unreachable!(),
    }
    true
}

/// One stricter change to `schema`: of the kinds that apply somewhere, the one `kind` (mod
/// their count), at the subschema `index` (mod the count of those where it applies). Choosing
/// the kind first tries each about as often whatever shapes the schema has. Returns the new
/// schema, the subschema's pointer and what changed; none when nothing applies.
fn stricter(
    schema: &Value,
    index: usize,
    kind: usize,
    pick: usize,
) -> Option<(Value, String, &'static str)> {
    let places = pointers(schema);
    let narrowed = |place: &str, kind: usize| {
        let mut narrowed = schema.clone();
        narrow(narrowed.pointer_mut(place).unwrap(), kind, pick).then_some(narrowed)
    };
    let kinds: Vec<usize> = (0..STRICTER.len())
        .filter(|k| places.iter().any(|p| narrowed(p, *k).is_some()))
        .collect();
    let kind = *kinds.get(kind % kinds.len().max(1))?;
    let fitting: Vec<&String> = places
        .iter()
        .filter(|p| narrowed(p, kind).is_some())
        .collect();
    let place = fitting[index % fitting.len()];
    Some((narrowed(place, kind)?, place.clone(), STRICTER[kind]))
}

/// `rewrite` at the first subschema it fits, from the subschema `index` (mod their count);
/// when it fits none, at a property `s1` of the schema `spare` added to the root (a name the
/// generators never give). Returns what `rewrite` did and where.
fn first_fit<T>(
    schema: &Value,
    index: usize,
    spare: Value,
    rewrite: impl Fn(&Value, &str) -> Option<T>,
) -> (T, String) {
    let places = pointers(schema);
    let found = places
        .iter()
        .cycle()
        .skip(index % places.len())
        .take(places.len())
        .find_map(|place| rewrite(schema, place).map(|done| (done, place.clone())));
    found.unwrap_or_else(|| {
        let mut schema = schema.clone();
        schema["properties"]["s1"] = spare;
        let place = "/properties/s1";
        let done = rewrite(&schema, place).expect("the spare property fits");
        (done, place.to_owned())
    })
}

/// Two versions of a schema that differ at one place.
type Pair = (Value, Value, &'static str);

/// Rewrites that are neither stricter nor looser, one per arm of [`unrelated`].
const UNRELATED: usize = 5;

/// The rewrite `which`, neither stricter nor looser, at the subschema `place` of `schema`:
/// (before, after, what, whether it is reported as one change). Before may differ from
/// `schema` (the pattern to be replaced, set).
fn unrelated(schema: &Value, place: &str, which: usize, pick: usize) -> Option<(Pair, bool)> {
    let node = schema.pointer(place).unwrap();
    let (mut before, mut after) = (schema.clone(), schema.clone());
    let (old, new) = (
        before.pointer_mut(place).unwrap(),
        after.pointer_mut(place).unwrap(),
    );
    // Two different values of `values`.
    let two = |values: &[&str]| {
        let first = pick % values.len();
        let second = (first + 1 + pick / values.len() % (values.len() - 1)) % values.len();
        (json!(values[first]), json!(values[second]))
    };
    let string_leaf = is_leaf(node) && types(node).contains(&"string");
    let (what, single) = match which {
        0 | 1 if free_string(node) => {
            let (key, values): (&str, &[&str]) = if which == 0 {
                ("pattern", &PATTERNS)
            } else {
                ("format", &FORMATS)
            };
            (old[key], new[key]) = two(values);
            let what = if which == 0 {
                "a pattern replaced by another"
            } else {
                "a format replaced by another"
            };
            (what, true)
        }
        2 if node.get("additionalProperties") == Some(&json!(false)) => {
            // Old values never carry it (closed), new ones must: neither contains the other.
            let name = "zz";
            new["properties"][name] = json!({"type": "string"});
            let required = new
                .as_object_mut()
                .unwrap()
                .entry("required")
                .or_insert_with(|| json!([]));
            required.as_array_mut().unwrap().push(json!(name));
            ("a new required property in a closed object", false)
        }
        3 if string_leaf => {
            old.as_object_mut().unwrap().remove("enum");
            new.as_object_mut().unwrap().remove("enum");
            (old["const"], new["const"]) = two(&["x", "y", "z"]);
            ("a const replaced by another", true)
        }
        4 if string_leaf => {
            old.as_object_mut().unwrap().remove("const");
            new.as_object_mut().unwrap().remove("const");
            old["enum"] = json!(["p", "q"]);
            new["enum"] = json!(["p", "r"]);
            ("an enum value replaced by another", true)
        }
        _ => return None,
    };
    Some(((before, after, what), single))
}

/// Rewrites that accept the same values, one per arm of [`equivalent`].
const EQUIVALENT: usize = 5;

/// The rewrite `which` of the subschema `place` of `schema` that accepts exactly the same
/// values: (before, after, what).
fn equivalent(schema: &Value, place: &str, which: usize) -> Option<Pair> {
    let mut after = schema.clone();
    let node = after.pointer_mut(place).unwrap().as_object_mut().unwrap();
    let reverse = |value: Option<&mut Value>| match value {
        Some(Value::Array(values)) if values.len() >= 2 => {
            values.reverse();
            true
        }
        _ => false,
    };
    let what = match which {
        0 if reverse(node.get_mut("enum")) => "the enum values reordered",
        1 if reverse(node.get_mut("type")) => "the type union reordered",
        2 if reverse(node.get_mut("required")) => "the required names reordered",
        3 if node.contains_key("const") && !node.contains_key("enum") => {
            let value = node.remove("const").unwrap();
            node.insert("enum".to_owned(), json!([value]));
            "a const written as an enum of one value"
        }
        4 if node.get("uniqueItems") == Some(&json!(false)) => {
            node.remove("uniqueItems");
            "uniqueItems: false left out"
        }
        4 if node.get("type") == Some(&json!("array")) && !node.contains_key("uniqueItems") => {
            node.insert("uniqueItems".to_owned(), json!(false));
            "uniqueItems: false written out"
        }
        _ => return None,
    };
    Some((schema.clone(), after, what))
}

// ---------------------------------------------------------------------------------------
// Running the diff
// ---------------------------------------------------------------------------------------

fn wrap(key: &str, schema: &Value) -> Value {
    json!({"application": {"id": "a"}, "scopes": [], "capabilities": [
        {"id": "c", "effect": "read", "scopeIds": [], key: schema}
    ]})
}

/// The changes between the two schemas in role `key`: (severity, rule, pointer).
fn changes(key: &str, old: &Value, new: &Value) -> Vec<(Severity, &'static str, String)> {
    diff_catalogs(&wrap(key, old), &wrap(key, new))
        .unwrap()
        .changes
        .into_iter()
        .map(|c| (c.severity, c.rule, c.pointer))
        .collect()
}

/// Whether there is at least one change, each of `severity` and under the subschema `place`.
fn all_at(
    changes: &[(Severity, &'static str, String)],
    severity: Severity,
    key: &str,
    place: &str,
) -> bool {
    let under = format!("/{key}{place}");
    !changes.is_empty()
        && changes.iter().all(|(s, _, pointer)| {
            *s == severity && (*pointer == under || pointer.starts_with(&format!("{under}/")))
        })
}

fn any_breaking(changes: &[(Severity, &'static str, String)]) -> bool {
    changes.iter().any(|(s, _, _)| *s == Severity::Breaking)
}

// 256 cases each (proptest's default), schemas of up to about 30 subschemas: the file runs in
// one to two seconds in a debug build.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_schema_against_itself_has_no_changes(schema in root()) {
        for key in ["inputSchema", "outputSchema"] {
            let found = changes(key, &schema, &schema);
            prop_assert!(found.is_empty(), "{found:?}");
        }
    }

    #[test]
    fn stricter_and_looser_are_classified_by_role(
        schema in root(),
        index in any::<usize>(),
        kind in any::<usize>(),
        pick in any::<usize>(),
    ) {
        let Some((narrowed, place, what)) = stricter(&schema, index, kind, pick) else {
            // Nothing to narrow anywhere (does not happen with these generators).
            return Err(TestCaseError::reject("no stricter change applies"));
        };
        prop_assert_ne!(&narrowed, &schema);
        let context = format!("{what} at {place}:\n{schema}\n->\n{narrowed}");
        // Stricter: breaking as input, info as output, reported at the place changed.
        let input = changes("inputSchema", &schema, &narrowed);
        prop_assert!(all_at(&input, Severity::Breaking, "inputSchema", &place), "{context}\n{input:?}");
        let output = changes("outputSchema", &schema, &narrowed);
        prop_assert!(all_at(&output, Severity::Info, "outputSchema", &place), "{context}\n{output:?}");
        // The same change undone is looser: info as input, breaking as output.
        let input = changes("inputSchema", &narrowed, &schema);
        prop_assert!(all_at(&input, Severity::Info, "inputSchema", &place), "undone: {context}\n{input:?}");
        let output = changes("outputSchema", &narrowed, &schema);
        prop_assert!(all_at(&output, Severity::Breaking, "outputSchema", &place), "undone: {context}\n{output:?}");
    }

    #[test]
    fn unrelated_rewrites_are_breaking_in_both_roles(
        schema in root(),
        index in any::<usize>(),
        which in 0..UNRELATED,
        pick in any::<usize>(),
    ) {
        let spare = json!({"type": "string"});
        let (((before, after, what), single), place) =
            first_fit(&schema, index, spare, |schema, place| unrelated(schema, place, which, pick));
        prop_assert_ne!(&before, &after);
        let context = format!("{what} at {place}:\n{before}\n->\n{after}");
        // Either way round, in either role: a consumer can fail.
        for (from, to) in [(&before, &after), (&after, &before)] {
            for key in ["inputSchema", "outputSchema"] {
                let found = changes(key, from, to);
                if single {
                    prop_assert!(all_at(&found, Severity::Breaking, key, &place), "{key}: {context}\n{found:?}");
                } else {
                    // A property added and one required: looser and stricter at once.
                    prop_assert!(any_breaking(&found), "{key}: {context}\n{found:?}");
                }
            }
        }
    }

    #[test]
    fn equivalent_rewrites_have_no_changes(
        schema in root(),
        index in any::<usize>(),
        which in 0..EQUIVALENT,
    ) {
        // Fits the enum and type reorderings.
        let spare = json!({"type": ["string", "null"], "enum": ["p", "q", null]});
        let ((before, after, what), place) = first_fit(&schema, index, spare, |schema, place| {
            (which..which + EQUIVALENT).find_map(|which| equivalent(schema, place, which % EQUIVALENT))
        });
        prop_assert_ne!(&before, &after);
        for (from, to) in [(&before, &after), (&after, &before)] {
            for key in ["inputSchema", "outputSchema"] {
                let found = changes(key, from, to);
                prop_assert!(found.is_empty(), "{key}: {what} at {place}:\n{from}\n->\n{to}\n{found:?}");
            }
        }
    }
}

/// Each kind of change (stricter, unrelated, equivalent) applies somewhere in a schema that
/// has every shape, so no arm of [`narrow`], [`unrelated`] or [`equivalent`] is dead.
#[test]
fn every_kind_of_change_applies() {
    let schema = json!({
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 1, "maxLength": 9},
            "n": {"type": ["number", "null"], "minimum": 0, "maximum": 9},
            "e": {"type": "string", "enum": ["a", "b"]},
            "k": {"type": "integer", "const": 1},
            "list": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 4},
            "o": nullable(json!({"type": "object", "properties": {}, "additionalProperties": false}))
        },
        "required": ["s", "e"],
        "additionalProperties": false
    });
    let places = pointers(&schema);
    for (kind, what) in STRICTER.iter().enumerate() {
        let applies = places.iter().any(|place| {
            let mut copy = schema.clone();
            narrow(copy.pointer_mut(place).unwrap(), kind, 0)
        });
        assert!(applies, "{what}");
    }
    for which in 0..UNRELATED {
        let fits = places
            .iter()
            .any(|p| unrelated(&schema, p, which, 0).is_some());
        assert!(fits, "unrelated rewrite {which}");
    }
    for which in 0..EQUIVALENT {
        let fits = places
            .iter()
            .any(|p| equivalent(&schema, p, which).is_some());
        assert!(fits, "equivalent rewrite {which}");
    }
}

/// The 64-bit edges survive as exact integers (the generators rely on it), and the next
/// number past them is distinct.
#[test]
fn bounds_step_past_64_bit_edges() {
    for edge in [json!(u64::MAX), json!(i64::MIN), json!(i64::MAX)] {
        let n = edge.as_number().unwrap();
        assert_ne!(&raised(n), &edge);
        assert_ne!(&lowered(n), &edge);
    }
    assert_eq!(
        raised(json!(1u64 << 53).as_number().unwrap()),
        json!((1u64 << 53) + 1)
    );
}
