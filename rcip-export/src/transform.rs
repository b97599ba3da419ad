//! The schema transforms of the openai, anthropic, gemini and gemini-json-schema profiles,
//! driven by the rules table (`rules.rs`).

use std::collections::BTreeMap;

use rcip_core::pointer::push_token;
use serde_json::{Map, Number, Value, json};

use crate::back::{Back, Branch, Matcher, PropBack};
use crate::check::{ONE_SUBSCHEMA, SUBSCHEMA_ARRAYS, SUBSCHEMA_MAPS};
use crate::names::NameRule;
use crate::rules::{Rule, rule};
use crate::{ExportError, Profile, SchemaIssue};

/// The largest integer every JSON number reader holds exactly, 2^53 − 1.
pub(crate) const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// How deep a schema may nest before the export refuses it.
const MAX_DEPTH: usize = 128;

/// Formats each profile keeps (others move into the description).
fn kept_formats(profile: Profile) -> &'static [&'static str] {
    match profile {
        Profile::OpenAi => &[
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
        Profile::Anthropic => &[
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
        Profile::Gemini => &["date-time"],
        Profile::GeminiJsonSchema => &["date-time", "date", "time"],
        Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28 => &[],
    }
}

/// Keywords that constrain one JSON type only (where a type array is split into `anyOf`
/// branches, each keeps the keywords of its type).
fn keyword_type(keyword: &str) -> Option<&'static str> {
    Some(match keyword {
        "minLength" | "maxLength" | "pattern" | "format" => "string",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => "number",
        "items" | "prefixItems" | "minItems" | "maxItems" | "uniqueItems" => "array",
        "properties" | "required" | "additionalProperties" | "minProperties" | "maxProperties" => {
            "object"
        }
        _ => return None,
    })
}

/// One schema's transform under one profile.
pub(crate) struct Walker<'a> {
    pub(crate) profile: Profile,
    pub(crate) capability: &'a str,
    pub(crate) role: &'static str,
    /// Gemini `parameters` input: rename property names to the parameter-name rule.
    pub(crate) rename: bool,
}

/// `pointer` with one more token (RFC 6901 escaping).
pub(crate) fn push(pointer: &str, token: &str) -> String {
    let mut pointer = pointer.to_owned();
    push_token(&mut pointer, token);
    pointer
}

/// The fixed readable form of moved constraints: "Constraints: minLength 1, maxLength 64."
fn constraints_text(moved: &[(String, Value)]) -> String {
    let parts: Vec<String> = moved.iter().map(|(k, v)| format!("{k} {v}")).collect();
    format!("Constraints: {}.", parts.join(", "))
}

fn has_type(node: &Map<String, Value>, name: &str) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
        _ => false,
    }
}

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

