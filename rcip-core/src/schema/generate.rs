//! The strict schema generator: JSON Schemas for Rust types, built on schemars.
//!
//! See [`strict_schema_for`] for the rules.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Number, Value};

use super::strict::{SUPPORTED_FORMATS, check_strict};
use super::violation::SchemaViolation;
use crate::SchemaRole;
use crate::pointer::push_token;

/// Why no strict schema could be generated for a type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaGenerationError {
    /// The type refers to itself: its schema cannot be inlined.
    #[error(
        "recursive type: reference {reference:?} cannot be inlined at {}",
        Where(pointer)
    )]
    RecursiveType {
        /// JSON Pointer to the schema holding the `$ref`.
        pointer: String,
        /// The `$ref` value.
        reference: String,
    },
    /// A `format` rcip does not validate: any but the integer and float formats (turned into
    /// bounds) and the [`SUPPORTED_FORMATS`](super::SUPPORTED_FORMATS).
    #[error("unsupported format {format} at {}", Where(pointer))]
    UnsupportedFormat {
        /// JSON Pointer to the schema holding the `format`.
        pointer: String,
        /// The format, as JSON (a string in practice, e.g. `"date-time"`).
        format: String,
    },
    /// Untyped JSON (e.g. `serde_json::Value`): any value would be accepted.
    #[error("untyped JSON value at {}", Where(pointer))]
    UntypedValue {
        /// JSON Pointer to the schema of the untyped value.
        pointer: String,
    },
    /// A map whose keys are not strings (e.g. integers).
    #[error("map with non-string keys at {}", Where(pointer))]
    NonStringMapKeys {
        /// JSON Pointer to the schema of the map.
        pointer: String,
    },
    /// Internal error: the transformed schema still breaks a strict rule.
    #[error("generated schema is not strict: {0}")]
    NotStrict(SchemaViolation),
}

impl SchemaGenerationError {
    /// A stable SCREAMING_SNAKE_CASE code for the error, e.g. `"RECURSIVE_TYPE"`.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::RecursiveType { .. } => "RECURSIVE_TYPE",
            Self::UnsupportedFormat { .. } => "UNSUPPORTED_FORMAT",
            Self::UntypedValue { .. } => "UNTYPED_VALUE",
            Self::NonStringMapKeys { .. } => "NON_STRING_MAP_KEYS",
            Self::NotStrict(_) => "NOT_STRICT",
        }
    }

    /// JSON Pointer (RFC 6901, escaped) to the offending schema, `""` for the root.
    pub fn pointer(&self) -> &str {
        match self {
            Self::RecursiveType { pointer, .. }
            | Self::UnsupportedFormat { pointer, .. }
            | Self::UntypedValue { pointer }
            | Self::NonStringMapKeys { pointer } => pointer,
            Self::NotStrict(violation) => &violation.pointer,
        }
    }
}

/// Prints a JSON Pointer for messages; the root is `""`, shown as "the root".
struct Where<'a>(&'a str);

impl fmt::Display for Where<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            f.write_str("the root")
        } else {
            f.write_str(self.0)
        }
    }
}

