//! `#[capability]` on typed functions: derived ids, every supported signature form, strict
//! derived schemas, and end-to-end invocation through the runtime.
#![allow(clippy::unwrap_used, dead_code)]

use std::sync::{Arc, Mutex};

use rcip_runtime::{
    ApplicationDefinition, CapabilityDefinition, CapabilitySpec, Effect, ErrorCode, HandlerError,
    InvocationContext, InvocationRequest, OutcomeStatus, PolicyDecision, RcipClientExt, Runtime,
    RuntimeOptions, ScopeDefinition, TypedOutcome, capability, policy_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Clone, Default)]
struct Store(Arc<Mutex<Vec<String>>>);

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreatePoll {
    /// The question.
    question: String,
    /// Two or more options.
    options: Vec<String>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct PollRef {
    poll_id: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Empty {}

/// Create a poll.
///
/// Creates a poll with a question and its options.
#[capability(
    effect = "write",
    scope = "polls",
    when_to_use = "When the user wants to ask the group something.",
    example(description = "Lunch", input = r#"{"question": "Where?", "options": ["A", "B"]}"#),
    tags = ["authoring"]
)]
async fn prepare_create(
    store: Store,
    input: CreatePoll,
    context: InvocationContext,
) -> Result<PollRef, HandlerError> {
    let mut polls = store.0.lock().unwrap();
    polls.push(format!("{}:{}", context.invocation_id(), input.question));
    Ok(PollRef {
        poll_id: format!("p{}", polls.len()),
    })
}

/// Count polls.
///
/// Counts the polls.
#[capability(effect = "read", scope = "polls")]
fn count(store: Store, _input: Empty) -> u32 {
    u32::try_from(store.0.lock().unwrap().len()).unwrap()
}

/// Always fails.
#[capability(
    effect = "read",
    id = "app.broken",
    title = "Broken",
    description = "Fails."
)]
async fn broken(_input: Empty) -> Result<u32, std::io::Error> {
    Err(std::io::Error::other("secret failure text"))
}

/// Answers pong.
#[capability(effect = "read")]
fn ping(_input: Empty, _context: InvocationContext) -> String {
    "pong".to_owned()
}

rcip_runtime::catalog! {
    /// The test application.
    struct PollsApp {
        id = "polls",
        name = "Polls",
        description = "Polls.",
        version = "2.1.0",
        scopes = [
            ("polls", "Polls", "The poll list."),
            ("poll", "Poll", "One poll.", parent = "polls"),
        ],
        capabilities = [prepare_create, count, broken, ping],
    }
}

fn definition() -> ApplicationDefinition {
    PollsApp::definition().unwrap()
}

#[test]
fn the_catalog_macro_builds_the_same_definition_as_the_builder() {
    let by_hand = ApplicationDefinition::new("polls", "Polls", "Polls.")
        .version("2.1.0")
        .scope(ScopeDefinition::new("polls", "Polls", "The poll list."))
        .scope(ScopeDefinition::new("poll", "Poll", "One poll.").parent("polls"))
        .capability(<prepare_create as CapabilitySpec>::definition().unwrap())
        .capability(<count as CapabilitySpec>::definition().unwrap())
        .capability(<broken as CapabilitySpec>::definition().unwrap())
        .capability(<ping as CapabilitySpec>::definition().unwrap());
    assert_eq!(definition(), by_hand);
    assert_eq!(
        PollsApp::CAPABILITY_IDS,
        ["polls.prepareCreate", "polls.count", "app.broken", "ping"]
    );
}

#[test]
fn the_exported_catalog_is_deterministic() {
    let first = serde_json::to_string_pretty(&definition()).unwrap();
    let second = serde_json::to_string_pretty(&PollsApp::definition().unwrap()).unwrap();
    assert_eq!(first, second);
    assert!(
        first.starts_with("{\n  \"protocolVersion\": \"1.0\""),
        "{first}"
    );
}

#[test]
fn ids_are_derived_from_scope_and_function_name() {
    assert_eq!(
        <prepare_create as CapabilitySpec>::ID,
        "polls.prepareCreate"
    );
    assert_eq!(<count as CapabilitySpec>::ID, "polls.count");
    assert_eq!(<broken as CapabilitySpec>::ID, "app.broken");
    assert_eq!(<ping as CapabilitySpec>::ID, "ping");
}

#[test]
fn titles_and_descriptions_come_from_doc_comments() {
    let create: CapabilityDefinition = <prepare_create as CapabilitySpec>::definition().unwrap();
    assert_eq!(create.title, "Create a poll");
    assert_eq!(
        create.description,
        "Creates a poll with a question and its options."
    );
    // One paragraph: it is both the title (without its period) and the description.
    let ping = <ping as CapabilitySpec>::definition().unwrap();
    assert_eq!(
        (ping.title.as_str(), ping.description.as_str()),
        ("Answers pong", "Answers pong.")
    );
    assert_eq!(create.effect, Effect::Write);
    assert_eq!(create.scope_ids, ["polls"]);
    assert_eq!(create.tags.as_deref(), Some(&["authoring".to_owned()][..]));
    let usage = create.usage.unwrap();
    assert_eq!(
        usage.when_to_use,
        "When the user wants to ask the group something."
    );
    let examples = usage.examples.unwrap();
    assert_eq!(examples[0].description, "Lunch");
    assert_eq!(
        examples[0].input,
        json!({"question": "Where?", "options": ["A", "B"]})
    );
    let broken = <broken as CapabilitySpec>::definition().unwrap();
    assert_eq!(
        (broken.title.as_str(), broken.description.as_str()),
        ("Broken", "Fails.")
    );
    // Declared nothing optional: the trait's defaults, so the definition has none of them.
    assert_eq!(
        (ping.tags, ping.usage, ping.idempotent),
        (None, None, false)
    );
    assert_eq!(<ping as CapabilitySpec>::TAGS, &[] as &[&str]);
    assert_eq!(<ping as CapabilitySpec>::WHEN_TO_USE, None);
    assert!(<ping as CapabilitySpec>::EXAMPLES.is_empty());
}

