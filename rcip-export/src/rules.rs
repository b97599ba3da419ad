//! Each profile's rules, as one table: what happens to every JSON Schema keyword.
//!
//! The transform (`transform.rs`) reads this table for every keyword of every schema node:
//! [`Rule::Keep`] copies it, [`Rule::Move`] writes it into the node's `description`,
//! [`Rule::Drop`] leaves out an annotation that means nothing to the instance,
//! [`Rule::Refuse`] fails the export, and [`Rule::Rewrite`] hands it to the profile's own
//! rewrite, whose note here says what it does. The MCP profiles send the base form as it is
//! and do not use the table. `docs/agent-exports.md` is rendered from it.

use crate::Profile;

/// What a profile does with one keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Copied as it is (subschemas transformed).
    Keep,
    /// Moved into the node's `description` ("Constraints: ..."); the runtime still enforces it.
    Move,
    /// Left out: an annotation without meaning for the instance.
    Drop,
    /// The export fails: the profile cannot express it and moving it would lose meaning.
    Refuse,
    /// Rewritten by the profile's code, as the note says.
    Rewrite(&'static str),
}

use Rule::{Drop, Keep, Move, Refuse, Rewrite};

/// One row: a keyword and its rule for openai, anthropic, gemini, gemini-json-schema.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) keyword: &'static str,
    pub(crate) openai: Rule,
    pub(crate) anthropic: Rule,
    pub(crate) gemini: Rule,
    pub(crate) gemini_json: Rule,
}

const fn row(
    keyword: &'static str,
    openai: Rule,
    anthropic: Rule,
    gemini: Rule,
    gemini_json: Rule,
) -> Row {
    Row {
        keyword,
        openai,
        anthropic,
        gemini,
        gemini_json,
    }
}

