//! The agent corpus: at least 50 Rust input types whose schemas rcip accepts, each with
//! valid example inputs that the runtime validates (input and output), that serde parses, and
//! whose serde round trip is stable; plus the polls example's and the `hiring` package's
//! capabilities in the full corpus.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeSet;

use rcip_examples::agent_corpus::{
    ALL_IDS, EDGE_IDS, corpus, edge_corpus, example_input, example_inputs, full_corpus, handle,
    polls_definition, reparse, same_rust_value,
};
use rcip_runtime::{
    Binding, ErrorCode, HandlerError, InvocationContext, InvocationOutcome, InvocationRequest,
    PolicyDecision, Runtime, RuntimeOptions, policy_fn,
};
use serde_json::{Value, json};

/// A runtime serving every capability of the table (object inputs and the others) with
/// [`handle`].
fn serving_runtime() -> Runtime {
    let mut definition = corpus();
    definition.capabilities.extend(edge_corpus().capabilities);
    let runtime = Runtime::new(
        definition,
        RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
    )
    .unwrap();
    for id in ALL_IDS {
        runtime
            .host()
            .bind(
                id,
                Binding::typed(move |input: Value, _ctx: InvocationContext| async move {
                    handle(id, &input).unwrap().map_err(HandlerError::failed)
                }),
            )
            .unwrap()
            .keep();
    }
    runtime
}

async fn invoke(runtime: &Runtime, id: &str, input: Value) -> InvocationOutcome {
    runtime
        .client()
        .invoke(InvocationRequest::new(id, input))
        .await
}

#[test]
fn the_corpus_has_at_least_fifty_distinct_input_types() {
    let definition = corpus();
    let count = definition.capabilities.len();
    assert!(count >= 50, "{count} capabilities");
    let others = edge_corpus();
    let mut ids: Vec<&str> = definition
        .capabilities
        .iter()
        .chain(&others.capabilities)
        .map(|c| c.id.as_str())
        .collect();
    ids.sort_unstable();
    let mut all = ALL_IDS.to_vec();
    all.sort_unstable();
    assert_eq!(ids, all);
    assert_eq!(
        others
            .capabilities
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        EDGE_IDS
    );
    let schemas: BTreeSet<String> = definition
        .capabilities
        .iter()
        .map(|c| c.input_schema.to_string())
        .collect();
    assert!(
        schemas.len() >= 50,
        "{} distinct input schemas",
        schemas.len()
    );
    // Every input is an object closed with additionalProperties (what agent tool schemas
    // need); the edge corpus is what is not.
    let plain_object = |schema: &Value| {
        schema["type"] == "object" && schema["additionalProperties"] == json!(false)
    };
    for capability in &definition.capabilities {
        assert!(plain_object(&capability.input_schema), "{}", capability.id);
    }
    for capability in &others.capabilities {
        assert!(!plain_object(&capability.input_schema), "{}", capability.id);
    }
    // Every effect is used.
    let effects: BTreeSet<String> = definition
        .capabilities
        .iter()
        .map(|c| format!("{:?}", c.effect))
        .collect();
    assert_eq!(effects.len(), 4, "{effects:?}");
}

#[test]
fn the_corpus_covers_formats_wide_integers_and_composition() {
    let text = serde_json::to_string(&corpus()).unwrap();
    for format in rcip_runtime::rcip_core::schema::SUPPORTED_FORMATS {
        assert!(
            text.contains(&format!("\"format\":\"{format}\"")),
            "no {format}"
        );
    }
    for keyword in [
        "oneOf",
        "anyOf",
        "const",
        "enum",
        "prefixItems",
        "uniqueItems",
        "pattern",
        "minLength",
        "maxItems",
        "default",
    ] {
        assert!(text.contains(&format!("\"{keyword}\"")), "no {keyword}");
    }
    // The base form keeps the exact 64-bit bounds (profiles clamp them).
    let definition = corpus();
    let wide = definition
        .capabilities
        .iter()
        .find(|c| c.id == "corpus.wide_integers")
        .unwrap();
    let properties = &wide.input_schema["properties"];
    assert_eq!(properties["unsigned"]["maximum"], json!(u64::MAX));
    assert_eq!(properties["signed"]["minimum"], json!(i64::MIN));
    assert_eq!(properties["signed"]["maximum"], json!(i64::MAX));
    assert_eq!(properties["size"]["maximum"], json!(u64::MAX));
}

