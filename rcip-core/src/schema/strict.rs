//! The strict schema checker: Ajv 8 strict mode for draft 2020-12.

use serde_json::{Map, Value};

use super::keywords::{self, Location, Shape, TypeSet};
use super::violation::{SchemaViolation, StrictRule};
use crate::pointer::push_token;

/// How deep subschemas may nest: the root schema is at depth 0, and a
/// subschema at depth `MAX_SCHEMA_DEPTH` (or deeper) is a
/// [`StrictRule::SchemaTooDeep`] violation.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// The `format`s rcip accepts and validates (the runtime checks every value against them):
/// `uuid` (hyphenated), `date-time` (RFC 3339), `date` (RFC 3339 full-date), `email` (an
/// e-mail address) and `uri` (an RFC 3986 URI, with its scheme). These are the formats that agent
/// tool schemas can carry; every other `format` is a [`StrictRule::Format`] violation.
///
/// ```
/// use rcip_core::schema::{SUPPORTED_FORMATS, check_strict};
/// use serde_json::json;
///
/// for format in SUPPORTED_FORMATS {
///     assert!(check_strict(&json!({"type": "string", "format": format})).is_ok());
/// }
/// assert!(check_strict(&json!({"type": "string", "format": "ipv4"})).is_err());
/// ```
pub const SUPPORTED_FORMATS: [&str; 5] = ["uuid", "date-time", "date", "email", "uri"];

