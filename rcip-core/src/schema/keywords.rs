//! What the strict checker knows about keywords, types and patterns.

use std::fmt;

/// A set of JSON types, as named by the `type` keyword.
///
/// `integer` is a subset of `number`: sets are compared through
/// [`TypeSet::intersect`], which accounts for that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TypeSet(u8);

/// The type names in the order used when printing a set.
const NAMES: [(&str, u8); 7] = [
    ("null", TypeSet::NULL.0),
    ("boolean", TypeSet::BOOLEAN.0),
    ("object", TypeSet::OBJECT.0),
    ("array", TypeSet::ARRAY.0),
    ("number", TypeSet::NUMBER.0),
    ("integer", TypeSet::INTEGER.0),
    ("string", TypeSet::STRING.0),
];

impl TypeSet {
    pub(super) const EMPTY: Self = Self(0);
    pub(super) const NULL: Self = Self(1);
    pub(super) const BOOLEAN: Self = Self(1 << 1);
    pub(super) const OBJECT: Self = Self(1 << 2);
    pub(super) const ARRAY: Self = Self(1 << 3);
    pub(super) const NUMBER: Self = Self(1 << 4);
    pub(super) const INTEGER: Self = Self(1 << 5);
    pub(super) const STRING: Self = Self(1 << 6);

    /// The set holding the type called `name`, if `name` is a JSON type name.
    pub(super) fn named(name: &str) -> Option<Self> {
        NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, bits)| Self(*bits))
    }

    pub(super) const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    pub(super) const fn is_empty(self) -> bool {
        self.0 == 0
    }

    const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// `number` stands for `integer` too.
    const fn widened(self) -> Self {
        if self.contains(Self::NUMBER) {
            self.union(Self::INTEGER)
        } else {
            self
        }
    }

    /// The types an instance can have to match both sets.
    pub(super) const fn intersect(self, other: Self) -> Self {
        Self(self.widened().0 & other.widened().0)
    }

    /// Whether every type of `other` is allowed here, as Ajv's strict types require of a
    /// child `type` under a parent's (`integer` is allowed where `number` is).
    pub(super) const fn allows_all(self, other: Self) -> bool {
        self.widened().contains(other)
    }

    /// Whether a keyword applying to `keyword_type` (one of object, array,
    /// string, number) is applicable to an instance of these types.
    pub(super) const fn admits(self, keyword_type: Self) -> bool {
        !self.intersect(keyword_type).is_empty()
    }

    /// How a keyword applying to this type names it in messages.
    pub(super) fn keyword_type_name(self) -> &'static str {
        if self == Self::NUMBER {
            "\"number\" or \"integer\""
        } else if self == Self::OBJECT {
            "\"object\""
        } else if self == Self::ARRAY {
            "\"array\""
        } else {
            "\"string\""
        }
    }
}

impl fmt::Display for TypeSet {
    /// Prints the set as a JSON array of type names; `integer` is left out
    /// when `number` is in the set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let number = self.contains(Self::NUMBER);
        f.write_str("[")?;
        let mut first = true;
        for (name, bits) in NAMES {
            if !self.contains(Self(bits)) || (number && bits == Self::INTEGER.0) {
                continue;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            write!(f, "\"{name}\"")?;
        }
        f.write_str("]")
    }
}

/// Whether a keyword's subschemas describe the same instance as the schema
/// holding the keyword (`allOf`, `not`, ...) or another one (`properties`,
/// `items`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Location {
    /// The same instance: types and `properties` of the parent still apply.
    Same,
    /// Another instance (or, for `$defs`, an unknown one): nothing is known.
    New,
}

/// How a keyword holds its subschemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// The value is one schema.
    One,
    /// The value is a non-empty array of schemas.
    List,
    /// The value is an object whose values are schemas.
    Map,
}

/// What the checker knows about a draft 2020-12 keyword.
#[derive(Debug, Clone, Copy)]
pub(super) struct Keyword {
    /// The type the keyword applies to, for type-specific keywords.
    pub(super) applies_to: Option<TypeSet>,
    /// Where the keyword holds subschemas, if it does.
    pub(super) subschemas: Option<(Shape, Location)>,
}

/// MCP's `x-mcp-header` annotation (SEP-2243).
pub(super) const MCP_HEADER: &str = "x-mcp-header";