/// The strict JSON Schema of `T`, as rcip publishes and validates it.
///
/// Input schemas follow the way `T` is deserialized, output schemas the way it is
/// serialized (schemars' deserialize and serialize contracts).
///
/// This function asks schemars (draft 2020-12, every subschema inlined, no
/// `$schema`) for the schema of a type, then applies a *strict transform*, and finally
/// checks the result with [`check_strict`] (a failure there is an internal error,
/// [`SchemaGenerationError::NotStrict`]).
///
/// # The strict transform
///
/// * **Inlined.** No `$ref` and no `$defs`. A `$ref` that is left after inlining can
///   only come from a recursive type, which is a [`SchemaGenerationError::RecursiveType`].
/// * **No `$schema`.** The dialect is implied (draft 2020-12).
/// * **Titles.** schemars sets the root `title` to the Rust type name; that title is
///   removed, because it names an implementation detail, not the payload. A title set
///   explicitly (e.g. `#[schemars(title = "...")]`) that differs from the type name, and
///   every `title` below the root, are kept. `description`s (from doc comments) are kept.
/// * **Closed objects.** Every object schema with `properties` and no
///   `additionalProperties` gets `additionalProperties: false`, whether or not the type
///   has `#[serde(deny_unknown_fields)]`. Maps are left alone: their
///   `additionalProperties` is the schema of the values. An object with `properties` that
///   is combined with `allOf`/`anyOf`/`oneOf` branches (what schemars emits for
///   `#[serde(flatten)]` of an enum) is closed with `unevaluatedProperties: false`
///   instead, and its branches are left open, so that the branches' properties stay
///   allowed.
/// * **Formats.** The standard string formats `uuid`, `date-time`, `date`, `email` and
///   `uri` ([`SUPPORTED_FORMATS`](super::SUPPORTED_FORMATS)) are kept, and the runtime
///   validates them: `uuid::Uuid` (schemars' `uuid1` feature) gives
///   `{"type": "string", "format": "uuid"}`, chrono's `DateTime<Tz>` and jiff's `Timestamp`
///   (features `chrono04`, `jiff02`) `"date-time"`, `NaiveDate` `"date"`. Integer formats
///   (`int8` ... `int128`, `uint8` ... `uint128`, `int`, `uint`) become `minimum`/`maximum`
///   bounds of the Rust type instead. A bound already present is kept when it is at least
///   as strict. 64-bit bounds are written as exact JSON integers (an export profile that
///   cannot state them clamps them). The bounds of `i128`/`u128` that do not fit a 64-bit
///   JSON integer are written as exact powers of two: `minimum: -2^127`, and
///   `exclusiveMaximum: 2^127` or `2^128`. Float formats (`float`, `double`) are removed.
///   Any other format (`partial-date-time` of chrono's `NaiveDateTime`, `ipv4`,
///   `hostname`, ...) is a [`SchemaGenerationError::UnsupportedFormat`]: rcip would not
///   validate it, and the reference implementation installs no format at all (so a
///   catalog with formats is an rcip extension; see `docs/beyond-the-reference.md`).
/// * **`Option<T>` is "absent or null".** Under the deserialize contract (input schemas)
///   an `Option<T>` field is left out of `required` and its schema also accepts `null`,
///   as schemars emits it: `type: [T, "null"]`, or `anyOf: [{...}, {"type": "null"}]`
///   when `T` is a composed schema. Under the serialize contract (output schemas) serde
///   always writes the field, so it is `required` and may be `null`. `#[serde(default)]`
///   fields are not `required` either, and carry the `default` value.
/// * **No untyped JSON.** A value position with no type constraint (what
///   `serde_json::Value` gives: the `true` schema or a schema with only annotations) is a
///   [`SchemaGenerationError::UntypedValue`].
/// * **String map keys only.** schemars describes a map whose keys are integers with
///   `patternProperties` `^\d+$` (unsigned) or `^-?\d+$` (signed) and
///   `additionalProperties: false`; such a map is a
///   [`SchemaGenerationError::NonStringMapKeys`]. Maps with `String` keys
///   (`additionalProperties` is the value schema) and maps with unit-enum keys (every
///   key becomes an optional property) are accepted. Key types that schemars does not
///   recognise are described as string-keyed maps and cannot be told apart.
///
/// # Agreement with serde
///
/// The schema always says `additionalProperties: false`, but serde only refuses unknown
/// fields when the type has `#[serde(deny_unknown_fields)]`. So the schema accepts
/// exactly what `serde_json::from_value` accepts only for types with
/// `deny_unknown_fields` (on every struct and struct variant); for other types the schema
/// is stricter than serde. Two serde exceptions remain even then: a unit variant of an
/// internally tagged enum ignores other fields (the schema refuses them), and serde
/// refuses every value of a type combining `deny_unknown_fields` with `flatten`.
///
/// Internally tagged enums (`#[serde(tag = "...")]`) come out as a `oneOf` of object
/// schemas, one per variant, each with a `const` tag property; they pass the checker as
/// they are, and every variant is closed.
///
/// # Errors
///
/// A [`SchemaGenerationError`] for a recursive type, a `format` other than an integer or
/// float format or a supported one, untyped JSON, or a map with non-string keys.
///
/// # Examples
///
/// ```
/// use rcip_core::SchemaRole;
/// use rcip_core::schema::{check_strict, strict_schema_for};
/// use serde_json::json;
///
/// let schema = strict_schema_for::<Vec<u8>>(SchemaRole::Input).unwrap();
/// assert_eq!(
///     schema,
///     json!({ "type": "array", "items": { "type": "integer", "minimum": 0, "maximum": 255 } })
/// );
/// assert!(check_strict(&schema).is_ok());
///
/// let error = strict_schema_for::<serde_json::Value>(SchemaRole::Input).unwrap_err();
/// assert_eq!(error.code(), "UNTYPED_VALUE");
///
/// // With schemars' `uuid1` feature: a supported format is kept (and validated at run time).
/// let schema = strict_schema_for::<uuid::Uuid>(SchemaRole::Input).unwrap();
/// assert_eq!(schema, json!({ "type": "string", "format": "uuid" }));
/// // An IP address is an `ipv4` string: a format rcip does not validate.
/// let error = strict_schema_for::<std::net::Ipv4Addr>(SchemaRole::Input).unwrap_err();
/// assert_eq!(error.code(), "UNSUPPORTED_FORMAT");
/// ```
pub fn strict_schema_for<T: JsonSchema>(role: SchemaRole) -> Result<Value, SchemaGenerationError> {
    // Only these three function pointers depend on `T`: everything else, schemars' root
    // generation included, is one shared function, so a catalog of many types compiles one
    // copy of it (compile time is a feature).
    strict_schema_of(
        RootType {
            name: T::schema_name,
            id: T::schema_id,
            schema: T::json_schema,
        },
        role,
    )
}

