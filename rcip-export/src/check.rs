//! An independent checker of exported tool lists, written from each consumer's documented
//! rules and limits.
//!
//! [`check`] takes a profile and that profile's wire array (the value of the consumer's
//! `tools` member) and reports every rule the list breaks as a [`Violation`] with a stable
//! rule code. It does not use the exporter: it is the second opinion `cargo test` runs over
//! every export, next to the provider SDKs the interop script runs.
//!
//! The rules below are the code's own tables ([`OPENAI`], [`ANTHROPIC`], [`GEMINI`],
//! [`GEMINI_JSON_SCHEMA`], the entry tables and the name rules); this overview names the codes.
//!
//! | code | profiles | rule |
//! |---|---|---|
//! | `list.shape` | all | the list is an array of entries (Gemini: of `{"functionDeclarations": [...]}`) |
//! | `entry.shape`, `entry.missing`, `entry.member`, `entry.value` | all | an entry is an object with exactly the wire form's members, each of the right kind |
//! | `name.pattern` | all | the tool name matches the profile's name rule |
//! | `name.unique` | all | no two tools in one list share a name |
//! | `schema.depth` | all | a schema nests at most 128 containers (deeper is not checked) |
//! | `schema.malformed` | schema profiles | a subschema or keyword value has a shape the rules cannot read |
//! | `mcp.root` | MCP | `inputSchema` (and, in 2025-11-25, `outputSchema`) are objects with `type: "object"` |
//! | `mcp.schema` | MCP 2026-07-28 | `outputSchema` is a JSON Schema (an object or a boolean): any root is allowed |
//! | `mcp.annotations` | MCP | `annotations` carries only `title` (string) and the four boolean hints |
//! | `P.root` | schema profiles | the parameters root is `type: "object"` (OpenAI: not nullable, no root `anyOf`/`oneOf`/`allOf`) |
//! | `P.keyword` | schema profiles | every keyword is in the profile's allow-list |
//! | `P.type` | schema profiles | `type` values are the profile's spellings (Gemini: one upper-case type) |
//! | `P.type_array` | anthropic | no type arrays |
//! | `P.format` | schema profiles | a `format` is one the profile lists for that type |
//! | `P.pattern` | openai, anthropic | no look-around (Anthropic: nor backreferences, `\b`) |
//! | `P.enum` | schema profiles | `enum` is not empty; Anthropic, Gemini: enum (and `const`) values are primitives (Gemini `parameters`: strings) |
//! | `P.additional_properties` | openai, anthropic, gemini | `false` on every object (OpenAI, Anthropic); never truthy (Gemini `parameters`) |
//! | `P.properties` | openai, anthropic | `properties` is present on every object |
//! | `P.required` | schema profiles | `required` names only properties; OpenAI: every property is in `required` |
//! | `P.property_name` | gemini | property names match `[A-Za-z_][A-Za-z0-9_]{0,63}` |
//! | `P.min_items` | anthropic | `minItems` is 0 or 1 |
//! | `P.bound` | gemini, gemini-json-schema | integer `minimum`/`maximum` within ±(2^53−1), exact as floats |
//! | `P.ref` | openai, anthropic, gemini-json-schema | `$ref` is local and resolves (OpenAI: without siblings; Anthropic: not under `allOf`) |
//! | `P.defs` | gemini | `defs` only at the root |
//! | `P.recursion` | anthropic | no recursive `$ref` |
//! | `P.untyped` | openai, anthropic | every schema has `type`, `anyOf`, `allOf`, `enum`, `const` or `$ref` (no "any value" `{}`) |
//! | `openai.limit.*` | openai | `properties` (5000), `depth` (10, arrays counted), `string_length` (120,000), `enum_values` (1000), `enum_string_length` (15,000 for a string enum over 250 values) |
//! | `anthropic.limit.*` | anthropic | over the `strict: true` tools: `strict_tools` (20), `optional_params` (24), `union_params` (16) |
//!
//! `P` is the profile's prefix: `openai`, `anthropic`, `gemini` or `gemini_json`.
//!
//! Where the documentation leaves room, the checker takes the conservative reading:
//! - OpenAI: `minLength`/`maxLength` are refused (their support is unclear), and every object
//!   must carry `properties` (OpenAI drops objects without it).
//! - OpenAI depth: the root object is level 1, and every nested object or array schema adds a
//!   level. `anyOf` branches do not add one, and `$ref` is not followed: `$defs` entries count
//!   as nested in the root.
//! - Anthropic: a `strict: false` tool's schema is only a hint, so only its object root is
//!   checked, and it is not counted toward the limits. Every non-root subschema with `anyOf`
//!   or a type array counts as one union-typed parameter. Every property absent from its
//!   object's `required`, at any depth, counts as one optional parameter.
//! - Gemini `parameters`: STRING formats are only `enum` and `date-time`, as the Developer API
//!   allows.
//! - Names and limits: one list is one request.
//!
//! ```
//! use rcip_export::{Profile, check::check};
//! use serde_json::json;
//!
//! let tools = json!([{
//!     "type": "function",
//!     "name": "polls.create",
//!     "description": "Create a poll.",
//!     "parameters": {"type": "object", "properties": {}, "additionalProperties": true},
//!     "strict": true
//! }]);
//! let violations = check(Profile::OpenAi, &tools).unwrap_err();
//! let rules: Vec<_> = violations.iter().map(|v| v.rule).collect();
//! assert_eq!(rules, ["name.pattern", "openai.additional_properties"]);
//! assert_eq!(
//!     violations[0].to_string(),
//!     "polls.create at /name: name.pattern: \"polls.create\" does not match ^[a-zA-Z0-9_-]{1,64}$"
//! );
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use rcip_core::depth::{MAX_VALUE_DEPTH, exceeds_depth};
use rcip_core::pointer::push_token;
use serde_json::{Map, Value};

use crate::Profile;

/// One rule an exported tool list breaks.
///
/// Displayed as `TOOL at POINTER: RULE: MESSAGE` (`the tool list` for list-wide rules and
/// `the entry` for an empty pointer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The tool's name, or, when the entry has no string name, its JSON Pointer in the list
    /// (`/3`, or `/0/functionDeclarations/2` for Gemini). Empty for a rule on the whole list.
    pub tool: String,
    /// JSON Pointer into the tool's entry (`/parameters/properties/q/minLength`; for Gemini,
    /// into the function declaration), or into the list for a list-wide rule.
    pub pointer: String,
    /// The stable rule code, e.g. `"openai.keyword"` or `"name.pattern"` (see the module table).
    pub rule: &'static str,
    /// What is wrong, for a person.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tool.is_empty() {
            f.write_str("the tool list")?;
        } else {
            f.write_str(&self.tool)?;
        }
        if self.pointer.is_empty() {
            f.write_str(" at the entry")?;
        } else {
            write!(f, " at {}", self.pointer)?;
        }
        write!(f, ": {}: {}", self.rule, self.message)
    }
}

impl std::error::Error for Violation {}

