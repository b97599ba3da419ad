//! A fast exact check for the plain schemas most capabilities have, and a typed parse
//! steered by it.
//!
//! A [`Shape`] is compiled from a schema that uses only a small set of keywords (`type`,
//! `properties`, `required`, `additionalProperties`, `items`, integer bounds, lengths and
//! item counts, string `enum`/`const`, annotations: what the strict generator writes for
//! plain structs, and what hand-written schemas mostly use). For any other keyword there is
//! no shape and everything goes through `jsonschema` as before.
//!
//! It is used in two ways, both only ever to say "valid" sooner, never "invalid": whenever
//! the shape refuses, or cannot decide exactly (a float against a large bound), the caller
//! runs the full validator, which produces today's answer and issues.
//!
//! - [`Shape::accepts`]: a value check with `jsonschema`'s meaning for those keywords.
//! - [`parse_text`]: raw JSON text parsed straight into a handler's typed input through a
//!   deserializer that checks every value it passes on against the shape. Whatever the
//!   type's `Deserialize` does (accepting a struct as an array, aliases, `deserialize_with`,
//!   a hand-written impl), what it accepted is schema-valid, because the shape saw it: so
//!   serde never needs to agree with the schema for this to be exact, it only decides how
//!   often the fast path succeeds. A refusal falls back to the `Value` path in full, and so
//!   does any error met on the way, even one the type swallowed and went on from (the value
//!   it was reading went unchecked); so do a property given twice and serde_json's private
//!   newtypes and keys (`RawValue`, `arbitrary_precision` numbers), which carry JSON the
//!   shape cannot see.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::{Map, Number, Value};

use crate::input::MAX_INPUT_DEPTH;

/// The JSON types a schema's `type` admits, as bits.
const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const NUMBER: u8 = 16;
const INTEGER: u8 = 32;
const STRING: u8 = 64;
/// No `type` keyword: any type.
const ANY: u8 = 0x7f;

/// What an object allows besides its `properties`.
#[derive(Debug)]
enum Additional {
    Any,
    Forbidden,
    Shape(Box<Shape>),
}

/// A compiled schema of the supported keywords (see the module documentation). Not a
/// public API (it is only named by the hidden typed entry of handlers).
#[derive(Debug)]
pub struct Shape {
    types: u8,
    /// Sorted by name, for a binary search.
    properties: Vec<(Box<str>, Shape)>,
    /// [`name_key`] of each property's name, in the same order.
    keys: Vec<u64>,
    /// Bit `i`: `properties[i]` is required (every required name is a property).
    required: u64,
    additional: Additional,
    items: Option<Box<Shape>>,
    minimum: Option<i128>,
    maximum: Option<i128>,
    exclusive_minimum: Option<i128>,
    exclusive_maximum: Option<i128>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    /// `enum` or `const` of strings (and `null`, if `enum_null`): the instance must be one
    /// of them.
    strings: Option<Vec<Box<str>>>,
    enum_null: bool,
    /// The most containers an accepted value nests (a scalar: 0); `None`: no bound.
    nesting: Option<usize>,
    /// No length bound and no `enum`/`const`: any string passes [`Shape::string`] (the
    /// usual case, decided once instead of per string).
    any_string: bool,
    /// The four integer bounds as one inclusive range (integers only: `i128` holds every
    /// JSON integer bound and instance one more or less, so `n > b` is `n >= b + 1`).
    integers: (i128, i128),
}

/// Up to eight bytes read from a name's start and end, as one number: two names of the same
/// length, at most [`KEYED`] bytes, are equal exactly when their keys are (the bytes read
/// cover each name whole), so most property lookups compare numbers instead of calling
/// `memcmp`. Longer names compare their keys first, then their bytes.
fn name_key(name: &str) -> u64 {
    let bytes = name.as_bytes();
    if let Some(head) = bytes.first_chunk::<8>() {
        return u64::from_le_bytes(*head);
    }
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        return u64::from(u32::from_le_bytes(*head)) | u64::from(u32::from_le_bytes(*tail)) << 32;
    }
    match *bytes {
        [a, b, c] => u64::from(a) | u64::from(b) << 8 | u64::from(c) << 16,
        [a, b] => u64::from(a) | u64::from(b) << 8,
        [a] => u64::from(a),
        _ => 0,
    }
}

/// Names up to this many bytes are told apart by their [`name_key`] alone.
const KEYED: usize = 8;

/// Below this magnitude every integer is exact as an `f64`, so a float compares exactly
/// against an integer bound.
const EXACT_FLOAT: i128 = 1 << 53;

impl Shape {
    /// The shape of `schema`, or `None` if it uses anything beyond the supported keywords
    /// or nests deeper than [`MAX_INPUT_DEPTH`] schemas.
    pub(crate) fn compile(schema: &Value) -> Option<Shape> {
        Shape::compile_at(schema, 0)
    }

