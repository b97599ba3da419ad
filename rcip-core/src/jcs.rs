//! RFC 8785 JSON Canonicalization Scheme (JCS) over `serde_json::Value`.
//!
//! Written here rather than taken from a crate, though not for want of a correct one:
//! `serde_jcs` 0.2 and `serde_json_canonicalizer` 0.4 write the same bytes as this module on
//! every MCPL vector and the RFC 8785 examples (numbers and UTF-16 key order included;
//! `json-canon` 0.1 refuses integers above 2^53 - 1, which the vectors round as JavaScript
//! does). What they lack is [`write_members`]: the MCPL digest writes the manifest's object
//! straight from its borrowed members, replacing one and skipping another, where their
//! `Serialize`-only API would need an adapter or a normalized copy. And `serde_jcs` brings a
//! second `ryu-js`. What is left to write is small: numbers are `ryu-js` (ECMAScript
//! `Number::toString`, a maintained crate), keys sort by UTF-16 code units, and string
//! escaping is the five lines of RFC 8785 §3.2.2.2.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Number, Value};
use sha2::{Digest as _, Sha256};

use crate::depth::MAX_VALUE_DEPTH;

/// The deepest value canonicalized: [`MAX_VALUE_DEPTH`] nested arrays and objects, the
/// most a JSON text can carry through serde_json. Past it the writer would recurse without
/// bound, so it stops with [`JcsError::TooDeep`] instead.
pub const MAX_CANONICAL_DEPTH: usize = MAX_VALUE_DEPTH;

/// Why a value has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JcsError {
    /// More than [`MAX_CANONICAL_DEPTH`] arrays and objects nest.
    #[error("value_too_deep: a value nests at most {limit} arrays and objects")]
    TooDeep {
        /// The limit, [`MAX_CANONICAL_DEPTH`].
        limit: usize,
    },
}

impl JcsError {
    /// The stable machine code: `value_too_deep`.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            Self::TooDeep { .. } => "value_too_deep",
        }
    }
}

/// The canonical form of `value`.
///
/// ```
/// use rcip_core::jcs::canonical_json;
/// use serde_json::json;
/// assert_eq!(canonical_json(&json!({"b": 1.0, "a": [1e21, -0.0, "\u{1f}"]})).unwrap(),
///            r#"{"a":[1e+21,0,"\u001f"],"b":1}"#);
/// ```
///
/// # Errors
///
/// [`JcsError::TooDeep`] past [`MAX_CANONICAL_DEPTH`].
pub fn canonical_json(value: &Value) -> Result<String, JcsError> {
    let mut out = String::new();
    write_value(&mut out, value, 0)?;
    Ok(out)
}

/// Writes `value`, which sits inside `above` arrays and objects.
fn write_value(out: &mut String, value: &Value, above: usize) -> Result<(), JcsError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            let depth = enter(above)?;
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, depth)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            write_object_at(out, map.iter().map(|(n, v)| (n.as_str(), v)), above)?;
        }
    }
    Ok(())
}

/// The depth of a container inside `above` others, if within the limit.
fn enter(above: usize) -> Result<usize, JcsError> {
    let depth = above + 1;
    if depth > MAX_CANONICAL_DEPTH {
        Err(JcsError::TooDeep {
            limit: MAX_CANONICAL_DEPTH,
        })
    } else {
        Ok(depth)
    }
}

/// The canonical JSON of an object, given its members.
///
/// # Errors
///
/// [`JcsError::TooDeep`] when the object (itself one level) nests past
/// [`MAX_CANONICAL_DEPTH`].
pub fn canonical_object(map: &Map<String, Value>) -> Result<String, JcsError> {
    let mut out = String::new();
    write_members(
        &mut out,
        map.iter().map(|(name, value)| (name.as_str(), value)),
    )?;
    Ok(out)
}

/// An object from its members, in canonical order: names sort by UTF-16 code units
/// (RFC 8785 §3.2.3), which differs from UTF-8 order only for names with characters above
/// U+FFFF next to U+E000..U+FFFF. The object counts as one level of
/// [`MAX_CANONICAL_DEPTH`].
///
/// # Errors
///
/// [`JcsError::TooDeep`]; `out` then holds a partial object.
pub fn write_members<'a>(
    out: &mut String,
    members: impl Iterator<Item = (&'a str, &'a Value)>,
) -> Result<(), JcsError> {
    write_object_at(out, members, 0)
}

fn write_object_at<'a>(
    out: &mut String,
    members: impl Iterator<Item = (&'a str, &'a Value)>,
    above: usize,
) -> Result<(), JcsError> {
    let depth = enter(above)?;
    let mut members: Vec<(&str, &Value)> = members.collect();
    members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    out.push('{');
    for (i, (name, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, name);
        out.push(':');
        write_value(out, value, depth)?;
    }
    out.push('}');
    Ok(())
}

/// ECMAScript `Number::toString` of the number as an IEEE-754 double (integers beyond 2^53
/// round as they would in JavaScript).
fn write_number(out: &mut String, number: &Number) {
    let value = number.as_f64().unwrap_or(f64::NAN);
    if value.is_finite() {
        let mut buffer = ryu_js::Buffer::new();
        out.push_str(buffer.format_finite(value));
    } else {
        // serde_json never holds a non-finite number; `null` keeps the output JSON.
        out.push_str("null");
    }
}

/// RFC 8785 §3.2.2.2: escape `"`, `\` and the C0 controls (short forms where they exist,
/// lowercase `\u00xx` otherwise); everything else is literal UTF-8.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let code = u32::from(c) as usize;
                out.push_str("\\u00");
                out.push(char::from(HEX[code >> 4]));
                out.push(char::from(HEX[code & 15]));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `sha256:` + unpadded base64url of the SHA-256 of `canonical`.
#[must_use]
pub fn digest_of_canonical(canonical: &str) -> String {
    let hash = Sha256::digest(canonical.as_bytes());
    let mut digest = String::with_capacity(7 + 43);
    digest.push_str("sha256:");
    URL_SAFE_NO_PAD.encode_string(hash, &mut digest);
    digest
}