/// Checks `tools`, the wire array of `profile`, against that profile's documented rules.
///
/// Returns every violation found, in list order; never panics, whatever the input. Schemas
/// nesting more than 128 containers are refused (`schema.depth`) rather than walked.
pub fn check(profile: Profile, tools: &Value) -> Result<(), Vec<Violation>> {
    let rules = ProfileRules::of(profile);
    let mut out = Vec::new();
    let entries = entries(rules, tools, &mut out);
    let mut names: HashMap<&str, String> = HashMap::new();
    let mut strict = StrictTotals::default();
    for (label, entry) in entries {
        let tool = entry
            .get("name")
            .and_then(Value::as_str)
            .map_or(label.clone(), str::to_owned);
        let mut cx = Cx {
            tool: &tool,
            out: &mut out,
        };
        check_entry(rules, entry, &mut cx, &mut strict);
        if let Some(name) = entry.get("name").and_then(Value::as_str) {
            if let Some(first) = names.get(name) {
                cx.push(
                    "/name",
                    "name.unique",
                    format!("{name:?} is also the name of the entry at {first}"),
                );
            } else {
                names.insert(name, label);
            }
        }
    }
    if let Some(limits) = rules.strict_limits {
        limits.check(&strict, &mut out);
    }
    if out.is_empty() { Ok(()) } else { Err(out) }
}

// ---------------------------------------------------------------------------------------
// The tables.
// ---------------------------------------------------------------------------------------

/// Everything one profile checks.
struct ProfileRules {
    /// How the list holds its entries.
    list: ListShape,
    /// The members of one entry.
    entry: &'static [Member],
    /// The tool-name rule.
    names: NameRule,
    /// The schema rules for `Kind::InputSchema` and `Kind::OutputSchema` members; `None`
    /// checks only an object root with `type: "object"` (MCP).
    schema: Option<&'static SchemaRules>,
    /// For Anthropic: only the `strict: true` entries get the schema rules, and these
    /// list-wide limits apply to them.
    strict_limits: Option<StrictLimits>,
    /// MCP 2026-07-28: an `outputSchema` may be any 2020-12 schema (an array, a scalar), not
    /// only an object-rooted one.
    any_output_schema: bool,
}

impl ProfileRules {
    fn of(profile: Profile) -> &'static ProfileRules {
        match profile {
            Profile::Mcp2025_11_25 => &MCP_PROFILE,
            Profile::Mcp2026_07_28 => &MCP_2026_PROFILE,
            Profile::OpenAi => &OPENAI_PROFILE,
            Profile::Anthropic => &ANTHROPIC_PROFILE,
            Profile::Gemini => &GEMINI_PROFILE,
            Profile::GeminiJsonSchema => &GEMINI_JSON_SCHEMA_PROFILE,
        }
    }
}

#[derive(Clone, Copy)]
enum ListShape {
    /// `[entry, ...]`.
    Entries,
    /// `[{"functionDeclarations": [entry, ...]}, ...]`.
    FunctionDeclarations,
}

/// One member of an entry.
struct Member {
    key: &'static str,
    required: bool,
    kind: Kind,
}

#[derive(Clone, Copy)]
enum Kind {
    /// The tool name (string, the profile's name rule).
    Name,
    /// Any string.
    Text,
    /// Exactly this string.
    Literal(&'static str),
    /// Exactly `true`.
    True,
    /// A boolean; for Anthropic, `strict`.
    Bool,
    /// The input schema: object-rooted.
    InputSchema,
    /// The output schema (MCP: object-rooted; Gemini `response`: any root).
    OutputSchema,
    /// MCP tool annotations.
    Annotations,
}

const fn req(key: &'static str, kind: Kind) -> Member {
    Member {
        key,
        required: true,
        kind,
    }
}

const fn opt(key: &'static str, kind: Kind) -> Member {
    Member {
        key,
        required: false,
        kind,
    }
}

/// MCP `tools/list` entries (both revisions).
const MCP_ENTRY: &[Member] = &[
    req("name", Kind::Name),
    req("title", Kind::Text),
    req("description", Kind::Text),
    req("inputSchema", Kind::InputSchema),
    opt("outputSchema", Kind::OutputSchema),
    req("annotations", Kind::Annotations),
];

/// MCP annotation members: `title` is a string, the rest booleans.
const MCP_ANNOTATIONS: &[&str] = &[
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// OpenAI Responses API function tools.
const OPENAI_ENTRY: &[Member] = &[
    req("type", Kind::Literal("function")),
    req("name", Kind::Name),
    req("description", Kind::Text),
    req("parameters", Kind::InputSchema),
    req("strict", Kind::True),
];

/// Anthropic tools.
const ANTHROPIC_ENTRY: &[Member] = &[
    req("name", Kind::Name),
    req("description", Kind::Text),
    req("input_schema", Kind::InputSchema),
    req("strict", Kind::Bool),
];

/// Gemini function declarations with `parameters`.
const GEMINI_ENTRY: &[Member] = &[
    req("name", Kind::Name),
    req("description", Kind::Text),
    req("parameters", Kind::InputSchema),
    opt("response", Kind::OutputSchema),
];

/// Gemini function declarations with `parametersJsonSchema`.
const GEMINI_JSON_SCHEMA_ENTRY: &[Member] = &[
    req("name", Kind::Name),
    req("description", Kind::Text),
    req("parametersJsonSchema", Kind::InputSchema),
    opt("responseJsonSchema", Kind::OutputSchema),
];

/// A name rule: a first character class, a class for the rest, and a maximum length.
#[derive(Clone, Copy)]
struct NameRule {
    /// The rule as a regular expression, for messages.
    pattern: &'static str,
    first: fn(char) -> bool,
    rest: fn(char) -> bool,
    max: usize,
}

impl NameRule {
    fn matches(&self, name: &str) -> bool {
        let mut chars = name.chars();
        match chars.next() {
            Some(c) if (self.first)(c) => {}
            _ => return false,
        }
        let mut count = 1;
        for c in chars {
            count += 1;
            if count > self.max || !(self.rest)(c) {
                return false;
            }
        }
        true
    }
}

fn alnum_underscore_dash(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}
fn alnum_underscore_dot_dash(c: char) -> bool {
    alnum_underscore_dash(c) || c == '.'
}
fn letter_or_underscore(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn gemini_name_rest(c: char) -> bool {
    alnum_underscore_dot_dash(c) || c == ':'
}
fn alnum_underscore(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// OpenAI and Anthropic tool names.
const OPENAI_NAMES: NameRule = NameRule {
    pattern: "^[a-zA-Z0-9_-]{1,64}$",
    first: alnum_underscore_dash,
    rest: alnum_underscore_dash,
    max: 64,
};
/// Gemini function names (the safe rule: 64, although the SDK docstring says 128).
const GEMINI_NAMES: NameRule = NameRule {
    pattern: "^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$",
    first: letter_or_underscore,
    rest: gemini_name_rest,
    max: 64,
};
/// MCP tool names (SEP-986).
const MCP_NAMES: NameRule = NameRule {
    pattern: "^[A-Za-z0-9_.-]{1,128}$",
    first: alnum_underscore_dot_dash,
    rest: alnum_underscore_dot_dash,
    max: 128,
};
/// Gemini `parameters` property names.
const GEMINI_PROPERTY_NAMES: NameRule = NameRule {
    pattern: "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
    first: letter_or_underscore,
    rest: alnum_underscore,
    max: 64,
};

const MCP_PROFILE: ProfileRules = ProfileRules {
    list: ListShape::Entries,
    entry: MCP_ENTRY,
    names: MCP_NAMES,
    schema: None,
    strict_limits: None,
    any_output_schema: false,
};
const MCP_2026_PROFILE: ProfileRules = ProfileRules {
    list: ListShape::Entries,
    entry: MCP_ENTRY,
    names: MCP_NAMES,
    schema: None,
    strict_limits: None,
    any_output_schema: true,
};
const OPENAI_PROFILE: ProfileRules = ProfileRules {
    list: ListShape::Entries,
    entry: OPENAI_ENTRY,
    names: OPENAI_NAMES,
    schema: Some(&OPENAI_RULES),
    strict_limits: None,
    any_output_schema: false,
};
const ANTHROPIC_PROFILE: ProfileRules = ProfileRules {
    list: ListShape::Entries,
    entry: ANTHROPIC_ENTRY,
    names: OPENAI_NAMES,
    schema: Some(&ANTHROPIC_RULES),
    strict_limits: Some(ANTHROPIC_STRICT_LIMITS),
    any_output_schema: false,
};
const GEMINI_PROFILE: ProfileRules = ProfileRules {
    list: ListShape::FunctionDeclarations,
    entry: GEMINI_ENTRY,
    names: GEMINI_NAMES,
    schema: Some(&GEMINI_RULES),
    strict_limits: None,
    any_output_schema: false,
};
const GEMINI_JSON_SCHEMA_PROFILE: ProfileRules = ProfileRules {
    list: ListShape::FunctionDeclarations,
    entry: GEMINI_JSON_SCHEMA_ENTRY,
    names: GEMINI_NAMES,
    schema: Some(&GEMINI_JSON_SCHEMA_RULES),
    strict_limits: None,
    any_output_schema: false,
};

/// The rule codes of one schema profile.
struct Codes {
    root: &'static str,
    keyword: &'static str,
    type_: &'static str,
    type_array: &'static str,
    format: &'static str,
    pattern: &'static str,
    enum_: &'static str,
    additional_properties: &'static str,
    properties: &'static str,
    required: &'static str,
    property_name: &'static str,
    min_items: &'static str,
    bound: &'static str,
    ref_: &'static str,
    defs: &'static str,
    recursion: &'static str,
    untyped: &'static str,
}

macro_rules! codes {
    ($prefix:literal) => {
        Codes {
            root: concat!($prefix, ".root"),
            keyword: concat!($prefix, ".keyword"),
            type_: concat!($prefix, ".type"),
            type_array: concat!($prefix, ".type_array"),
            format: concat!($prefix, ".format"),
            pattern: concat!($prefix, ".pattern"),
            enum_: concat!($prefix, ".enum"),
            additional_properties: concat!($prefix, ".additional_properties"),
            properties: concat!($prefix, ".properties"),
            required: concat!($prefix, ".required"),
            property_name: concat!($prefix, ".property_name"),
            min_items: concat!($prefix, ".min_items"),
            bound: concat!($prefix, ".bound"),
            ref_: concat!($prefix, ".ref"),
            defs: concat!($prefix, ".defs"),
            recursion: concat!($prefix, ".recursion"),
            untyped: concat!($prefix, ".untyped"),
        }
    };
}

/// How `type` may be spelled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Types {
    /// Lower-case JSON Schema names; arrays of them allowed.
    LowerOrArray,
    /// Lower-case names; an array only as `[T, "null"]`.
    LowerOrNullPair,
    /// One lower-case name; an array is `type_array`.
    LowerSingle,
    /// One upper-case OpenAPI name.
    UpperSingle,
}

/// What `additionalProperties` may be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Closed {
    /// Present and `false` on every object.
    FalseOnEveryObject,
    /// Absent or `false`.
    NeverTruthy,
    /// Anything.
    Any,
}

/// What `enum` values may be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum EnumValues {
    Any,
    Primitives,
    Strings,
}

/// Regular-expression features a `pattern` may not use.
#[derive(Clone, Copy)]
struct PatternBans {
    look_around: bool,
    backreference: bool,
    word_boundary: bool,
}

/// The schema rules of one profile: the readable table.
struct SchemaRules {
    /// The profile's name, for messages.
    profile: &'static str,
    codes: Codes,
    /// Every keyword a schema object may carry.
    keywords: &'static [&'static str],
    types: Types,
    /// `format` values by the (lower-case) type they apply to; `"*"` for any type.
    formats: &'static [(&'static str, &'static [&'static str])],
    pattern: PatternBans,
    enum_values: EnumValues,
    additional_properties: Closed,
    /// `properties` present on every object.
    properties_on_every_object: bool,
    /// Every property listed in `required`.
    all_required: bool,
    /// The root: no `anyOf`/`oneOf`/`allOf` beside `type: "object"`, and not nullable.
    plain_root: bool,
    property_names: Option<NameRule>,
    /// The largest `minItems`.
    max_min_items: Option<u64>,
    /// The largest magnitude of an integer `minimum`/`maximum`.
    max_integer_bound: Option<u64>,
    /// The reference keyword and whether it is checked (local, resolving).
    reference: &'static str,
    check_references: bool,
    ref_without_siblings: bool,
    no_ref_under_all_of: bool,
    no_recursion: bool,
    /// Every schema says what it accepts: `type`, `anyOf`, `allOf`, `enum`, `const` or `$ref`.
    typed_schemas: bool,
    /// The definitions keyword allowed only at the root, if any.
    defs_root_only: Option<&'static str>,
    limits: Option<OpenAiLimits>,
}

