//! The rcip catalog in the exact tool forms MCP, OpenAI, Anthropic and Gemini accept.
//!
//! A [`Profile`] turns each capability's strict JSON Schema 2020-12 (the base form) into the
//! form one consumer accepts: losslessly where the form allows, otherwise by moving the
//! constraint into the schema node's `description` (the runtime keeps enforcing it), and
//! refusing with an [`ExportError`] (capability id and JSON Pointer) what it can neither
//! express nor move. Tool names follow each profile's name rule ([`ToolNames`]), and
//! [`Export::arguments_to_input`] undoes the profile's shaping of a provider's arguments.
//! The rules, the names and the way back are described in `docs/agent-exports.md`.
//!
//! ```
//! use rcip_core::{ApplicationDefinition, CapabilityDefinition, Effect};
//! use rcip_export::{Profile, export_definition};
//! use serde_json::json;
//!
//! let app = ApplicationDefinition::new("polls", "Polls", "Create polls and vote.").capability(
//!     CapabilityDefinition::new("polls.create", Effect::Write, "Create a poll", "Creates a poll.")
//!         .input_schema(json!({
//!             "type": "object",
//!             "properties": {
//!                 "question": {"type": "string", "minLength": 1, "maxLength": 200},
//!                 "note": {"type": ["string", "null"]}
//!             },
//!             "required": ["question"],
//!             "additionalProperties": false
//!         })),
//! );
//! let export = export_definition(Profile::OpenAi, &app).unwrap();
//! let tools = export.to_json();
//! println!("{}", serde_json::to_string_pretty(&tools).unwrap());
//! assert_eq!(tools[0]["name"], "polls_create");
//! assert_eq!(tools[0]["parameters"]["required"], json!(["note", "question"]));
//! assert_eq!(
//!     tools[0]["parameters"]["properties"]["question"]["description"],
//!     "Constraints: maxLength 200, minLength 1."
//! );
//!
//! // The model sends `note: null` for the absent optional; the way back removes it.
//! let (capability, input) = export
//!     .arguments_to_input("polls_create", json!({"question": "Lunch?", "note": null}))
//!     .unwrap();
//! assert_eq!(capability, "polls.create");
//! assert_eq!(input, json!({"question": "Lunch?"}));
//! ```
#![deny(missing_docs)]

mod back;
pub mod check;
mod error;
mod export;
mod names;
mod profile;
mod rules;
mod transform;

pub use error::{ArgumentsError, ExportError, SchemaIssue};
pub use export::{
    ANTHROPIC_OPTIONAL_PARAMETERS, ANTHROPIC_STRICT_TOOLS, ANTHROPIC_UNIONS, Export, ExportedTool,
    OPENAI_MAX_DEPTH, OPENAI_MAX_ENUM_VALUES, OPENAI_MAX_LARGE_ENUM_CHARS, OPENAI_MAX_PROPERTIES,
    OPENAI_MAX_STRING_CHARS, ToolSource, export, export_catalog, export_definition,
};
pub use names::ToolNames;
pub use profile::{Profile, UnknownProfile};
pub use rules::rules_markdown;
