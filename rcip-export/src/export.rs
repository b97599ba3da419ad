//! The export: tool sources in, one profile's tool list out, and the way back.

use rcip_core::{
    ApplicationDefinition, CapabilityContract, CapabilityDefinition, Effect, UsageGuidance,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::back::Back;
use crate::transform::Walker;
use crate::{ArgumentsError, ExportError, Profile, SchemaIssue, ToolNames};

/// What one capability brings to an export: a borrowed view of a definition or a contract.
#[derive(Debug, Clone, Copy)]
pub struct ToolSource<'a> {
    /// The capability id.
    pub id: &'a str,
    /// Its title.
    pub title: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its effect.
    pub effect: Effect,
    /// Whether it is declared idempotent (MCP's `idempotentHint`, whatever the effect).
    pub idempotent: bool,
    /// Its strict input schema (the base form).
    pub input_schema: &'a Value,
    /// Its strict output schema (the base form).
    pub output_schema: &'a Value,
    /// Its usage guidance.
    pub usage: Option<&'a UsageGuidance>,
    /// The tool name to use in place of the one the profile makes of the id (still under
    /// the profile's name rule): for a name a consumer expects that no capability id can be.
    pub name: Option<&'a str>,
}

impl<'a> ToolSource<'a> {
    /// The same tool under the name `name` (see [`ToolSource::name`]).
    #[must_use]
    pub fn named(mut self, name: &'a str) -> Self {
        self.name = Some(name);
        self
    }
}

/// `From<&T> for ToolSource` for the types with the capability's fields.
macro_rules! tool_source_from {
    ($($source:ty),*) => {$(
        impl<'a> From<&'a $source> for ToolSource<'a> {
            fn from(c: &'a $source) -> Self {
                ToolSource {
                    id: &c.id,
                    title: &c.title,
                    description: &c.description,
                    effect: c.effect,
                    idempotent: c.idempotent,
                    input_schema: &c.input_schema,
                    output_schema: &c.output_schema,
                    usage: c.usage.as_ref(),
                    name: None,
                }
            }
        }
    )*};
}

tool_source_from!(CapabilityDefinition, CapabilityContract, CatalogCapability);

/// One exported tool.
#[derive(Debug, Clone)]
pub struct ExportedTool {
    capability_id: String,
    name: String,
    title: String,
    description: String,
    effect: Effect,
    idempotent: bool,
    input_schema: Value,
    output_schema: Option<Value>,
    strict: Option<bool>,
    back: Back,
    input_wrapped: bool,
    output_wrapped: bool,
}

impl ExportedTool {
    /// The capability id.
    #[must_use]
    pub fn capability_id(&self) -> &str {
        &self.capability_id
    }
    /// The tool name under the profile's name rule.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The capability's effect.
    #[must_use]
    pub fn effect(&self) -> Effect {
        self.effect
    }
    /// Whether the capability is declared idempotent.
    #[must_use]
    pub fn idempotent(&self) -> bool {
        self.idempotent
    }
    /// The capability title.
    #[must_use]
    pub fn title(&self) -> &str {
        &self.title
    }
    /// The tool description: the capability's, then "When to use: ..." from its usage guidance.
    #[must_use]
    pub fn description(&self) -> &str {
        &self.description
    }
    /// The input schema in the profile's form (`inputSchema`, `parameters`, `input_schema`, ...).
    #[must_use]
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }
    /// The output schema in the profile's form, where the consumer has one (MCP, Gemini).
    #[must_use]
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }
    /// The `strict` flag, where the profile has one (openai: always `true`; anthropic: `true`
    /// within the per-request budgets).
    #[must_use]
    pub fn strict(&self) -> Option<bool> {
        self.strict
    }
    /// Whether the input schema was not object-rooted and is sent as `{"input": ...}`.
    #[must_use]
    pub fn input_wrapped(&self) -> bool {
        self.input_wrapped
    }
    /// Whether the output is sent as `{"result": ...}` (MCP, an output schema not object-rooted).
    #[must_use]
    pub fn output_wrapped(&self) -> bool {
        self.output_wrapped
    }
}