/// OpenAI strict mode, "Supported schemas" (agent-schemas.md §1.1–§1.3). `minLength` and
/// `maxLength` are not in the list (their support is unclear), nor is `default`.
pub const OPENAI: SchemaRulesTable = SchemaRulesTable(&OPENAI_RULES);
const OPENAI_RULES: SchemaRules = SchemaRules {
    profile: "openai",
    codes: codes!("openai"),
    keywords: &[
        "type",
        "description",
        "title",
        "enum",
        "const",
        "anyOf",
        "pattern",
        "format",
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "additionalProperties",
        "$defs",
        "$ref",
    ],
    types: Types::LowerOrArray,
    formats: &[(
        "*",
        &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "uuid",
        ],
    )],
    pattern: PatternBans {
        look_around: true,
        backreference: false,
        word_boundary: false,
    },
    enum_values: EnumValues::Any,
    additional_properties: Closed::FalseOnEveryObject,
    properties_on_every_object: true,
    all_required: true,
    plain_root: true,
    property_names: None,
    max_min_items: None,
    max_integer_bound: None,
    reference: "$ref",
    check_references: true,
    ref_without_siblings: true,
    no_ref_under_all_of: false,
    no_recursion: false,
    typed_schemas: true,
    defs_root_only: None,
    limits: Some(OpenAiLimits {
        properties: 5000,
        depth: 10,
        string_chars: 120_000,
        enum_values: 1000,
        large_enum: 250,
        large_enum_chars: 15_000,
    }),
};

/// Anthropic strict tool use (agent-schemas.md §2.2): no numeric or length bounds, `minItems`
/// 0 or 1, the 10 formats, no recursion, no type arrays (the SDK asserts on them).
pub const ANTHROPIC: SchemaRulesTable = SchemaRulesTable(&ANTHROPIC_RULES);
const ANTHROPIC_RULES: SchemaRules = SchemaRules {
    profile: "anthropic",
    codes: codes!("anthropic"),
    keywords: &[
        "type",
        "description",
        "title",
        "default",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "pattern",
        "format",
        "items",
        "minItems",
        "properties",
        "required",
        "additionalProperties",
        "$defs",
        "definitions",
        "$ref",
    ],
    types: Types::LowerSingle,
    formats: &[(
        "*",
        &[
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "uri",
            "ipv4",
            "ipv6",
            "uuid",
        ],
    )],
    pattern: PatternBans {
        look_around: true,
        backreference: true,
        word_boundary: true,
    },
    enum_values: EnumValues::Primitives,
    additional_properties: Closed::FalseOnEveryObject,
    properties_on_every_object: true,
    all_required: false,
    plain_root: false,
    property_names: None,
    max_min_items: Some(1),
    max_integer_bound: None,
    reference: "$ref",
    check_references: true,
    ref_without_siblings: false,
    no_ref_under_all_of: true,
    no_recursion: true,
    typed_schemas: true,
    defs_root_only: None,
    limits: None,
};