/// The rules. A keyword not listed is refused.
#[rustfmt::skip]
pub(crate) const RULES: &[Row] = &[
    //   keyword                 openai                                   anthropic                                   gemini (parameters)                                   gemini-json-schema
    row("type",                  Keep,                                    Rewrite("type arrays -> anyOf; dropped beside a primitive enum/const"), Rewrite("UPPER-CASE single type; [T, null] -> T with nullable: true; several non-null types refused"), Keep),
    row("properties",            Rewrite("every object has properties ({} when none)"), Rewrite("every object has properties ({} when none)"), Rewrite("names outside [A-Za-z_][A-Za-z0-9_]{0,63} renamed (reverse map)"), Keep),
    row("required",              Rewrite("every property required; optionals made nullable, null -> absent on the way back"), Keep, Rewrite("renamed with the properties"), Keep),
    row("additionalProperties",  Rewrite("false kept (added when missing); a map (a schema, no properties) -> a list of {key, value} entries"), Rewrite("false kept (added when missing); a map (a schema, no properties) -> a list of {key, value} entries"), Rewrite("false moved; a map (a schema, no properties) -> a list of {key, value} entries"), Keep),
    row("items",                 Keep,                                    Keep,                                       Keep,                                                 Keep),
    row("prefixItems",           Rewrite("a closed tuple (input) -> an object {item_0, item_1, ...}, back to the array on the way back; others refused"), Rewrite("a closed tuple (input) -> an object {item_0, item_1, ...}, back to the array on the way back; others refused"), Rewrite("a closed tuple (input) -> an object {item_0, item_1, ...}, back to the array on the way back; others refused; in a response: an array of the positions' anyOf, the order in the description"), Rewrite("a closed tuple (input) -> an object {item_0, item_1, ...}, back to the array on the way back; others refused; in a response: an array of the positions' anyOf, the order in the description")),
    row("enum",                  Keep,                                    Keep,                                       Rewrite("values as strings (integers with format: enum), null -> nullable; others refused"), Keep),
    row("const",                 Keep,                                    Keep,                                       Rewrite("-> enum: [v] (strings only; others refused)"), Rewrite("-> enum: [v]")),
    row("oneOf",                 Rewrite("-> anyOf"),                     Rewrite("-> anyOf"),                        Rewrite("-> anyOf"),                                  Rewrite("-> anyOf")),
    row("anyOf",                 Keep,                                    Keep,                                       Keep,                                                 Keep),
    row("allOf",                 Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("not",                   Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("if",                    Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("then",                  Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("else",                  Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("minLength",             Move,                                    Move,                                       Keep,                                                 Move),
    row("maxLength",             Move,                                    Move,                                       Keep,                                                 Move),
    row("pattern",               Rewrite("kept; moved when it uses look-around"), Move,                               Keep,                                                 Move),
    row("format",                Rewrite("kept for date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid; others moved"), Rewrite("kept for date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid; others moved"), Rewrite("kept for date-time; others moved"), Rewrite("kept for date-time, date, time; others moved")),
    row("minimum",               Rewrite("beyond ±(2^53-1) clamped, the true bound moved"), Move,                     Rewrite("kept as a float when exact; else moved"),   Rewrite("beyond ±(2^53-1) clamped, the true bound moved")),
    row("maximum",               Rewrite("beyond ±(2^53-1) clamped, the true bound moved"), Move,                     Rewrite("kept as a float when exact; else moved"),   Rewrite("beyond ±(2^53-1) clamped, the true bound moved")),
    row("exclusiveMinimum",      Rewrite("beyond ±(2^53-1) clamped, the true bound moved"), Move,                     Move,                                                 Move),
    row("exclusiveMaximum",      Rewrite("beyond ±(2^53-1) clamped, the true bound moved"), Move,                     Move,                                                 Move),
    row("multipleOf",            Keep,                                    Move,                                       Move,                                                 Move),
    row("minItems",              Keep,                                    Rewrite("kept when 0 or 1; else moved"),    Keep,                                                 Keep),
    row("maxItems",              Keep,                                    Move,                                       Keep,                                                 Keep),
    row("uniqueItems",           Move,                                    Move,                                       Move,                                                 Move),
    row("minProperties",         Move,                                    Move,                                       Keep,                                                 Move),
    row("maxProperties",         Move,                                    Move,                                       Keep,                                                 Move),
    row("propertyNames",         Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("patternProperties",     Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("unevaluatedProperties", Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("unevaluatedItems",      Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("contains",              Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("minContains",           Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("maxContains",           Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("dependentRequired",     Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("dependentSchemas",      Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("$ref",                  Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("$defs",                 Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("$id",                   Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("$anchor",               Refuse,                                  Refuse,                                     Refuse,                                               Refuse),
    row("$schema",               Drop,                                    Drop,                                       Drop,                                                 Drop),
    row("$comment",              Drop,                                    Drop,                                       Drop,                                                 Drop),
    row("title",                 Keep,                                    Keep,                                       Keep,                                                 Keep),
    row("description",           Keep,                                    Keep,                                       Keep,                                                 Keep),
    row("default",               Move,                                    Move,                                       Keep,                                                 Move),
    row("examples",              Move,                                    Move,                                       Move,                                                 Move),
    row("deprecated",            Move,                                    Move,                                       Move,                                                 Move),
    row("readOnly",              Move,                                    Move,                                       Move,                                                 Move),
    row("writeOnly",             Move,                                    Move,                                       Move,                                                 Move),
    row("contentEncoding",       Move,                                    Move,                                       Move,                                                 Move),
    row("contentMediaType",      Move,                                    Move,                                       Move,                                                 Move),
    row("x-mcp-header",          Drop,                                    Drop,                                       Drop,                                                 Drop),
];

/// The rule of `profile` for `keyword`; `Refuse` for a keyword the table does not list, and
/// `Keep` for every keyword under the MCP profiles.
pub(crate) fn rule(profile: Profile, keyword: &str) -> Rule {
    let Some(row) = RULES.iter().find(|row| row.keyword == keyword) else {
        return match profile {
            Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28 => Keep,
            _ => Refuse,
        };
    };
    match profile {
        Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28 => Keep,
        Profile::OpenAi => row.openai,
        Profile::Anthropic => row.anthropic,
        Profile::Gemini => row.gemini,
        Profile::GeminiJsonSchema => row.gemini_json,
    }
}

fn cell(rule: Rule) -> String {
    match rule {
        Keep => "keep".to_owned(),
        Move => "move to description".to_owned(),
        Drop => "drop (annotation)".to_owned(),
        Refuse => "**refuse**".to_owned(),
        Rewrite(note) => format!("rewrite: {}", note.replace('|', "\\|")),
    }
}

/// The rules as a Markdown table (one row per keyword, one column per non-MCP profile), as
/// `docs/agent-exports.md` shows it. The MCP profiles keep every keyword.
///
/// ```
/// let table = rcip_export::rules_markdown();
/// assert!(table.contains("| `oneOf` | rewrite: -> anyOf |"));
/// ```
#[must_use]
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "| keyword | openai | anthropic | gemini (`parameters`) | gemini-json-schema |\n|---|---|---|---|---|\n",
    );
    for row in RULES {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            row.keyword,
            cell(row.openai),
            cell(row.anthropic),
            cell(row.gemini),
            cell(row.gemini_json)
        ));
    }
    out.push_str("| any other keyword | **refuse** | **refuse** | **refuse** | **refuse** |\n");
    out
}