    fn compile_at(schema: &Value, depth: usize) -> Option<Shape> {
        if depth > MAX_INPUT_DEPTH {
            return None;
        }
        let object = schema.as_object()?;
        let mut shape = Shape {
            types: ANY,
            properties: Vec::new(),
            keys: Vec::new(),
            required: 0,
            additional: Additional::Any,
            items: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            min_length: None,
            max_length: None,
            min_items: None,
            max_items: None,
            strings: None,
            enum_null: false,
            nesting: None,
            any_string: false,
            integers: (i128::MIN, i128::MAX),
        };
        for (keyword, value) in object {
            match keyword.as_str() {
                "type" => shape.types = types(value)?,
                "properties" => {
                    let mut properties = value
                        .as_object()?
                        .iter()
                        .map(|(name, schema)| {
                            Some((
                                Box::from(name.as_str()),
                                Shape::compile_at(schema, depth + 1)?,
                            ))
                        })
                        .collect::<Option<Vec<_>>>()?;
                    properties.sort_by(|a: &(Box<str>, Shape), b| a.0.cmp(&b.0));
                    if properties.len() > 64 {
                        return None;
                    }
                    shape.keys = properties.iter().map(|(name, _)| name_key(name)).collect();
                    shape.properties = properties;
                }
                "required" | "additionalProperties" => {}
                "items" => shape.items = Some(Box::new(Shape::compile_at(value, depth + 1)?)),
                "minimum" => shape.minimum = Some(integer(value)?),
                "maximum" => shape.maximum = Some(integer(value)?),
                "exclusiveMinimum" => shape.exclusive_minimum = Some(integer(value)?),
                "exclusiveMaximum" => shape.exclusive_maximum = Some(integer(value)?),
                "minLength" => shape.min_length = Some(value.as_u64()?),
                "maxLength" => shape.max_length = Some(value.as_u64()?),
                "minItems" => shape.min_items = Some(value.as_u64()?),
                "maxItems" => shape.max_items = Some(value.as_u64()?),
                "enum" => {
                    let mut names = Vec::new();
                    for option in value.as_array()? {
                        match option {
                            Value::Null => shape.enum_null = true,
                            Value::String(name) => names.push(Box::from(name.as_str())),
                            _ => return None,
                        }
                    }
                    shape.strings = Some(names);
                }
                "const" => shape.strings = Some(vec![Box::from(value.as_str()?)]),
                other if rcip_core::schema::ANNOTATIONS.contains(&other) => {}
                _ => return None,
            }
        }
        // Both need the properties, whatever order the keywords came in.
        if let Some(required) = object.get("required") {
            for name in required.as_array()? {
                let at = shape.position(name.as_str()?)?;
                shape.required |= 1 << at;
            }
        }
        shape.additional = match object.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::Any,
            Some(Value::Bool(false)) => Additional::Forbidden,
            Some(schema) => Additional::Shape(Box::new(Shape::compile_at(schema, depth + 1)?)),
        };
        if object.contains_key("enum") && object.contains_key("const") {
            return None;
        }
        shape.nesting = shape.nesting_of_children();
        shape.any_string =
            shape.min_length.is_none() && shape.max_length.is_none() && shape.strings.is_none();
        // Bounds come from `i64`/`u64` values, so one step past any of them stays in `i128`.
        let low = [shape.minimum, shape.exclusive_minimum.map(|b| b + 1)];
        let high = [shape.maximum, shape.exclusive_maximum.map(|b| b - 1)];
        shape.integers = (
            low.into_iter().flatten().max().unwrap_or(i128::MIN),
            high.into_iter().flatten().min().unwrap_or(i128::MAX),
        );
        Some(shape)
    }

    /// The most containers a value this shape accepts can nest, from its children's.
    fn nesting_of_children(&self) -> Option<usize> {
        let mut deepest = 0;
        if self.strings.is_none() && self.types & OBJECT != 0 {
            let mut members = match &self.additional {
                Additional::Any => return None,
                Additional::Forbidden => 0,
                Additional::Shape(shape) => shape.nesting?,
            };
            for (_, shape) in &self.properties {
                members = members.max(shape.nesting?);
            }
            deepest = deepest.max(members + 1);
        }
        if self.strings.is_none() && self.types & ARRAY != 0 {
            deepest = deepest.max(self.items.as_deref()?.nesting? + 1);
        }
        Some(deepest)
    }

    /// Whether every value this shape accepts is within [`MAX_INPUT_DEPTH`], so that
    /// accepting a value also settles its depth.
    pub(crate) fn bounds_depth(&self) -> bool {
        self.nesting
            .is_some_and(|nesting| nesting <= MAX_INPUT_DEPTH)
    }

    fn allows_null(&self) -> bool {
        self.types & NULL != 0 && (self.strings.is_none() || self.enum_null)
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.position_keyed(name, name_key(name))
    }

    /// [`position`](Self::position) of a name whose [`name_key`] is `key`.
    fn position_keyed(&self, name: &str, key: u64) -> Option<usize> {
        // A few properties (most objects): a scan comparing keys beats a binary search, which
        // compares bytes at every step.
        if self.properties.len() <= 8 {
            return self
                .keys
                .iter()
                .zip(&self.properties)
                .position(|(k, (other, _))| {
                    *k == key
                        && other.len() == name.len()
                        && (name.len() <= KEYED || **other == *name)
                });
        }
        self.properties
            .binary_search_by(|(other, _)| (**other).cmp(name))
            .ok()
    }

    /// [`member`](Self::member), trying the property at `next` first. Members met in name
    /// order (a `serde_json` map keeps its keys sorted, as the properties are) name the
    /// properties in order, so the one after the last found is the likeliest; any other
    /// order only costs the search.
    #[inline]
    fn member_from(&self, name: &str, next: usize) -> Result<(Option<usize>, Option<&Shape>), ()> {
        let key = name_key(name);
        if let (Some((other, shape)), Some(&next_key)) =
            (self.properties.get(next), self.keys.get(next))
            && next_key == key
            && other.len() == name.len()
            && (name.len() <= KEYED || **other == *name)
        {
            return Ok((Some(next), Some(shape)));
        }
        self.member_keyed(name, key)
    }

    /// The shape of an object's member `name`: `Err` if the object may not have it, `Ok(None)`
    /// if anything goes.
    fn member(&self, name: &str) -> Result<(Option<usize>, Option<&Shape>), ()> {
        self.member_keyed(name, name_key(name))
    }

    /// The shape of an object's member `name` (whose [`name_key`] is `key`): `Err` if the
    /// object may not have it, `Ok(None)` if anything goes.
    fn member_keyed(&self, name: &str, key: u64) -> Result<(Option<usize>, Option<&Shape>), ()> {
        if let Some(at) = self.position_keyed(name, key) {
            return Ok((Some(at), Some(&self.properties[at].1)));
        }
        match &self.additional {
            Additional::Any => Ok((None, None)),
            Additional::Forbidden => Err(()),
            Additional::Shape(shape) => Ok((None, Some(shape))),
        }
    }

    /// Whether `value` is valid. `true` means `jsonschema` accepts it too; `false` means it
    /// refuses it or the shape cannot tell exactly (ask `jsonschema`).
    ///
    /// Inlined, with the containers' walks apart: a scalar member or item is checked in its
    /// container's loop, not in a call of its own.
    #[inline]
    pub(crate) fn accepts(&self, value: &Value) -> bool {
        match value {
            Value::Null => self.allows_null(),
            Value::Bool(_) => self.types & BOOLEAN != 0 && self.strings.is_none(),
            Value::Number(number) => self.strings.is_none() && self.number(number),
            Value::String(text) => self.types & STRING != 0 && self.string(text),
            Value::Array(items) => self.items_accepted(items),
            Value::Object(members) => self.members(members),
        }
    }

    #[inline(never)]
    fn items_accepted(&self, items: &[Value]) -> bool {
        self.types & ARRAY != 0
            && self.strings.is_none()
            && self.item_count(items.len() as u64)
            && self
                .items
                .as_deref()
                .is_none_or(|shape| items.iter().all(|item| shape.accepts(item)))
    }

    #[inline(never)]
    fn members(&self, members: &Map<String, Value>) -> bool {
        if self.types & OBJECT == 0 || self.strings.is_some() {
            return false;
        }
        let mut seen = 0_u64;
        let mut next = 0;
        for (name, value) in members {
            let Ok((at, shape)) = self.member_from(name, next) else {
                return false;
            };
            if let Some(at) = at {
                seen |= 1 << at;
                next = at + 1;
            }
            if shape.is_some_and(|shape| !shape.accepts(value)) {
                return false;
            }
        }
        seen & self.required == self.required
    }

    fn item_count(&self, count: u64) -> bool {
        self.min_items.is_none_or(|min| count >= min)
            && self.max_items.is_none_or(|max| count <= max)
    }

    #[inline]
    fn string(&self, text: &str) -> bool {
        self.any_string || self.bounded_string(text)
    }

    fn bounded_string(&self, text: &str) -> bool {
        // JSON Schema counts code points: at most one per byte, at least one per four, so
        // the byte length alone often settles both bounds without counting.
        let bytes = text.len() as u64;
        let settled = self.max_length.is_none_or(|max| bytes <= max)
            && self.min_length.is_none_or(|min| bytes.div_ceil(4) >= min);
        if !settled {
            let length = text.chars().count() as u64;
            if self.min_length.is_some_and(|min| length < min)
                || self.max_length.is_some_and(|max| length > max)
            {
                return false;
            }
        }
        self.strings
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| **name == *text))
    }

    fn number(&self, number: &Number) -> bool {
        if let Some(n) = number.as_i64() {
            self.integer(i128::from(n))
        } else if let Some(n) = number.as_u64() {
            self.integer(i128::from(n))
        } else {
            number.as_f64().is_some_and(|x| self.float(x))
        }
    }

    fn integer(&self, n: i128) -> bool {
        self.types & (NUMBER | INTEGER) != 0 && self.integers.0 <= n && n <= self.integers.1
    }

    /// A float is only judged where that is exact: the type is `number` (whether a float is
    /// an "integer" is left to `jsonschema`), and every bound is small enough to be an exact
    /// float (so are floats near it).
    fn float(&self, x: f64) -> bool {
        if self.types & NUMBER == 0 || !x.is_finite() {
            return false;
        }
        let bounds = [
            self.minimum,
            self.maximum,
            self.exclusive_minimum,
            self.exclusive_maximum,
        ];
        if bounds.iter().flatten().any(|b| b.abs() >= EXACT_FLOAT) {
            return false;
        }
        #[allow(clippy::cast_precision_loss)] // exact below 2^53
        let f = |b: i128| b as f64;
        self.minimum.is_none_or(|b| x >= f(b))
            && self.maximum.is_none_or(|b| x <= f(b))
            && self.exclusive_minimum.is_none_or(|b| x > f(b))
            && self.exclusive_maximum.is_none_or(|b| x < f(b))
    }
}