/// Gemini `parameters`, google-genai's `types.Schema` (agent-schemas.md §3.1): OpenAPI 3.0
/// names, one upper-case type, string enums, STRING formats `enum` and `date-time` only (the
/// Developer API), no truthy `additionalProperties`, bounds exact as floats.
pub const GEMINI: SchemaRulesTable = SchemaRulesTable(&GEMINI_RULES);
const GEMINI_RULES: SchemaRules = SchemaRules {
    profile: "gemini",
    codes: codes!("gemini"),
    keywords: &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "default",
        "example",
        "enum",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "propertyOrdering",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "anyOf",
        "additionalProperties",
        "ref",
        "defs",
    ],
    types: Types::UpperSingle,
    formats: &[
        ("string", &["enum", "date-time"]),
        ("integer", &["int32", "int64", "enum"]),
        ("number", &["float", "double", "enum"]),
    ],
    pattern: PatternBans {
        look_around: false,
        backreference: false,
        word_boundary: false,
    },
    enum_values: EnumValues::Strings,
    additional_properties: Closed::NeverTruthy,
    properties_on_every_object: false,
    all_required: false,
    plain_root: false,
    property_names: Some(GEMINI_PROPERTY_NAMES),
    max_min_items: None,
    max_integer_bound: Some(MAX_SAFE_INTEGER),
    reference: "ref",
    check_references: false,
    ref_without_siblings: false,
    no_ref_under_all_of: false,
    no_recursion: false,
    typed_schemas: false,
    defs_root_only: Some("defs"),
    limits: None,
};

/// Gemini `parametersJsonSchema` (agent-schemas.md §3.2): the documented subset (no `oneOf`,
/// `const`, `allOf`, length bounds, `pattern` or exclusive bounds), null only as `[T, "null"]`.
pub const GEMINI_JSON_SCHEMA: SchemaRulesTable = SchemaRulesTable(&GEMINI_JSON_SCHEMA_RULES);
const GEMINI_JSON_SCHEMA_RULES: SchemaRules = SchemaRules {
    profile: "gemini-json-schema",
    codes: codes!("gemini_json"),
    keywords: &[
        "type",
        "title",
        "description",
        "enum",
        "format",
        "minimum",
        "maximum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "propertyOrdering",
        "additionalProperties",
        "anyOf",
        "$ref",
        "$defs",
    ],
    types: Types::LowerOrNullPair,
    formats: &[
        ("string", &["date-time", "date", "time"]),
        ("integer", &["int32", "int64"]),
        ("number", &["float", "double"]),
    ],
    pattern: PatternBans {
        look_around: false,
        backreference: false,
        word_boundary: false,
    },
    enum_values: EnumValues::Primitives,
    additional_properties: Closed::Any,
    properties_on_every_object: false,
    all_required: false,
    plain_root: false,
    property_names: None,
    max_min_items: None,
    max_integer_bound: Some(MAX_SAFE_INTEGER),
    reference: "$ref",
    check_references: true,
    ref_without_siblings: false,
    no_ref_under_all_of: false,
    no_recursion: false,
    typed_schemas: false,
    defs_root_only: None,
    limits: None,
};

/// 2^53 − 1: the largest integer every float consumer reads exactly.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A profile's schema rules, opaque: the tables are documentation, [`check`] applies them.
#[derive(Clone, Copy)]
pub struct SchemaRulesTable(&'static SchemaRules);

impl fmt::Debug for SchemaRulesTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaRulesTable")
            .field("profile", &self.0.profile)
            .field("keywords", &self.0.keywords)
            .finish_non_exhaustive()
    }
}

impl SchemaRulesTable {
    /// The keywords a schema object may carry under this profile.
    ///
    /// ```
    /// use rcip_export::check::OPENAI;
    /// assert!(OPENAI.keywords().contains(&"anyOf"));
    /// assert!(!OPENAI.keywords().contains(&"oneOf"));
    /// ```
    #[must_use]
    pub fn keywords(self) -> &'static [&'static str] {
        self.0.keywords
    }
}

/// OpenAI's per-schema limits (§1.3).
#[derive(Clone, Copy)]
struct OpenAiLimits {
    /// Object properties, whole schema.
    properties: usize,
    /// Nesting levels of objects and arrays, the root object being level 1.
    depth: usize,
    /// Characters of property names, definition names, enum and const values.
    string_chars: usize,
    /// Enum values, whole schema.
    enum_values: usize,
    /// A string enum with more values than this...
    large_enum: usize,
    /// ...has at most this many characters in total.
    large_enum_chars: usize,
}

/// Anthropic's limits over the `strict: true` tools of one request (§2.2).
#[derive(Clone, Copy)]
struct StrictLimits {
    strict_tools: usize,
    optional_params: usize,
    union_params: usize,
}

const ANTHROPIC_STRICT_LIMITS: StrictLimits = StrictLimits {
    strict_tools: 20,
    optional_params: 24,
    union_params: 16,
};

#[derive(Default)]
struct StrictTotals {
    strict_tools: usize,
    /// Properties absent from their object's `required`.
    optional_params: usize,
    /// Subschemas with `anyOf` or a type array.
    union_params: usize,
}

impl StrictLimits {
    fn check(self, totals: &StrictTotals, out: &mut Vec<Violation>) {
        let rows = [
            (
                "anthropic.limit.strict_tools",
                totals.strict_tools,
                self.strict_tools,
                "tools with strict: true",
            ),
            (
                "anthropic.limit.optional_params",
                totals.optional_params,
                self.optional_params,
                "optional parameters across the strict tools",
            ),
            (
                "anthropic.limit.union_params",
                totals.union_params,
                self.union_params,
                "union-typed (anyOf or type array) parameters across the strict tools",
            ),
        ];
        for (rule, count, limit, what) in rows {
            if count > limit {
                out.push(Violation {
                    tool: String::new(),
                    pointer: String::new(),
                    rule,
                    message: format!("{count} {what}, more than {limit}"),
                });
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The list and its entries.
// ---------------------------------------------------------------------------------------

struct Cx<'a> {
    tool: &'a str,
    out: &'a mut Vec<Violation>,
}

impl Cx<'_> {
    fn push(&mut self, pointer: &str, rule: &'static str, message: String) {
        self.out.push(Violation {
            tool: self.tool.to_owned(),
            pointer: pointer.to_owned(),
            rule,
            message,
        });
    }
}

fn list_violation(out: &mut Vec<Violation>, pointer: String, message: String) {
    out.push(Violation {
        tool: String::new(),
        pointer,
        rule: "list.shape",
        message,
    });
}

/// The entries of the list with their labels (their pointer in the list).
fn entries<'a>(
    rules: &ProfileRules,
    tools: &'a Value,
    out: &mut Vec<Violation>,
) -> Vec<(String, &'a Value)> {
    let Some(items) = tools.as_array() else {
        list_violation(out, String::new(), "the tool list is not an array".into());
        return Vec::new();
    };
    match rules.list {
        ListShape::Entries => items
            .iter()
            .enumerate()
            .map(|(i, entry)| (format!("/{i}"), entry))
            .collect(),
        ListShape::FunctionDeclarations => {
            let mut found = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let Some(object) = item.as_object() else {
                    list_violation(out, format!("/{i}"), "a tool is not an object".into());
                    continue;
                };
                for key in object.keys().filter(|k| *k != "functionDeclarations") {
                    list_violation(
                        out,
                        format!("/{i}"),
                        format!("unexpected member {key:?} beside functionDeclarations"),
                    );
                }
                match object.get("functionDeclarations") {
                    Some(Value::Array(declarations)) => found.extend(
                        declarations
                            .iter()
                            .enumerate()
                            .map(|(j, d)| (format!("/{i}/functionDeclarations/{j}"), d)),
                    ),
                    _ => list_violation(
                        out,
                        format!("/{i}"),
                        "functionDeclarations is missing or not an array".into(),
                    ),
                }
            }
            found
        }
    }
}