#[test]
fn the_full_corpus_builds_a_runtime_with_polls_and_hiring() {
    let full = full_corpus();
    let polls = polls_definition().unwrap();
    // The hiring package, parsed from its file (full_corpus uses the compiled tables).
    let hiring = rcip_relationship::parse_package(include_str!("../programs/hiring.json")).unwrap();
    let hiring = rcip_relationship::package_capabilities(&hiring);
    assert!(hiring.len() >= 20, "{} hiring capabilities", hiring.len());
    let corpus_len = corpus().capabilities.len();
    assert_eq!(
        full.capabilities.len(),
        corpus_len + polls.capabilities.len() + hiring.len()
    );
    assert_eq!(
        full.capabilities[corpus_len + polls.capabilities.len()..],
        hiring[..]
    );
    assert_eq!(
        full.capabilities[corpus_len..][..polls.capabilities.len()],
        polls.capabilities[..]
    );
    let ids: BTreeSet<&str> = full.capabilities.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), full.capabilities.len(), "no id twice");
    for id in [
        "polls.create",
        "poll.vote",
        "polls.poll.vote",
        "polls.ballot.search",
        "hiring.application.hire",
        "hiring.shortlist",
        "hiring.changes",
    ] {
        assert!(ids.contains(id), "{id} missing");
    }
    // Every schema is accepted, and every usage example validates (both at creation).
    Runtime::new(full, RuntimeOptions::default()).unwrap();
}

#[tokio::test]
async fn every_example_validates_and_answers() {
    let runtime = serving_runtime();
    let mut examples = 0;
    for id in ALL_IDS {
        assert!(example_input(id).is_some(), "{id} has no example");
        for example in example_inputs(id) {
            let outcome = invoke(&runtime, id, example.clone()).await;
            let InvocationOutcome::Succeeded { output, .. } = &outcome else {
                panic!("{id} {example}: {outcome:?}");
            };
            assert_eq!(Some(Ok(output.clone())), handle(id, &example), "{id}");
            examples += 1;
        }
    }
    assert!(examples > ALL_IDS.len(), "{examples} examples");
}

#[tokio::test]
async fn every_schema_is_closed_and_checks_its_members() {
    let runtime = serving_runtime();
    for id in ALL_IDS {
        let mut input = example_input(id).unwrap();
        if !input.is_object() {
            continue;
        }
        input["rcip_unknown_member"] = json!(1);
        let outcome = invoke(&runtime, id, input).await;
        assert_eq!(
            outcome.error_code(),
            Some(ErrorCode::InputInvalid),
            "{id}: {outcome:?}"
        );
    }
}

#[tokio::test]
async fn examples_round_trip_through_serde() {
    let runtime = serving_runtime();
    let mut exact = 0;
    let mut total = 0;
    for id in ALL_IDS {
        for example in example_inputs(id) {
            total += 1;
            let canonical = reparse(id, &example).unwrap().unwrap();
            // serde's canonical form is stable, and parses into the same Rust value.
            assert_eq!(reparse(id, &canonical), Some(Ok(canonical.clone())), "{id}");
            assert_eq!(
                same_rust_value(id, &example, &canonical),
                Some(Ok(true)),
                "{id}"
            );
            // The canonical form is a valid input too.
            let outcome = invoke(&runtime, id, canonical.clone()).await;
            assert!(
                matches!(outcome, InvocationOutcome::Succeeded { .. }),
                "{id} {canonical}: {outcome:?}"
            );
            if canonical == example {
                exact += 1;
            }
        }
    }
    // Only the examples that leave optional members out differ from serde's form (it writes
    // them as null): `many_optionals` (2) and `skipped_options` stays exact.
    assert_eq!(total - exact, 2, "{exact} of {total} exact");
}

#[test]
fn the_hooks_tell_values_apart_and_refuse_other_ids() {
    let id = "corpus.sets";
    let a = json!({"tags": ["x", "y"], "ids": [1, 2]});
    let b = json!({"tags": ["y", "x"], "ids": [2, 1]});
    assert_eq!(
        same_rust_value(id, &a, &b),
        Some(Ok(true)),
        "sets by content"
    );
    let c = json!({"tags": ["x"], "ids": [1, 2]});
    assert_eq!(same_rust_value(id, &a, &c), Some(Ok(false)));
    assert!(matches!(
        reparse(id, &json!({"tags": "x", "ids": []})),
        Some(Err(_))
    ));
    // Absent and null optionals are the same Rust value.
    assert_eq!(
        same_rust_value(
            "corpus.option_fields",
            &json!({"name": "A"}),
            &json!({"name": "A", "nickname": null, "age": null, "address": null, "color": null})
        ),
        Some(Ok(true))
    );
    assert_eq!(reparse("polls.create", &json!({})), None);
    assert_eq!(example_input("polls.create"), None);
    assert_eq!(handle("nope", &json!({})), None);
    assert!(example_inputs("nope").is_empty());
}
