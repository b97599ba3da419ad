//! The conformance fixture's MCP resources and prompts, served beside its tools through
//! `rcip_mcp::McpBridgeBuilder::resources` and `::prompts`: exactly what the suite's
//! `resources-*`, `sep-2164-resource-not-found`, `prompts-*`, `completion-complete`,
//! `input-required-result-non-tool-request` and `caching` scenarios read (`@modelcontextprotocol/conformance` 0.2.0-alpha.12).

use rcip_mcp::rmcp::ErrorData;
use rcip_mcp::rmcp::model::{
    ArgumentInfo, CompletionContext, ContentBlock, GetPromptResult, JsonObject, Prompt,
    PromptArgument, PromptMessage, Resource, ResourceContents, ResourceTemplate, Role,
};
use rcip_mcp::{PromptProvider, ProviderContext, ResourceProvider};
use rcip_runtime::BoxFuture;
use serde_json::json;

/// `test://static-text`'s text (scenario `resources-read-text`).
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";

/// A 1×1 PNG, base64 (`test://static-binary` and `test_prompt_with_image`).
pub const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// The template the suite reads as `test://template/123/data`.
pub const TEMPLATE: &str = "test://template/{id}/data";

/// The resources: two static ones, a watched one (subscribable on 2025-11-25), a template.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConformanceResources;

/// The prompts: simple, with arguments (and their completion), with an embedded resource,
/// with an image.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConformancePrompts;