fn check_entry(
    rules: &ProfileRules,
    entry: &Value,
    cx: &mut Cx<'_>,
    strict_totals: &mut StrictTotals,
) {
    let Some(members) = entry.as_object() else {
        cx.push("", "entry.shape", "the entry is not an object".into());
        return;
    };
    for key in members.keys() {
        if !rules.entry.iter().any(|m| m.key == key) {
            cx.push(
                &token_pointer("", key),
                "entry.member",
                format!("unexpected member {key:?}"),
            );
        }
    }
    // Anthropic: the strict subset binds only tools sent with strict: true.
    let strict = rules.strict_limits.is_none() || members.get("strict") == Some(&Value::Bool(true));
    if rules.strict_limits.is_some() && strict {
        strict_totals.strict_tools += 1;
    }
    for member in rules.entry {
        let pointer = token_pointer("", member.key);
        let Some(value) = members.get(member.key) else {
            if member.required {
                cx.push(
                    "",
                    "entry.missing",
                    format!("the member {:?} is missing", member.key),
                );
            }
            continue;
        };
        let wrong = |what: &str| format!("{:?} must be {what}", member.key);
        match member.kind {
            Kind::Name => match value.as_str() {
                Some(name) if rules.names.matches(name) => {}
                Some(name) => cx.push(
                    &pointer,
                    "name.pattern",
                    format!("{name:?} does not match {}", rules.names.pattern),
                ),
                None => cx.push(&pointer, "entry.value", wrong("a string")),
            },
            Kind::Text if !value.is_string() => cx.push(&pointer, "entry.value", wrong("a string")),
            Kind::Literal(text) if value.as_str() != Some(text) => {
                cx.push(&pointer, "entry.value", wrong(&format!("{text:?}")));
            }
            Kind::True if value != &Value::Bool(true) => {
                cx.push(&pointer, "entry.value", wrong("true"));
            }
            Kind::Bool if !value.is_boolean() => {
                cx.push(&pointer, "entry.value", wrong("a boolean"));
            }
            Kind::Annotations => check_annotations(value, &pointer, cx),
            Kind::InputSchema | Kind::OutputSchema => {
                let input = matches!(member.kind, Kind::InputSchema);
                if exceeds_depth(value, MAX_VALUE_DEPTH) {
                    cx.push(
                        &pointer,
                        "schema.depth",
                        format!("the schema nests more than {MAX_VALUE_DEPTH} containers"),
                    );
                    continue;
                }
                match rules.schema {
                    None if !input && rules.any_output_schema => {
                        if !(value.is_object() || value.is_boolean()) {
                            cx.push(
                                &pointer,
                                "mcp.schema",
                                "the output schema must be a JSON Schema (an object or a boolean)"
                                    .into(),
                            );
                        }
                    }
                    None => check_mcp_root(value, &pointer, cx),
                    Some(schema_rules) if strict => {
                        let counts = check_schema(schema_rules, value, &pointer, input, cx);
                        if rules.strict_limits.is_some() && input {
                            strict_totals.optional_params += counts.optional;
                            strict_totals.union_params += counts.unions;
                        }
                    }
                    Some(schema_rules) => {
                        check_object_root(schema_rules, value, &pointer, cx);
                    }
                }
            }
            Kind::Text | Kind::Literal(_) | Kind::True | Kind::Bool => {}
        }
    }
}

fn check_annotations(value: &Value, pointer: &str, cx: &mut Cx<'_>) {
    let Some(members) = value.as_object() else {
        cx.push(
            pointer,
            "mcp.annotations",
            "annotations must be an object".into(),
        );
        return;
    };
    for (key, member) in members {
        let at = token_pointer(pointer, key);
        match key.as_str() {
            "title" if member.is_string() => {}
            "title" => cx.push(&at, "mcp.annotations", "title must be a string".into()),
            _ if MCP_ANNOTATIONS.contains(&key.as_str()) && member.is_boolean() => {}
            _ if MCP_ANNOTATIONS.contains(&key.as_str()) => {
                cx.push(&at, "mcp.annotations", format!("{key} must be a boolean"));
            }
            _ => cx.push(
                &at,
                "mcp.annotations",
                format!("unexpected annotation {key:?}"),
            ),
        }
    }
}

fn check_mcp_root(schema: &Value, pointer: &str, cx: &mut Cx<'_>) {
    match schema.as_object() {
        Some(map) if map.get("type") == Some(&Value::String("object".into())) => {}
        Some(_) => cx.push(
            pointer,
            "mcp.root",
            "the schema's root must have type \"object\"".into(),
        ),
        None => cx.push(
            pointer,
            "mcp.root",
            "the schema must be a JSON object".into(),
        ),
    }
}

/// The root check alone: for Anthropic tools sent with `strict: false`.
fn check_object_root(rules: &SchemaRules, schema: &Value, pointer: &str, cx: &mut Cx<'_>) {
    let object = root_object_type(rules);
    if schema.get("type").and_then(Value::as_str) != Some(object) {
        cx.push(
            pointer,
            rules.codes.root,
            format!("the root must have type {object:?}"),
        );
    }
}

fn root_object_type(rules: &SchemaRules) -> &'static str {
    if rules.types == Types::UpperSingle {
        "OBJECT"
    } else {
        "object"
    }
}

// ---------------------------------------------------------------------------------------
// The schema walk.
// ---------------------------------------------------------------------------------------

/// Keywords whose value is one subschema.
pub(crate) const ONE_SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords whose value is an array of subschemas.
pub(crate) const SUBSCHEMA_ARRAYS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];
/// Keywords whose value maps names to subschemas.
pub(crate) const SUBSCHEMA_MAPS: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "defs",
    "patternProperties",
    "dependentSchemas",
];

/// Totals of one schema that list-wide limits need.
#[derive(Default)]
struct SchemaCounts {
    optional: usize,
    unions: usize,
}

struct Node<'a> {
    schema: &'a Value,
    /// Pointer from the entry.
    pointer: String,
    /// Pointer from the schema root, for references.
    local: String,
    /// Object/array nesting level (the root object is 1).
    level: usize,
    /// The enclosing definition's local pointer ("" for the root's own region).
    region: String,
}

struct Reference {
    pointer: String,
    from: String,
    to: String,
}

#[derive(Default)]
struct OpenAiTotals {
    properties: usize,
    string_chars: usize,
    enum_values: usize,
    deepest: usize,
    deepest_at: String,
}

