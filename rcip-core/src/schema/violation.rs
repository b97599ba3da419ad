//! The violation reported by the strict schema checker.

use std::fmt;

/// The strict-mode rule a schema breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StrictRule {
    /// A keyword that is not a JSON Schema draft 2020-12 keyword known to Ajv
    /// (`strictSchema`).
    UnknownKeyword,
    /// A `format` other than the [`SUPPORTED_FORMATS`](super::SUPPORTED_FORMATS)
    /// (`uuid`, `date-time`, `date`, `email`, `uri`), which the runtime validates. The
    /// reference installs no formats, so Ajv's strict mode refuses every format as unknown.
    Format,
    /// A `type` array that is not a single type or a union of one type with
    /// `"null"` (`strictTypes`, union types are not allowed).
    UnionType,
    /// A type-specific keyword without a `type` that includes its type at the
    /// same schema or a parent schema for the same instance (`strictTypes`).
    ApplicableType,
    /// A `type` that has nothing in common with the `type` of a parent schema
    /// for the same instance (`strictTypes`).
    ContradictoryTypes,
    /// A `required` property that is not in `properties` of the same schema or
    /// a parent schema for the same instance (`strictRequired`).
    RequiredNotDefined,
    /// A `prefixItems` tuple whose length is not fixed by `minItems` and
    /// `maxItems` (or `items: false`) (`strictTuples`).
    UnboundedTuple,
    /// `if` without `then` and without `else`.
    IfWithoutThenElse,
    /// `then` or `else` without `if`.
    ThenElseWithoutIf,
    /// `minContains` or `maxContains` without `contains`.
    ContainsBoundWithoutContains,
    /// A `patternProperties` pattern matching a name in `properties` of the
    /// same schema.
    PatternPropertyMatchesProperty,
    /// The OpenAPI `nullable` extension, which the Rust validator does not
    /// implement.
    Nullable,
    /// A `$schema` that is not draft 2020-12, or a `$schema` below the root.
    SchemaDialect,
    /// A keyword value with a shape the checker cannot use (e.g. `properties`
    /// that is not an object, or a subschema that is neither an object nor a
    /// boolean).
    Malformed,
    /// Subschemas nested deeper than [`MAX_SCHEMA_DEPTH`](super::MAX_SCHEMA_DEPTH).
    SchemaTooDeep,
    /// An `x-mcp-header` (MCP's SEP-2243 annotation, which rcip accepts though Ajv's strict
    /// mode knows no such keyword) whose value is not a header name token.
    McpHeader,
}

impl StrictRule {
    /// A stable SCREAMING_SNAKE_CASE code for the rule, e.g. `"UNKNOWN_KEYWORD"`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::UnknownKeyword => "UNKNOWN_KEYWORD",
            Self::McpHeader => "MCP_HEADER_INVALID",
            Self::Format => "FORMAT_NOT_SUPPORTED",
            Self::UnionType => "UNION_TYPE",
            Self::ApplicableType => "APPLICABLE_TYPE_REQUIRED",
            Self::ContradictoryTypes => "CONTRADICTORY_TYPES",
            Self::RequiredNotDefined => "REQUIRED_NOT_DEFINED",
            Self::UnboundedTuple => "UNBOUNDED_TUPLE",
            Self::IfWithoutThenElse => "IF_WITHOUT_THEN_ELSE",
            Self::ThenElseWithoutIf => "THEN_ELSE_WITHOUT_IF",
            Self::ContainsBoundWithoutContains => "CONTAINS_BOUND_WITHOUT_CONTAINS",
            Self::PatternPropertyMatchesProperty => "PATTERN_PROPERTY_MATCHES_PROPERTY",
            Self::Nullable => "NULLABLE_NOT_SUPPORTED",
            Self::SchemaDialect => "SCHEMA_DIALECT_NOT_SUPPORTED",
            Self::Malformed => "MALFORMED_SCHEMA",
            Self::SchemaTooDeep => "SCHEMA_TOO_DEEP",
        }
    }
}

/// A strict-mode rule broken by a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// Which rule.
    pub rule: StrictRule,
    /// JSON Pointer (RFC 6901, escaped) to the schema object where the
    /// violation is, `""` for the root.
    pub pointer: String,
    /// A human message naming the keyword, e.g. `unknown keyword "foo"`.
    pub message: String,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "{} at the root", self.message)
        } else {
            write!(f, "{} at {}", self.message, self.pointer)
        }
    }
}

impl std::error::Error for SchemaViolation {}