/// A `type` keyword's bits.
fn types(value: &Value) -> Option<u8> {
    let one = |name: &Value| {
        Some(match name.as_str()? {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            // `number` includes the integers.
            "number" => NUMBER | INTEGER,
            "integer" => INTEGER,
            "string" => STRING,
            _ => return None,
        })
    };
    match value {
        Value::Array(names) => names
            .iter()
            .try_fold(0, |bits, name| Some(bits | one(name)?)),
        name => one(name),
    }
}

/// An integer bound.
fn integer(value: &Value) -> Option<i128> {
    value
        .as_i64()
        .map(i128::from)
        .or_else(|| value.as_u64().map(i128::from))
}

// ----- the typed parse ------------------------------------------------------------------

/// Parses `text` into `T`, every value checked against `shape` on its way into `T`'s
/// `Deserialize`. `None`: not JSON, not valid, deeper than [`MAX_INPUT_DEPTH`], or refused
/// by `T` (the caller takes the `Value` path then, which answers exactly as before).
pub(crate) fn parse_text<T: de::DeserializeOwned>(text: &str, shape: &Shape) -> Option<T> {
    FAILED.set(false);
    let mut json = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Checked {
        inner: &mut json,
        shape: Some(shape),
        depth: 0,
    });
    // An error the type swallowed counts as much as one it returned.
    if FAILED.replace(false) {
        return None;
    }
    json.end().ok()?;
    value.ok()
}

thread_local! {
    /// Whether the typed parse running on this thread met an error anywhere: a refusal of
    /// the shape, or an error of serde_json or of the type. A `Deserialize` may swallow an
    /// error and carry on (a `deserialize_with` that falls back to a default): the value it
    /// was reading then went unchecked, so any error at all sends the input the `Value` way.
    /// (The typed parse does not nest: a type's `Deserialize` cannot reach it.)
    static FAILED: Cell<bool> = const { Cell::new(false) };
}