#[test]
fn derived_schemas_are_strict_and_inlined() {
    let create = <prepare_create as CapabilitySpec>::definition().unwrap();
    assert_eq!(
        create.input_schema,
        json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question."},
                "options": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Two or more options."
                }
            },
            "required": ["question", "options"],
            "additionalProperties": false
        })
    );
    for definition in definition().capabilities {
        for schema in [&definition.input_schema, &definition.output_schema] {
            let text = schema.to_string();
            for banned in ["$ref", "$defs", "$schema", "format"] {
                assert!(!text.contains(banned), "{banned} in {text}");
            }
            rcip_runtime::rcip_core::schema::check_strict(schema).unwrap();
        }
    }
}

#[tokio::test]
async fn annotated_functions_run_through_the_runtime() {
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
    )
    .unwrap();
    let host = runtime.host();
    let store = Store::default();
    host.bind_capability::<prepare_create>(store.clone())
        .unwrap()
        .keep();
    host.bind_capability::<count>(store.clone()).unwrap().keep();
    host.bind_capability::<broken>(()).unwrap().keep();
    host.bind_capability::<ping>(()).unwrap().keep();
    let client = runtime.client();

    let created = client
        .invoke(
            InvocationRequest::new(
                "polls.prepareCreate",
                json!({"question": "Lunch?", "options": ["A", "B"]}),
            )
            .with_id("inv-1"),
        )
        .await;
    assert_eq!(created.output(), Some(&json!({"pollId": "p1"})));
    assert_eq!(store.0.lock().unwrap().as_slice(), ["inv-1:Lunch?"]);

    let counted = client
        .invoke(InvocationRequest::new("polls.count", json!({})))
        .await;
    assert_eq!(counted.output(), Some(&json!(1)));

    let pong = client
        .invoke(InvocationRequest::new("ping", json!({})))
        .await;
    assert_eq!(pong.output(), Some(&json!("pong")));

    let failed = client
        .invoke(InvocationRequest::new("app.broken", json!({})))
        .await;
    assert_eq!(failed.error_code(), Some(ErrorCode::ExecutionFailed));
    assert!(!serde_json::to_string(&failed).unwrap().contains("secret"));

    let invalid = client
        .invoke(InvocationRequest::new(
            "polls.prepareCreate",
            json!({"question": "Lunch?", "options": ["A"], "extra": 1}),
        ))
        .await;
    assert_eq!(invalid.status(), OutcomeStatus::Failed);
    assert_eq!(invalid.error_code(), Some(ErrorCode::InputInvalid));
}

/// A `HandlerError` returned by an annotated function keeps its kind.
#[capability(
    effect = "read",
    id = "app.gaveUp",
    title = "Gives up",
    description = "Gives up."
)]
async fn gave_up(_input: Empty) -> Result<u32, HandlerError> {
    Err(HandlerError::aborted())
}

#[tokio::test]
async fn handler_errors_keep_their_kind() {
    let definition = ApplicationDefinition::new("app", "App", "App.")
        .capability(<gave_up as CapabilitySpec>::definition().unwrap());
    let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
    runtime
        .host()
        .bind_capability::<gave_up>(())
        .unwrap()
        .keep();
    let outcome = runtime
        .client()
        .invoke(InvocationRequest::new("app.gaveUp", json!({})))
        .await;
    assert_eq!(outcome.error_code(), Some(ErrorCode::ExecutionAborted));
}

/// Returns untyped JSON, which has no strict schema.
#[capability(
    effect = "read",
    id = "app.untyped",
    title = "Untyped",
    description = "Untyped."
)]
fn untyped(_input: Empty) -> Value {
    Value::Null
}

#[test]
fn untyped_outputs_are_refused_with_a_clear_error() {
    let error = <untyped as CapabilitySpec>::definition().unwrap_err();
    assert_eq!(error.code(), "UNTYPED_VALUE");
    assert_eq!(
        error.to_string(),
        "RCIP capability app.untyped has no strict schema: untyped JSON value at the root"
    );
}

#[tokio::test]
async fn typed_invocation_round_trips_the_contract_types() {
    let runtime = Runtime::new(
        definition(),
        RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
    )
    .unwrap();
    runtime
        .host()
        .bind_capability::<prepare_create>(Store::default())
        .unwrap()
        .keep();
    let client = runtime.client();
    let input = CreatePoll {
        question: "Lunch?".to_owned(),
        options: vec!["A".to_owned(), "B".to_owned()],
    };
    let outcome = client.invoke_typed::<prepare_create>(&input).await;
    assert_eq!(
        outcome.output(),
        Some(&PollRef {
            poll_id: "p1".to_owned()
        })
    );
    // The runtime's checks apply as to any invocation.
    let unbound = client.invoke_typed::<count>(&Empty {}).await;
    assert!(matches!(
        unbound,
        TypedOutcome::Failed { ref error, .. } if error.code == ErrorCode::CapabilityUnbound
    ));
}
