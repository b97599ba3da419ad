//! MCP resources, templates, prompts and completions composed beside the bridge's tools,
//! seen through rmcp's client on both revisions.
#![allow(clippy::unwrap_used, deprecated)]

mod common;
mod duplex;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{App, ERAS, Era, Human, connect};
use rcip_mcp::rmcp::ErrorData;
use rcip_mcp::rmcp::model::{
    ArgumentInfo, CacheScope, CompletionContext, ErrorCode, GetPromptRequestParams,
    GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    Resource, ResourceContents, ResourceTemplate, Role, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rcip_mcp::rmcp::service::ServiceError;
use rcip_mcp::{PromptProvider, ProviderContext, ResourceProvider};
use rcip_runtime::BoxFuture;
use serde_json::json;

#[derive(Debug, Default)]
struct Docs {
    subscribed: Mutex<Vec<String>>,
    reads: AtomicUsize,
}

impl ResourceProvider for Docs {
    fn list(&self, _cx: ProviderContext) -> BoxFuture<Result<Vec<Resource>, ErrorData>> {
        let readme = Resource::new("notes://readme", "readme").with_mime_type("text/plain");
        Box::pin(async move { Ok(vec![readme]) })
    }

    fn templates(
        &self,
        _cx: ProviderContext,
    ) -> BoxFuture<Result<Vec<ResourceTemplate>, ErrorData>> {
        let template = ResourceTemplate::new("notes://note/{n}", "note");
        Box::pin(async move { Ok(vec![template]) })
    }

    fn read(
        &self,
        uri: String,
        cx: ProviderContext,
    ) -> BoxFuture<Result<Option<Vec<ResourceContents>>, ErrorData>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let revision = cx.protocol_version().map(|v| v.as_str().to_owned());
        Box::pin(async move {
            Ok(match uri.as_str() {
                "notes://readme" => Some(vec![ResourceContents::text(
                    format!("Keep notes short ({}).", revision.unwrap_or_default()),
                    uri,
                )]),
                "notes://empty" => Some(Vec::new()),
                other => other
                    .strip_prefix("notes://note/")
                    .map(|n| vec![ResourceContents::text(format!("note {n}"), uri.clone())]),
            })
        })
    }

    fn subscribable(&self) -> bool {
        true
    }

    fn subscribe(&self, uri: String, _cx: ProviderContext) -> BoxFuture<Result<(), ErrorData>> {
        self.subscribed.lock().unwrap().push(uri);
        Box::pin(async { Ok(()) })
    }

    fn unsubscribe(&self, uri: String, _cx: ProviderContext) -> BoxFuture<Result<(), ErrorData>> {
        self.subscribed.lock().unwrap().retain(|u| *u != uri);
        Box::pin(async { Ok(()) })
    }

    fn complete(
        &self,
        uri_template: String,
        argument: ArgumentInfo,
        _context: Option<CompletionContext>,
        _cx: ProviderContext,
    ) -> BoxFuture<Result<Vec<String>, ErrorData>> {
        Box::pin(async move {
            Ok(
                if uri_template == "notes://note/{n}" && argument.name == "n" {
                    (0..150).map(|i| format!("{}{i}", argument.value)).collect()
                } else {
                    Vec::new()
                },
            )
        })
    }
}

#[derive(Debug)]
struct Prompts;

impl PromptProvider for Prompts {
    fn list(&self, _cx: ProviderContext) -> BoxFuture<Result<Vec<Prompt>, ErrorData>> {
        let topic = PromptArgument::new("topic").with_required(true);
        let prompt = Prompt::new("summarize", Some("Summarize a topic."), Some(vec![topic]));
        Box::pin(async move { Ok(vec![prompt]) })
    }

    fn get(
        &self,
        name: String,
        arguments: JsonObject,
        _cx: ProviderContext,
    ) -> BoxFuture<Result<Option<GetPromptResult>, ErrorData>> {
        Box::pin(async move {
            if name != "summarize" {
                return Ok(None);
            }
            let Some(topic) = arguments.get("topic").and_then(|t| t.as_str()) else {
                return Err(ErrorData::invalid_params("summarize needs a topic", None));
            };
            Ok(Some(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                format!("Summarize the notes about {topic}."),
            )])))
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
            Ok(["groceries", "garden", "work"]
                .into_iter()
                .filter(|t| name == "summarize" && t.starts_with(&argument.value))
                .map(str::to_owned)
                .collect())
        })
    }
}

fn app(docs: Arc<Docs>) -> Arc<App> {
    App::with(std::time::Duration::from_secs(60), true, move |b| {
        b.resources(docs).prompts(Arc::new(Prompts))
    })
}

fn mcp_error(error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(e) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn arguments(value: serde_json::Value) -> JsonObject {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn capabilities_only_with_providers() {
    for era in ERAS {
        let plain = App::new();
        let client = connect(&plain, Human::new(common::Answer::Approve), era).await;
        let caps = client.peer_info().unwrap().capabilities.clone();
        assert!(caps.tools.is_some(), "{era:?}");
        assert!(
            caps.resources.is_none() && caps.prompts.is_none(),
            "{era:?}"
        );
        assert!(caps.completions.is_none(), "{era:?}");
        let error = mcp_error(client.list_resources(None).await.unwrap_err());
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND, "{era:?}");
        let error = mcp_error(client.list_prompts(None).await.unwrap_err());
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND, "{era:?}");

        let composed = app(Arc::new(Docs::default()));
        let client = connect(&composed, Human::new(common::Answer::Approve), era).await;
        let caps = client.peer_info().unwrap().capabilities.clone();
        assert!(caps.tools.is_some(), "{era:?}");
        assert_eq!(caps.resources.unwrap().subscribe, Some(true), "{era:?}");
        assert!(
            caps.prompts.is_some() && caps.completions.is_some(),
            "{era:?}"
        );
        // The tools are still there.
        assert!(!client.list_all_tools().await.unwrap().is_empty());
    }
}