/// The prefix of serde_json's private type and key names.
const SERDE_JSON_PRIVATE: &str = "$serde_json::private::";

/// The refusal every check gives (its text is never shown: a refusal means "take the
/// `Value` path").
fn refused<E: de::Error>() -> E {
    FAILED.set(true);
    E::custom("not on the typed path")
}

/// `result`, with an error recorded (see [`FAILED`]).
fn noted<T, E>(result: Result<T, E>) -> Result<T, E> {
    if result.is_err() {
        FAILED.set(true);
    }
    result
}

/// A deserializer that checks what it hands on. `shape: None` is "anything" (still within
/// the depth limit).
struct Checked<'s, D> {
    inner: D,
    shape: Option<&'s Shape>,
    depth: usize,
}

impl<'s, D> Checked<'s, D> {
    /// `visitor`, checking what it is handed against this deserializer's shape.
    fn wrap<V>(&self, visitor: V) -> CheckedVisitor<'s, V> {
        CheckedVisitor {
            visitor,
            shape: self.shape,
            depth: self.depth,
        }
    }
}

/// The visitor side of [`Checked`].
struct CheckedVisitor<'s, V> {
    visitor: V,
    shape: Option<&'s Shape>,
    depth: usize,
}

impl<'s, V> CheckedVisitor<'s, V> {
    fn allows(&self, bits: u8) -> bool {
        self.shape.is_none_or(|s| {
            if bits == NULL {
                s.allows_null()
            } else {
                s.types & bits != 0 && s.strings.is_none()
            }
        })
    }

    fn integer<E: de::Error>(&self, n: i128) -> Result<(), E> {
        if self
            .shape
            .is_none_or(|s| s.strings.is_none() && s.integer(n))
        {
            Ok(())
        } else {
            Err(refused())
        }
    }
}

macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            let visitor = self.wrap(visitor);
            noted(self.inner.$method(visitor))
        }
    )*};
}

