//! `#[derive(Capability)]`: a contract on its input type, bound later by the host, listed in
//! a catalog beside `#[capability]` functions declared in the same module.
#![allow(clippy::unwrap_used)]

use rcip_runtime::{
    Capability, CapabilitySpec, HandlerError, InvocationContext, PolicyDecision, RcipClientExt,
    Runtime, RuntimeOptions, capability, catalog, policy_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Create a poll.
///
/// Creates a poll with a question and its options.
#[derive(Debug, Serialize, Deserialize, JsonSchema, Capability)]
#[rcip(
    id = "polls.create",
    effect = "write",
    scope = "polls",
    output = PollRef,
    when_to_use = "When a new question comes up."
)]
#[serde(deny_unknown_fields)]
struct CreatePoll {
    question: String,
    options: Vec<String>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PollRef {
    id: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// Count polls.
#[capability(effect = "read", scope = "polls")]
fn count(_input: Nothing) -> u32 {
    0
}

catalog! {
    struct App {
        id = "polls",
        name = "Polls",
        description = "Polls.",
        scopes = [("polls", "Polls", "The list.")],
        capabilities = [CreatePoll, count],
    }
}

#[test]
fn the_derive_declares_the_contract() {
    assert_eq!(<CreatePoll as CapabilitySpec>::ID, "polls.create");
    let definition = <CreatePoll as CapabilitySpec>::definition().unwrap();
    assert_eq!(definition.title, "Create a poll");
    assert_eq!(
        definition.description,
        "Creates a poll with a question and its options."
    );
    assert_eq!(definition.scope_ids, ["polls"]);
    assert_eq!(
        definition.output_schema["required"],
        serde_json::json!(["id"])
    );
    assert_eq!(
        App::CAPABILITY_IDS,
        ["polls.create", <count as CapabilitySpec>::ID]
    );
}

#[tokio::test]
async fn the_host_binds_a_handler_to_a_derived_contract() {
    let runtime = Runtime::new(
        App::definition().unwrap(),
        RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
    )
    .unwrap();
    runtime
        .host()
        .bind_typed::<CreatePoll, _, _>(|input: CreatePoll, _ctx: InvocationContext| async move {
            Ok::<_, HandlerError>(PollRef {
                id: format!("{}:{}", input.question, input.options.len()),
            })
        })
        .unwrap()
        .keep();
    runtime.host().bind_capability::<count>(()).unwrap().keep();
    let client = runtime.client();
    let outcome = client
        .invoke_typed::<CreatePoll>(&CreatePoll {
            question: "Lunch?".to_owned(),
            options: vec!["A".to_owned()],
        })
        .await;
    assert_eq!(
        outcome.output(),
        Some(&PollRef {
            id: "Lunch?:1".to_owned()
        })
    );
    let counted = client.invoke_typed::<count>(&Nothing {}).await;
    assert_eq!(counted.output(), Some(&0));
}

#[tokio::test]
async fn bind_all_skips_contracts_without_a_handler() {
    let runtime = Runtime::new(
        App::definition().unwrap(),
        RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
    )
    .unwrap();
    // `count` is stateless, and `CreatePoll` has no handler to bind: `()` is enough.
    let guards = App::bind_all(&runtime.host(), ()).unwrap();
    assert_eq!(guards.len(), 1);
    let unbound = runtime.check_bound().unwrap_err();
    assert_eq!(
        unbound,
        rcip_runtime::Error::Unbound(vec!["polls.create".to_owned()])
    );
    guards.keep();
    let counted = runtime.client().invoke_typed::<count>(&Nothing {}).await;
    assert_eq!(counted.output(), Some(&0));
}
