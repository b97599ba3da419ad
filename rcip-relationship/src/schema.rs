//! The package schema subset: checked keyword by keyword, and normalized (the subset's
//! default bounds written out).
//!
//! This is deliberately not a JSON Schema engine: anything outside the subset is refused, so
//! a package means the same to every implementation that validates records against it.

use serde_json::{Map, Value};

use super::problem::ProblemCode as Code;
use super::validate::{COUNT, Checker, child, json_type};

/// A string without `maxLength` is limited to this many characters.
pub const DEFAULT_MAX_LENGTH: u64 = 4_000;
/// An array without `maxItems` is limited to this many items.
pub const DEFAULT_MAX_ITEMS: u64 = 100;
/// The deepest a schema may nest (the root schema is level 1).
pub const MAX_SCHEMA_DEPTH: usize = 10;

/// The keywords of the subset.
const KEYWORDS: [&str; 14] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "items",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
    "format",
    "description",
];

/// The seven types.
const TYPES: [&str; 7] = [
    "object", "array", "string", "integer", "number", "boolean", "null",
];

/// Which type each type-specific keyword belongs to.
fn keyword_types(keyword: &str) -> Option<&'static [&'static str]> {
    Some(match keyword {
        "properties" | "required" | "additionalProperties" => &["object"],
        "items" | "minItems" | "maxItems" => &["array"],
        "minLength" | "maxLength" | "format" => &["string"],
        "minimum" | "maximum" => &["integer", "number"],
        "enum" => &["string", "integer", "number", "boolean"],
        _ => return None,
    })
}

pub(super) struct SchemaChecker<'c> {
    checker: &'c mut Checker,
}

impl<'c> SchemaChecker<'c> {
    pub(super) fn new(checker: &'c mut Checker) -> Self {
        Self { checker }
    }

    /// Checks a root schema; the normalized schema when it has no problem.
    pub(super) fn check(mut self, value: &Value, at: &str) -> Option<Value> {
        let before = self.checker.reported();
        let normalized = self.node(value, at, 1);
        normalized.filter(|_| self.checker.reported() == before)
    }

