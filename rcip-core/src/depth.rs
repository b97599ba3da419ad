//! How deeply a caller's in-memory JSON nests, measured without recursion.
//!
//! Text input is safe: serde_json refuses more than 128 nested containers. A `Value`
//! built in memory has no such limit, and every recursive walk over one (canonical JSON,
//! schema checks, digests, `PartialEq`, `Serialize`) would abort the process on a deep
//! enough value. The public walks therefore measure the depth first, iteratively, and
//! refuse a value past their domain's limit before recursing.

use serde_json::Value;

/// The default nesting limit for a caller's JSON: 128 containers, serde_json's own limit
/// for text, so that any value that could have been parsed is accepted.
pub const MAX_VALUE_DEPTH: usize = 128;

/// The number of nested arrays and objects in `value`: 0 for a scalar, 1 for `[]` or
/// `{}`, 2 for `[[]]`. Iterative; stops counting once past `limit` and returns
/// `limit + 1` then, so its cost is bounded by the part of the value within the limit.
#[must_use]
pub fn depth_beyond(value: &Value, limit: usize) -> usize {
    let mut deepest = 0;
    let mut pending: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, above)) = pending.pop() {
        let depth = above + 1;
        match value {
            Value::Array(items) => pending.extend(items.iter().map(|child| (child, depth))),
            Value::Object(members) => pending.extend(members.values().map(|child| (child, depth))),
            _ => continue,
        }
        deepest = deepest.max(depth);
        if deepest > limit {
            return limit + 1;
        }
    }
    deepest
}

/// Whether `value` nests more than `limit` arrays and objects (see [`depth_beyond`]).
///
/// ```
/// use rcip_core::depth::exceeds_depth;
/// use serde_json::json;
/// assert!(!exceeds_depth(&json!([[1]]), 2));
/// assert!(exceeds_depth(&json!([[[1]]]), 2));
/// assert!(!exceeds_depth(&json!("scalar"), 0));
/// ```
#[must_use]
pub fn exceeds_depth(value: &Value, limit: usize) -> bool {
    depth_beyond(value, limit) > limit
}

/// `depth` arrays nested around `0` (`nested_arrays(2)` is `[[0]]`), built iteratively.
///
/// For tests of the limits above: a value far deeper than any parser would produce, made
/// without the recursion (`json!`, `clone`) that such a value defeats. Drop it with
/// [`dismantle`].
///
/// ```
/// use rcip_core::depth::{depth_beyond, dismantle, nested_arrays};
/// use serde_json::json;
/// assert_eq!(nested_arrays(2), json!([[0]]));
/// let deep = nested_arrays(100_000);
/// assert_eq!(depth_beyond(&deep, 128), 129);
/// dismantle(deep);
/// ```
#[must_use]
pub fn nested_arrays(depth: usize) -> Value {
    let mut value = Value::from(0);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// Drops `value` without recursion. serde_json's `Value` drops recursively, so a value
/// nested some tens of thousands deep overflows a small stack merely by going out of
/// scope; this takes it apart level by level instead.
pub fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(members) => pending.extend(members.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_containers_not_scalars() {
        assert_eq!(depth_beyond(&json!(1), 10), 0);
        assert_eq!(depth_beyond(&json!({}), 10), 1);
        assert_eq!(depth_beyond(&json!({"a": [1, {"b": []}]}), 10), 4);
        assert_eq!(depth_beyond(&json!({"a": [1, {"b": []}]}), 2), 3);
    }
}
