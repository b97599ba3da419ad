//! The schema rules: one schema against its new version, keyword by keyword, with the
//! schema's role deciding what a stricter or looser change means.
//!
//! A consumer *sends* input: a stricter input schema can refuse what it sent before
//! (breaking), a looser one cannot (info). It *reads* output, checking it against the schema
//! it knew: a looser output schema can hand it what that schema refuses (breaking), a
//! stricter one cannot (info). A change that is neither stricter nor looser (a pattern
//! replaced, a composition rewritten) is breaking either way.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde_json::{Map, Number, Value};

use crate::{Severity, token};

/// Whether the schema is a capability's input or its output, or the data of a package's
/// records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Input,
    Output,
    /// Records written under the old schema must stay valid (stricter: breaking), and their
    /// readers may hold the old closed schema (looser: warning).
    Record,
}

/// Which way a change moves what the schema accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    Stricter,
    Looser,
    /// Neither contained in the other.
    Other,
}

/// Where changes are reported: severity, rule, pointer, message.
pub(crate) type Sink<'a> = dyn FnMut(Severity, &'static str, &str, String) + 'a;

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Output => "output",
            Role::Record => "record",
        }
    }

    /// The severity of a change that moves what the schema accepts `way`.
    fn severity(self, way: Way) -> Severity {
        match (self, way) {
            (_, Way::Other)
            | (Role::Input | Role::Record, Way::Stricter)
            | (Role::Output, Way::Looser) => Severity::Breaking,
            (Role::Record, Way::Looser) => Severity::Warning,
            _ => Severity::Info,
        }
    }
}

/// The rule ids, per role and keyword family (`input-…`, `output-…`); a record schema's
/// by the way it moves (`record-schema-…`), the keyword named in the message.
fn rule(role: Role, family: &str, way: Way) -> &'static str {
    match (role, family) {
        (_, "default") => "default-changed",
        (_, "text") => "schema-text-changed",
        (Role::Record, _) => match way {
            Way::Stricter => "record-schema-stricter",
            Way::Looser => "record-schema-looser",
            Way::Other => "record-schema-changed",
        },
        (Role::Input, "type") => "input-type-changed",
        (Role::Output, "type") => "output-type-changed",
        (Role::Input, "enum") => "input-enum-changed",
        (Role::Output, "enum") => "output-enum-changed",
        (Role::Input, "bound") => "input-bound-changed",
        (Role::Output, "bound") => "output-bound-changed",
        (Role::Input, "format") => "input-format-changed",
        (Role::Output, "format") => "output-format-changed",
        (Role::Input, "pattern") => "input-pattern-changed",
        (Role::Output, "pattern") => "output-pattern-changed",
        (Role::Input, "required-added") => "input-required-added",
        (Role::Output, "required-added") => "output-required-added",
        (Role::Input, "required-removed") => "input-required-removed",
        (Role::Output, "required-removed") => "output-required-removed",
        (Role::Input, "property-added") => "input-property-added",
        (Role::Output, "property-added") => "output-property-added",
        (Role::Input, "property-removed") => "input-property-removed",
        (Role::Output, "property-removed") => "output-property-removed",
        (Role::Input, "closed") => "input-additional-properties-changed",
        (Role::Output, "closed") => "output-additional-properties-changed",
        (Role::Input, "composition") => "input-composition-changed",
        (Role::Output, "composition") => "output-composition-changed",
        (Role::Input, "unique") => "input-unique-items-changed",
        (Role::Output, "unique") => "output-unique-items-changed",
        (Role::Input, _) => "input-schema-changed",
        (Role::Output, _) => "output-schema-changed",
    }
}

/// The keywords that only describe: rcip-core's annotations (which no validator checks),
/// except `default`, which is judged on its own (a consumer that leaves the member out gets
/// it).
fn is_text(key: &str) -> bool {
    key != "default" && rcip_core::schema::ANNOTATIONS.contains(&key)
}

