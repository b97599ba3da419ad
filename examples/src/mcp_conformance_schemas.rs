//! The conformance fixture's tools whose input schemas are written by hand, with the
//! definition builder rather than derived from a Rust type: the JSON Schema 2020-12 features
//! the `json-schema-2020-12` scenario looks for in `tools/list`, and the `x-mcp-header`
//! annotation `http-custom-header-server-validation` checks requests against (SEP-2243).

use rcip_runtime::{
    Binding, BindingGuard, CapabilityDefinition, Effect, Error, HandlerError, Host,
    InvocationContext,
};
use serde_json::{Value, json};

/// The tool the `json-schema-2020-12` scenario lists: a name the identifier grammar does not
/// allow (`_2020` starts a segment with a digit), so the capability
/// [`JSON_SCHEMA_CAPABILITY`] is listed under it (`McpBridgeBuilder::tool_name`).
pub const JSON_SCHEMA_TOOL: &str = "json_schema_2020_12_tool";

/// The capability listed as [`JSON_SCHEMA_TOOL`].
pub const JSON_SCHEMA_CAPABILITY: &str = "json_schema_tool";

/// The tool whose `value` travels in the `Mcp-Param-Value` header too.
pub const CUSTOM_HEADER_TOOL: &str = "test_custom_header";

/// The two definitions, to add to the fixture's application.
#[must_use]
pub fn definitions() -> [CapabilityDefinition; 2] {
    [
        CapabilityDefinition::new(
            JSON_SCHEMA_CAPABILITY,
            Effect::Read,
            "JSON Schema 2020-12",
            "Tool with JSON Schema 2020-12 features: $defs with an $anchor, $ref, allOf/anyOf, \
             if/then/else.",
        )
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"}
                    }
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"]
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }))
        .output_schema(json!({"type": "string"})),
        CapabilityDefinition::new(
            CUSTOM_HEADER_TOOL,
            Effect::Read,
            "Custom header",
            "Echoes its value, which the client also sends in the Mcp-Param-Value header \
             (SEP-2243).",
        )
        .input_schema(json!({
            "type": "object",
            "properties": {
                "value": {"type": "string", "x-mcp-header": "Value"}
            },
            "required": ["value"],
            "additionalProperties": false
        }))
        .output_schema(json!({"type": "string"})),
    ]
}

/// Binds both.
///
/// # Errors
///
/// What binding returns (never with the fixture's definitions).
pub fn bind(host: &Host) -> Result<Vec<BindingGuard>, Error> {
    let schema_tool = host.bind(
        JSON_SCHEMA_CAPABILITY,
        Binding::new(|input: Value, _ctx: InvocationContext| async move {
            let name = input["name"].as_str().unwrap_or("someone").to_owned();
            Ok::<_, HandlerError>(json!(format!("Received the contact details of {name}.")))
        }),
    )?;
    let header_tool = host.bind(
        CUSTOM_HEADER_TOOL,
        Binding::new(|input: Value, _ctx: InvocationContext| async move {
            let value = input["value"].as_str().unwrap_or_default().to_owned();
            Ok::<_, HandlerError>(json!(format!("Value: {value}")))
        }),
    )?;
    Ok(vec![schema_tool, header_tool])
}