/// A catalog exported for one profile.
#[derive(Debug, Clone)]
pub struct Export {
    profile: Profile,
    tools: Vec<ExportedTool>,
    names: ToolNames,
}

/// Anthropic's per-request budgets for strict tools.
pub const ANTHROPIC_STRICT_TOOLS: usize = 20;
/// Anthropic's budget of optional parameters across the strict tools of a request.
pub const ANTHROPIC_OPTIONAL_PARAMETERS: usize = 24;
/// Anthropic's budget of union-typed parameters (`anyOf`) across the strict tools of a request.
pub const ANTHROPIC_UNIONS: usize = 16;

/// Exports `tools` (in catalog order) for `profile`.
///
/// # Errors
///
/// An [`ExportError`]: a schema the profile cannot express, a limit exceeded, two ids with
/// one name.
pub fn export<'a>(
    profile: Profile,
    tools: impl IntoIterator<Item = ToolSource<'a>>,
) -> Result<Export, ExportError> {
    let sources: Vec<ToolSource<'a>> = tools.into_iter().collect();
    let names = ToolNames::with_names(profile, sources.iter().map(|s| (s.id, s.name)))?;
    let mut exported = Vec::new();
    for source in &sources {
        exported.push(export_tool(profile, &names, source)?);
    }
    if profile == Profile::Anthropic {
        apply_anthropic_budgets(&mut exported);
    }
    Ok(Export {
        profile,
        tools: exported,
        names,
    })
}

/// Exports every capability of `definition` for `profile`.
///
/// # Errors
///
/// As [`export`].
pub fn export_definition(
    profile: Profile,
    definition: &ApplicationDefinition,
) -> Result<Export, ExportError> {
    export(
        profile,
        definition.capabilities.iter().map(ToolSource::from),
    )
}

/// The capability members an export reads from catalog JSON (other members are ignored).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CatalogCapability {
    id: String,
    title: String,
    description: String,
    effect: Effect,
    #[serde(default)]
    idempotent: bool,
    input_schema: Value,
    output_schema: Value,
    #[serde(default)]
    usage: Option<UsageGuidance>,
}

/// Exports the catalog JSON `polls -- export` prints (an application definition with a root
/// `revision`; only `capabilities[]` is read).
///
/// # Errors
///
/// [`ExportError::InvalidCatalog`] when `catalog` has no `capabilities` array of
/// capabilities; otherwise as [`export`].
pub fn export_catalog(profile: Profile, catalog: &Value) -> Result<Export, ExportError> {
    let Some(Value::Array(entries)) = catalog.get("capabilities") else {
        return Err(ExportError::InvalidCatalog(
            "the catalog has no \"capabilities\" array".to_owned(),
        ));
    };
    let mut capabilities = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let capability = CatalogCapability::deserialize(entry)
            .map_err(|error| ExportError::InvalidCatalog(format!("capabilities[{i}]: {error}")))?;
        capabilities.push(capability);
    }
    export(profile, capabilities.iter().map(ToolSource::from))
}