/// Lower bounds (raised: stricter) and upper bounds (lowered: stricter).
const LOWER: [&str; 5] = [
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
const UPPER: [&str; 5] = [
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// Subschemas compared as a whole: a change in them is a rewrite of the composition.
const COMPOSITIONS: [&str; 6] = ["anyOf", "oneOf", "allOf", "not", "if", "prefixItems"];

/// How deep subschemas are compared keyword by keyword; deeper, a changed subschema is
/// judged whole (neither stricter nor looser). rcip's own schemas stay far above it; the
/// bound keeps a hostile document from costing its depth times its size.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// Compares `old` with `new`, reporting each change under `pointer`.
pub(crate) fn compare(old: &Value, new: &Value, role: Role, pointer: &str, sink: &mut Sink<'_>) {
    compare_at(old, new, role, pointer, sink, 0);
}

fn compare_at(
    old: &Value,
    new: &Value,
    role: Role,
    pointer: &str,
    sink: &mut Sink<'_>,
    depth: usize,
) {
    if old == new {
        return;
    }
    if depth < MAX_SCHEMA_DEPTH
        && let (Some(before), Some(after)) = (old.as_object(), new.as_object())
    {
        return compare_objects(before, after, role, pointer, sink, depth);
    }
    // A boolean schema, or none, on one side (or past the depth bound): compared as a whole.
    let way = match (accepts_all(old), accepts_all(new)) {
        (true, false) => Way::Stricter,
        (false, true) => Way::Looser,
        _ => Way::Other,
    };
    sink(
        role.severity(way),
        rule(role, "schema", way),
        pointer,
        format!("The {} schema changed.", role.name()),
    );
}

/// Whether `schema` accepts every value: `true`, no schema, or only annotations.
fn accepts_all(schema: &Value) -> bool {
    match schema {
        Value::Bool(accepts) => *accepts,
        Value::Null => true,
        Value::Object(object) => object
            .keys()
            .all(|k| rcip_core::schema::ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

fn compare_objects(
    before: &Map<String, Value>,
    after: &Map<String, Value>,
    role: Role,
    pointer: &str,
    sink: &mut Sink<'_>,
    depth: usize,
) {
    let at = |key: &str| format!("{pointer}/{}", token(key));
    let mut report = |way: Way, family: &str, key: &str, message: String| {
        sink(
            role.severity(way),
            rule(role, family, way),
            &at(key),
            message,
        );
    };
    // type
    if before.get("type") != after.get("type") {
        let (from, to) = (types(before.get("type")), types(after.get("type")));
        let way = match (subset(&to, &from), subset(&from, &to)) {
            // The same types, reordered (`["null", "string"]`): not stricter, no change.
            (true, true) => None,
            (true, false) => Some(Way::Stricter),
            (false, true) => Some(Way::Looser),
            (false, false) => Some(Way::Other),
        };
        if let Some(way) = way {
            report(
                way,
                "type",
                "type",
                format!("The type changed from {} to {}.", shown(&from), shown(&to)),
            );
        }
    }
    // enum and const, judged together as the values they allow: `enum: [c, null]` narrowed
    // to `const: c` (schemars' `Option<T>` of a const, undone) is stricter, not an enum
    // removed (looser) beside a const added.
    let allowed = |schema: &Map<String, Value>| -> Option<BTreeSet<String>> {
        let listed: Option<BTreeSet<String>> = match schema.get("enum") {
            Some(Value::Array(values)) => Some(values.iter().map(value_key).collect()),
            _ => None,
        };
        match schema.get("const") {
            Some(value) => {
                let key = value_key(value);
                Some(
                    listed
                        .is_none_or(|listed| listed.contains(&key))
                        .then_some(key)
                        .into_iter()
                        .collect(),
                )
            }
            None => listed,
        }
    };
    let way = match (allowed(before), allowed(after)) {
        (None, Some(_)) => Some(Way::Stricter),
        (Some(_), None) => Some(Way::Looser),
        (Some(from), Some(to)) => {
            let removed = !from.is_subset(&to);
            let added = !to.is_subset(&from);
            match (removed, added) {
                (true, false) => Some(Way::Stricter),
                (false, true) => Some(Way::Looser),
                (true, true) => Some(Way::Other),
                // The same values, reordered or written the other way (`enum: [c]` as
                // `const: c`, `1` as `1.0`): nothing a consumer can tell apart.
                (false, false) => None,
            }
        }
        (None, None) => Some(Way::Other),
    };
    for key in ["enum", "const"] {
        if let Some(way) = way
            && before.get(key) != after.get(key)
        {
            report(
                way,
                "enum",
                key,
                format!("The allowed values ({key}) changed."),
            );
        }
    }
    // bounds
    for (keys, lower) in [(&LOWER, true), (&UPPER, false)] {
        for key in keys.iter() {
            let (from, to) = (
                before.get(*key).and_then(Value::as_number),
                after.get(*key).and_then(Value::as_number),
            );
            let way = match (from, to) {
                (None, None) => continue,
                (None, Some(_)) => Way::Stricter,
                (Some(_), None) => Way::Looser,
                // Exactly, not as f64: rcip writes 64-bit bounds as exact integers, and past
                // 2^53 neighbours round to one f64 (`maximum` 2^63-1 lowered by one would go
                // unreported).
                (Some(a), Some(b)) => match numeric_order(a, b) {
                    Ordering::Equal => continue,
                    order if (order == Ordering::Less) == lower => Way::Stricter,
                    _ => Way::Looser,
                },
            };
            report(
                way,
                "bound",
                key,
                format!(
                    "The bound {key} changed from {} to {}.",
                    number(from),
                    number(to)
                ),
            );
        }
    }
    // format and pattern: added is stricter, removed looser, replaced neither
    for (key, family) in [("format", "format"), ("pattern", "pattern")] {
        if before.get(key) != after.get(key) {
            let way = match (before.get(key), after.get(key)) {
                (None, Some(_)) => Way::Stricter,
                (Some(_), None) => Way::Looser,
                _ => Way::Other,
            };
            report(way, family, key, format!("The {key} changed."));
        }
    }
    // uniqueItems: only `true` asks anything, so `false` written out or left out is no change
    // (not a looser schema, which as output would be breaking).
    let unique =
        |s: &Map<String, Value>| s.get("uniqueItems").and_then(Value::as_bool) == Some(true);
    if unique(before) != unique(after) {
        let way = if unique(after) {
            Way::Stricter
        } else {
            Way::Looser
        };
        report(
            way,
            "unique",
            "uniqueItems",
            "Whether items must be unique changed.".to_owned(),
        );
    }
    // required
    fn required(s: &Map<String, Value>) -> BTreeSet<&str> {
        s.get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    }
    let (from, to) = (required(before), required(after));
    for name in to.difference(&from) {
        report(
            Way::Stricter,
            "required-added",
            "required",
            format!("The property {name} is now required."),
        );
    }
    for name in from.difference(&to) {
        report(
            Way::Looser,
            "required-removed",
            "required",
            format!("The property {name} is no longer required."),
        );
    }
    // properties
    let closed =
        |s: &Map<String, Value>| s.get("additionalProperties") == Some(&Value::Bool(false));
    fn properties(s: &Map<String, Value>) -> Option<&Map<String, Value>> {
        s.get("properties").and_then(Value::as_object)
    }
    let empty = Map::new();
    let (from, to) = (
        properties(before).unwrap_or(&empty),
        properties(after).unwrap_or(&empty),
    );
    for (name, schema) in from {
        let place = format!("{pointer}/properties/{}", token(name));
        match to.get(name) {
            Some(new) => compare_at(schema, new, role, &place, sink, depth + 1),
            None => {
                // Gone from a closed object: a value carrying it is refused.
                let way = if closed(after) {
                    Way::Stricter
                } else {
                    Way::Looser
                };
                sink(
                    role.severity(way),
                    rule(role, "property-removed", way),
                    &place,
                    format!("The property {name} was removed."),
                );
            }
        }
    }
    for name in to.keys().filter(|n| !from.contains_key(*n)) {
        let place = format!("{pointer}/properties/{}", token(name));
        // New in a closed object: a reader of the old schema refuses a value carrying it.
        let way = if closed(before) {
            Way::Looser
        } else {
            Way::Stricter
        };
        sink(
            role.severity(way),
            rule(role, "property-added", way),
            &place,
            format!("The property {name} was added."),
        );
    }
    // additionalProperties, items, and other single subschemas
    for key in ["additionalProperties", "items", "propertyNames", "contains"] {
        if before.get(key) == after.get(key) {
            continue;
        }
        let place = at(key);
        match (before.get(key), after.get(key)) {
            (Some(Value::Bool(_)) | None, Some(Value::Bool(_)) | None)
                if key == "additionalProperties" =>
            {
                let way = if closed(after) {
                    Way::Stricter
                } else {
                    Way::Looser
                };
                sink(
                    role.severity(way),
                    rule(role, "closed", way),
                    &place,
                    "Whether other properties are allowed changed.".to_owned(),
                );
            }
            (from, to) => compare_at(
                from.unwrap_or(&Value::Bool(true)),
                to.unwrap_or(&Value::Bool(true)),
                role,
                &place,
                sink,
                depth + 1,
            ),
        }
    }
    // compositions, compared whole
    for key in COMPOSITIONS {
        if before.get(key) != after.get(key) {
            sink(
                role.severity(Way::Other),
                rule(role, "composition", Way::Other),
                &at(key),
                format!("The {key} composition changed."),
            );
        }
    }
    // default: a consumer that leaves the member out now gets another value
    if before.get("default") != after.get("default") {
        sink(
            Severity::Warning,
            rule(role, "default", Way::Other),
            &at("default"),
            "The default value changed.".to_owned(),
        );
    }
    // texts
    let texts = rcip_core::schema::ANNOTATIONS
        .into_iter()
        .filter(|k| is_text(k));
    for key in texts {
        if before.get(key) != after.get(key) {
            sink(
                Severity::Info,
                rule(role, "text", Way::Other),
                &at(key),
                format!("The {key} changed."),
            );
        }
    }
    // anything else: not judged, so breaking
    let judged = |key: &str| {
        matches!(
            key,
            "type"
                | "enum"
                | "const"
                | "format"
                | "pattern"
                | "uniqueItems"
                | "required"
                | "properties"
                | "additionalProperties"
                | "items"
                | "propertyNames"
                | "contains"
                | "default"
        ) || LOWER.contains(&key)
            || UPPER.contains(&key)
            || is_text(key)
            || COMPOSITIONS.contains(&key)
    };
    let mut others: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| !judged(k))
        .collect();
    others.sort();
    others.dedup();
    for key in others {
        if before.get(key) != after.get(key) {
            sink(
                role.severity(Way::Other),
                rule(role, "other", Way::Other),
                &at(key),
                format!("The keyword {key} changed."),
            );
        }
    }
}

/// A value as a key of a set of allowed values: its JSON text, with a number written by its
/// value (`1.0` as `1`), since a validator compares numbers by value.
fn value_key(value: &Value) -> String {
    let mut key = String::new();
    write_value_key(&mut key, value);
    key
}

/// [`value_key`] into `out`: numbers by value (`1` and `1.0` alike) at any depth, object
/// members by name whatever their order, so two enum values JSON Schema calls equal have one
/// key. Iterative: a value nested deeper than the stack allows is keyed as well. Not
/// rcip-core's `canonical_json` (RFC 8785): it writes numbers as ECMAScript doubles, so two
/// integers past 2^53 that a bound or enum tells apart would share a key.
fn write_value_key(out: &mut String, value: &Value) {
    /// What is left to write: a value, or a closing mark once a container's members are out.
    enum Step<'v> {
        Value(&'v Value),
        Name(&'v str),
        Text(&'static str),
    }
    let mut steps = vec![Step::Value(value)];
    while let Some(step) = steps.pop() {
        let value = match step {
            Step::Text(text) => {
                out.push_str(text);
                continue;
            }
            Step::Name(name) => {
                // As JSON text, so no name can pass for punctuation.
                out.push_str(&Value::from(name).to_string());
                continue;
            }
            Step::Value(value) => value,
        };
        match value {
            Value::Number(number) => match (number.as_i64(), number.as_u64(), number.as_f64()) {
                (Some(i), _, _) => out.push_str(&i.to_string()),
                (_, Some(u), _) => out.push_str(&u.to_string()),
                // An integral float within i64 is the integer (above it, f64 text is exact).
                #[allow(clippy::cast_possible_truncation)]
                (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => {
                    out.push_str(&(f as i64).to_string());
                }
                _ => out.push_str(&number.to_string()),
            },
            Value::Array(items) => {
                out.push('[');
                steps.push(Step::Text("]"));
                for (index, item) in items.iter().enumerate().rev() {
                    steps.push(Step::Value(item));
                    if index > 0 {
                        steps.push(Step::Text(","));
                    }
                }
            }
            Value::Object(members) => {
                out.push('{');
                steps.push(Step::Text("}"));
                let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
                sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
                for (index, (name, member)) in sorted.into_iter().enumerate().rev() {
                    steps.push(Step::Value(member));
                    steps.push(Step::Text(":"));
                    steps.push(Step::Name(name));
                    if index > 0 {
                        steps.push(Step::Text(","));
                    }
                }
            }
            other => out.push_str(&other.to_string()),
        }
    }
}

/// The types a `type` keyword allows (absent: every type).
fn types(value: Option<&Value>) -> Vec<String> {
    const ALL: [&str; 7] = [
        "null", "boolean", "object", "array", "number", "integer", "string",
    ];
    match value {
        Some(Value::String(name)) => vec![name.clone()],
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => ALL.iter().map(|n| (*n).to_owned()).collect(),
    }
}

/// Whether every type of `inner` is allowed by `outer` (`integer` is within `number`).
fn subset(inner: &[String], outer: &[String]) -> bool {
    inner
        .iter()
        .all(|t| outer.contains(t) || (t == "integer" && outer.iter().any(|o| o == "number")))
}

fn shown(types: &[String]) -> String {
    types.join("|")
}

fn number(value: Option<&Number>) -> String {
    value.map_or_else(|| "none".to_owned(), Number::to_string)
}

/// The order of two JSON numbers by value, exact for integers up to `u64::MAX` and for an
/// integer against a float.
fn numeric_order(a: &Number, b: &Number) -> Ordering {
    let integer = |n: &Number| n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
    if let (Some(a), Some(b)) = (integer(a), integer(b)) {
        return a.cmp(&b);
    }
    let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
    match x.partial_cmp(&y) {
        // Rounding an integer to f64 keeps its order against a float, so only a tie is in
        // doubt; then the float is a whole number (below 2^53 the integer was exact, above
        // every f64 is whole) well within i128, and the two compare exactly.
        Some(Ordering::Equal) => integer(a)
            .unwrap_or(x as i128)
            .cmp(&integer(b).unwrap_or(y as i128)),
        order => order.unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::{Role, Way, rule};

    /// Every rule the schema comparison can report is listed (and so documented).
    #[test]
    fn every_schema_rule_is_listed() {
        let families = [
            "type",
            "enum",
            "bound",
            "format",
            "pattern",
            "required-added",
            "required-removed",
            "property-added",
            "property-removed",
            "closed",
            "composition",
            "unique",
            "default",
            "text",
            "schema",
            "other",
        ];
        for role in [Role::Input, Role::Output, Role::Record] {
            for family in families {
                for way in [Way::Stricter, Way::Looser, Way::Other] {
                    let id = rule(role, family, way);
                    assert!(crate::RULES.contains(&id), "{id} is not in RULES");
                }
            }
        }
    }
}