impl<'de, 's, D: Deserializer<'de>> Deserializer<'de> for Checked<'s, D> {
    type Error = D::Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier
    }

    fn deserialize_i128<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        // serde_json reads 128-bit integers exactly from text but not into a `Value`.
        Err(refused())
    }

    fn deserialize_u128<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        Err(refused())
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        // serde_json reads a string as its bytes: not a shape a schema describes.
        Err(refused())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        Err(refused())
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        // serde_json skips an ignored value unseen: read it instead, so it is checked.
        self.deserialize_any(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        noted(self.inner.deserialize_unit_struct(name, visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        // serde_json's private newtypes (`RawValue`, and numbers under its
        // `arbitrary_precision` feature) hand over raw or encoded JSON the shape cannot see.
        if name.starts_with(SERDE_JSON_PRIVATE) {
            return Err(refused());
        }
        let visitor = self.wrap(visitor);
        noted(self.inner.deserialize_newtype_struct(name, visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        noted(self.inner.deserialize_tuple(len, visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        noted(self.inner.deserialize_tuple_struct(name, len, visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let visitor = self.wrap(visitor);
        noted(self.inner.deserialize_struct(name, fields, visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        // Only the string form of a unit variant: serde_json would also take
        // `{"Variant": null}`, which no string schema allows.
        noted(self.inner.deserialize_any(StringEnum {
            visitor,
            shape: self.shape,
        }))
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

impl<'de, 's, V: Visitor<'de>> Visitor<'de> for CheckedVisitor<'s, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<V::Value, E> {
        if !self.allows(BOOLEAN) {
            return Err(refused());
        }
        self.visitor.visit_bool(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.integer::<E>(i128::from(v))?;
        self.visitor.visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.integer::<E>(i128::from(v))?;
        self.visitor.visit_u64(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        if !self.shape.is_none_or(|s| s.strings.is_none() && s.float(v)) {
            return Err(refused());
        }
        self.visitor.visit_f64(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        if !self
            .shape
            .is_none_or(|s| s.types & STRING != 0 && s.string(v))
        {
            return Err(refused());
        }
        self.visitor.visit_str(v)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        if !self
            .shape
            .is_none_or(|s| s.types & STRING != 0 && s.string(v))
        {
            return Err(refused());
        }
        self.visitor.visit_borrowed_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        if !self
            .shape
            .is_none_or(|s| s.types & STRING != 0 && s.string(&v))
        {
            return Err(refused());
        }
        self.visitor.visit_string(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        if !self.allows(NULL) {
            return Err(refused());
        }
        self.visitor.visit_unit()
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        if !self.allows(NULL) {
            return Err(refused());
        }
        self.visitor.visit_none()
    }

    fn visit_some<D2: Deserializer<'de>>(self, inner: D2) -> Result<V::Value, D2::Error> {
        // The value itself is checked as it is read.
        self.visitor.visit_some(Checked {
            inner,
            shape: self.shape,
            depth: self.depth,
        })
    }

    fn visit_newtype_struct<D2: Deserializer<'de>>(self, inner: D2) -> Result<V::Value, D2::Error> {
        self.visitor.visit_newtype_struct(Checked {
            inner,
            shape: self.shape,
            depth: self.depth,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        if !self.allows(ARRAY) || self.depth >= MAX_INPUT_DEPTH {
            return Err(refused());
        }
        let mut count = 0_u64;
        let items = self.shape.and_then(|s| s.items.as_deref());
        let value = self.visitor.visit_seq(CheckedSeq {
            seq,
            items,
            depth: self.depth + 1,
            count: &mut count,
        })?;
        // serde_json refuses a sequence its visitor left unread, so `count` is its length.
        if self.shape.is_some_and(|s| !s.item_count(count)) {
            return Err(refused());
        }
        Ok(value)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        if !self.allows(OBJECT) || self.depth >= MAX_INPUT_DEPTH {
            return Err(refused());
        }
        let mut seen = 0_u64;
        let value = self.visitor.visit_map(CheckedMap {
            map,
            shape: self.shape,
            depth: self.depth + 1,
            next: Next::Any,
            seen: &mut seen,
        })?;
        // As for sequences: every member was read.
        if self.shape.is_some_and(|s| seen & s.required != s.required) {
            return Err(refused());
        }
        Ok(value)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, _: A) -> Result<V::Value, A::Error> {
        // Only `deserialize_enum` reaches enums, and it takes the string form itself.
        Err(refused())
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<V::Value, E> {
        Err(refused())
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<V::Value, E> {
        Err(refused())
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<V::Value, E> {
        Err(refused())
    }
}

/// A sequence whose items are checked against `items` (`None`: anything).
struct CheckedSeq<'s, 'c, A> {
    seq: A,
    items: Option<&'s Shape>,
    depth: usize,
    count: &'c mut u64,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for CheckedSeq<'_, '_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let element = noted(self.seq.next_element_seed(CheckedSeed {
            seed,
            shape: self.items,
            depth: self.depth,
        }))?;
        if element.is_some() {
            *self.count += 1;
        }
        Ok(element)
    }

    fn size_hint(&self) -> Option<usize> {
        self.seq.size_hint()
    }
}

/// What the next member value of a [`CheckedMap`] is checked against.
enum Next<'s> {
    Any,
    Shape(&'s Shape),
}

struct CheckedMap<'s, 'c, A> {
    map: A,
    shape: Option<&'s Shape>,
    depth: usize,
    next: Next<'s>,
    seen: &'c mut u64,
}

impl<'de, 's, A: MapAccess<'de>> MapAccess<'de> for CheckedMap<'s, '_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut member = Member::Unread;
        let key = noted(self.map.next_key_seed(KeySeed {
            seed,
            shape: self.shape,
            member: &mut member,
        }))?;
        if key.is_some() {
            match member {
                Member::Unread => return Err(refused()),
                Member::Read(at, shape) => {
                    if let Some(at) = at {
                        // A property twice: the `Value` path keeps the last, a type may keep
                        // the first; only the `Value` path answers for both.
                        if *self.seen & (1 << at) != 0 {
                            return Err(refused());
                        }
                        *self.seen |= 1 << at;
                    }
                    self.next = shape.map_or(Next::Any, Next::Shape);
                }
            }
        }
        Ok(key)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        let shape = match std::mem::replace(&mut self.next, Next::Any) {
            Next::Any => None,
            Next::Shape(shape) => Some(shape),
        };
        noted(self.map.next_value_seed(CheckedSeed {
            seed,
            shape,
            depth: self.depth,
        }))
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// A seed whose value is read through [`Checked`].
struct CheckedSeed<'s, T> {
    seed: T,
    shape: Option<&'s Shape>,
    depth: usize,
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for CheckedSeed<'_, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<T::Value, D::Error> {
        self.seed.deserialize(Checked {
            inner,
            shape: self.shape,
            depth: self.depth,
        })
    }
}

/// Which member a key named: its property index (if a property) and the shape of its value.
enum Member<'s> {
    Unread,
    Read(Option<usize>, Option<&'s Shape>),
}

/// A key seed that records which member its key names (and refuses a key the object may
/// not have).
struct KeySeed<'s, 'm, K> {
    seed: K,
    shape: Option<&'s Shape>,
    member: &'m mut Member<'s>,
}

impl<'de, 's, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'s, '_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'de>>(self, inner: D) -> Result<K::Value, D::Error> {
        self.seed.deserialize(KeyDeserializer {
            inner,
            shape: self.shape,
            member: self.member,
        })
    }
}

/// A map key's deserializer: every form reads the key as a string first.
struct KeyDeserializer<'s, 'm, D> {
    inner: D,
    shape: Option<&'s Shape>,
    member: &'m mut Member<'s>,
}

macro_rules! key_forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            // A key is a string in JSON: read it as one (serde_json's key deserializer
            // would parse it as a number for a number-typed key, which the fast path
            // leaves to the `Value` path).
            noted(self.inner.deserialize_str(KeyVisitor {
                visitor,
                shape: self.shape,
                member: self.member,
            }))
        }
    )*};
}

impl<'de, 's, D: Deserializer<'de>> Deserializer<'de> for KeyDeserializer<'s, '_, D> {
    type Error = D::Error;

    key_forward! { deserialize_any deserialize_str deserialize_string deserialize_identifier }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum ignored_any
    }
}

/// Records the member a key names, then hands the key on.
struct KeyVisitor<'s, 'm, V> {
    visitor: V,
    shape: Option<&'s Shape>,
    member: &'m mut Member<'s>,
}

impl<'s, V> KeyVisitor<'s, '_, V> {
    fn record<E: de::Error>(&mut self, name: &str) -> Result<(), E> {
        // serde_json's private keys (a number under `arbitrary_precision`, a `RawValue`)
        // stand for a value encoded as a map, not for a member.
        if name.starts_with(SERDE_JSON_PRIVATE) {
            return Err(refused());
        }
        *self.member = match self.shape {
            None => Member::Read(None, None),
            Some(shape) => match shape.member(name) {
                Ok((at, shape)) => Member::Read(at, shape),
                Err(()) => return Err(refused()),
            },
        };
        Ok(())
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, '_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_str<E: de::Error>(mut self, v: &str) -> Result<V::Value, E> {
        self.record::<E>(v)?;
        self.visitor.visit_str(v)
    }

    fn visit_borrowed_str<E: de::Error>(mut self, v: &'de str) -> Result<V::Value, E> {
        self.record::<E>(v)?;
        self.visitor.visit_borrowed_str(v)
    }

    fn visit_string<E: de::Error>(mut self, v: String) -> Result<V::Value, E> {
        self.record::<E>(&v)?;
        self.visitor.visit_string(v)
    }
}

/// The string form of a unit variant, checked against the shape, handed to the enum's
/// visitor as serde's own string enum access.
struct StringEnum<'s, V> {
    visitor: V,
    shape: Option<&'s Shape>,
}

impl<V> StringEnum<'_, V> {
    fn check<E: de::Error>(&self, v: &str) -> Result<(), E> {
        if self
            .shape
            .is_none_or(|s| s.types & STRING != 0 && s.string(v))
        {
            Ok(())
        } else {
            Err(refused())
        }
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for StringEnum<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        self.check::<E>(v)?;
        self.visitor.visit_enum(v.into_deserializer())
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        self.check::<E>(v)?;
        self.visitor
            .visit_enum(de::value::BorrowedStrDeserializer::new(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        self.check::<E>(&v)?;
        self.visitor.visit_enum(v.into_deserializer())
    }
}

/// The JSON the tests generate, shared with `tests/typed_fast_path.rs`.
#[cfg(test)]
#[path = "../tests/common/near_json.rs"]
mod near_json;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! The shape against `jsonschema`, and the typed parse against the `Value` path, on JSON
    //! near each schema: the shape may only say "valid" where `jsonschema` does, and a
    //! typed parse may only succeed where the `Value` path accepts the same text, with the
    //! same result.
    use std::fmt::Debug;

    use proptest::prelude::*;
    use rcip_core::SchemaRole;
    use rcip_core::schema::strict_schema_for;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    use super::*;

    use super::near_json::{Loose, Note, near, texts};

    /// A type whose `Deserialize` is looser than its schema.
    #[derive(Debug, PartialEq, JsonSchema)]
    struct Lenient {
        count: u32,
    }

    impl<'de> Deserialize<'de> for Lenient {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            // Any value at all counts as zero.
            serde::de::IgnoredAny::deserialize(d)?;
            Ok(Lenient { count: 0 })
        }
    }

    /// A type whose `Deserialize` swallows an error: a count it cannot read is no count.
    #[derive(Debug, PartialEq, Deserialize)]
    struct Swallowing {
        title: String,
        #[serde(default, deserialize_with = "count_or_none")]
        count: Option<u32>,
    }

    fn count_or_none<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
        Ok(Option::<u32>::deserialize(d).unwrap_or_default())
    }

    /// A type that asks for serde_json's private `RawValue` newtype.
    #[derive(Debug, PartialEq)]
    struct Raw;

    impl<'de> Deserialize<'de> for Raw {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Any;
            impl<'de> Visitor<'de> for Any {
                type Value = Raw;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("anything")
                }
                fn visit_newtype_struct<D: de::Deserializer<'de>>(
                    self,
                    d: D,
                ) -> Result<Raw, D::Error> {
                    de::IgnoredAny::deserialize(d).map(|_| Raw)
                }
            }
            d.deserialize_newtype_struct("$serde_json::private::RawValue", Any)
        }
    }

    /// The bench workload's schema with tighter bounds (8 characters, 2 tags): the JSON the
    /// tests generate (`near`) crosses them, where the workload's own (80, 10) it never
    /// would.
    fn tight_note_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "maxLength": 8},
                "count": {"type": "integer", "minimum": 0, "maximum": 1000},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
            },
            "required": ["title"],
            "additionalProperties": false
        })
    }

    fn compare<T: DeserializeOwned + PartialEq + Debug>(schema: &Value, value: &Value) {
        let validator = jsonschema::draft202012::new(schema).unwrap();
        let shape = Shape::compile(schema).expect("a shaped schema");
        if shape.accepts(value) {
            assert!(
                validator.is_valid(value),
                "shape accepted {value} against {schema}"
            );
        }
        for text in texts(value) {
            if let Some(typed) = parse_text::<T>(&text, &shape) {
                let parsed: Value = serde_json::from_str(&text).unwrap();
                assert!(validator.is_valid(&parsed), "typed parse took {text}");
                let by_value = T::deserialize(parsed).expect("the Value path takes it too");
                assert_eq!(typed, by_value, "{text}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn derived_schema_of_a_strict_struct(value in near()) {
            let schema = strict_schema_for::<Note>(SchemaRole::Input).unwrap();
            compare::<Note>(&schema, &value);
        }

        #[test]
        fn derived_schema_of_a_loose_struct(value in near()) {
            let schema = strict_schema_for::<Loose>(SchemaRole::Input).unwrap();
            compare::<Loose>(&schema, &value);
        }

        #[test]
        fn hand_written_schema_stricter_than_the_type(value in near()) {
            compare::<Note>(&tight_note_schema(), &value);
        }

        #[test]
        fn a_deserialize_looser_than_its_schema(value in near()) {
            let schema = strict_schema_for::<Lenient>(SchemaRole::Input).unwrap();
            compare::<Lenient>(&schema, &value);
        }
    }

    #[test]
    fn the_lenient_forms_serde_takes_go_the_value_way() {
        let note = strict_schema_for::<Note>(SchemaRole::Input).unwrap();
        let shape = Shape::compile(&note).unwrap();
        // A struct as an array, which serde takes and the schema refuses.
        assert!(serde_json::from_str::<Note>(r#"["a", 1, null]"#).is_ok());
        assert!(parse_text::<Note>(r#"["a", 1, null]"#, &shape).is_none());
        // A duplicate member: serde refuses it, the `Value` path keeps the last.
        assert!(parse_text::<Note>(r#"{"title":"a","title":"b"}"#, &shape).is_none());
        // A duplicate read into a `Value`, which would keep the last: refused all the same.
        assert!(
            parse_text::<Value>(
                r#"{"tags":["x"],"count":1,"tags":["y"],"title":"a"}"#,
                &shape
            )
            .is_none()
        );
        assert!(
            parse_text::<Value>(r#"{"count":1,"tags":["y"],"title":"a"}"#, &shape).is_some(),
            "the same members once each"
        );
        // A float for an integer: the schema takes it, serde does not.
        assert!(parse_text::<Note>(r#"{"title":"a","count":7.0}"#, &shape).is_none());
        assert_eq!(
            parse_text::<Note>(r#"{"title":"a","count":7,"tags":["x"]}"#, &shape),
            Some(Note {
                title: "a".into(),
                count: Some(7),
                tags: Some(vec!["x".into()])
            })
        );

        let loose = strict_schema_for::<Loose>(SchemaRole::Input).unwrap();
        let shape = Shape::compile(&loose).unwrap();
        // An alias, and a unit variant as a map: serde takes both.
        assert!(serde_json::from_str::<Loose>(r#"{"name":"a"}"#).is_ok());
        assert!(parse_text::<Loose>(r#"{"name":"a"}"#, &shape).is_none());
        assert!(serde_json::from_str::<Loose>(r#"{"title":"a","color":{"Red":null}}"#).is_ok());
        assert!(parse_text::<Loose>(r#"{"title":"a","color":{"Red":null}}"#, &shape).is_none());
        assert!(parse_text::<Loose>(r#"{"title":"a","color":"Red"}"#, &shape).is_some());
        // Not JSON at all.
        assert!(parse_text::<Loose>(r#"{"title":"a""#, &shape).is_none());
        assert!(parse_text::<Loose>(r#"{"title":"a"} x"#, &shape).is_none());

        let lenient = strict_schema_for::<Lenient>(SchemaRole::Input).unwrap();
        let shape = Shape::compile(&lenient).unwrap();
        assert!(parse_text::<Lenient>(r#"{"count":"many"}"#, &shape).is_none());
        assert!(parse_text::<Lenient>(r#"{"count":3}"#, &shape).is_some());
    }

    #[test]
    fn an_error_the_type_swallows_still_sends_the_input_the_value_way() {
        let shape = Shape::compile(&tight_note_schema()).unwrap();
        // Over the bound, and not an integer at all: the type would take both as no count.
        assert!(serde_json::from_str::<Swallowing>(r#"{"title":"a","count":5000}"#).is_ok());
        assert!(parse_text::<Swallowing>(r#"{"title":"a","count":5000}"#, &shape).is_none());
        assert!(parse_text::<Swallowing>(r#"{"title":"a","count":"x"}"#, &shape).is_none());
        assert_eq!(
            parse_text::<Swallowing>(r#"{"title":"a","count":5}"#, &shape),
            Some(Swallowing {
                title: "a".into(),
                count: Some(5)
            })
        );
        // The next parse on the thread starts afresh.
        assert!(parse_text::<Swallowing>(r#"{"title":"b"}"#, &shape).is_some());
    }

    #[test]
    fn serde_json_private_names_and_repeated_properties_go_the_value_way() {
        let object = Shape::compile(&json!({"type": "object"})).unwrap();
        assert!(parse_text::<Raw>(r#"{"a":[1]}"#, &object).is_none());
        type Map = std::collections::HashMap<String, Value>;
        assert!(parse_text::<Map>(r#"{"$serde_json::private::Number":"1.5"}"#, &object).is_none());
        assert!(parse_text::<Map>(r#"{"a":"1.5"}"#, &object).is_some());
        // A `Value` keeps the last of a repeated property, as the `Value` path does, but a
        // type may keep the first: a repeated property is left to the `Value` path.
        let note = Shape::compile(&tight_note_schema()).unwrap();
        assert!(parse_text::<Value>(r#"{"title":"a","title":"b"}"#, &note).is_none());
        assert!(parse_text::<Value>(r#"{"title":"a","count":1}"#, &note).is_some());
    }

    /// Each schema against values on both sides of its keywords: the shape accepts exactly
    /// the values listed as valid, and `jsonschema` agrees on every one.
    #[test]
    fn the_shape_accepts_what_jsonschema_accepts_at_each_keyword() {
        let cases = [
            (
                json!({"type": "number", "minimum": -2, "exclusiveMaximum": 3}),
                vec![json!(-2), json!(-1.5), json!(2.99), json!(0)],
                vec![json!(-3), json!(3), json!(3.0), json!("1"), json!(null)],
            ),
            (
                json!({"type": "integer", "exclusiveMinimum": 0, "maximum": 10}),
                vec![json!(1), json!(10)],
                vec![json!(0), json!(11), json!(true)],
            ),
            (
                json!({"const": "on"}),
                vec![json!("on")],
                vec![json!("off"), json!(null), json!(1)],
            ),
            (
                json!({"type": ["string", "null"], "enum": ["a", "b", null]}),
                vec![json!("a"), json!(null)],
                vec![json!("c"), json!(1)],
            ),
            (
                json!({"type": "string", "minLength": 2, "maxLength": 3}),
                vec![json!("ab"), json!("äöü"), json!("😀😀")],
                vec![json!("a"), json!("abcd"), json!("😀")],
            ),
            (
                json!({
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "required": ["a"],
                    "additionalProperties": {"type": "integer"}
                }),
                vec![json!({"a": "x"}), json!({"a": "x", "b": 1, "0": 2})],
                vec![json!({}), json!({"a": "x", "b": "y"}), json!({"b": 1})],
            ),
            (
                json!({"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 2}),
                vec![json!([true]), json!([true, false])],
                vec![json!([]), json!([true, true, true]), json!([1])],
            ),
            // The integer bounds fold into one range: one past the largest and the smallest
            // bounds, both bounds on one side, an empty range.
            (
                json!({"type": "integer", "exclusiveMinimum": u64::MAX}),
                vec![],
                vec![json!(u64::MAX), json!(0)],
            ),
            (
                json!({"type": "integer", "exclusiveMaximum": i64::MIN}),
                vec![],
                vec![json!(i64::MIN), json!(0)],
            ),
            (
                json!({"type": "integer", "minimum": 5, "exclusiveMinimum": 5}),
                vec![json!(6), json!(u64::MAX)],
                vec![json!(5), json!(4), json!(i64::MIN)],
            ),
            (
                json!({"type": "integer", "minimum": 5, "maximum": 4}),
                vec![],
                vec![json!(4), json!(5)],
            ),
        ];
        // More properties than the short scan takes: found by a binary search.
        let properties: serde_json::Map<String, Value> = (0..10)
            .map(|i| (format!("p{i}"), json!({"type": "integer"})))
            .collect();
        let wide = json!({
            "type": "object",
            "properties": properties,
            "required": ["p9"],
            "additionalProperties": false
        });
        let cases = cases.into_iter().chain([(
            wide,
            vec![json!({"p9": 1}), json!({"p0": 1, "p5": 2, "p9": 3})],
            vec![
                json!({"p0": 1}),
                json!({"p9": "x"}),
                json!({"p9": 1, "q": 1}),
            ],
        )]);
        for (schema, valid, invalid) in cases {
            let validator = jsonschema::draft202012::new(&schema).unwrap();
            let shape = Shape::compile(&schema).expect("a shaped schema");
            for value in &valid {
                assert!(validator.is_valid(value), "{schema}: {value} is valid");
                assert!(shape.accepts(value), "{schema}: the shape takes {value}");
            }
            for value in &invalid {
                assert!(!validator.is_valid(value), "{schema}: {value} is not valid");
                assert!(!shape.accepts(value), "{schema}: the shape refuses {value}");
            }
        }
    }

    #[test]
    fn only_the_plain_keywords_have_a_shape() {
        for schema in [
            json!({"type": "string", "format": "uuid"}),
            json!({"type": "string", "pattern": "^a"}),
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            json!({"type": "object", "properties": {"a": true}}),
            json!({"type": "object", "required": ["a"]}),
            json!({"type": "number", "maximum": 1.5}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"enum": [1, 2]}),
            json!(true),
        ] {
            assert!(Shape::compile(&schema).is_none(), "{schema}");
        }
        assert!(Shape::compile(&tight_note_schema()).is_some());
    }

    #[test]
    fn depth_is_limited_as_for_values() {
        let schema = json!({"type": "array"});
        let shape = Shape::compile(&schema).unwrap();
        let ok = format!(
            "{}{}",
            "[".repeat(MAX_INPUT_DEPTH),
            "]".repeat(MAX_INPUT_DEPTH)
        );
        let deep = format!("[{ok}]");
        assert!(parse_text::<Value>(&ok, &shape).is_some());
        assert!(parse_text::<Value>(&deep, &shape).is_none());
    }

    /// `levels` arrays, each the `items` of the one outside it, around an empty object.
    fn nested_array_schema(levels: usize) -> Value {
        let empty = json!({"type": "object", "additionalProperties": false});
        (0..levels).fold(empty, |items, _| json!({"type": "array", "items": items}))
    }

    #[test]
    fn a_shape_bounds_depth_only_where_every_container_is_bounded() {
        let nesting = |schema: Value| Shape::compile(&schema).unwrap().nesting;
        assert_eq!(nesting(tight_note_schema()), Some(2));
        assert_eq!(nesting(json!({"type": "string"})), Some(0));
        assert_eq!(nesting(json!({"enum": ["a", null]})), Some(0));
        assert_eq!(nesting(json!({"type": "array"})), None, "any items");
        assert_eq!(nesting(json!({"type": "object"})), None, "any members");
        assert_eq!(
            nesting(
                json!({"type": "object", "additionalProperties": {"type": "array", "items": {}}})
            ),
            None,
            "any items, one level down"
        );
        assert_eq!(
            nesting(json!({
                "type": ["object", "array", "null"],
                "additionalProperties": false,
                "properties": {"a": {"type": "object", "additionalProperties": false}},
                "items": {"type": "integer"}
            })),
            Some(2),
            "the deeper of the object and array readings"
        );
        // At the limit, accepting a value settles its depth; one level more, it does not.
        let at_limit = Shape::compile(&nested_array_schema(MAX_INPUT_DEPTH - 1)).unwrap();
        assert!(at_limit.bounds_depth());
        let beyond = Shape::compile(&nested_array_schema(MAX_INPUT_DEPTH)).unwrap();
        assert!(!beyond.bounds_depth());
        let too_deep: Value = serde_json::from_str(&format!(
            "{}{{}}{}",
            "[".repeat(MAX_INPUT_DEPTH),
            "]".repeat(MAX_INPUT_DEPTH)
        ))
        .unwrap();
        assert!(
            beyond.accepts(&too_deep),
            "so the depth walk must still run for it"
        );
    }

    #[test]
    fn names_of_one_length_up_to_eight_bytes_share_a_key_only_when_equal() {
        let names = [
            "", "a", "b", "ab", "ba", "abc", "acb", "abcd", "abce", "bbcd", "abcde", "abxde",
            "abcdf", "abcdef", "abcdeg", "abcdefg", "abcdefh", "abcdefgh", "abcdefgi", "é", "éa",
        ];
        for a in names {
            for b in names {
                let same = a.len() == b.len() && name_key(a) == name_key(b);
                assert_eq!(same, a == b, "{a:?} {b:?}");
            }
        }
        // Longer names share a key with names that differ after their eighth byte: the scan
        // then compares their bytes.
        assert_eq!(name_key("abcdefgh_1"), name_key("abcdefgh_2"));
        let schema = json!({
            "type": "object",
            "properties": {"abcdefgh_1": {"type": "string"}, "abcdefgh_2": {"type": "integer"}},
            "additionalProperties": false
        });
        let shape = Shape::compile(&schema).unwrap();
        assert!(shape.accepts(&json!({"abcdefgh_1": "x", "abcdefgh_2": 1})));
        assert!(!shape.accepts(&json!({"abcdefgh_2": "x"})));
        assert!(!shape.accepts(&json!({"abcdefgh_3": "x"})));
    }
}
