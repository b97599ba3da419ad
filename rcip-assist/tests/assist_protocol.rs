//! Assist's protocol rules: option bounds, whole-batch validation, the fallback summaries,
//! and the `decide` request/response JSON shapes of the TypeScript SDK.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use rcip_assist::{
    AssistAction, AssistMode, AssistStep, BatchError, DEFAULT_MAX_BATCH_SIZE, Decision, DelayAfter,
    DelayPresets, actions_response, clamp_batch_size, fallback_summary, message_response,
    validate_decision,
};
use rcip_runtime::{ErrorCode, InvocationOutcome, RcipError};
use serde_json::{Value, json};

#[test]
fn batch_size_and_delays_are_clamped_like_the_reference() {
    assert_eq!(clamp_batch_size(f64::NAN), DEFAULT_MAX_BATCH_SIZE);
    assert_eq!(clamp_batch_size(f64::NEG_INFINITY), 8);
    assert_eq!(clamp_batch_size(-3.0), 1);
    assert_eq!(clamp_batch_size(0.99), 1);
    assert_eq!(clamp_batch_size(32.99), 32);
    assert_eq!(clamp_batch_size(33.0), 32);
    assert_eq!(clamp_batch_size(8.0), 8);
    let presets = DelayPresets::default();
    assert_eq!(presets.get(DelayAfter::Short), Duration::from_millis(250));
    assert_eq!(presets.get(DelayAfter::Medium), Duration::from_millis(750));
    assert_eq!(presets.get(DelayAfter::Long), Duration::from_millis(1500));
    let custom = presets
        .with(DelayAfter::Short, -5.0)
        .with(DelayAfter::Medium, f64::INFINITY)
        .with(DelayAfter::Long, 10_000.5);
    assert_eq!(custom.short, Duration::ZERO);
    assert_eq!(custom.medium, Duration::from_millis(750));
    assert_eq!(custom.long, Duration::from_secs(10));
    assert_eq!(AssistMode::default(), AssistMode::ReadOnly);
}

fn action(i: usize) -> Value {
    json!({"capabilityId": "notes.read", "delayAfter": "short", "input": {"i": i}})
}

#[test]
fn a_batch_is_validated_whole() {
    let nine: Vec<Value> = (0..9).map(action).collect();
    assert_eq!(
        validate_decision(&json!({"type": "actions", "actions": nine}), 8),
        Err(BatchError::InvalidBatch)
    );
    let eight: Vec<Value> = (0..8).map(action).collect();
    let Decision::Actions(actions) =
        validate_decision(&json!({"type": "actions", "actions": eight}), 8).unwrap()
    else {
        panic!("actions expected");
    };
    assert_eq!(actions.len(), 8);
    assert_eq!(actions[3].input, Some(json!({"i": 3})));
    assert_eq!(actions[0].id, None, "generated later, as the invocation id");
    // Every invalid shape is in `assist_turns.rs`, which also checks that nothing ran.
    assert_eq!(
        BatchError::InvalidBatch.to_string(),
        "The assist callback returned an invalid action batch."
    );
    assert_eq!(
        BatchError::InvalidAction.to_string(),
        "The assist callback returned an invalid action."
    );
    assert_eq!(
        validate_decision(&json!({"type": "message", "message": "  Hello  "}), 8),
        Ok(Decision::Message("Hello".into()))
    );
    let with_id = validate_decision(
        &json!({"type": "actions", "actions": [
        {"capabilityId": "a", "delayAfter": "long", "id": "mine", "input": null}]}),
        8,
    )
    .unwrap();
    assert!(matches!(with_id, Decision::Actions(a) if a[0].id.as_deref() == Some("mine")));
}

fn step(outcome: InvocationOutcome) -> AssistStep {
    AssistStep {
        action: AssistAction {
            capability_id: "notes.read".into(),
            delay_after: DelayAfter::Short,
            id: Some("a1".into()),
            input: Some(json!({})),
        },
        outcome,
    }
}