fn is_object_rooted(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

fn wrap(member: &str, schema: &Value) -> Value {
    json!({
        "type": "object",
        "properties": { member: schema },
        "required": [member],
        "additionalProperties": false
    })
}

fn tool_description(source: &ToolSource<'_>) -> String {
    match source.usage {
        Some(usage) => format!(
            "{}\n\nWhen to use: {}",
            source.description, usage.when_to_use
        ),
        None => source.description.to_owned(),
    }
}

/// A pointer into the wrapped input schema, as a pointer into the capability's own schema.
fn unwrap_pointer(mut error: ExportError) -> ExportError {
    if let ExportError::UnsupportedSchema(issue) | ExportError::LimitExceeded(issue) = &mut error
        && let Some(rest) = issue.pointer.strip_prefix("/properties/input")
    {
        issue.pointer = rest.to_owned();
    }
    error
}

fn export_tool(
    profile: Profile,
    names: &ToolNames,
    source: &ToolSource<'_>,
) -> Result<ExportedTool, ExportError> {
    let name = names.name(source.id).unwrap_or(source.id).to_owned();
    let input_wrapped = !is_object_rooted(source.input_schema);
    let wrapped_input;
    let input = if input_wrapped {
        wrapped_input = wrap("input", source.input_schema);
        &wrapped_input
    } else {
        source.input_schema
    };
    let mcp = matches!(profile, Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28);
    let (input_schema, back) = if mcp {
        (crate::transform::mcp_portable(input), Back::default())
    } else {
        let walker = Walker {
            profile,
            capability: source.id,
            role: "input",
            rename: profile == Profile::Gemini,
        };
        let (schema, back) = walker.node(input, "", 0).map_err(|error| {
            if input_wrapped {
                unwrap_pointer(error)
            } else {
                error
            }
        })?;
        (schema, back)
    };
    if profile == Profile::OpenAi {
        check_openai_limits(source.id, &input_schema)?;
    }
    let mut output_wrapped = false;
    let output_schema = match profile {
        // 2026-07-28 takes any output schema (and any structuredContent) as it is.
        Profile::Mcp2026_07_28 => Some(crate::transform::mcp_portable(source.output_schema)),
        Profile::Mcp2025_11_25 => {
            if is_object_rooted(source.output_schema) {
                Some(crate::transform::mcp_portable(source.output_schema))
            } else {
                output_wrapped = true;
                Some(crate::transform::mcp_portable(&wrap(
                    "result",
                    source.output_schema,
                )))
            }
        }
        Profile::Gemini | Profile::GeminiJsonSchema => {
            let walker = Walker {
                profile,
                capability: source.id,
                role: "output",
                rename: false,
            };
            let response = walker.node(source.output_schema, "", 0)?.0;
            // `response` describes the output as it is, so its property names cannot be
            // renamed; one outside the `parameters` name rule leaves the (optional) response
            // out rather than describing another shape.
            (profile == Profile::GeminiJsonSchema || gemini_property_names(&response))
                .then_some(response)
        }
        Profile::OpenAi | Profile::Anthropic => None,
    };
    let strict = match profile {
        Profile::OpenAi | Profile::Anthropic => Some(true),
        _ => None,
    };
    Ok(ExportedTool {
        capability_id: source.id.to_owned(),
        name,
        title: source.title.to_owned(),
        description: tool_description(source),
        effect: source.effect,
        idempotent: source.idempotent,
        input_schema,
        output_schema,
        strict,
        back,
        input_wrapped,
        output_wrapped,
    })
}

/// Whether every property name in `schema` fits Gemini's `parameters` name rule. Iterative
/// (the schema was measured by the transform, but this walk needs no recursion anyway).
fn gemini_property_names(schema: &Value) -> bool {
    let rule = crate::names::NameRule::GEMINI_PROPERTY;
    let mut pending = vec![schema];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(node) => {
                if let Some(Value::Object(properties)) = node.get("properties")
                    && properties.keys().any(|name| rule.apply(name) != *name)
                {
                    return false;
                }
                pending.extend(node.values());
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    true
}

/// Counts the optional properties and the unions (`anyOf`) of a schema.
fn count_optionals_and_unions(schema: &Value, optionals: &mut usize, unions: &mut usize) {
    match schema {
        Value::Object(node) => {
            if node.contains_key("anyOf") {
                *unions += 1;
            }
            if let Some(Value::Object(props)) = node.get("properties") {
                let required: Vec<&str> = node
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                *optionals += props
                    .keys()
                    .filter(|k| !required.contains(&k.as_str()))
                    .count();
            }
            for (key, value) in node {
                if matches!(key.as_str(), "properties") {
                    if let Value::Object(props) = value {
                        for prop in props.values() {
                            count_optionals_and_unions(prop, optionals, unions);
                        }
                    }
                } else if matches!(key.as_str(), "items" | "anyOf" | "additionalProperties") {
                    count_optionals_and_unions(value, optionals, unions);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                count_optionals_and_unions(item, optionals, unions);
            }
        }
        _ => {}
    }
}

/// Anthropic: strict while the request's budgets allow, in catalog order; `strict: false` after.
fn apply_anthropic_budgets(tools: &mut [ExportedTool]) {
    let (mut strict_tools, mut optionals, mut unions) = (0, 0, 0);
    for tool in tools {
        let (mut o, mut u) = (0, 0);
        count_optionals_and_unions(&tool.input_schema, &mut o, &mut u);
        let fits = strict_tools < ANTHROPIC_STRICT_TOOLS
            && optionals + o <= ANTHROPIC_OPTIONAL_PARAMETERS
            && unions + u <= ANTHROPIC_UNIONS;
        if fits {
            strict_tools += 1;
            optionals += o;
            unions += u;
        }
        tool.strict = Some(fits);
    }
}

/// OpenAI's documented schema limits (§1.3 of the digest).
pub const OPENAI_MAX_PROPERTIES: usize = 5000;
/// OpenAI: object/array nesting levels.
pub const OPENAI_MAX_DEPTH: usize = 10;
/// OpenAI: total characters of property names, enum values and const values.
pub const OPENAI_MAX_STRING_CHARS: usize = 120_000;
/// OpenAI: enum values in one schema.
pub const OPENAI_MAX_ENUM_VALUES: usize = 1000;
/// OpenAI: characters of one string enum with more than 250 values.
pub const OPENAI_MAX_LARGE_ENUM_CHARS: usize = 15_000;

#[derive(Default)]
struct Tally {
    properties: usize,
    depth: usize,
    chars: usize,
    enum_values: usize,
    large_enum_chars: usize,
}

fn tally(schema: &Value, level: usize, t: &mut Tally) {
    let Value::Object(node) = schema else {
        return;
    };
    let container = node.get("type").is_some_and(|ty| {
        ty == "object"
            || ty == "array"
            || ty
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == "object" || x == "array"))
    });
    let level = if container { level + 1 } else { level };
    t.depth = t.depth.max(level);
    if let Some(Value::Object(props)) = node.get("properties") {
        t.properties += props.len();
        for (name, prop) in props {
            t.chars += name.chars().count();
            tally(prop, level, t);
        }
    }
    if let Some(Value::Array(values)) = node.get("enum") {
        t.enum_values += values.len();
        let chars: usize = values
            .iter()
            .filter_map(Value::as_str)
            .map(|s| s.chars().count())
            .sum();
        t.chars += chars;
        if values.len() > 250 {
            t.large_enum_chars = t.large_enum_chars.max(chars);
        }
    }
    if let Some(Value::String(s)) = node.get("const") {
        t.chars += s.chars().count();
    }
    if let Some(items) = node.get("items") {
        tally(items, level, t);
    }
    if let Some(Value::Array(branches)) = node.get("anyOf") {
        for branch in branches {
            tally(branch, level, t);
        }
    }
}

fn check_openai_limits(capability: &str, schema: &Value) -> Result<(), ExportError> {
    let mut t = Tally::default();
    tally(schema, 0, &mut t);
    let checks = [
        (
            t.properties,
            OPENAI_MAX_PROPERTIES,
            "object properties in total",
        ),
        (
            t.depth,
            OPENAI_MAX_DEPTH,
            "nesting levels of objects and arrays",
        ),
        (
            t.chars,
            OPENAI_MAX_STRING_CHARS,
            "characters of property names, enum and const values",
        ),
        (t.enum_values, OPENAI_MAX_ENUM_VALUES, "enum values"),
        (
            t.large_enum_chars,
            OPENAI_MAX_LARGE_ENUM_CHARS,
            "characters of a string enum with more than 250 values",
        ),
    ];
    for (value, limit, what) in checks {
        if value > limit {
            return Err(ExportError::LimitExceeded(SchemaIssue {
                profile: Profile::OpenAi.name(),
                capability: capability.to_owned(),
                role: "input",
                pointer: String::new(),
                reason: format!("{value} {what}, more than OpenAI's limit of {limit}"),
            }));
        }
    }
    Ok(())
}

impl Export {
    /// The profile.
    #[must_use]
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The exported tools, in catalog order.
    #[must_use]
    pub fn tools(&self) -> &[ExportedTool] {
        &self.tools
    }

    /// The tool called `name`.
    ///
    /// ```
    /// use rcip_core::{CapabilityDefinition, Effect};
    /// use rcip_export::{Profile, export};
    /// let capability = CapabilityDefinition::new("polls.list", Effect::Read, "List", "Lists polls.");
    /// let export = export(Profile::Anthropic, [(&capability).into()]).unwrap();
    /// assert_eq!(export.tool("polls_list").unwrap().capability_id(), "polls.list");
    /// assert!(export.tool("polls.list").is_none());
    /// ```
    #[must_use]
    pub fn tool(&self, name: &str) -> Option<&ExportedTool> {
        let id = self.names.capability(name)?;
        self.tools.iter().find(|t| t.capability_id == id)
    }

    /// The tool names (capability id to name and back).
    #[must_use]
    pub fn names(&self) -> &ToolNames {
        &self.names
    }

    /// The tool list as the consumer takes it: the value of its `tools` member.
    #[must_use]
    pub fn to_json(&self) -> Value {
        match self.profile {
            Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28 => {
                Value::Array(self.tools.iter().map(mcp_tool).collect())
            }
            Profile::OpenAi => Value::Array(
                self.tools
                    .iter()
                    .map(|t| {
                        json!({
                            "type": "function",
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.input_schema,
                            "strict": true,
                        })
                    })
                    .collect(),
            ),
            Profile::Anthropic => Value::Array(
                self.tools
                    .iter()
                    .map(|t| {
                        json!({
                            "name": t.name,
                            "description": t.description,
                            "input_schema": t.input_schema,
                            "strict": t.strict.unwrap_or(false),
                        })
                    })
                    .collect(),
            ),
            Profile::Gemini | Profile::GeminiJsonSchema => {
                let (parameters, response) = if self.profile == Profile::Gemini {
                    ("parameters", "response")
                } else {
                    ("parametersJsonSchema", "responseJsonSchema")
                };
                let declarations: Vec<Value> = self
                    .tools
                    .iter()
                    .map(|t| {
                        let mut d = Map::new();
                        d.insert("name".to_owned(), json!(t.name));
                        d.insert("description".to_owned(), json!(t.description));
                        d.insert(parameters.to_owned(), t.input_schema.clone());
                        if let Some(output) = &t.output_schema {
                            d.insert(response.to_owned(), output.clone());
                        }
                        Value::Object(d)
                    })
                    .collect();
                json!([{ "functionDeclarations": declarations }])
            }
        }
    }

    /// The capability id and input for provider arguments to tool `tool_name`: the profile's
    /// shaping undone (OpenAI's nulls for absent optionals removed, Gemini's property renames
    /// and string enum values reversed, an `{"input": ...}` wrapper unwrapped). It never
    /// validates: validate the input against the capability's own schema (the runtime does).
    ///
    /// # Errors
    ///
    /// [`ArgumentsError::UnknownTool`] for a name the export does not have,
    /// [`ArgumentsError::NotAnObject`] when `arguments` is not a JSON object.
    pub fn arguments_to_input(
        &self,
        tool_name: &str,
        arguments: Value,
    ) -> Result<(String, Value), ArgumentsError> {
        let tool = self
            .tool(tool_name)
            .ok_or_else(|| ArgumentsError::UnknownTool(tool_name.to_owned()))?;
        if !arguments.is_object() {
            return Err(ArgumentsError::NotAnObject(tool_name.to_owned()));
        }
        let input = match self.profile {
            Profile::Mcp2025_11_25 | Profile::Mcp2026_07_28 => back_mcp(tool, arguments),
            Profile::OpenAi => back_openai(tool, arguments),
            Profile::Anthropic => back_anthropic(tool, arguments),
            Profile::Gemini => back_gemini(tool, arguments),
            Profile::GeminiJsonSchema => back_gemini_json_schema(tool, arguments),
        };
        Ok((tool.capability_id.clone(), input))
    }

    /// The MCP `structuredContent` for `output` of capability `capability_id`: `{"result":
    /// output}` when its output schema was wrapped, else `output`.
    #[must_use]
    pub fn structured_output(&self, capability_id: &str, output: Value) -> Value {
        let wrapped = self
            .tools
            .iter()
            .any(|t| t.capability_id == capability_id && t.output_wrapped);
        if wrapped {
            json!({ "result": output })
        } else {
            output
        }
    }
}

fn mcp_tool(t: &ExportedTool) -> Value {
    let (read_only, destructive, open_world) = match t.effect {
        Effect::Read => (true, false, false),
        Effect::Write => (false, false, false),
        Effect::Destructive => (false, true, false),
        Effect::External => (false, false, true),
    };
    // Only what the capability declares: a read is not assumed idempotent.
    let idempotent = t.idempotent;
    let mut tool = Map::new();
    tool.insert("name".to_owned(), json!(t.name));
    tool.insert("title".to_owned(), json!(t.title));
    tool.insert("description".to_owned(), json!(t.description));
    tool.insert("inputSchema".to_owned(), t.input_schema.clone());
    if let Some(output) = &t.output_schema {
        tool.insert("outputSchema".to_owned(), output.clone());
    }
    tool.insert(
        "annotations".to_owned(),
        json!({
            "title": t.title,
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            "openWorldHint": open_world,
        }),
    );
    Value::Object(tool)
}

/// `{"input": x}` -> `x` for a wrapped input (arguments without the member stay as they are,
/// for the runtime to refuse).
fn unwrap_input(tool: &ExportedTool, arguments: Value) -> Value {
    if !tool.input_wrapped {
        return arguments;
    }
    match arguments {
        Value::Object(mut map) => map.remove("input").unwrap_or(Value::Object(map)),
        other => other,
    }
}

/// MCP sends the base form: only the input wrapper to undo.
fn back_mcp(tool: &ExportedTool, arguments: Value) -> Value {
    unwrap_input(tool, arguments)
}

/// OpenAI: nulls at synthetic-required paths removed (recorded per property, inside arrays
/// and anyOf branches too), then the wrapper.
fn back_openai(tool: &ExportedTool, arguments: Value) -> Value {
    unwrap_input(tool, tool.back.restore(arguments))
}

/// Anthropic keeps optional properties optional and names unchanged: maps and tuples back
/// from their entry lists and item objects, then the wrapper.
fn back_anthropic(tool: &ExportedTool, arguments: Value) -> Value {
    unwrap_input(tool, tool.back.restore(arguments))
}

/// Gemini `parameters`: property renames reversed, string enum values parsed back to the
/// original integers, then the wrapper.
fn back_gemini(tool: &ExportedTool, arguments: Value) -> Value {
    unwrap_input(tool, tool.back.restore(arguments))
}

/// Gemini `parametersJsonSchema`: names and values are the capability's own; tuples back
/// from their item objects, then the wrapper.
fn back_gemini_json_schema(tool: &ExportedTool, arguments: Value) -> Value {
    unwrap_input(tool, tool.back.restore(arguments))
}