/// The schema functions of the type a strict schema is generated for.
#[derive(Clone, Copy)]
struct RootType {
    name: fn() -> Cow<'static, str>,
    id: fn() -> Cow<'static, str>,
    schema: fn(&mut SchemaGenerator) -> Schema,
}

thread_local! {
    /// The type [`Root`] stands for while [`strict_schema_of`] generates its schema.
    static ROOT: Cell<Option<RootType>> = const { Cell::new(None) };
}

/// The one type schemars' root generation is instantiated for: it answers as the
/// [`RootType`] in [`ROOT`] does. schemars takes the root type as a type parameter and
/// compiles its generic root code (recursion bookkeeping, title, definitions, transforms)
/// once per type; every call from here shares one copy of it. The schema is the same as
/// `into_root_schema_for::<T>`'s: the root's id is `T`'s, so a recursive `T` is still
/// found by that id and referenced (then refused as recursive) exactly as before.
struct Root;

impl JsonSchema for Root {
    fn schema_name() -> Cow<'static, str> {
        ROOT.with(Cell::get)
            .map_or(Cow::Borrowed("Root"), |root| (root.name)())
    }

    fn schema_id() -> Cow<'static, str> {
        ROOT.with(Cell::get)
            .map_or(Cow::Borrowed("rcip_core::Root"), |root| (root.id)())
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        // `ROOT` is set for as long as `strict_schema_of` runs, the only caller.
        ROOT.with(Cell::get)
            .map_or(Schema::from(false), |root| (root.schema)(generator))
    }
}

/// Restores the previous [`ROOT`] when generation ends, however it ends.
struct RootGuard(Option<RootType>);

impl Drop for RootGuard {
    fn drop(&mut self) {
        ROOT.with(|root| root.set(self.0));
    }
}