/// `"uuid", "date-time", "date", "email" and "uri"`, for messages.
fn supported_formats_list() -> String {
    let quoted: Vec<String> = SUPPORTED_FORMATS
        .iter()
        .map(|f| format!("\"{f}\""))
        .collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Whether `name` is an RFC 9110 token: one or more of the visible ASCII characters that
/// are not separators.
fn is_header_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The only `$schema` accepted (with or without a trailing `#`).
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Checks a JSON Schema against the strict rules. Returns the first violation
/// in document order.
///
/// The rules are those of Ajv 8 (`ajv/dist/2020`) compiled with
/// `{ strict: true, allErrors: true }` and no formats, plus a refusal of the
/// OpenAPI `nullable` extension; see [`StrictRule`] for the list. One rcip difference:
/// the [`SUPPORTED_FORMATS`] are accepted on strings (the reference refuses every
/// `format`); any other `format` is refused as the reference refuses them all.
///
/// Order: schema objects are visited parent first, then their subschemas in
/// key order. Within one schema object, `type` is checked first (the other
/// rules depend on it), then every keyword in key order. Subschemas nested
/// [`MAX_SCHEMA_DEPTH`] deep are not walked further (a
/// [`StrictRule::SchemaTooDeep`] violation), so the check never exhausts the
/// stack; and any value, however malformed, gives `Ok` or a violation, never
/// a panic.
///
/// # Examples
///
/// ```
/// use rcip_core::schema::{StrictRule, check_strict};
/// use serde_json::json;
///
/// let accepted = json!({
///     "type": "object",
///     "properties": { "name": { "type": "string", "maxLength": 64 } },
///     "required": ["name"],
///     "additionalProperties": false
/// });
/// assert!(check_strict(&accepted).is_ok());
///
/// // `email` is one of the SUPPORTED_FORMATS; `hostname` is not.
/// let rejected = json!({
///     "type": "object",
///     "properties": {
///         "email": { "type": "string", "format": "email" },
///         "host": { "type": "string", "format": "hostname" }
///     }
/// });
/// let violation = check_strict(&rejected).unwrap_err();
/// assert_eq!(violation.rule, StrictRule::Format);
/// assert_eq!(violation.pointer, "/properties/host");
/// ```
pub fn check_strict(schema: &Value) -> Result<(), SchemaViolation> {
    Walker {
        pointer: String::new(),
    }
    .visit(schema, 0, None)
}

/// What is known about the instance a schema object describes, from the
/// schema object itself and its ancestors describing the same instance.
#[derive(Debug)]
struct Scope<'s, 'a> {
    /// The types the instance may have; `None` when no `type` applies.
    types: Option<TypeSet>,
    /// `properties` of this schema object.
    properties: Option<&'a Map<String, Value>>,
    /// The parent schema object, when it describes the same instance.
    parent: Option<&'s Scope<'s, 'a>>,
}

impl Scope<'_, '_> {
    /// Whether `name` is in `properties` of this schema object or of an
    /// ancestor for the same instance.
    fn defines(&self, name: &str) -> bool {
        let mut scope = Some(self);
        while let Some(current) = scope {
            if current.properties.is_some_and(|p| p.contains_key(name)) {
                return true;
            }
            scope = current.parent;
        }
        false
    }
}

/// The walk state: the JSON Pointer of the schema object being checked.
#[derive(Debug)]
struct Walker {
    pointer: String,
}

impl Walker {
    fn violation(&self, rule: StrictRule, message: String) -> SchemaViolation {
        SchemaViolation {
            rule,
            pointer: self.pointer.clone(),
            message,
        }
    }

    fn malformed(&self, message: String) -> SchemaViolation {
        self.violation(StrictRule::Malformed, message)
    }

    /// Checks the schema at `self.pointer`, `depth` levels below the root;
    /// `parent` is the parent schema object's scope when it describes the same
    /// instance.
    fn visit<'a>(
        &mut self,
        schema: &'a Value,
        depth: usize,
        parent: Option<&Scope<'_, 'a>>,
    ) -> Result<(), SchemaViolation> {
        if depth >= MAX_SCHEMA_DEPTH {
            return Err(self.violation(
                StrictRule::SchemaTooDeep,
                format!("subschemas are nested deeper than {MAX_SCHEMA_DEPTH} levels"),
            ));
        }
        let object = match schema {
            Value::Bool(_) => return Ok(()),
            Value::Object(object) => object,
            other => {
                return Err(self.malformed(format!(
                    "a schema must be an object or a boolean, found {}",
                    describe(other)
                )));
            }
        };

        let inherited = parent.and_then(|p| p.types);
        let types = match object.get("type") {
            None => inherited,
            Some(value) => {
                let own = self.check_type(value, inherited)?;
                Some(inherited.map_or(own, |inherited| inherited.intersect(own)))
            }
        };
        let scope = Scope {
            types,
            properties: object.get("properties").and_then(Value::as_object),
            parent,
        };

        for (key, value) in object {
            if key != "type" {
                self.check_keyword(object, key, value, depth, &scope)?;
            }
        }
        for (key, value) in object {
            self.visit_subschemas(key, value, depth, &scope)?;
        }
        Ok(())
    }

    /// Checks a `type` value, given the types allowed by ancestors for the
    /// same instance, and returns the types it names.
    fn check_type(
        &self,
        value: &Value,
        inherited: Option<TypeSet>,
    ) -> Result<TypeSet, SchemaViolation> {
        let own = match value {
            Value::String(name) => self.type_named(name)?,
            Value::Array(names) => {
                let mut set = TypeSet::EMPTY;
                let mut distinct = true;
                let mut nulls = 0_usize;
                for name in names {
                    let Some(name) = name.as_str() else {
                        return Err(self.malformed(
                            "\"type\" must be a type name or an array of type names".to_owned(),
                        ));
                    };
                    let one = self.type_named(name)?;
                    distinct &= set.union(one) != set;
                    if one == TypeSet::NULL {
                        nulls += 1;
                    }
                    set = set.union(one);
                }
                let allowed = match names.len() {
                    1 => true,
                    2 => distinct && nulls == 1,
                    _ => false,
                };
                if !allowed {
                    return Err(self.violation(
                        StrictRule::UnionType,
                        format!(
                            "union type {value} is not allowed; only a union with \"null\" is (use anyOf)"
                        ),
                    ));
                }
                set
            }
            _ => {
                return Err(self.malformed(
                    "\"type\" must be a type name or an array of type names".to_owned(),
                ));
            }
        };
        if let Some(inherited) = inherited
            && !inherited.allows_all(own)
        {
            return Err(self.violation(
                StrictRule::ContradictoryTypes,
                format!(
                    "\"type\" {value} allows a type that the parent schema's types {inherited} for the same instance do not"
                ),
            ));
        }
        Ok(own)
    }

    fn type_named(&self, name: &str) -> Result<TypeSet, SchemaViolation> {
        TypeSet::named(name)
            .ok_or_else(|| self.malformed(format!("unknown type \"{name}\" in \"type\"")))
    }

    /// Checks one keyword (other than `type`) of the schema object `object`.
    fn check_keyword(
        &self,
        object: &Map<String, Value>,
        key: &str,
        value: &Value,
        depth: usize,
        scope: &Scope<'_, '_>,
    ) -> Result<(), SchemaViolation> {
        // A format rcip validates, or a refusal (a format left unchecked would be a promise
        // the runtime does not keep).
        if key == "format"
            && !value
                .as_str()
                .is_some_and(|f| SUPPORTED_FORMATS.contains(&f))
        {
            return Err(self.violation(
                StrictRule::Format,
                format!(
                    "format {value} is not supported: rcip validates only {}",
                    supported_formats_list()
                ),
            ));
        }
        // A header name: an RFC 9110 token (no CR/LF, no separators), as SEP-2243 wants.
        if key == keywords::MCP_HEADER {
            if !value.as_str().is_some_and(is_header_token) {
                return Err(self.violation(
                    StrictRule::McpHeader,
                    format!("x-mcp-header {value} is not a header name (an RFC 9110 token)"),
                ));
            }
            // Its own `type`, exactly: a number (which the type check would let through as
            // including integers) has no header form.
            let scalar = object
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| matches!(t, "string" | "integer" | "boolean"));
            if !scalar {
                return Err(self.violation(
                    StrictRule::McpHeader,
                    "x-mcp-header is only for a property whose type is string, integer or boolean"
                        .to_owned(),
                ));
            }
        }
        // Is it a keyword at all?
        let Some(keyword) = keywords::lookup(key) else {
            return Err(match key {
                "nullable" => self.violation(
                    StrictRule::Nullable,
                    "\"nullable\" (OpenAPI extension) is not supported: use \"type\": [T, \"null\"]"
                        .to_owned(),
                ),
                _ => self.violation(
                    StrictRule::UnknownKeyword,
                    format!("unknown keyword \"{}\"", escape_quotes(key)),
                ),
            });
        };

        // Is its value shaped as the checker needs it?
        self.check_shape(key, value, keyword.subschemas.map(|(shape, _)| shape))?;
        if key == "$schema" {
            self.check_dialect(value, depth)?;
        }

        // Does it apply to the instance's type?
        if let Some(applies_to) = keyword.applies_to
            && !scope.types.is_some_and(|types| types.admits(applies_to))
        {
            return Err(self.violation(
                StrictRule::ApplicableType,
                format!(
                    "keyword \"{key}\" requires \"type\": {} at the same or a parent schema",
                    applies_to.keyword_type_name()
                ),
            ));
        }

        // Rules relating it to other keywords.
        match key {
            "required" => self.check_required(value, scope),
            "prefixItems" => self.check_tuple(object, value),
            "if" if !object.contains_key("then") && !object.contains_key("else") => Err(self
                .violation(
                    StrictRule::IfWithoutThenElse,
                    "\"if\" without \"then\" and \"else\" is ignored".to_owned(),
                )),
            "then" | "else" if !object.contains_key("if") => Err(self.violation(
                StrictRule::ThenElseWithoutIf,
                format!("\"{key}\" without \"if\" is ignored"),
            )),
            "minContains" | "maxContains" if !object.contains_key("contains") => Err(self
                .violation(
                    StrictRule::ContainsBoundWithoutContains,
                    format!("\"{key}\" without \"contains\" is ignored"),
                )),
            "patternProperties" => self.check_pattern_properties(object, value),
            _ => Ok(()),
        }
    }

    /// Checks the shape of a keyword value that the checker relies on.
    fn check_shape(
        &self,
        key: &str,
        value: &Value,
        subschemas: Option<Shape>,
    ) -> Result<(), SchemaViolation> {
        let well_formed = match (subschemas, key) {
            // A single subschema is checked when it is visited.
            (Some(Shape::One), _) => return Ok(()),
            (Some(Shape::List), _) => value.as_array().is_some_and(|a| !a.is_empty()),
            (Some(Shape::Map), _) => value.is_object(),
            (None, "required") => value
                .as_array()
                .is_some_and(|names| names.iter().all(Value::is_string)),
            (None, "dependentRequired") => value.as_object().is_some_and(|map| {
                map.values().all(|names| {
                    names
                        .as_array()
                        .is_some_and(|names| names.iter().all(Value::is_string))
                })
            }),
            (None, "$ref" | "$dynamicRef" | "$id" | "$anchor" | "$dynamicAnchor" | "$comment") => {
                value.is_string()
            }
            _ => return Ok(()),
        };
        if well_formed {
            return Ok(());
        }
        let expected = match (subschemas, key) {
            (Some(Shape::List), _) => "a non-empty array of schemas",
            (Some(_), _) => "an object whose values are schemas",
            (None, "required") => "an array of strings",
            (None, "dependentRequired") => "an object whose values are arrays of strings",
            _ => "a string",
        };
        Err(self.malformed(format!(
            "\"{key}\" must be {expected}, found {}",
            describe(value)
        )))
    }

    fn check_dialect(&self, value: &Value, depth: usize) -> Result<(), SchemaViolation> {
        if depth > 0 {
            return Err(self.violation(
                StrictRule::SchemaDialect,
                "\"$schema\" is only allowed at the root".to_owned(),
            ));
        }
        let dialect = value.as_str().unwrap_or_default();
        if dialect.strip_suffix('#').unwrap_or(dialect) == DRAFT_2020_12 {
            return Ok(());
        }
        let found = match value {
            Value::String(_) => value.to_string(),
            other => describe(other).to_owned(),
        };
        Err(self.violation(
            StrictRule::SchemaDialect,
            format!("\"$schema\" must be \"{DRAFT_2020_12}\", found {found}"),
        ))
    }

    fn check_required(&self, value: &Value, scope: &Scope<'_, '_>) -> Result<(), SchemaViolation> {
        let names = value.as_array().map(Vec::as_slice).unwrap_or_default();
        for name in names.iter().filter_map(Value::as_str) {
            if !scope.defines(name) {
                return Err(self.violation(
                    StrictRule::RequiredNotDefined,
                    format!(
                        "required property \"{}\" is not defined in \"properties\" of the same or a parent schema",
                        escape_quotes(name)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// `prefixItems` of length N needs `minItems: N` and either `maxItems: N`
    /// or `items: false`.
    fn check_tuple(
        &self,
        object: &Map<String, Value>,
        prefix_items: &Value,
    ) -> Result<(), SchemaViolation> {
        let length = prefix_items.as_array().map_or(0, Vec::len);
        let min_items = self.count(object, "minItems")?;
        let max_items = self.count(object, "maxItems")?;
        let bounded = min_items == Some(length)
            && (max_items == Some(length) || object.get("items") == Some(&Value::Bool(false)));
        if bounded {
            return Ok(());
        }
        Err(self.violation(
            StrictRule::UnboundedTuple,
            format!(
                "\"prefixItems\" is a {length}-tuple, but \"minItems\" is not {length} or neither \"maxItems\" is {length} nor \"items\" is false"
            ),
        ))
    }

    /// The value of `key` in `object` as a count (a non-negative integer,
    /// `2.0` included), if present.
    fn count(
        &self,
        object: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<usize>, SchemaViolation> {
        let Some(value) = object.get(key) else {
            return Ok(None);
        };
        let count = match value.as_u64() {
            Some(count) => usize::try_from(count).ok(),
            None => value
                .as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1e15)
                .map(|f| f as usize),
        };
        match count {
            Some(count) => Ok(Some(count)),
            None => Err(self.malformed(format!(
                "\"{key}\" must be a non-negative integer, found {value}"
            ))),
        }
    }

    fn check_pattern_properties(
        &self,
        object: &Map<String, Value>,
        patterns: &Value,
    ) -> Result<(), SchemaViolation> {
        let (Some(patterns), Some(properties)) = (
            patterns.as_object(),
            object.get("properties").and_then(Value::as_object),
        ) else {
            return Ok(());
        };
        for pattern in patterns.keys() {
            for name in properties.keys() {
                // Undecidable patterns are not reported: see `pattern_matches`.
                if keywords::pattern_matches(pattern, name) == Some(true) {
                    return Err(self.violation(
                        StrictRule::PatternPropertyMatchesProperty,
                        format!(
                            "property \"{}\" matches \"patternProperties\" pattern \"{}\"",
                            escape_quotes(name),
                            escape_quotes(pattern)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Visits the subschemas held by keyword `key`, if any.
    fn visit_subschemas<'a>(
        &mut self,
        key: &str,
        value: &'a Value,
        depth: usize,
        scope: &Scope<'_, 'a>,
    ) -> Result<(), SchemaViolation> {
        let Some((shape, location)) = keywords::lookup(key).and_then(|k| k.subschemas) else {
            return Ok(());
        };
        let parent = match location {
            Location::Same => Some(scope),
            Location::New => None,
        };
        let depth = depth + 1;
        match shape {
            Shape::One => self.visit_at(&[key], value, depth, parent),
            Shape::List => {
                for (index, schema) in value.as_array().into_iter().flatten().enumerate() {
                    self.visit_at(&[key, &index.to_string()], schema, depth, parent)?;
                }
                Ok(())
            }
            Shape::Map => {
                for (name, schema) in value.as_object().into_iter().flatten() {
                    self.visit_at(&[key, name], schema, depth, parent)?;
                }
                Ok(())
            }
        }
    }

    /// Visits `schema` at the current pointer extended with `segments`.
    fn visit_at<'a>(
        &mut self,
        segments: &[&str],
        schema: &'a Value,
        depth: usize,
        parent: Option<&Scope<'_, 'a>>,
    ) -> Result<(), SchemaViolation> {
        let length = self.pointer.len();
        for segment in segments {
            push_token(&mut self.pointer, segment);
        }
        let result = self.visit(schema, depth, parent);
        self.pointer.truncate(length);
        result
    }
}

/// Names the JSON type of a value, for messages (the package validator's too).
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Escapes a name for a message between double quotes.
fn escape_quotes(name: &str) -> String {
    let quoted = Value::String(name.to_owned()).to_string();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .map_or_else(|| name.to_owned(), str::to_owned)
}