#[tokio::test]
async fn resources_and_templates_list_and_read_in_both_eras() {
    for era in ERAS {
        let app = app(Arc::new(Docs::default()));
        let client = connect(&app, Human::new(common::Answer::Approve), era).await;
        let listed = client.list_resources(None).await.unwrap();
        assert_eq!(listed.resources.len(), 1);
        assert_eq!(listed.resources[0].uri, "notes://readme");
        let templates = client.list_resource_templates(None).await.unwrap();
        assert_eq!(
            templates.resource_templates[0].uri_template,
            "notes://note/{n}"
        );
        let read = client
            .read_resource(ReadResourceRequestParams::new("notes://readme"))
            .await
            .unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
            panic!("{read:?}")
        };
        let revision = match era {
            Era::Legacy => "2025-11-25",
            Era::Modern => "2026-07-28",
        };
        assert_eq!(text, &format!("Keep notes short ({revision})."));
        let note = client
            .read_resource(ReadResourceRequestParams::new("notes://note/7"))
            .await
            .unwrap();
        assert!(matches!(&note.contents[0],
            ResourceContents::TextResourceContents { text, .. } if text == "note 7"));
        // 2026-07-28 results carry caching directives; 2025-11-25 ones do not.
        let cached = |ttl: Option<u64>, scope: Option<CacheScope>| match era {
            Era::Legacy => assert_eq!((ttl, scope), (None, None)),
            Era::Modern => assert_eq!((ttl, scope), (Some(0), Some(CacheScope::Private))),
        };
        cached(listed.ttl_ms, listed.cache_scope);
        cached(templates.ttl_ms, templates.cache_scope);
        cached(read.ttl_ms, read.cache_scope);
    }
}

#[tokio::test]
async fn an_unknown_resource_is_the_error_its_revision_names() {
    for era in ERAS {
        let app = app(Arc::new(Docs::default()));
        let client = connect(&app, Human::new(common::Answer::Approve), era).await;
        for uri in ["notes://nothing", "notes://empty"] {
            let error = mcp_error(
                client
                    .read_resource(ReadResourceRequestParams::new(uri))
                    .await
                    .unwrap_err(),
            );
            let expected = match era {
                Era::Legacy => ErrorCode::RESOURCE_NOT_FOUND,
                Era::Modern => ErrorCode::INVALID_PARAMS,
            };
            assert_eq!(error.code, expected, "{era:?} {uri}");
            assert_eq!(error.data, Some(json!({"uri": uri})), "{era:?}");
        }
    }
}

#[tokio::test]
async fn subscribe_and_unsubscribe_reach_the_provider_on_2025() {
    let docs = Arc::new(Docs::default());
    let app = app(docs.clone());
    let client = connect(&app, Human::new(common::Answer::Approve), Era::Legacy).await;
    client
        .subscribe(SubscribeRequestParams::new("notes://readme"))
        .await
        .unwrap();
    assert_eq!(*docs.subscribed.lock().unwrap(), vec!["notes://readme"]);
    client
        .unsubscribe(UnsubscribeRequestParams::new("notes://readme"))
        .await
        .unwrap();
    assert!(docs.subscribed.lock().unwrap().is_empty());
}

#[tokio::test]
async fn prompts_list_get_and_refusals_in_both_eras() {
    for era in ERAS {
        let app = app(Arc::new(Docs::default()));
        let client = connect(&app, Human::new(common::Answer::Approve), era).await;
        let prompts = client.list_prompts(None).await.unwrap();
        assert_eq!(prompts.prompts[0].name, "summarize");
        if era == Era::Modern {
            assert_eq!(prompts.ttl_ms, Some(0));
        }
        let got = client
            .get_prompt(
                GetPromptRequestParams::new("summarize")
                    .with_arguments(arguments(json!({"topic": "garden"}))),
            )
            .await
            .unwrap();
        let text = serde_json::to_string(&got.messages).unwrap();
        assert!(text.contains("Summarize the notes about garden."), "{text}");
        let unknown = mcp_error(
            client
                .get_prompt(GetPromptRequestParams::new("nothing"))
                .await
                .unwrap_err(),
        );
        assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(unknown.data, Some(json!({"name": "nothing"})));
        let missing = mcp_error(
            client
                .get_prompt(GetPromptRequestParams::new("summarize"))
                .await
                .unwrap_err(),
        );
        assert_eq!(missing.code, ErrorCode::INVALID_PARAMS);
    }
}

#[tokio::test]
async fn completions_for_prompts_and_templates() {
    for era in ERAS {
        let app = app(Arc::new(Docs::default()));
        let client = connect(&app, Human::new(common::Answer::Approve), era).await;
        let prompt = client
            .complete_prompt_argument("summarize", "topic", "g", None)
            .await
            .unwrap();
        assert_eq!(prompt.values, vec!["groceries", "garden"]);
        let template = client
            .complete_resource_argument("notes://note/{n}", "n", "x", None)
            .await
            .unwrap();
        assert_eq!(template.values.len(), 100);
        assert_eq!(template.total, Some(150));
        assert_eq!(template.has_more, Some(true));
        let none = client
            .complete_prompt_argument("nothing", "topic", "g", None)
            .await
            .unwrap();
        assert!(none.values.is_empty());
    }
}