/// [`strict_schema_for`] without the type parameter.
fn strict_schema_of(root: RootType, role: SchemaRole) -> Result<Value, SchemaGenerationError> {
    let schema = {
        let _guard = RootGuard(ROOT.with(|cell| cell.replace(Some(root))));
        generator(role).into_root_schema_for::<Root>()
    };
    finish(schema.to_value(), &(root.name)())
}

/// The schemars generator rcip uses for a role.
fn generator(role: SchemaRole) -> schemars::SchemaGenerator {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
        s.meta_schema = None;
    });
    let settings = match role {
        SchemaRole::Input => settings.for_deserialize(),
        SchemaRole::Output => settings.for_serialize(),
    };
    settings.into_generator()
}

/// The strict transform and check, after generation.
fn finish(mut schema: Value, type_name: &str) -> Result<Value, SchemaGenerationError> {
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        if root.get("title").and_then(Value::as_str) == Some(type_name) {
            root.remove("title");
        }
    }
    let mut pointer = String::new();
    check_value_position(&schema, &pointer)?;
    transform(&mut schema, &mut pointer, false)?;
    if let Value::Object(root) = &mut schema {
        // Only recursive types leave definitions behind, and their `$ref`s were refused.
        root.remove("$defs");
        root.remove("definitions");
    }
    check_strict(&schema).map_err(SchemaGenerationError::NotStrict)?;
    Ok(schema)
}

/// Keywords whose value is one subschema.
const ONE: [&str; 11] = [
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is a list of subschemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is a map of subschemas.
const MAP: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];
/// Keywords whose subschemas describe the same instance and may add properties to it.
const COMPOSITION: [&str; 3] = ["allOf", "anyOf", "oneOf"];
/// Keywords whose subschemas describe a value (a property, an item, a map value).
const VALUE_POSITIONS: [&str; 5] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "items",
    "prefixItems",
];
/// Keywords that constrain nothing: a schema's annotations, which no validator checks.
pub const ANNOTATIONS: [&str; 8] = [
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];
/// The `patternProperties` schemars writes for maps with integer keys.
const INTEGER_KEY_PATTERNS: [&str; 2] = [r"^\d+$", r"^-?\d+$"];

/// Applies the strict transform to `schema` (at `pointer`) and its subschemas.
/// `closed_above`: an ancestor for the same instance closes the object with
/// `unevaluatedProperties`, so this schema must stay open.
fn transform(
    schema: &mut Value,
    pointer: &mut String,
    closed_above: bool,
) -> Result<(), SchemaGenerationError> {
    let Value::Object(object) = schema else {
        return Ok(());
    };
    if let Some(reference) = object.get("$ref") {
        return Err(SchemaGenerationError::RecursiveType {
            pointer: pointer.clone(),
            reference: reference
                .as_str()
                .map_or_else(|| reference.to_string(), str::to_owned),
        });
    }
    if let Some(patterns) = object.get("patternProperties").and_then(Value::as_object)
        && patterns
            .keys()
            .any(|p| INTEGER_KEY_PATTERNS.contains(&p.as_str()))
    {
        return Err(SchemaGenerationError::NonStringMapKeys {
            pointer: pointer.clone(),
        });
    }
    let kept = object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| SUPPORTED_FORMATS.contains(&f));
    if !kept && let Some(format) = object.remove("format") {
        apply_format(object, &format, pointer)?;
    }
    let composed = COMPOSITION.iter().any(|k| object.contains_key(*k));
    if object.contains_key("properties")
        && !closed_above
        && !object.contains_key("additionalProperties")
        && !object.contains_key("unevaluatedProperties")
    {
        let key = if composed && composition_declares_properties(object) {
            "unevaluatedProperties"
        } else {
            "additionalProperties"
        };
        object.insert(key.to_owned(), Value::Bool(false));
    }
    let closes_branches = closed_above
        || (object.contains_key("properties")
            && object.get("unevaluatedProperties") == Some(&Value::Bool(false)));
    for (keyword, value) in object.iter_mut() {
        if keyword == "$defs" || keyword == "definitions" {
            continue;
        }
        let branch_closed = closes_branches && COMPOSITION.contains(&keyword.as_str());
        let value_position = VALUE_POSITIONS.contains(&keyword.as_str());
        let len = pointer.len();
        push_token(pointer, keyword);
        let result = if ONE.contains(&keyword.as_str()) {
            visit(value, pointer, value_position, branch_closed)
        } else if LIST.contains(&keyword.as_str()) {
            visit_all(
                value.as_array_mut().into_iter().flatten().enumerate(),
                pointer,
                value_position,
                branch_closed,
            )
        } else if MAP.contains(&keyword.as_str()) {
            visit_all(
                value.as_object_mut().into_iter().flatten(),
                pointer,
                value_position,
                branch_closed,
            )
        } else {
            Ok(())
        };
        pointer.truncate(len);
        result?;
    }
    Ok(())
}