/// Walks one schema iteratively, reporting every rule it breaks.
fn check_schema(
    rules: &SchemaRules,
    schema: &Value,
    base: &str,
    input: bool,
    cx: &mut Cx<'_>,
) -> SchemaCounts {
    let codes = &rules.codes;
    let mut counts = SchemaCounts::default();
    let mut totals = OpenAiTotals::default();
    let mut references: Vec<Reference> = Vec::new();
    let mut regions: BTreeSet<String> = BTreeSet::new();
    if input {
        check_root(rules, schema, base, cx);
    }
    let mut pending = vec![Node {
        schema,
        pointer: base.to_owned(),
        local: String::new(),
        level: usize::from(is_container(schema)),
        region: String::new(),
    }];
    while let Some(node) = pending.pop() {
        let Some(map) = node.schema.as_object() else {
            cx.push(
                &node.pointer,
                "schema.malformed",
                "a schema must be a JSON object".into(),
            );
            continue;
        };
        if node.level > totals.deepest {
            totals.deepest = node.level;
            totals.deepest_at.clone_from(&node.pointer);
        }
        let at_root = node.local.is_empty();
        check_keywords(rules, map, &node, at_root, cx);
        let types = check_type(rules, map, &node.pointer, cx);
        if !at_root && (map.contains_key("anyOf") || map.get("type").is_some_and(Value::is_array)) {
            counts.unions += 1;
        }
        if rules.typed_schemas
            // (`oneOf` is reported as a keyword where it is not allowed.)
            && !["type", "anyOf", "allOf", "oneOf", "enum", "const", "$ref"]
                .iter()
                .any(|k| map.contains_key(*k))
        {
            cx.push(
                &node.pointer,
                codes.untyped,
                "the schema has no type, anyOf, allOf, enum, const or $ref".into(),
            );
        }
        check_format(rules, map, &types, &node.pointer, cx);
        check_pattern(rules, map, &node.pointer, cx);
        check_enum_and_const(rules, map, &node.pointer, &mut totals, cx);
        check_numbers(rules, map, &node.pointer, cx);
        if types.iter().any(|t| t == "object")
            || (types.is_empty() && map.contains_key("properties"))
        {
            check_object(rules, map, &node.pointer, &mut counts, cx);
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            totals.properties += properties.len();
            totals.string_chars += properties.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        for defs in ["$defs", "definitions", "defs"] {
            if let Some(Value::Object(entries)) = map.get(defs) {
                totals.string_chars += entries.keys().map(|k| k.chars().count()).sum::<usize>();
            }
        }
        if let Some(reference) = map.get(rules.reference) {
            check_reference(rules, schema, map, reference, &node, &mut references, cx);
        }
        if rules.no_ref_under_all_of
            && let Some(Value::Array(branches)) = map.get("allOf")
        {
            for (i, branch) in branches.iter().enumerate() {
                if branch.get("$ref").is_some() {
                    let at = format!("{}/allOf/{i}/$ref", node.pointer);
                    cx.push(
                        &at,
                        codes.ref_,
                        "allOf may not be combined with $ref".into(),
                    );
                }
            }
        }
        push_children(map, &node, &mut pending, &mut regions, cx);
    }
    if let Some(limits) = rules.limits {
        check_openai_limits(limits, &totals, base, cx);
    }
    if rules.no_recursion {
        check_recursion(&references, &regions, codes.recursion, cx);
    }
    counts
}

fn check_root(rules: &SchemaRules, schema: &Value, base: &str, cx: &mut Cx<'_>) {
    let object = root_object_type(rules);
    let Some(map) = schema.as_object() else {
        cx.push(
            base,
            rules.codes.root,
            "the root must be a JSON object".into(),
        );
        return;
    };
    if map.get("type").and_then(Value::as_str) != Some(object) {
        let nullable = map.get("type").is_some_and(Value::is_array);
        cx.push(
            base,
            rules.codes.root,
            if nullable {
                format!("the root must have the single type {object:?}, not a type array")
            } else {
                format!("the root must have type {object:?}")
            },
        );
    }
    if rules.plain_root {
        for keyword in ["anyOf", "oneOf", "allOf"] {
            if map.contains_key(keyword) {
                cx.push(
                    &token_pointer(base, keyword),
                    rules.codes.root,
                    format!("the root may not be a union ({keyword})"),
                );
            }
        }
    }
}

fn check_keywords(
    rules: &SchemaRules,
    map: &Map<String, Value>,
    node: &Node<'_>,
    at_root: bool,
    cx: &mut Cx<'_>,
) {
    for key in map.keys() {
        let at = token_pointer(&node.pointer, key);
        if !rules.keywords.contains(&key.as_str()) {
            cx.push(
                &at,
                rules.codes.keyword,
                format!("keyword {key:?} is not in the {} subset", rules.profile),
            );
        } else if rules.defs_root_only == Some(key.as_str()) && !at_root {
            cx.push(
                &at,
                rules.codes.defs,
                format!("{key:?} is allowed only at the root"),
            );
        }
    }
}

const LOWER_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];
const UPPER_TYPES: &[&str] = &[
    "STRING", "NUMBER", "INTEGER", "BOOLEAN", "OBJECT", "ARRAY", "NULL",
];

/// Checks `type` and returns its values in lower case (empty when absent or unreadable).
fn check_type(
    rules: &SchemaRules,
    map: &Map<String, Value>,
    pointer: &str,
    cx: &mut Cx<'_>,
) -> Vec<String> {
    let Some(value) = map.get("type") else {
        return Vec::new();
    };
    let at = token_pointer(pointer, "type");
    let code = rules.codes.type_;
    let named: &[&str] = if rules.types == Types::UpperSingle {
        UPPER_TYPES
    } else {
        LOWER_TYPES
    };
    let mut found = Vec::new();
    match value {
        Value::String(name) => {
            if named.contains(&name.as_str()) {
                found.push(name.to_ascii_lowercase());
            } else {
                cx.push(
                    &at,
                    code,
                    format!("{name:?} is not one of {}", named.join(", ")),
                );
            }
        }
        Value::Array(names) => {
            let strings: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
            if strings.len() != names.len() {
                cx.push(&at, code, "a type array must hold strings".into());
                return found;
            }
            match rules.types {
                Types::LowerOrArray => {}
                Types::LowerOrNullPair => {
                    let pair =
                        strings.len() == 2 && strings.iter().filter(|t| **t == "null").count() == 1;
                    if !pair {
                        cx.push(&at, code, "a type array may only be [T, \"null\"]".into());
                    }
                }
                Types::LowerSingle => {
                    cx.push(
                        &at,
                        rules.codes.type_array,
                        "type arrays are not supported; use anyOf".into(),
                    );
                }
                Types::UpperSingle => {
                    cx.push(&at, code, "type must be a single type name".into());
                }
            }
            for name in strings {
                if named.contains(&name) {
                    found.push(name.to_ascii_lowercase());
                } else {
                    cx.push(
                        &at,
                        code,
                        format!("{name:?} is not one of {}", named.join(", ")),
                    );
                }
            }
        }
        _ => cx.push(&at, code, "type must be a string".into()),
    }
    found
}

fn check_format(
    rules: &SchemaRules,
    map: &Map<String, Value>,
    types: &[String],
    pointer: &str,
    cx: &mut Cx<'_>,
) {
    let Some(format) = map.get("format") else {
        return;
    };
    let at = token_pointer(pointer, "format");
    let Some(format) = format.as_str() else {
        cx.push(&at, rules.codes.format, "format must be a string".into());
        return;
    };
    let allowed = |ty: &str| {
        rules
            .formats
            .iter()
            .any(|(t, formats)| (*t == "*" || *t == ty) && formats.contains(&format))
    };
    let typed: Vec<&str> = types
        .iter()
        .map(String::as_str)
        .filter(|t| *t != "null")
        .collect();
    let ok = if typed.is_empty() {
        allowed("*") || rules.formats.iter().any(|(_, f)| f.contains(&format))
    } else {
        typed.iter().all(|t| allowed(t))
    };
    if !ok {
        cx.push(
            &at,
            rules.codes.format,
            format!(
                "format {format:?} is not supported by {} for type {}",
                rules.profile,
                if typed.is_empty() {
                    "(none)".to_owned()
                } else {
                    typed.join(", ")
                }
            ),
        );
    }
}