impl Walker<'_> {
    /// A Gemini `response` schema: property names, maps and integer enums stay as the output
    /// has them (renames and entry lists are for arguments only).
    fn describes_output(&self) -> bool {
        self.profile == Profile::Gemini && self.role == "output"
    }

    fn issue(&self, pointer: &str, reason: impl Into<String>) -> SchemaIssue {
        SchemaIssue {
            profile: self.profile.name(),
            capability: self.capability.to_owned(),
            role: self.role,
            pointer: pointer.to_owned(),
            reason: reason.into(),
        }
    }

    fn unsupported(&self, pointer: &str, reason: impl Into<String>) -> ExportError {
        ExportError::UnsupportedSchema(self.issue(pointer, reason))
    }

    /// The profile form of `schema` (at `pointer` of the capability's schema) and its way back.
    pub(crate) fn node(
        &self,
        schema: &Value,
        pointer: &str,
        depth: usize,
    ) -> Result<(Value, Back), ExportError> {
        let p = self.profile;
        if depth > MAX_DEPTH {
            return Err(ExportError::LimitExceeded(self.issue(
                pointer,
                format!("the schema nests deeper than {MAX_DEPTH} levels"),
            )));
        }
        let src = match schema {
            Value::Object(src) => src,
            Value::Bool(_) if p == Profile::GeminiJsonSchema => {
                return Ok((schema.clone(), Back::default()));
            }
            _ => {
                return Err(self.unsupported(
                    pointer,
                    format!("a boolean schema ({schema}) cannot be expressed by {p}"),
                ));
            }
        };
        if let Some(value_schema) = map_values(src)
            && matches!(p, Profile::OpenAi | Profile::Anthropic | Profile::Gemini)
            && !self.describes_output()
        {
            return self.map_as_entries(src, value_schema, pointer, depth);
        }
        // gemini-json-schema too: the Gemini docs list prefixItems, but google-genai's own
        // `JSONSchema` model refuses it.
        if let Some(Value::Array(prefix)) = src.get("prefixItems")
            && p != Profile::Mcp2025_11_25
            && p != Profile::Mcp2026_07_28
            && self.role == "input"
        {
            return self.tuple_as_object(src, prefix, pointer, depth);
        }
        if let Some(Value::Array(prefix)) = src.get("prefixItems")
            && p != Profile::Mcp2025_11_25
            && p != Profile::Mcp2026_07_28
        {
            // An output's tuple (a Gemini `response`) is described as the array it is: its
            // items are one of the positions' schemas, the order told in the description.
            let mut array = src.clone();
            array.remove("prefixItems");
            array.remove("items");
            let mut distinct: Vec<Value> = Vec::new();
            for item in prefix {
                if !distinct.contains(item) {
                    distinct.push(item.clone());
                }
            }
            let items = match distinct.as_slice() {
                [one] => one.clone(),
                _ => json!({ "anyOf": distinct }),
            };
            array.insert("items".to_owned(), items);
            let note = format!(
                "A tuple of {} items, in order: {}.",
                prefix.len(),
                prefix
                    .iter()
                    .map(|item| item
                        .get("type")
                        .map_or_else(|| "any".to_owned(), ToString::to_string))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let description = match src.get("description").and_then(Value::as_str) {
                Some(existing) if !existing.is_empty() => format!("{existing}\n\n{note}"),
                _ => note,
            };
            array.insert("description".to_owned(), Value::String(description));
            return self.node(&Value::Object(array), pointer, depth + 1);
        }
        let mut out = Map::new();
        let mut moved: Vec<(String, Value)> = Vec::new();
        for (keyword, value) in src {
            match rule(p, keyword) {
                Rule::Keep | Rule::Rewrite(_) => {
                    out.insert(keyword.clone(), value.clone());
                }
                Rule::Move => moved.push((keyword.clone(), value.clone())),
                Rule::Drop => {}
                Rule::Refuse => {
                    return Err(self.unsupported(
                        &push(pointer, keyword),
                        format!("keyword {keyword:?} cannot be expressed by {p} and cannot be moved into a description without losing meaning"),
                    ));
                }
            }
        }
        let description = out.remove("description");
        let mut back = Back::default();

        // oneOf -> anyOf (every non-MCP profile).
        let union_keyword = if let Some(one_of) = out.remove("oneOf") {
            if out.contains_key("anyOf") {
                return Err(self.unsupported(
                    pointer,
                    "oneOf beside anyOf cannot be rewritten to a single anyOf",
                ));
            }
            out.insert("anyOf".to_owned(), one_of);
            "oneOf"
        } else {
            "anyOf"
        };
        if let Some(any_of) = out.get_mut("anyOf") {
            let Value::Array(branches) = any_of else {
                return Err(
                    self.unsupported(&push(pointer, union_keyword), "anyOf is not an array")
                );
            };
            let mut backs = Vec::new();
            for (i, branch) in branches.iter_mut().enumerate() {
                let (t, b) = self.node(
                    branch,
                    &push(&push(pointer, union_keyword), &i.to_string()),
                    depth + 1,
                )?;
                backs.push(Branch {
                    matcher: Matcher::of(&t),
                    back: b,
                });
                *branch = t;
            }
            if backs.iter().any(|branch| !branch.back.is_same()) {
                back.union = backs;
            }
        }

        self.object(src, &mut out, &mut moved, &mut back, pointer, depth)?;

        if let Some(items) = out.get_mut("items") {
            let (t, b) = self.node(items, &push(pointer, "items"), depth + 1)?;
            *items = t;
            if !b.is_same() {
                back.items = Some(Box::new(b));
            }
        }
        if let Some(Value::Array(prefix)) = out.get_mut("prefixItems") {
            for (i, item) in prefix.iter_mut().enumerate() {
                *item = self
                    .node(
                        item,
                        &push(&push(pointer, "prefixItems"), &i.to_string()),
                        depth + 1,
                    )?
                    .0;
            }
        }

        self.values(&mut out, &mut moved, &mut back, pointer)?;
        self.types(&mut out, pointer)?;
        self.conditional(&mut out, &mut moved);

        if let Some(description) = description {
            out.insert("description".to_owned(), description);
        }
        if !moved.is_empty() {
            let text = constraints_text(&moved);
            let full = match out.get("description").and_then(Value::as_str) {
                Some(existing) if !existing.is_empty() => format!("{existing}\n\n{text}"),
                _ => text,
            };
            out.insert("description".to_owned(), Value::String(full));
        }
        if p == Profile::Anthropic {
            if out.get("type").is_some_and(Value::is_array) && out.contains_key("anyOf") {
                return Err(self.unsupported(
                    pointer,
                    "a type array beside anyOf cannot be rewritten to a single anyOf for anthropic",
                ));
            }
            out = split_type_array(out);
        }
        Ok((Value::Object(out), back))
    }

    /// A map (`additionalProperties` with a schema, no properties) as a list of entries
    /// `{"key": string, "value": V}`: openai, anthropic and gemini have no open objects.
    /// `minProperties`/`maxProperties` become `minItems`/`maxItems` (keys are distinct).
    fn map_as_entries(
        &self,
        src: &Map<String, Value>,
        value_schema: &Value,
        pointer: &str,
        depth: usize,
    ) -> Result<(Value, Back), ExportError> {
        let (value, value_back) = self.node(
            value_schema,
            &push(pointer, "additionalProperties"),
            depth + 1,
        )?;
        let mut list = Map::new();
        for (keyword, v) in src {
            match keyword.as_str() {
                "additionalProperties" | "properties" => {}
                "type" => {
                    list.insert("type".to_owned(), retyped(Some(v), "object", "array"));
                }
                "minProperties" => {
                    list.insert("minItems".to_owned(), v.clone());
                }
                "maxProperties" => {
                    list.insert("maxItems".to_owned(), v.clone());
                }
                _ => {
                    list.insert(keyword.clone(), v.clone());
                }
            }
        }
        let note = "A map, as a list of {\"key\", \"value\"} entries with distinct keys.";
        let description = match src.get("description").and_then(Value::as_str) {
            Some(existing) if !existing.is_empty() => format!("{existing}\n\n{note}"),
            _ => note.to_owned(),
        };
        list.insert("description".to_owned(), Value::String(description));
        list.insert(
            "items".to_owned(),
            json!({
                "type": "object",
                "properties": {"key": {"type": "string"}, "value": {"type": "null", "description": MAP_VALUE}},
                "required": ["key", "value"],
                "additionalProperties": false
            }),
        );
        let (mut transformed, _) = self.node(&Value::Object(list), pointer, depth)?;
        replace_marker(&mut transformed, MAP_VALUE, &value);
        let back = Back {
            entries: Some(Box::new(value_back)),
            ..Back::default()
        };
        Ok((transformed, back))
    }

    /// A tuple (`prefixItems`, exactly as many items) as an object of its items in order,
    /// `{"item_0": A, "item_1": B}`: openai, anthropic and gemini have no `prefixItems`, and
    /// google-genai's model of the JSON-schema form refuses it. The way
    /// back puts the items back into an array in that order.
    fn tuple_as_object(
        &self,
        src: &Map<String, Value>,
        prefix: &[Value],
        pointer: &str,
        depth: usize,
    ) -> Result<(Value, Back), ExportError> {
        let count = prefix.len();
        let closed = |keyword: &str| match src.get(keyword) {
            None => true,
            Some(Value::Number(n)) => n.as_u64() == Some(count as u64),
            Some(_) => false,
        };
        for (keyword, v) in src {
            let fits = match keyword.as_str() {
                "type" | "prefixItems" | "description" | "title" => true,
                "minItems" | "maxItems" => closed(keyword),
                "items" | "unevaluatedItems" => *v == Value::Bool(false),
                _ => false,
            };
            if !fits {
                return Err(self.unsupported(
                    &push(pointer, keyword),
                    format!("a tuple with {keyword:?} {v} cannot be expressed by {}: only a closed tuple can be sent as an object of its items", self.profile),
                ));
            }
        }
        if src.get("minItems").is_none() {
            // Without minItems the tuple may be shorter: not the object's required items.
            return Err(self.unsupported(
                &push(pointer, "prefixItems"),
                format!(
                    "a tuple that may be shorter than its prefixItems cannot be expressed by {}",
                    self.profile
                ),
            ));
        }
        let names: Vec<String> = (0..count).map(|i| format!("item_{i}")).collect();
        let mut items = Vec::with_capacity(count);
        let mut properties = Map::new();
        for (i, item) in prefix.iter().enumerate() {
            let at = push(&push(pointer, "prefixItems"), &i.to_string());
            items.push(self.node(item, &at, depth + 1)?);
            properties.insert(
                names[i].clone(),
                json!({"type": "null", "description": tuple_marker(i)}),
            );
        }
        let t = retyped(src.get("type"), "array", "object");
        let note = format!(
            "A tuple, as an object of its items in order: {}.",
            names.join(", ")
        );
        let description = match src.get("description").and_then(Value::as_str) {
            Some(existing) if !existing.is_empty() => format!("{existing}\n\n{note}"),
            _ => note,
        };
        let mut object = Map::new();
        object.insert("type".to_owned(), t);
        if let Some(title) = src.get("title") {
            object.insert("title".to_owned(), title.clone());
        }
        object.insert("description".to_owned(), Value::String(description));
        object.insert("properties".to_owned(), Value::Object(properties));
        object.insert("required".to_owned(), json!(names));
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
        let (mut transformed, mut back) = self.node(&Value::Object(object), pointer, depth)?;
        for (i, (item, item_back)) in items.into_iter().enumerate() {
            replace_marker(&mut transformed, &tuple_marker(i), &item);
            if let Some(prop) = back.props.iter_mut().find(|prop| prop.original == names[i]) {
                prop.inner = item_back;
            } else if !item_back.is_same() {
                back.props.push(PropBack {
                    wire: names[i].clone(),
                    original: names[i].clone(),
                    null_is_absent: false,
                    inner: item_back,
                });
            }
        }
        back.tuple = Some(names);
        Ok((transformed, back))
    }

    /// Object keywords: properties (renamed, made required), required, additionalProperties.
    fn object(
        &self,
        src: &Map<String, Value>,
        out: &mut Map<String, Value>,
        moved: &mut Vec<(String, Value)>,
        back: &mut Back,
        pointer: &str,
        depth: usize,
    ) -> Result<(), ExportError> {
        let p = self.profile;
        let is_object = has_type(src, "object") || src.contains_key("properties");
        let required: Vec<&str> = match src.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if let Some(props) = src.get("properties") {
            let Value::Object(props) = props else {
                return Err(
                    self.unsupported(&push(pointer, "properties"), "properties is not an object")
                );
            };
            let mut wire_props = Map::new();
            let mut wire_required = Vec::new();
            let mut seen: BTreeMap<String, String> = BTreeMap::new();
            for (name, prop) in props {
                let at = push(&push(pointer, "properties"), name);
                let (mut t, inner) = self.node(prop, &at, depth + 1)?;
                let wire = if self.rename {
                    NameRule::GEMINI_PROPERTY.apply(name)
                } else {
                    name.clone()
                };
                if let Some(first) = seen.insert(wire.clone(), name.clone()) {
                    return Err(ExportError::NameCollision {
                        profile: p.name(),
                        first,
                        second: name.clone(),
                        name: wire,
                        context: format!(
                            "properties of capability {:?}, input schema at {}",
                            self.capability,
                            if pointer.is_empty() {
                                "the root"
                            } else {
                                pointer
                            }
                        ),
                    });
                }
                let optional = !required.contains(&name.as_str());
                let null_is_absent = p == Profile::OpenAi && optional;
                if null_is_absent {
                    t = make_nullable(t);
                }
                if !optional || p == Profile::OpenAi {
                    wire_required.push(Value::String(wire.clone()));
                }
                if null_is_absent || wire != *name || !inner.is_same() {
                    back.props.push(PropBack {
                        wire: wire.clone(),
                        original: name.clone(),
                        null_is_absent,
                        inner,
                    });
                }
                wire_props.insert(wire, t);
            }
            out.insert("properties".to_owned(), Value::Object(wire_props));
            if p == Profile::OpenAi || src.contains_key("required") {
                out.insert("required".to_owned(), Value::Array(wire_required));
            }
        } else if is_object && matches!(p, Profile::OpenAi | Profile::Anthropic) {
            out.insert("properties".to_owned(), json!({}));
            if p == Profile::OpenAi {
                out.insert("required".to_owned(), json!([]));
            }
        }
        match out.remove("additionalProperties") {
            Some(Value::Bool(false)) => match p {
                Profile::Gemini => {
                    moved.push(("additionalProperties".to_owned(), Value::Bool(false)))
                }
                _ => {
                    out.insert("additionalProperties".to_owned(), Value::Bool(false));
                }
            },
            Some(other) if self.describes_output() => {
                // A response schema only describes what the model reads back: the map's
                // value schema goes into the description.
                moved.push(("additionalProperties".to_owned(), other));
            }
            Some(other) if p == Profile::GeminiJsonSchema => {
                let (t, _) =
                    self.node(&other, &push(pointer, "additionalProperties"), depth + 1)?;
                out.insert("additionalProperties".to_owned(), t);
            }
            Some(_) => {
                return Err(self.unsupported(
                    &push(pointer, "additionalProperties"),
                    format!("an object with additional properties (a map) cannot be expressed by {p}: it needs additionalProperties false"),
                ));
            }
            None => {
                if is_object && matches!(p, Profile::OpenAi | Profile::Anthropic) {
                    out.insert("additionalProperties".to_owned(), Value::Bool(false));
                }
            }
        }
        Ok(())
    }

    /// `const` and `enum` (gemini spellings).
    fn values(
        &self,
        out: &mut Map<String, Value>,
        moved: &mut Vec<(String, Value)>,
        back: &mut Back,
        pointer: &str,
    ) -> Result<(), ExportError> {
        let p = self.profile;
        if matches!(p, Profile::Gemini | Profile::GeminiJsonSchema)
            && let Some(value) = out.remove("const")
        {
            if p == Profile::Gemini && !value.is_string() {
                return Err(self.unsupported(
                    &push(pointer, "const"),
                    format!("gemini parameters carry only string constants, not {value}"),
                ));
            }
            out.insert("enum".to_owned(), Value::Array(vec![value]));
        }
        if p != Profile::Gemini {
            return Ok(());
        }
        let Some(Value::Array(values)) = out.remove("enum") else {
            return Ok(());
        };
        let original = values.clone();
        let mut strings = Vec::new();
        let (mut any_string, mut any_integer, mut nullable) = (false, false, false);
        for value in values {
            match &value {
                Value::Null => nullable = true,
                Value::String(s) => {
                    any_string = true;
                    strings.push(Value::String(s.clone()));
                }
                Value::Number(n) if n.is_i64() || n.is_u64() => {
                    any_integer = true;
                    let text = n.to_string();
                    back.enum_values.push((text.clone(), value.clone()));
                    strings.push(Value::String(text));
                }
                other => {
                    return Err(self.unsupported(&push(pointer, "enum"), format!("gemini parameters carry only string and integer enum values, not {other}")));
                }
            }
        }
        if any_integer && self.describes_output() {
            // The output keeps its integers: the enum goes into the description.
            back.enum_values.clear();
            moved.push(("enum".to_owned(), Value::Array(original)));
            if nullable {
                out.insert("nullable".to_owned(), Value::Bool(true));
            }
            return Ok(());
        }
        if any_string && any_integer {
            return Err(self.unsupported(
                &push(pointer, "enum"),
                "gemini parameters cannot mix string and integer enum values",
            ));
        }
        if strings.is_empty() {
            return Err(self.unsupported(
                &push(pointer, "enum"),
                "an enum of only null cannot be expressed by gemini parameters",
            ));
        }
        if any_integer {
            out.insert("format".to_owned(), Value::String("enum".to_owned()));
            if !out.contains_key("type") {
                out.insert("type".to_owned(), Value::String("integer".to_owned()));
            }
        } else if !out.contains_key("type") {
            out.insert("type".to_owned(), Value::String("string".to_owned()));
        }
        if nullable {
            out.insert("nullable".to_owned(), Value::Bool(true));
        }
        out.insert("enum".to_owned(), Value::Array(strings));
        Ok(())
    }

    /// `type` (anthropic: dropped beside a primitive enum/const; gemini: one UPPER-CASE type).
    fn types(&self, out: &mut Map<String, Value>, pointer: &str) -> Result<(), ExportError> {
        match self.profile {
            Profile::Anthropic => {
                let primitive_values = match (out.get("enum"), out.get("const")) {
                    (Some(Value::Array(values)), _) => values.iter().all(is_primitive),
                    (_, Some(value)) => is_primitive(value),
                    _ => false,
                };
                if primitive_values {
                    out.remove("type");
                }
            }
            Profile::Gemini => {
                let types: Vec<String> = match out.remove("type") {
                    None => return Ok(()),
                    Some(Value::String(t)) => vec![t],
                    Some(Value::Array(ts)) => ts
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                    Some(other) => {
                        return Err(self.unsupported(
                            &push(pointer, "type"),
                            format!("type {other} is not a type name"),
                        ));
                    }
                };
                let non_null: Vec<&String> = types.iter().filter(|t| *t != "null").collect();
                let single = match non_null.as_slice() {
                    [] => "NULL".to_owned(),
                    [one] => {
                        if types.len() > 1 {
                            out.insert("nullable".to_owned(), Value::Bool(true));
                        }
                        one.to_ascii_uppercase()
                    }
                    _ => {
                        return Err(self.unsupported(
                            &push(pointer, "type"),
                            format!(
                                "gemini parameters take a single type, not {}",
                                non_null
                                    .iter()
                                    .map(|t| t.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                };
                out.insert("type".to_owned(), Value::String(single));
            }
            _ => {}
        }
        Ok(())
    }

    /// `format`, `pattern`, `minItems`, and the numeric bounds, whose rule depends on the value.
    fn conditional(&self, out: &mut Map<String, Value>, moved: &mut Vec<(String, Value)>) {
        let p = self.profile;
        if let Some(format) = out.get("format").and_then(Value::as_str) {
            let generated_enum =
                p == Profile::Gemini && format == "enum" && out.contains_key("enum");
            if !generated_enum
                && !kept_formats(p).contains(&format)
                && let Some(value) = out.remove("format")
            {
                moved.push(("format".to_owned(), value));
            }
        }
        if p == Profile::OpenAi {
            let look_around = out
                .get("pattern")
                .and_then(Value::as_str)
                .is_some_and(|pattern| {
                    ["(?=", "(?!", "(?<=", "(?<!"]
                        .iter()
                        .any(|l| pattern.contains(l))
                });
            if look_around && let Some(value) = out.remove("pattern") {
                moved.push(("pattern".to_owned(), value));
            }
        }
        if p == Profile::Anthropic {
            let small = out
                .get("minItems")
                .and_then(Value::as_u64)
                .is_some_and(|n| n <= 1);
            if !small && let Some(value) = out.remove("minItems") {
                moved.push(("minItems".to_owned(), value));
            }
        }
        for keyword in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
            let Some(Value::Number(n)) = out.get(keyword).cloned() else {
                continue;
            };
            match p {
                Profile::OpenAi | Profile::GeminiJsonSchema => {
                    if let Some(clamped) = clamp(&n) {
                        out.insert(keyword.to_owned(), Value::Number(clamped));
                        moved.push((keyword.to_owned(), Value::Number(n)));
                    }
                }
                Profile::Gemini => match exact_float(&n) {
                    Some(f) => {
                        out.insert(keyword.to_owned(), Value::Number(f));
                    }
                    None => {
                        out.remove(keyword);
                        moved.push((keyword.to_owned(), Value::Number(n)));
                    }
                },
                _ => {}
            }
        }
    }
}

/// The placeholder of a map's value schema while the entry list is transformed.
const MAP_VALUE: &str = "\u{0}rcip map value";

/// The value schema of a map: `additionalProperties` with a schema and no properties.
fn map_values(node: &Map<String, Value>) -> Option<&Value> {
    let no_properties = node
        .get("properties")
        .is_none_or(|p| p.as_object().is_some_and(Map::is_empty));
    match node.get("additionalProperties") {
        Some(schema @ (Value::Object(_) | Value::Bool(true))) if no_properties => Some(schema),
        _ => None,
    }
}

/// A node's `type` with `from` replaced by `to`: a type array keeps its other members (its
/// `null`); a single type, or none, is `to`.
fn retyped(t: Option<&Value>, from: &str, to: &str) -> Value {
    match t {
        Some(Value::Array(ts)) => Value::Array(
            ts.iter()
                .map(|t| if t == from { json!(to) } else { t.clone() })
                .collect(),
        ),
        _ => json!(to),
    }
}

/// The placeholder of a tuple's item `index` while the object of its items is transformed.
fn tuple_marker(index: usize) -> String {
    format!("\u{0}rcip tuple item {index}")
}

/// Puts `value` where the placeholder schema described as `marker` is.
fn replace_marker(schema: &mut Value, marker: &str, value: &Value) -> bool {
    match schema {
        Value::Object(node) => {
            if node.get("description").and_then(Value::as_str) == Some(marker) {
                *schema = value.clone();
                return true;
            }
            node.values_mut().any(|v| replace_marker(v, marker, value))
        }
        Value::Array(items) => items.iter_mut().any(|v| replace_marker(v, marker, value)),
        _ => false,
    }
}

/// `n` clamped to ±(2^53 − 1), or `None` when it is within.
fn clamp(n: &Number) -> Option<Number> {
    let beyond_high = n.as_u64().is_some_and(|u| u > MAX_SAFE_INTEGER as u64)
        || (!n.is_u64() && !n.is_i64() && n.as_f64().is_some_and(|f| f > MAX_SAFE_INTEGER as f64));
    let beyond_low = n.as_i64().is_some_and(|i| i < -MAX_SAFE_INTEGER)
        || (!n.is_u64()
            && !n.is_i64()
            && n.as_f64().is_some_and(|f| f < -(MAX_SAFE_INTEGER as f64)));
    if beyond_high {
        Some(Number::from(MAX_SAFE_INTEGER))
    } else if beyond_low {
        Some(Number::from(-MAX_SAFE_INTEGER))
    } else {
        None
    }
}

/// `n` as a float when the float is exactly `n`.
fn exact_float(n: &Number) -> Option<Number> {
    if let Some(u) = n.as_u64() {
        let f = u as f64;
        return (f < 18_446_744_073_709_551_616.0 && f as u64 == u)
            .then(|| Number::from_f64(f))
            .flatten();
    }
    if let Some(i) = n.as_i64() {
        let f = i as f64;
        return ((-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f)
            && f as i64 == i)
            .then(|| Number::from_f64(f))
            .flatten();
    }
    Some(n.clone())
}

/// `schema` accepting `null` too (an optional property OpenAI receives as required).
fn make_nullable(schema: Value) -> Value {
    let Value::Object(mut node) = schema else {
        return schema;
    };
    if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
        if !branches.iter().any(|b| b == &json!({"type": "null"})) {
            branches.push(json!({"type": "null"}));
        }
        return Value::Object(node);
    }
    if node.contains_key("const") || !node.contains_key("type") && !node.contains_key("enum") {
        return json!({"anyOf": [Value::Object(node), {"type": "null"}]});
    }
    match node.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let t = std::mem::take(t);
            node.insert("type".to_owned(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => ts.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = node.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    Value::Object(node)
}

/// Anthropic: a type array becomes an `anyOf` with one branch per type, each keeping the
/// keywords of its type; title and description stay on the node.
fn split_type_array(mut node: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::Array(types)) = node.get("type").cloned() else {
        return node;
    };
    node.remove("type");
    let mut branches = Vec::new();
    for t in &types {
        let name = t.as_str().unwrap_or_default();
        let mut branch = Map::new();
        branch.insert("type".to_owned(), t.clone());
        let keys: Vec<String> = node.keys().cloned().collect();
        for key in keys {
            let applies = keyword_type(&key)
                .is_some_and(|kt| kt == name || (kt == "number" && name == "integer"));
            if applies && let Some(value) = node.get(&key) {
                branch.insert(key.clone(), value.clone());
            }
        }
        branches.push(Value::Object(branch));
    }
    node.retain(|key, _| keyword_type(key).is_none());
    node.insert("anyOf".to_owned(), Value::Array(branches));
    node
}

/// The MCP profiles' form of a schema: the same contract, spelled the way MCP clients read
/// without portability warnings (the MCP Inspector's `--strict`). A type array becomes an
/// `anyOf` of single-type branches (as for anthropic), and an integer bound that only
/// restates a 64-bit (or wider) integer type is left out: past 2^53 no JSON reader of a
/// client holds it exactly, and the runtime still enforces it on the original schema.
pub(crate) fn mcp_portable(schema: &Value) -> Value {
    let mut schema = schema.clone();
    portable_node(&mut schema, 0);
    schema
}

fn portable_node(schema: &mut Value, depth: usize) {
    let Value::Object(node) = schema else {
        return;
    };
    // Deeper than any schema a definition accepts; left as it is rather than recursed.
    if depth > MAX_DEPTH {
        return;
    }
    for keyword in ONE_SUBSCHEMA {
        if let Some(child) = node.get_mut(*keyword) {
            portable_node(child, depth + 1);
        }
    }
    for keyword in SUBSCHEMA_ARRAYS {
        if let Some(Value::Array(children)) = node.get_mut(*keyword) {
            for child in children {
                portable_node(child, depth + 1);
            }
        }
    }
    for keyword in SUBSCHEMA_MAPS {
        if let Some(Value::Object(children)) = node.get_mut(*keyword) {
            for child in children.values_mut() {
                portable_node(child, depth + 1);
            }
        }
    }
    if has_type(node, "integer") {
        drop_restated_bounds(node);
    }
    match node.get("type") {
        Some(Value::Array(types)) if types.len() == 1 => {
            let only = types[0].clone();
            node.insert("type".to_owned(), only);
        }
        // Beside an `anyOf`, the split would need a second one: the node stays as it is.
        Some(Value::Array(_)) if !node.contains_key("anyOf") => {
            *node = split_type_array(std::mem::take(node));
        }
        _ => {}
    }
}

/// Removes the bounds of an integer node that lie at or beyond the 64-bit range.
fn drop_restated_bounds(node: &mut Map<String, Value>) {
    const I64_MAX: f64 = 9_223_372_036_854_775_807.0;
    const I64_MIN: f64 = -9_223_372_036_854_775_808.0;
    let at_least = |value: Option<&Value>, limit: f64| {
        value.and_then(Value::as_f64).is_some_and(|v| v >= limit)
    };
    let at_most = |value: Option<&Value>, limit: f64| {
        value.and_then(Value::as_f64).is_some_and(|v| v <= limit)
    };
    for keyword in ["maximum", "exclusiveMaximum"] {
        if at_least(node.get(keyword), I64_MAX) {
            node.remove(keyword);
        }
    }
    for keyword in ["minimum", "exclusiveMinimum"] {
        if at_most(node.get(keyword), I64_MIN) {
            node.remove(keyword);
        }
    }
}