/// Visits the subschemas of a list or map keyword.
fn visit_all<'v, K: ToString>(
    entries: impl Iterator<Item = (K, &'v mut Value)>,
    pointer: &mut String,
    value_position: bool,
    closed_above: bool,
) -> Result<(), SchemaGenerationError> {
    for (key, value) in entries {
        let len = pointer.len();
        push_token(pointer, &key.to_string());
        let result = visit(value, pointer, value_position, closed_above);
        pointer.truncate(len);
        result?;
    }
    Ok(())
}

/// Visits one subschema.
fn visit(
    value: &mut Value,
    pointer: &mut String,
    value_position: bool,
    closed_above: bool,
) -> Result<(), SchemaGenerationError> {
    if value_position {
        check_value_position(value, pointer)?;
    }
    transform(value, pointer, closed_above)
}

/// Refuses an untyped schema where a value is described.
fn check_value_position(schema: &Value, pointer: &str) -> Result<(), SchemaGenerationError> {
    if is_untyped(schema) {
        Err(SchemaGenerationError::UntypedValue {
            pointer: pointer.to_owned(),
        })
    } else {
        Ok(())
    }
}

/// Whether the schema leaves the type of the value open.
fn is_untyped(schema: &Value) -> bool {
    let object = match schema {
        Value::Bool(accepts) => return *accepts,
        Value::Object(object) => object,
        _ => return false,
    };
    if ["type", "enum", "const", "$ref", "not"]
        .iter()
        .any(|k| object.contains_key(*k))
    {
        return false;
    }
    let branches = |k: &str| object.get(k).and_then(Value::as_array);
    let any_of = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| branches(k))
        .collect::<Vec<_>>();
    if !any_of.is_empty() {
        return any_of.iter().all(|b| b.iter().any(is_untyped));
    }
    if let Some(all_of) = branches("allOf") {
        return all_of.iter().all(is_untyped);
    }
    object.keys().all(|k| ANNOTATIONS.contains(&k.as_str()))
}

/// Whether an `allOf`/`anyOf`/`oneOf` branch of `object` (or deeper, for the same
/// instance) declares `properties`.
fn composition_declares_properties(object: &Map<String, Value>) -> bool {
    COMPOSITION
        .iter()
        .filter_map(|k| object.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_object)
        .any(|branch| branch.contains_key("properties") || composition_declares_properties(branch))
}

/// An upper bound of an integer format.
#[derive(Debug, Clone, Copy)]
enum Upper {
    /// `maximum`, a value that fits a 64-bit JSON integer.
    Inclusive(i128),
    /// `exclusiveMaximum: 2^exponent`, for 128-bit formats.
    ExclusivePowerOfTwo(i32),
}

