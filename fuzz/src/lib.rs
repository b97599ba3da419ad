//! Shared pieces of the fuzz targets: a structure-aware JSON generator for `arbitrary`.

use arbitrary::{Arbitrary, Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Keys the rule grammar and the record scopes use, so generated rules reach past the
/// "unknown operator" check most of the time instead of dying there.
const KEYS: &[&str] = &[
    "path", "present", "all", "any", "not", "eq", "ne", "gt", "gte", "lt", "lte", "votes", "title",
    "tags", "count", "a", "b", "",
];

/// Path strings with valid roots and a few hostile shapes (empty segments, deep chains).
const PATHS: &[&str] = &[
    "state",
    "data",
    "input",
    "data.votes",
    "data.title",
    "input.reason",
    "data.tags.0",
    "data.a.b.c",
    "input.a",
    "data.",
    "data..x",
    "state.x",
    "other.x",
];

/// The deepest a generated value nests: deeper than the validator's rule limit, shallow
/// enough that building and dropping it never threatens the fuzzer's own stack.
const MAX_DEPTH: usize = 80;

/// A JSON value built from fuzz bytes.
#[derive(Debug, Clone)]
pub struct ArbJson(pub Value);

impl<'a> Arbitrary<'a> for ArbJson {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        value(u, 0).map(ArbJson)
    }
}

fn key(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(KEYS)?).to_owned())
    } else {
        String::arbitrary(u)
    }
}

fn value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let choices = if depth >= MAX_DEPTH { 6 } else { 8 };
    Ok(match u.choose_index(choices)? {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(u)?),
        2 => Value::from(i64::arbitrary(u)?),
        3 => Number::from_f64(f64::arbitrary(u)?).map_or(Value::Null, Value::Number),
        4 => Value::String((*u.choose(PATHS)?).to_owned()),
        5 => Value::String(String::arbitrary(u)?),
        6 => {
            let len = u.int_in_range(0..=4)?;
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                items.push(value(u, depth + 1)?);
            }
            Value::Array(items)
        }
        _ => {
            let len = u.int_in_range(0..=3)?;
            let mut map = Map::new();
            for _ in 0..len {
                map.insert(key(u)?, value(u, depth + 1)?);
            }
            Value::Object(map)
        }
    })
}