/// The `{id}` of a `test://template/{id}/data` URI.
fn template_id(uri: &str) -> Option<&str> {
    uri.strip_prefix("test://template/")?
        .strip_suffix("/data")
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

impl ResourceProvider for ConformanceResources {
    fn list(&self, _cx: ProviderContext) -> BoxFuture<Result<Vec<Resource>, ErrorData>> {
        let resources = vec![
            Resource::new("test://static-text", "static-text")
                .with_description("A static text resource.")
                .with_mime_type("text/plain"),
            Resource::new("test://static-binary", "static-binary")
                .with_description("A static binary resource (a PNG image).")
                .with_mime_type("image/png"),
            Resource::new("test://watched-resource", "watched-resource")
                .with_description("A resource clients may subscribe to.")
                .with_mime_type("text/plain"),
        ];
        Box::pin(async move { Ok(resources) })
    }

    fn templates(
        &self,
        _cx: ProviderContext,
    ) -> BoxFuture<Result<Vec<ResourceTemplate>, ErrorData>> {
        let template = ResourceTemplate::new(TEMPLATE, "template-data")
            .with_description("Data for an id.")
            .with_mime_type("application/json");
        Box::pin(async move { Ok(vec![template]) })
    }

    fn read(
        &self,
        uri: String,
        _cx: ProviderContext,
    ) -> BoxFuture<Result<Option<Vec<ResourceContents>>, ErrorData>> {
        Box::pin(async move {
            let contents = match uri.as_str() {
                "test://static-text" => ResourceContents::text(STATIC_TEXT, uri),
                "test://static-binary" => {
                    ResourceContents::blob(PNG_BASE64, uri).with_mime_type("image/png")
                }
                "test://watched-resource" => {
                    ResourceContents::text("The watched resource's content.", uri)
                }
                other => match template_id(other) {
                    Some(id) => {
                        let text = serde_json::json!({
                            "id": id,
                            "templateTest": true,
                            "data": format!("Data for ID: {id}"),
                        })
                        .to_string();
                        ResourceContents::text(text, uri).with_mime_type("application/json")
                    }
                    None => return Ok(None),
                },
            };
            Ok(Some(vec![contents]))
        })
    }

    fn subscribable(&self) -> bool {
        true
    }
}

fn argument(arguments: &JsonObject, name: &str) -> Result<String, ErrorData> {
    arguments
        .get(name)
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .ok_or_else(|| ErrorData::invalid_params(format!("missing argument {name}"), None))
}

impl PromptProvider for ConformancePrompts {
    fn list(&self, _cx: ProviderContext) -> BoxFuture<Result<Vec<Prompt>, ErrorData>> {
        let required = |name: &str, description: &str| {
            PromptArgument::new(name)
                .with_description(description)
                .with_required(true)
        };
        let prompts = vec![
            Prompt::new(
                "test_simple_prompt",
                Some("A simple prompt without arguments."),
                None,
            ),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with two arguments."),
                Some(vec![
                    required("arg1", "First test argument"),
                    required("arg2", "Second test argument"),
                ]),
            ),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt embedding a resource."),
                Some(vec![required(
                    "resourceUri",
                    "URI of the resource to embed",
                )]),
            ),
            Prompt::new(
                "test_prompt_with_image",
                Some("A prompt with an image."),
                None,
            ),
            Prompt::new(
                "test_input_required_result_prompt",
                Some("A prompt that asks the user for context before it renders."),
                None,
            ),
        ];
        Box::pin(async move { Ok(prompts) })
    }

    fn get(
        &self,
        name: String,
        arguments: JsonObject,
        cx: ProviderContext,
    ) -> BoxFuture<Result<Option<GetPromptResult>, ErrorData>> {
        Box::pin(async move {
            let messages = match name.as_str() {
                // `input-required-result-non-tool-request`: a question asked while answering
                // `prompts/get` (2026-07-28: `input_required` under `user_context`).
                "test_input_required_result_prompt" => {
                    let elicitor = cx
                        .elicitor()
                        .ok_or_else(|| ErrorData::internal_error("no elicitor", None))?;
                    let schema = json!({
                        "type": "object",
                        "properties": {"context": {"type": "string"}},
                        "required": ["context"]
                    });
                    let answer = elicitor
                        .ask(
                            "user_context",
                            "What context should the prompt use?",
                            schema,
                        )
                        .await?;
                    let context = answer
                        .content()
                        .and_then(|c| c.get("context"))
                        .and_then(|c| c.as_str())
                        .unwrap_or("none");
                    vec![PromptMessage::new_text(
                        Role::User,
                        format!("Prompt with context: {context}"),
                    )]
                }
                "test_simple_prompt" => vec![PromptMessage::new_text(
                    Role::User,
                    "This is a simple prompt for testing.",
                )],
                "test_prompt_with_arguments" => {
                    let (arg1, arg2) =
                        (argument(&arguments, "arg1")?, argument(&arguments, "arg2")?);
                    vec![PromptMessage::new_text(
                        Role::User,
                        format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"),
                    )]
                }
                "test_prompt_with_embedded_resource" => {
                    let uri = argument(&arguments, "resourceUri")?;
                    vec![
                        PromptMessage::new_resource(
                            Role::User,
                            uri,
                            Some("text/plain".to_owned()),
                            Some("Embedded resource content for testing.".to_owned()),
                            None,
                            None,
                            None,
                        ),
                        PromptMessage::new_text(
                            Role::User,
                            "Please process the embedded resource above.",
                        ),
                    ]
                }
                "test_prompt_with_image" => vec![
                    PromptMessage::new(Role::User, ContentBlock::image(PNG_BASE64, "image/png")),
                    PromptMessage::new_text(Role::User, "Please analyze the image above."),
                ],
                _ => return Ok(None),
            };
            Ok(Some(GetPromptResult::new(messages)))
        })
    }

    fn complete(
        &self,
        name: String,
        argument: ArgumentInfo,
        _context: Option<CompletionContext>,
        _cx: ProviderContext,
    ) -> BoxFuture<Result<Vec<String>, ErrorData>> {
        Box::pin(async move {
            if name != "test_prompt_with_arguments" {
                return Ok(Vec::new());
            }
            let candidates = ["paris", "park", "party", "test", "testing"];
            Ok(candidates
                .iter()
                .filter(|c| c.starts_with(&argument.value))
                .map(|c| (*c).to_owned())
                .collect())
        })
    }
}