/// The bounds of an integer format, or `None` for a format that is not an integer one.
fn integer_bounds(format: &str) -> Option<(i128, Upper)> {
    use Upper::{ExclusivePowerOfTwo, Inclusive};
    Some(match format {
        "int8" => (i8::MIN.into(), Inclusive(i8::MAX.into())),
        "uint8" => (0, Inclusive(u8::MAX.into())),
        "int16" => (i16::MIN.into(), Inclusive(i16::MAX.into())),
        "uint16" => (0, Inclusive(u16::MAX.into())),
        "int32" => (i32::MIN.into(), Inclusive(i32::MAX.into())),
        "uint32" => (0, Inclusive(u32::MAX.into())),
        // `int`/`uint` are `isize`/`usize`: rcip assumes 64-bit targets.
        "int64" | "int" => (i64::MIN.into(), Inclusive(i64::MAX.into())),
        "uint64" | "uint" => (0, Inclusive(u64::MAX.into())),
        "int128" => (i128::MIN, ExclusivePowerOfTwo(127)),
        "uint128" => (0, ExclusivePowerOfTwo(128)),
        _ => return None,
    })
}

/// Replaces a removed `format` (not a supported one) by bounds, or refuses it.
fn apply_format(
    object: &mut Map<String, Value>,
    format: &Value,
    pointer: &str,
) -> Result<(), SchemaGenerationError> {
    let name = format.as_str().unwrap_or_default();
    if name == "float" || name == "double" {
        return Ok(());
    }
    let Some((lower, upper)) = integer_bounds(name) else {
        return Err(SchemaGenerationError::UnsupportedFormat {
            pointer: pointer.to_owned(),
            format: format.to_string(),
        });
    };
    // The integer bounds already in force, rounded to integers.
    let existing_lower = [
        bound(object, "minimum", f64::ceil, 0),
        bound(object, "exclusiveMinimum", f64::floor, 1),
    ]
    .into_iter()
    .flatten()
    .max();
    let existing_upper = [
        bound(object, "maximum", f64::floor, 0),
        bound(object, "exclusiveMaximum", f64::ceil, -1),
    ]
    .into_iter()
    .flatten()
    .min();
    if existing_lower.is_none_or(|b| b < lower) {
        object.insert("minimum".to_owned(), exact_number(lower));
    }
    let upper_limit = match upper {
        Upper::Inclusive(max) => max,
        // The largest integer below 2^127 (or 2^128, saturated) is i128::MAX.
        Upper::ExclusivePowerOfTwo(_) => i128::MAX,
    };
    if existing_upper.is_none_or(|b| b > upper_limit) {
        match upper {
            Upper::Inclusive(max) => {
                object.insert("maximum".to_owned(), exact_number(max));
            }
            Upper::ExclusivePowerOfTwo(exponent) => {
                object.remove("maximum");
                object.insert(
                    "exclusiveMaximum".to_owned(),
                    float_number(2f64.powi(exponent)),
                );
            }
        }
    }
    Ok(())
}

/// The integer bound implied by `keyword`: its value rounded with `round`, plus `step`
/// (for exclusive bounds). Saturates at the `i128` range.
fn bound(
    object: &Map<String, Value>,
    keyword: &str,
    round: fn(f64) -> f64,
    step: i128,
) -> Option<i128> {
    let number = object.get(keyword)?.as_number()?;
    let value = if let Some(i) = number.as_i64() {
        i128::from(i)
    } else if let Some(u) = number.as_u64() {
        i128::from(u)
    } else {
        // `as` saturates; the rounded value is an exact integer.
        #[allow(clippy::cast_possible_truncation)]
        let value = round(number.as_f64()?) as i128;
        value
    };
    Some(value.saturating_add(step))
}

/// `value` as an exact JSON integer when it fits 64 bits, else as a float (only
/// `i128::MIN = -2^127` is used, which a float holds exactly).
fn exact_number(value: i128) -> Value {
    if let Ok(i) = i64::try_from(value) {
        Value::Number(i.into())
    } else if let Ok(u) = u64::try_from(value) {
        Value::Number(u.into())
    } else {
        #[allow(clippy::cast_precision_loss)]
        let value = value as f64;
        float_number(value)
    }
}

/// A finite float as a JSON number.
fn float_number(value: f64) -> Value {
    Number::from_f64(value).map_or(Value::Null, Value::Number)
}
