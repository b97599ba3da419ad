//! Input as it arrives from a client: a JSON value or raw JSON text, with hostile-input
//! limits applied before anything else looks at it.

use std::sync::Arc;

use serde_json::Value;

/// The deepest nesting of arrays and objects an input may have (`[[1]]` nests 2 deep).
/// Parsed text and values built in memory are measured against the same limit, so both
/// forms of input behave alike; deeper input is `INPUT_INVALID`. (`serde_json` itself stops
/// at 127 levels; the reference has no limit at all and fails deep input with whatever its
/// platform throws.)
pub const MAX_INPUT_DEPTH: usize = 64;

/// The default largest raw JSON text input, in bytes (see
/// [`RuntimeOptions::max_input_bytes`](crate::RuntimeOptions::max_input_bytes)).
pub const DEFAULT_MAX_INPUT_BYTES: usize = 4 * 1024 * 1024;

/// A capability input: already a JSON value, raw JSON text to be parsed, or a value shared
/// with the caller.
///
/// ```
/// use std::sync::Arc;
/// use rcip_runtime::Input;
/// let a: Input = serde_json::json!({"title": "Lunch?"}).into();
/// let b = Input::text(r#"{"title": "Lunch?"}"#);
/// // Preflight a plan's inputs, then invoke them, without copying them for the checks.
/// let shared = Arc::new(serde_json::json!({"title": "Lunch?"}));
/// let c = Input::Shared(shared.clone());
/// # let _ = (a, b, c);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Input {
    /// A parsed value.
    Value(Value),
    /// Raw JSON text; text that is not JSON, too large or too deep is `INPUT_INVALID`.
    Text(String),
    /// No input at all: a request read from JSON without an `input` member (the
    /// reference's `undefined`). Always `INPUT_INVALID`, before anything else is looked at.
    Missing,
    /// A value the caller keeps a share of: checked and shown to the policy as it is, never
    /// copied for that (a preflight proposal costs a reference count, not a copy of its
    /// input); a handler that takes the value gets its own copy only if the caller still
    /// holds the value by then. Behaves exactly as [`Input::Value`] otherwise.
    Shared(Arc<Value>),
}

impl Input {
    /// Raw JSON text.
    #[must_use]
    pub fn text(text: impl Into<String>) -> Self {
        Input::Text(text.into())
    }

    /// Parses and measures the input. `None` means "not an acceptable JSON value".
    #[cfg(test)]
    fn into_value(self, max_bytes: usize) -> Option<Value> {
        self.into_owned(max_bytes)
    }

    /// Parses and measures the input, keeping a shared value shared. `None` means "not an
    /// acceptable JSON value".
    pub(crate) fn into_detached(self, max_bytes: usize) -> Option<Detached> {
        match self {
            Input::Shared(value) => within_depth(&value).then_some(Detached::Shared(value)),
            input => input.into_owned(max_bytes).map(Detached::Owned),
        }
    }

    /// The input as the runtime's own value.
    fn into_owned(self, max_bytes: usize) -> Option<Value> {
        match self {
            Input::Value(value) => within_depth(&value).then_some(value),
            Input::Shared(value) => within_depth(&value).then(|| Arc::unwrap_or_clone(value)),
            Input::Text(text) => {
                if text.len() > max_bytes {
                    return None;
                }
                let value: Value = serde_json::from_str(&text).ok()?;
                within_depth(&value).then_some(value)
            }
            Input::Missing => None,
        }
    }
}

/// An acceptable input: the runtime's own value, or one it shares with the caller.
pub(crate) enum Detached {
    Owned(Value),
    Shared(Arc<Value>),
}

impl Detached {
    /// The value behind one `Arc`, allocated only for an owned one.
    pub(crate) fn into_shared(self) -> Arc<Value> {
        match self {
            Detached::Owned(value) => Arc::new(value),
            Detached::Shared(value) => value,
        }
    }
}

impl From<Arc<Value>> for Input {
    fn from(value: Arc<Value>) -> Self {
        Input::Shared(value)
    }
}

impl From<Value> for Input {
    fn from(value: Value) -> Self {
        Input::Value(value)
    }
}

/// Whether `value` nests no deeper than [`MAX_INPUT_DEPTH`] containers. The recursion is
/// itself bounded by the limit (it stops one level past it), so a hostile value cannot
/// exhaust the stack here, and small inputs cost no allocation.
fn within_depth(value: &Value) -> bool {
    fn walk(value: &Value, depth: usize) -> bool {
        match value {
            Value::Array(_) | Value::Object(_) if depth >= MAX_INPUT_DEPTH => false,
            Value::Array(items) => items.iter().all(|child| walk(child, depth + 1)),
            Value::Object(map) => map.values().all(|child| walk(child, depth + 1)),
            _ => true,
        }
    }
    walk(value, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested_arrays(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn text_and_value_share_one_depth_limit() {
        let ok = nested_arrays(MAX_INPUT_DEPTH);
        let too_deep = nested_arrays(MAX_INPUT_DEPTH + 1);
        let ok_value = Input::text(ok.clone()).into_value(usize::MAX);
        assert!(ok_value.is_some(), "depth {MAX_INPUT_DEPTH} is accepted");
        assert!(Input::text(too_deep).into_value(usize::MAX).is_none());

        // The same shapes, built in memory.
        let mut value = Value::Array(vec![]);
        for _ in 1..MAX_INPUT_DEPTH {
            value = Value::Array(vec![value]);
        }
        assert!(within_depth(&value));
        let deeper = Value::Array(vec![value]);
        assert!(!within_depth(&deeper));
    }

    #[test]
    fn rejects_non_json_and_oversized_text() {
        assert!(Input::text("{not json").into_value(1024).is_none());
        assert!(Input::text("").into_value(1024).is_none());
        assert!(Input::text("[1,2,3]").into_value(3).is_none());
        assert!(Input::Missing.into_value(usize::MAX).is_none());
        assert_eq!(
            Input::text("[1,2,3]").into_value(7),
            Some(serde_json::json!([1, 2, 3]))
        );
    }
}