/// The keyword called `name`, or `None` if it is not a keyword Ajv 2020 knows
/// in strict mode with no extensions, plus `format` (rcip's supported formats) and
/// [`MCP_HEADER`].
pub(super) fn lookup(name: &str) -> Option<Keyword> {
    use Location::{New, Same};
    use Shape::{List, Map, One};
    let (applies_to, subschemas) = match name {
        // Any instance type, no subschemas. `const`, `enum`, `default` and
        // `examples` hold data, which is never walked.
        "type" | "enum" | "const" | "$ref" | "$id" | "$anchor" | "$dynamicRef"
        | "$dynamicAnchor" | "$schema" | "$comment" | "$vocabulary" | "title" | "description"
        | "default" | "examples" | "deprecated" | "readOnly" | "writeOnly" => (None, None),
        "multipleOf" | "maximum" | "exclusiveMaximum" | "minimum" | "exclusiveMinimum" => {
            (Some(TypeSet::NUMBER), None)
        }
        // `format` is checked against SUPPORTED_FORMATS before this lookup; the supported
        // ones are all string formats.
        "maxLength" | "minLength" | "pattern" | "format" | "contentEncoding"
        | "contentMediaType" => (Some(TypeSet::STRING), None),
        "contentSchema" => (Some(TypeSet::STRING), Some((One, New))),
        "maxItems" | "minItems" | "uniqueItems" | "maxContains" | "minContains" => {
            (Some(TypeSet::ARRAY), None)
        }
        "items" | "contains" | "unevaluatedItems" => (Some(TypeSet::ARRAY), Some((One, New))),
        "prefixItems" => (Some(TypeSet::ARRAY), Some((List, New))),
        "maxProperties" | "minProperties" | "required" | "dependentRequired" => {
            (Some(TypeSet::OBJECT), None)
        }
        "properties" | "patternProperties" => (Some(TypeSet::OBJECT), Some((Map, New))),
        "additionalProperties" | "propertyNames" | "unevaluatedProperties" => {
            (Some(TypeSet::OBJECT), Some((One, New)))
        }
        "dependentSchemas" => (Some(TypeSet::OBJECT), Some((Map, Same))),
        "allOf" | "anyOf" | "oneOf" => (None, Some((List, Same))),
        "not" | "if" | "then" | "else" => (None, Some((One, Same))),
        // `$defs` entries are reached through `$ref`, for an instance whose
        // type is not known.
        "$defs" => (None, Some((Map, New))),
        // MCP's one schema extension (SEP-2243): the property's value also travels in an
        // `Mcp-Param-{name}` header, for integers, strings and booleans only. Its value is
        // checked in `strict.rs`.
        MCP_HEADER => (
            Some(
                TypeSet::STRING
                    .union(TypeSet::INTEGER)
                    .union(TypeSet::BOOLEAN),
            ),
            None,
        ),
        _ => return None,
    };
    Some(Keyword {
        applies_to,
        subschemas,
    })
}

/// Whether the regular expression `pattern` (ECMAScript syntax, as Ajv uses
/// it) matches somewhere in `name`, when that can be decided without a regex
/// engine; `None` when it cannot.
///
/// Decided patterns: a literal with no regex metacharacters, optionally
/// anchored with a leading `^` and/or a trailing `$` (so `^foo$`, `^foo`,
/// `foo$`, `foo`, `^$`, `""`), and `.*` with the same optional anchors. Every
/// other pattern (character classes, escapes, alternations, quantifiers, ...)
/// is undecided, and the caller reports nothing for it: a `patternProperties`
/// pattern such as `^[a-z]+$` that matches a name in `properties` is NOT
/// detected, although Ajv refuses it.
pub(super) fn pattern_matches(pattern: &str, name: &str) -> Option<bool> {
    let (start, rest) = match pattern.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, pattern),
    };
    let (end, body) = match rest.strip_suffix('$') {
        Some(body) => (true, body),
        None => (false, rest),
    };
    if body == ".*" {
        // `.` matches anything but a line terminator; `.*` can match the
        // empty string, so only the fully anchored form can fail.
        return Some(!(start && end && name.chars().any(is_line_terminator)));
    }
    if body.chars().any(is_regex_meta) {
        return None;
    }
    Some(match (start, end) {
        (true, true) => name == body,
        (true, false) => name.starts_with(body),
        (false, true) => name.ends_with(body),
        (false, false) => name.contains(body),
    })
}

fn is_regex_meta(c: char) -> bool {
    matches!(
        c,
        '\\' | '^' | '$' | '.' | '|' | '?' | '*' | '+' | '(' | ')' | '[' | ']' | '{' | '}'
    )
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert_eq!(pattern_matches("^foo$", "foo"), Some(true));
        assert_eq!(pattern_matches("^foo$", "food"), Some(false));
        assert_eq!(pattern_matches("^fo", "foo"), Some(true));
        assert_eq!(pattern_matches("^fo", "afoo"), Some(false));
        assert_eq!(pattern_matches("oo$", "foo"), Some(true));
        assert_eq!(pattern_matches("oo$", "fooa"), Some(false));
        assert_eq!(pattern_matches("o", "foo"), Some(true));
        assert_eq!(pattern_matches("x", "foo"), Some(false));
        assert_eq!(pattern_matches("", "foo"), Some(true));
        assert_eq!(pattern_matches("^$", ""), Some(true));
        assert_eq!(pattern_matches("^$", "a"), Some(false));
        assert_eq!(pattern_matches("$", "a"), Some(true));
        assert_eq!(pattern_matches(".*", "a\nb"), Some(true));
        assert_eq!(pattern_matches("^.*", "a\nb"), Some(true));
        assert_eq!(pattern_matches("^.*$", "a\nb"), Some(false));
        assert_eq!(pattern_matches("^.*$", "ab"), Some(true));
        assert_eq!(pattern_matches("^[a-z]+$", "ab"), None);
        assert_eq!(pattern_matches("a\\$", "a$"), None);
        assert_eq!(pattern_matches("^a|b$", "b"), None);
    }

    #[test]
    fn type_sets() {
        assert_eq!(
            TypeSet::NUMBER.intersect(TypeSet::INTEGER),
            TypeSet::INTEGER
        );
        assert_eq!(
            TypeSet::INTEGER.intersect(TypeSet::NUMBER),
            TypeSet::INTEGER
        );
        assert!(TypeSet::STRING.intersect(TypeSet::NUMBER).is_empty());
        assert!(TypeSet::INTEGER.admits(TypeSet::NUMBER));
        assert!(!TypeSet::NULL.admits(TypeSet::STRING));
        assert_eq!(
            TypeSet::NUMBER.union(TypeSet::NULL).to_string(),
            "[\"null\",\"number\"]"
        );
        assert_eq!(TypeSet::named("integer"), Some(TypeSet::INTEGER));
        assert_eq!(TypeSet::named("int"), None);
        assert!(TypeSet::EMPTY.is_empty());
    }
}