    fn node(&mut self, value: &Value, at: &str, depth: usize) -> Option<Value> {
        let map = self.checker.object(value, at, "a schema")?;
        if depth > MAX_SCHEMA_DEPTH {
            self.checker.report(
                at,
                Code::SchemaTooDeep,
                format!("schemas nest at most {MAX_SCHEMA_DEPTH} levels"),
            );
            return None;
        }
        for key in map.keys() {
            if !KEYWORDS.contains(&key.as_str()) {
                self.checker.report(
                    &child(at, key),
                    Code::SchemaKeyword,
                    format!(
                        "keyword {key:?} is outside the package schema subset (allowed: {})",
                        KEYWORDS.join(", ")
                    ),
                );
            }
        }
        let schema_type = match map.get("type") {
            None => {
                self.checker
                    .report(at, Code::SchemaType, "a schema declares its \"type\"");
                None
            }
            Some(Value::String(name)) if TYPES.contains(&name.as_str()) => Some(name.as_str()),
            Some(Value::Array(_)) => {
                self.checker.report(
                    &child(at, "type"),
                    Code::SchemaType,
                    "one type per schema: \"type\" is a string, not a list",
                );
                None
            }
            Some(other) => {
                self.checker.report(
                    &child(at, "type"),
                    Code::SchemaType,
                    format!("expected one of {}, found {other}", TYPES.join(", ")),
                );
                None
            }
        };
        if let Some(description) = map.get("description")
            && !description.is_string()
        {
            self.checker.report(
                &child(at, "description"),
                Code::WrongType,
                format!(
                    "expected a description (a string), found {}",
                    json_type(description)
                ),
            );
        }
        let schema_type = schema_type?;
        for key in map.keys() {
            if let Some(types) = keyword_types(key)
                && !types.contains(&schema_type)
            {
                self.checker.report(
                    &child(at, key),
                    Code::SchemaKeywordForType,
                    format!("{key:?} does not apply to type {schema_type:?}"),
                );
            }
        }
        // Every problem is reported as it is found; `check` refuses the result if any was,
        // so the parts below build what they can without tracking completeness.
        let mut normalized = map.clone();
        match schema_type {
            "object" => self.object(map, at, depth, &mut normalized),
            "array" => self.array(map, at, depth, &mut normalized),
            "string" => self.string(map, at, &mut normalized),
            "integer" | "number" => self.number(map, at),
            _ => {}
        }
        if let Some(values) = map.get("enum") {
            self.enumeration(values, &child(at, "enum"), schema_type);
        }
        Some(Value::Object(normalized))
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
        normalized: &mut Map<String, Value>,
    ) {
        let properties = match map.get("properties") {
            None => {
                self.checker.report(
                    at,
                    Code::SchemaIncomplete,
                    "an object schema declares \"properties\"",
                );
                None
            }
            Some(value) => {
                let properties_at = child(at, "properties");
                let properties = self.checker.object(value, &properties_at, "the properties");
                if let Some(properties) = properties {
                    let mut out = Map::new();
                    for (name, schema) in properties {
                        if self.checker.is_full() {
                            break;
                        }
                        if let Some(schema) =
                            self.node(schema, &child(&properties_at, name), depth + 1)
                        {
                            out.insert(name.clone(), schema);
                        }
                    }
                    normalized.insert("properties".to_owned(), Value::Object(out));
                }
                properties
            }
        };
        match map.get("required") {
            None => {
                self.checker.report(
                    at,
                    Code::SchemaIncomplete,
                    "an object schema declares \"required\" (possibly empty)",
                );
            }
            Some(value) => {
                let required_at = child(at, "required");
                let Value::Array(names) = value else {
                    self.checker.report(
                        &required_at,
                        Code::WrongType,
                        format!(
                            "expected the required names (an array), found {}",
                            json_type(value)
                        ),
                    );
                    return;
                };
                let mut seen = std::collections::BTreeSet::new();
                for (i, name) in names.iter().enumerate() {
                    let name_at = format!("{required_at}/{i}");
                    let Some(name) = name.as_str() else {
                        self.checker.report(
                            &name_at,
                            Code::WrongType,
                            format!(
                                "expected a property name (a string), found {}",
                                json_type(name)
                            ),
                        );
                        continue;
                    };
                    if !seen.insert(name) {
                        self.checker.report(
                            &name_at,
                            Code::Duplicate,
                            format!("{name:?} is required twice"),
                        );
                    } else if properties.is_some_and(|p| !p.contains_key(name)) {
                        self.checker.report(
                            &name_at,
                            Code::SchemaRequiredUndeclared,
                            format!("required property {name:?} is not in \"properties\""),
                        );
                    }
                }
            }
        }
        match map.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None => {
                self.checker.report(
                    at,
                    Code::SchemaIncomplete,
                    "an object schema declares \"additionalProperties\": false",
                );
            }
            Some(other) => {
                self.checker.report(
                    &child(at, "additionalProperties"),
                    Code::SchemaIncomplete,
                    format!("\"additionalProperties\" must be false, found {other}"),
                );
            }
        }
    }

    fn array(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        depth: usize,
        normalized: &mut Map<String, Value>,
    ) {
        match map.get("items") {
            None => self.checker.report(
                at,
                Code::SchemaIncomplete,
                "an array schema declares \"items\"",
            ),
            Some(items) => {
                if let Some(items) = self.node(items, &child(at, "items"), depth + 1) {
                    normalized.insert("items".to_owned(), items);
                }
            }
        }
        self.length_bounds(
            map,
            at,
            "minItems",
            "maxItems",
            DEFAULT_MAX_ITEMS,
            normalized,
        );
    }

    fn string(&mut self, map: &Map<String, Value>, at: &str, normalized: &mut Map<String, Value>) {
        if let Some(format) = map.get("format")
            && format.as_str() != Some("date-time")
        {
            self.checker.report(
                &child(at, "format"),
                Code::SchemaFormat,
                format!("the only format is \"date-time\", found {format}"),
            );
        }
        self.length_bounds(
            map,
            at,
            "minLength",
            "maxLength",
            DEFAULT_MAX_LENGTH,
            normalized,
        );
    }

    /// Non-negative integer bounds, `min <= max`, and the default `max` written out.
    fn length_bounds(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        min_key: &str,
        max_key: &str,
        default_max: u64,
        normalized: &mut Map<String, Value>,
    ) {
        let (Ok(min), Ok(max)) = (
            self.checker
                .bound(map, at, min_key, COUNT, Code::SchemaBound),
            self.checker
                .bound(map, at, max_key, COUNT, Code::SchemaBound),
        ) else {
            return;
        };
        let max = max.unwrap_or_else(|| {
            normalized.insert(max_key.to_owned(), Value::from(default_max));
            default_max
        });
        if let Some(min) = min
            && min > max
        {
            self.checker.report(
                &child(at, min_key),
                Code::SchemaBound,
                format!(
                    "{min_key:?} {min} is above {max_key:?} {max}{}",
                    if map.contains_key(max_key) {
                        ""
                    } else {
                        " (the default)"
                    }
                ),
            );
        }
    }

    fn number(&mut self, map: &Map<String, Value>, at: &str) {
        let number: (fn(&Value) -> Option<f64>, &str) = (Value::as_f64, "a number");
        let (Ok(min), Ok(max)) = (
            self.checker
                .bound(map, at, "minimum", number, Code::SchemaBound),
            self.checker
                .bound(map, at, "maximum", number, Code::SchemaBound),
        ) else {
            return;
        };
        if let (Some(min), Some(max)) = (min, max)
            && min > max
        {
            self.checker.report(
                &child(at, "minimum"),
                Code::SchemaBound,
                format!("\"minimum\" {min} is above \"maximum\" {max}"),
            );
        }
    }

    fn enumeration(&mut self, values: &Value, at: &str, schema_type: &str) {
        let Value::Array(items) = values else {
            self.checker.report(
                at,
                Code::SchemaEnum,
                format!("\"enum\" is a non-empty array, found {}", json_type(values)),
            );
            return;
        };
        if items.is_empty() {
            self.checker
                .report(at, Code::SchemaEnum, "\"enum\" lists at least one value");
            return;
        }
        for (i, item) in items.iter().enumerate() {
            let fits = match schema_type {
                "string" => item.is_string(),
                "integer" => item.as_f64().is_some_and(|n| n.fract() == 0.0),
                "number" => item.is_number(),
                "boolean" => item.is_boolean(),
                _ => true, // reported as a keyword for the wrong type
            };
            if !fits {
                self.checker.report(
                    &format!("{at}/{i}"),
                    Code::SchemaEnum,
                    format!("enum value {item} is not of type {schema_type:?}"),
                );
            }
        }
    }
}