#[test]
fn every_fallback_summary() {
    let ok = || {
        step(InvocationOutcome::Succeeded {
            invocation_id: "a1".into(),
            capability_id: "notes.read".into(),
            output: json!(1),
        })
    };
    let failed = step(InvocationOutcome::from_error(
        "a2".into(),
        "notes.write".into(),
        RcipError::new(
            ErrorCode::PolicyDenied,
            "Assist read-only mode denied a state-changing capability.",
        ),
    ));
    assert_eq!(fallback_summary(&[]), "No capability was run.");
    assert_eq!(
        fallback_summary(&[ok()]),
        "The requested action completed successfully."
    );
    assert_eq!(
        fallback_summary(&[ok(), ok(), ok()]),
        "3 actions completed successfully."
    );
    assert_eq!(
        fallback_summary(&[ok(), failed]),
        "The action stopped: Assist read-only mode denied a state-changing capability."
    );
    let waiting: InvocationOutcome = serde_json::from_value(json!({
        "status": "confirmation_required", "invocationId": "a3", "capabilityId": "notes.clear",
        "confirmation": {"id": "confirmation_x", "title": "Clear",
            "description": "Clears.", "effect": "destructive", "expiresAt": 1}
    }))
    .unwrap();
    assert_eq!(
        fallback_summary(&[step(waiting)]),
        "The application is still waiting for confirmation."
    );
}

#[test]
fn decide_responses_are_the_sdks_json() {
    let action =
        AssistAction::new("polls.vote", DelayAfter::Long, json!({"option": 1})).with_id("a-1");
    assert_eq!(
        actions_response(&[
            action,
            AssistAction::new("polls.list", DelayAfter::Short, json!({}))
        ]),
        json!({"type": "actions", "actions": [
            {"capabilityId": "polls.vote", "delayAfter": "long", "id": "a-1", "input": {"option": 1}},
            {"capabilityId": "polls.list", "delayAfter": "short", "input": {}}
        ]})
    );
    assert_eq!(
        message_response("Done."),
        json!({"type": "message", "message": "Done."})
    );
}

#[test]
fn decide_json_shapes_are_the_sdks() {
    let action = AssistAction {
        capability_id: "polls.list".into(),
        delay_after: DelayAfter::Medium,
        id: None,
        input: Some(json!({})),
    };
    assert_eq!(
        serde_json::to_value(&action).unwrap(),
        json!({"capabilityId": "polls.list", "delayAfter": "medium", "input": {}})
    );
    let message: rcip_assist::AssistMessage = serde_json::from_value(json!({
        "content": "Hi", "createdAt": 5, "id": "message_1_1", "role": "user"
    }))
    .unwrap();
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({"content": "Hi", "createdAt": 5, "id": "message_1_1", "role": "user"})
    );
    assert_eq!(
        serde_json::to_value(AssistMode::ReadOnly).unwrap(),
        json!("read-only")
    );
    assert_eq!(
        serde_json::to_value(rcip_assist::Phase::Summarize).unwrap(),
        json!("summarize")
    );
}

/// A `decide` request a newer SDK wrote (members this version does not know in the request,
/// a message, the snapshot, a step's action and outcome) reads, and writes back without them.
#[test]
fn a_request_with_unknown_members_deserializes() {
    let request: rcip_assist::AssistRequest = serde_json::from_value(json!({
        "messages": [{"content": "Hi", "createdAt": 1, "id": "message_1_1", "role": "user", "locale": "en"}],
        "mode": "interactive",
        "phase": "summarize",
        "snapshot": {
            "protocolVersion": "1.0",
            "revision": 0,
            "application": {"id": "notes", "name": "Notes", "description": "N."},
            "scopes": [],
            "context": {"activeScopeIds": []},
            "capabilities": [],
            "extra": true
        },
        "steps": [{
            "action": {"capabilityId": "notes.list", "delayAfter": "short", "input": {}, "why": "asked"},
            "outcome": {"status": "succeeded", "invocationId": "i", "capabilityId": "notes.list", "output": [], "ms": 2},
            "note": "x"
        }],
        "turnId": "turn_1_1",
        "model": "future"
    }))
    .unwrap();
    assert_eq!(request.steps.len(), 1);
    let written = serde_json::to_value(&request).unwrap();
    assert_eq!(written.get("model"), None);
    assert_eq!(written["steps"][0].get("note"), None);
    assert_eq!(written["steps"][0]["action"].get("why"), None);
    assert_eq!(written["messages"][0].get("locale"), None);
}