fn check_pattern(rules: &SchemaRules, map: &Map<String, Value>, pointer: &str, cx: &mut Cx<'_>) {
    let Some(pattern) = map.get("pattern") else {
        return;
    };
    let at = token_pointer(pointer, "pattern");
    let Some(pattern) = pattern.as_str() else {
        cx.push(&at, "schema.malformed", "pattern must be a string".into());
        return;
    };
    let features = regex_features(pattern);
    let bans = rules.pattern;
    for (banned, used, what) in [
        (bans.look_around, features.look_around, "look-around"),
        (bans.backreference, features.backreference, "backreferences"),
        (
            bans.word_boundary,
            features.word_boundary,
            "word boundaries (\\b)",
        ),
    ] {
        if banned && used {
            cx.push(
                &at,
                rules.codes.pattern,
                format!(
                    "the pattern uses {what}, which {} does not support",
                    rules.profile
                ),
            );
        }
    }
}

#[derive(Default)]
struct RegexFeatures {
    look_around: bool,
    backreference: bool,
    word_boundary: bool,
}

/// Finds look-around groups, backreferences and `\b`/`\B` in a pattern, outside character
/// classes and escapes.
fn regex_features(pattern: &str) -> RegexFeatures {
    let mut found = RegexFeatures::default();
    let chars: Vec<char> = pattern.chars().collect();
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                match chars.get(i + 1) {
                    Some('1'..='9' | 'k') if !in_class => found.backreference = true,
                    Some('b' | 'B') if !in_class => found.word_boundary = true,
                    _ => {}
                }
                i += 2;
                continue;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => {
                let next: String = chars.iter().skip(i + 1).take(3).collect();
                if next.starts_with("?=")
                    || next.starts_with("?!")
                    || next.starts_with("?<=")
                    || next.starts_with("?<!")
                {
                    found.look_around = true;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

fn check_enum_and_const(
    rules: &SchemaRules,
    map: &Map<String, Value>,
    pointer: &str,
    totals: &mut OpenAiTotals,
    cx: &mut Cx<'_>,
) {
    if let Some(value) = map.get("const") {
        totals.string_chars += value_chars(value);
        if rules.enum_values == EnumValues::Primitives && (value.is_array() || value.is_object()) {
            cx.push(
                &token_pointer(pointer, "const"),
                rules.codes.enum_,
                format!(
                    "{} const values must be strings, numbers, booleans or null",
                    rules.profile
                ),
            );
        }
    }
    let Some(values) = map.get("enum") else {
        return;
    };
    let at = token_pointer(pointer, "enum");
    let Some(values) = values.as_array() else {
        cx.push(&at, "schema.malformed", "enum must be an array".into());
        return;
    };
    if values.is_empty() {
        cx.push(&at, rules.codes.enum_, "enum must not be empty".into());
    }
    totals.enum_values += values.len();
    let chars: usize = values.iter().map(value_chars).sum();
    totals.string_chars += chars;
    for (i, value) in values.iter().enumerate() {
        let ok = match rules.enum_values {
            EnumValues::Any => true,
            EnumValues::Primitives => !value.is_array() && !value.is_object(),
            EnumValues::Strings => value.is_string(),
        };
        if !ok {
            let wanted = if rules.enum_values == EnumValues::Strings {
                "strings"
            } else {
                "strings, numbers, booleans or null"
            };
            cx.push(
                &format!("{at}/{i}"),
                rules.codes.enum_,
                format!("{} enum values must be {wanted}", rules.profile),
            );
        }
    }
    if let Some(limits) = rules.limits
        && values.len() > limits.large_enum
        && values.iter().all(Value::is_string)
        && chars > limits.large_enum_chars
    {
        cx.push(
            &at,
            "openai.limit.enum_string_length",
            format!(
                "a string enum of {} values (more than {}) has {chars} characters, more than {}",
                values.len(),
                limits.large_enum,
                limits.large_enum_chars
            ),
        );
    }
}

/// The characters a value contributes to OpenAI's string budget: a string's own length,
/// another value's JSON text length.
fn value_chars(value: &Value) -> usize {
    match value {
        Value::String(text) => text.chars().count(),
        Value::Array(_) | Value::Object(_) => 0,
        other => other.to_string().chars().count(),
    }
}

fn check_numbers(rules: &SchemaRules, map: &Map<String, Value>, pointer: &str, cx: &mut Cx<'_>) {
    if let (Some(max), Some(Value::Number(n))) = (rules.max_min_items, map.get("minItems"))
        && n.as_u64().is_none_or(|n| n > max)
    {
        cx.push(
            &token_pointer(pointer, "minItems"),
            rules.codes.min_items,
            format!("minItems {n} is more than {max}"),
        );
    }
    if let Some(limit) = rules.max_integer_bound {
        for keyword in ["minimum", "maximum"] {
            let Some(Value::Number(n)) = map.get(keyword) else {
                continue;
            };
            let magnitude = n.as_u64().or_else(|| n.as_i64().map(i64::unsigned_abs));
            if magnitude.is_some_and(|m| m > limit) {
                cx.push(
                    &token_pointer(pointer, keyword),
                    rules.codes.bound,
                    format!("{keyword} {n} is beyond ±{limit} and not exact as a float; clamp it"),
                );
            }
        }
    }
}

fn check_object(
    rules: &SchemaRules,
    map: &Map<String, Value>,
    pointer: &str,
    counts: &mut SchemaCounts,
    cx: &mut Cx<'_>,
) {
    let codes = &rules.codes;
    let additional = map.get("additionalProperties");
    match rules.additional_properties {
        Closed::FalseOnEveryObject if additional != Some(&Value::Bool(false)) => cx.push(
            pointer,
            codes.additional_properties,
            "every object must have additionalProperties: false".into(),
        ),
        Closed::NeverTruthy if additional.is_some_and(|v| v != &Value::Bool(false)) => cx.push(
            &token_pointer(pointer, "additionalProperties"),
            codes.additional_properties,
            "additionalProperties may only be false".into(),
        ),
        _ => {}
    }
    let properties = match map.get("properties") {
        Some(Value::Object(properties)) => Some(properties),
        // Reported as schema.malformed by the walk.
        Some(_) => return,
        None => {
            if rules.properties_on_every_object {
                cx.push(
                    pointer,
                    codes.properties,
                    "every object must have properties (possibly {})".into(),
                );
            }
            None
        }
    };
    let required: BTreeSet<&str> = match map.get("required") {
        None => BTreeSet::new(),
        Some(Value::Array(names)) if names.iter().all(Value::is_string) => {
            names.iter().filter_map(Value::as_str).collect()
        }
        Some(_) => {
            cx.push(
                &token_pointer(pointer, "required"),
                "schema.malformed",
                "required must be an array of strings".into(),
            );
            BTreeSet::new()
        }
    };
    let empty = Map::new();
    let known = properties.unwrap_or(&empty);
    for name in required.iter().filter(|name| !known.contains_key(**name)) {
        cx.push(
            &token_pointer(pointer, "required"),
            codes.required,
            format!("required names {name:?}, which is not in properties"),
        );
    }
    let Some(properties) = properties else {
        return;
    };
    let at_properties = token_pointer(pointer, "properties");
    for name in properties.keys() {
        let at = token_pointer(&at_properties, name);
        if !required.contains(name.as_str()) {
            counts.optional += 1;
            if rules.all_required {
                cx.push(
                    &at,
                    codes.required,
                    format!("property {name:?} is not in required"),
                );
            }
        }
        if let Some(rule) = rules.property_names
            && !rule.matches(name)
        {
            cx.push(
                &at,
                codes.property_name,
                format!("property name {name:?} does not match {}", rule.pattern),
            );
        }
    }
}

fn check_reference(
    rules: &SchemaRules,
    root: &Value,
    map: &Map<String, Value>,
    reference: &Value,
    node: &Node<'_>,
    references: &mut Vec<Reference>,
    cx: &mut Cx<'_>,
) {
    let at = token_pointer(&node.pointer, rules.reference);
    if rules.ref_without_siblings && map.len() > 1 {
        cx.push(
            &at,
            rules.codes.ref_,
            "a $ref may not have sibling keywords".into(),
        );
    }
    if !rules.check_references {
        return;
    }
    let Some(target) = reference.as_str().and_then(|r| r.strip_prefix('#')) else {
        cx.push(
            &at,
            rules.codes.ref_,
            "only local references (\"#...\") are supported".into(),
        );
        return;
    };
    if root.pointer(target).is_none() {
        cx.push(
            &at,
            rules.codes.ref_,
            format!("the reference \"#{target}\" does not resolve"),
        );
        return;
    }
    references.push(Reference {
        pointer: at,
        from: node.region.clone(),
        to: target.to_owned(),
    });
}

fn push_children<'a>(
    map: &'a Map<String, Value>,
    node: &Node<'a>,
    pending: &mut Vec<Node<'a>>,
    regions: &mut BTreeSet<String>,
    cx: &mut Cx<'_>,
) {
    let child = |schema: &'a Value, tokens: &[&str], region: Option<String>| {
        let mut pointer = node.pointer.clone();
        let mut local = node.local.clone();
        for token in tokens {
            push_token(&mut pointer, token);
            push_token(&mut local, token);
        }
        let region = region.unwrap_or_else(|| node.region.clone());
        Node {
            schema,
            level: node.level + usize::from(is_container(schema)),
            pointer,
            local,
            region,
        }
    };
    for (key, value) in map {
        let key = key.as_str();
        match value {
            Value::Object(_) if ONE_SUBSCHEMA.contains(&key) => {
                pending.push(child(value, &[key], None));
            }
            Value::Array(items) if SUBSCHEMA_ARRAYS.contains(&key) => {
                for (i, item) in items.iter().enumerate() {
                    pending.push(child(item, &[key, &i.to_string()], None));
                }
            }
            Value::Object(entries) if SUBSCHEMA_MAPS.contains(&key) => {
                let definitions = matches!(key, "$defs" | "definitions" | "defs");
                for (name, item) in entries {
                    let region = definitions.then(|| {
                        let mut region = node.local.clone();
                        push_token(&mut region, key);
                        push_token(&mut region, name);
                        regions.insert(region.clone());
                        region
                    });
                    pending.push(child(item, &[key, name], region));
                }
            }
            _ if SUBSCHEMA_MAPS.contains(&key)
                || (SUBSCHEMA_ARRAYS.contains(&key) && key != "items") =>
            {
                cx.push(
                    &token_pointer(&node.pointer, key),
                    "schema.malformed",
                    format!("{key} has the wrong shape"),
                );
            }
            _ => {}
        }
    }
}

/// Whether a schema counts as a nesting level: an object or array schema.
fn is_container(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    let names: Vec<&str> = match map.get("type") {
        Some(Value::String(name)) => vec![name.as_str()],
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    names
        .iter()
        .any(|n| n.eq_ignore_ascii_case("object") || n.eq_ignore_ascii_case("array"))
        || (names.is_empty() && (map.contains_key("properties") || map.contains_key("items")))
}

fn check_openai_limits(limits: OpenAiLimits, totals: &OpenAiTotals, base: &str, cx: &mut Cx<'_>) {
    let rows = [
        (
            "openai.limit.properties",
            totals.properties,
            limits.properties,
            "object properties",
            base,
        ),
        (
            "openai.limit.depth",
            totals.deepest,
            limits.depth,
            "levels of object and array nesting",
            totals.deepest_at.as_str(),
        ),
        (
            "openai.limit.string_length",
            totals.string_chars,
            limits.string_chars,
            "characters of property names, definition names, enum and const values",
            base,
        ),
        (
            "openai.limit.enum_values",
            totals.enum_values,
            limits.enum_values,
            "enum values",
            base,
        ),
    ];
    for (rule, count, limit, what, at) in rows {
        if count > limit {
            cx.push(
                at,
                rule,
                format!("the schema has {count} {what}, more than {limit}"),
            );
        }
    }
}

/// Reports each `$ref` whose target region leads back (through references) to the region
/// holding the `$ref`: the reference graph's edges inside one strongly connected component
/// (Kosaraju's algorithm, iterative; linear in the references).
fn check_recursion(
    references: &[Reference],
    regions: &BTreeSet<String>,
    rule: &'static str,
    cx: &mut Cx<'_>,
) {
    // The region a target pointer lies in: the longest definition pointer that is it or a
    // prefix of it at a token boundary; else the root's region "".
    let region_of = |target: &str| -> String {
        let cuts = target
            .match_indices('/')
            .map(|(i, _)| i)
            .chain([target.len()])
            .rev();
        cuts.map(|end| &target[..end])
            .find(|prefix| regions.contains(*prefix))
            .unwrap_or_default()
            .to_owned()
    };
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let node = |region: String, index: &mut BTreeMap<String, usize>| -> usize {
        let next = index.len();
        *index.entry(region).or_insert(next)
    };
    let edges: Vec<(usize, usize)> = references
        .iter()
        .map(|r| {
            let from = node(r.from.clone(), &mut index);
            let to = node(region_of(&r.to), &mut index);
            (from, to)
        })
        .collect();
    let components = strongly_connected(index.len(), &edges);
    for (reference, (from, to)) in references.iter().zip(edges) {
        if components.get(from) == components.get(to) {
            cx.push(
                &reference.pointer,
                rule,
                format!(
                    "the reference \"#{}\" is recursive, which strict tools do not support",
                    reference.to
                ),
            );
        }
    }
}

/// The strongly connected component of each of `nodes` nodes under `edges`.
fn strongly_connected(nodes: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut forward = vec![Vec::new(); nodes];
    let mut backward = vec![Vec::new(); nodes];
    for &(from, to) in edges {
        if let (Some(f), Some(b)) = (forward.get_mut(from), backward.get_mut(to)) {
            f.push(to);
            b.push(from);
        }
    }
    // Pass 1: the order in which depth-first searches finish.
    let mut visited = vec![false; nodes];
    let mut finished = Vec::with_capacity(nodes);
    for start in 0..nodes {
        if visited[start] {
            continue;
        }
        visited[start] = true;
        let mut stack = vec![(start, 0)];
        while let Some((node, child)) = stack.pop() {
            if let Some(&next) = forward[node].get(child) {
                stack.push((node, child + 1));
                if !visited[next] {
                    visited[next] = true;
                    stack.push((next, 0));
                }
            } else {
                finished.push(node);
            }
        }
    }
    // Pass 2: on the reversed graph, in reverse finishing order, each search is a component.
    let mut component = vec![usize::MAX; nodes];
    for (id, &start) in finished.iter().rev().enumerate() {
        if component[start] != usize::MAX {
            continue;
        }
        component[start] = id;
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for &previous in &backward[node] {
                if component[previous] == usize::MAX {
                    component[previous] = id;
                    stack.push(previous);
                }
            }
        }
    }
    component
}

fn token_pointer(base: &str, token: &str) -> String {
    let mut pointer = base.to_owned();
    push_token(&mut pointer, token);
    pointer
}
