//! The bridge over an in-process duplex, with rmcp's own client, in both MCP revisions.
#![allow(clippy::unwrap_used)]

mod common;
mod duplex;

use std::time::Duration;

use common::*;
use rcip_mcp::rmcp::model::{
    CacheScope, CallToolResponse, CallToolResult, ErrorCode, SubscriptionFilter,
};
use rcip_mcp::rmcp::service::ServiceError;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_tools_with_annotations_in_both_eras() {
    let app = App::new();
    for era in ERAS {
        let client = connect(&app, Human::new(Answer::Approve), era).await;
        let page = client.list_tools(None).await.unwrap();
        match era {
            Era::Legacy => assert_eq!((page.ttl_ms, page.cache_scope), (None, None)),
            Era::Modern => assert_eq!(
                (page.ttl_ms, page.cache_scope),
                (Some(0), Some(CacheScope::Private))
            ),
        }
        let tools = client.list_all_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        // Bound ones only: notes.archive is never bound.
        assert_eq!(
            names,
            [
                "notes.list",
                "notes.add",
                "notes.delete",
                "notes.count",
                "notes.slow",
                "notes.fail"
            ],
            "{era:?}"
        );
        let list = &tools[0];
        let annotations = list.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(true));
        assert_eq!(annotations.destructive_hint, Some(false));
        let delete = &tools[2];
        let annotations = delete.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(false));
        assert_eq!(annotations.destructive_hint, Some(true));
        assert_eq!(delete.title.as_deref(), Some("Delete a note"));
        // A non-object output: wrapped for 2025-11-25, as it is for 2026-07-28.
        let count = tools[3].output_schema.as_ref().unwrap();
        match era {
            Era::Legacy => assert_eq!(count["type"], "object"),
            Era::Modern => assert_eq!(count["type"], "integer"),
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_a_read() {
    let app = App::new();
    for era in ERAS {
        let client = connect(&app, Human::new(Answer::Approve), era).await;
        let result = client
            .call_tool(call("notes.list", json!({})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({"notes": ["first"]})));
        assert_eq!(text(&result), r#"{"notes":["first"]}"#);
        let count = client
            .call_tool(call("notes.count", json!({})))
            .await
            .unwrap();
        match era {
            Era::Legacy => assert_eq!(count.structured_content, Some(json!({"result": 1}))),
            Era::Modern => assert_eq!(count.structured_content, Some(json!(1))),
        }
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_is_approved_through_the_clients_elicitation() {
    for era in ERAS {
        let app = App::new();
        let human = Human::new(Answer::Approve);
        let client = connect(&app, human.clone(), era).await;
        let result = client
            .call_tool(call("notes.add", json!({"text": "second"})))
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false), "{era:?}: {result:?}");
        assert_eq!(result.structured_content, Some(json!({"added": "second"})));
        assert_eq!(human.asked(), 1, "{era:?}");
        let message = human.messages.lock().unwrap()[0].clone();
        assert!(message.contains("Add a note"), "{message}");
        assert!(message.contains("write"), "{message}");
        assert_eq!(app.notes(), ["first", "second"]);
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_call_declined_is_confirmation_declined() {
    for era in ERAS {
        for answer in [Answer::Decline, Answer::Cancel, Answer::Refuse] {
            let app = App::new();
            let human = Human::new(answer);
            let client = connect(&app, human.clone(), era).await;
            let result = client
                .call_tool(call("notes.delete", json!({"text": "first"})))
                .await
                .unwrap();
            assert_eq!(code(&result), "CONFIRMATION_DECLINED", "{era:?} {answer:?}");
            assert_eq!(app.notes(), ["first"]);
            client.cancel().await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_input_is_an_error_result_with_its_issues() {
    let app = App::new();
    for era in ERAS {
        let client = connect(&app, Human::new(Answer::Approve), era).await;
        let result = client
            .call_tool(call("notes.add", json!({"text": "", "extra": 1})))
            .await
            .unwrap();
        assert_eq!(code(&result), "INPUT_INVALID");
        let issues = issue_lines(&result);
        // The property is named (the issue's params), not only Ajv's "must NOT have
        // additional properties".
        assert!(
            issues
                .iter()
                .any(|i| i == "the input: unexpected property `extra` (additionalProperties)"),
            "{issues:?}"
        );
        assert!(
            issues
                .iter()
                .any(|i| i.starts_with("/text: ") && i.ends_with(" (minLength)")),
            "{issues:?}"
        );
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unbound_capability_and_an_unknown_tool() {
    let app = App::new();
    for era in ERAS {
        let client = connect(&app, Human::new(Answer::Approve), era).await;
        // Not listed, but a capability of the app: the runtime answers.
        let result = client
            .call_tool(call("notes.archive", json!({})))
            .await
            .unwrap();
        assert_eq!(code(&result), "CAPABILITY_UNBOUND");
        let error = client
            .call_tool(call("notes.nothing", json!({})))
            .await
            .unwrap_err();
        let ServiceError::McpError(error) = error else {
            panic!("{error:?}")
        };
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, "Unknown tool: notes.nothing");
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handlers_error_text_never_reaches_a_result() {
    let app = App::new();
    for era in ERAS {
        let client = connect(&app, Human::new(Answer::Approve), era).await;
        let result = client
            .call_tool(call("notes.fail", json!({})))
            .await
            .unwrap();
        assert_eq!(code(&result), "EXECUTION_FAILED");
        let wire = serde_json::to_string(&result).unwrap();
        assert!(!wire.contains("hunter2"), "{wire}");
        client.cancel().await.unwrap();
    }
}

/// The one pending confirmation of `app`, as the host's own interface sees it.
fn the_pending_confirmation(app: &App) -> String {
    let pending = app.runtime.host().pending_confirmations();
    assert_eq!(pending.len(), 1, "{pending:?}");
    pending[0].confirmation.id.clone()
}

fn assert_awaiting(result: &CallToolResult) {
    // An error result (what every SDK accepts from a tool with an output schema), saying
    // the approval is pending in the application, with nothing to approve it with.
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(code(result), rcip_mcp::APPROVAL_PENDING);
    assert!(text(result).contains("awaits approval in the application"));
    assert!(result.structured_content.is_none());
    let wire = serde_json::to_string(result).unwrap();
    assert!(!wire.contains("confirmation_"), "{wire}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_elicitation_a_write_awaits_the_host_and_the_retry_gets_the_outcome_once() {
    // Both eras, with a broker (the client cannot show a form) and without one.
    for broker in [true, false] {
        for era in ERAS {
            let app = App::with(Duration::from_secs(60), broker, |b| b);
            let human = Human::without_elicitation();
            let client = connect(&app, human.clone(), era).await;
            let delete = || call("notes.delete", json!({"text": "first"}));
            let result = client.call_tool(delete()).await.unwrap();
            assert_awaiting(&result);
            // Calling again while it waits: the same answer, no second confirmation.
            assert_awaiting(&client.call_tool(delete()).await.unwrap());
            let id = the_pending_confirmation(&app);
            assert_eq!(app.notes(), ["first"], "nothing ran yet");
            // Other arguments are another call.
            let other = client
                .call_tool(call("notes.delete", json!({"text": "second"})))
                .await
                .unwrap();
            assert_awaiting(&other);
            assert_eq!(app.runtime.host().pending_confirmations().len(), 2);
            // The host approves in its own interface; the retry gets the outcome, once.
            let approved = app.runtime.host().resolve_confirmation(&id, true).await;
            assert_eq!(approved.status(), rcip_runtime::OutcomeStatus::Succeeded);
            assert!(app.notes().is_empty());
            let result = client.call_tool(delete()).await.unwrap();
            assert_eq!(
                result.is_error,
                Some(false),
                "{era:?} broker {broker}: {result:?}"
            );
            assert_eq!(
                result.structured_content,
                Some(json!({"deleted": "first"})),
                "{era:?}"
            );
            // Once: the next call is a new call, waiting again.
            assert_awaiting(&client.call_tool(delete()).await.unwrap());
            assert_eq!(human.asked(), 0);
            client.cancel().await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_decline_reaches_the_retry() {
    let app = App::new();
    let client = connect(&app, Human::without_elicitation(), Era::Modern).await;
    let delete = || call("notes.delete", json!({"text": "first"}));
    assert_awaiting(&client.call_tool(delete()).await.unwrap());
    let id = the_pending_confirmation(&app);
    app.runtime.host().resolve_confirmation(&id, false).await;
    let result = client.call_tool(delete()).await.unwrap();
    assert_eq!(code(&result), "CONFIRMATION_DECLINED");
    assert_eq!(app.notes(), ["first"]);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_after_an_unbind_and_not_after_an_invoke_legacy() {
    let app = App::new();
    let human = Human::new(Answer::Approve);
    let client = connect(&app, human.clone(), Era::Legacy).await;
    client.list_all_tools().await.unwrap();
    let result = client
        .call_tool(call("notes.list", json!({})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        human.list_changed.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    app.unbind("notes.count");
    tokio::time::timeout(Duration::from_secs(5), human.list_changed_notify.notified())
        .await
        .unwrap();
    assert_eq!(
        human.list_changed.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "notes.count"));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_after_an_unbind_and_not_after_an_invoke_modern() {
    let app = App::new();
    let client = connect(&app, Human::new(Answer::Approve), Era::Modern).await;
    let mut subscription = client
        .peer()
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    let result = client
        .call_tool(call("notes.list", json!({})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let quiet = tokio::time::timeout(Duration::from_millis(300), subscription.next()).await;
    assert!(
        quiet.is_err(),
        "a plain invoke announced a change: {quiet:?}"
    );
    app.unbind("notes.count");
    let notification = tokio::time::timeout(Duration::from_secs(5), subscription.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let wire = serde_json::to_value(&notification).unwrap();
    assert_eq!(wire["method"], "notifications/tools/list_changed", "{wire}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_is_cancelled_and_the_handler_sees_it() {
    for era in ERAS {
        let app = App::new();
        let client = connect(&app, Human::new(Answer::Approve), era).await;
        let seen = app.slow_cancelled.notified();
        // Dropping the request future sends notifications/cancelled.
        let call = tokio::time::timeout(
            Duration::from_millis(300),
            client.call_tool_once(call("notes.slow", json!({}))),
        )
        .await;
        assert!(call.is_err(), "{era:?}: the slow call returned");
        tokio::time::timeout(Duration::from_secs(5), seen)
            .await
            .unwrap();
        client.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_round_by_hand_and_its_request_state_refusals() {
    let app = App::new();
    let client = connect(&app, Human::new(Answer::Approve), Era::Modern).await;
    let first = |text: &str| call("notes.add", json!({"text": text}));
    let CallToolResponse::InputRequired(round) = client.call_tool_once(first("x")).await.unwrap()
    else {
        panic!("no input_required")
    };
    let state = round.request_state.clone().unwrap();
    let requests = round.input_requests.clone().unwrap();
    let wire = serde_json::to_value(&requests["confirm"]).unwrap();
    assert_eq!(wire["method"], "elicitation/create");
    assert_eq!(
        wire["params"]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    // Nothing in the round names the confirmation id the runtime holds.
    let approve = || {
        let mut responses = std::collections::BTreeMap::new();
        responses.insert(
            "confirm".to_owned(),
            json!({"action": "accept", "content": {"confirm": true}}),
        );
        responses
    };
    let refused = |response: Result<CallToolResponse, ServiceError>| match response {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}"),
        other => panic!("not refused: {other:?}"),
    };
    // Forged: one character changed.
    let mut forged = state.clone().into_bytes();
    let last = forged.len() - 1;
    forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    refused(
        client
            .call_tool_once(
                first("x")
                    .with_request_state(forged)
                    .with_input_responses(approve()),
            )
            .await,
    );
    // Cross-arguments: the same state for other arguments.
    refused(
        client
            .call_tool_once(
                first("y")
                    .with_request_state(state.clone())
                    .with_input_responses(approve()),
            )
            .await,
    );
    // Another tool.
    refused(
        client
            .call_tool_once(
                call("notes.delete", json!({"text": "x"}))
                    .with_request_state(state.clone())
                    .with_input_responses(approve()),
            )
            .await,
    );
    assert_eq!(app.notes(), ["first"]);
    // No answer yet: asked again.
    let again = client
        .call_tool_once(first("x").with_request_state(state.clone()))
        .await
        .unwrap();
    assert!(
        matches!(again, CallToolResponse::InputRequired(_)),
        "{again:?}"
    );
    // The real retry runs it, once.
    let CallToolResponse::Complete(done) = client
        .call_tool_once(
            first("x")
                .with_request_state(state.clone())
                .with_input_responses(approve()),
        )
        .await
        .unwrap()
    else {
        panic!("not complete")
    };
    assert_eq!(done.structured_content, Some(json!({"added": "x"})));
    // Replayed.
    let replay = client
        .call_tool_once(
            first("x")
                .with_request_state(state.clone())
                .with_input_responses(approve()),
        )
        .await;
    match &replay {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("CONFIRMATION_ALREADY_USED"), "{e:?}");
        }
        other => panic!("replay not refused: {other:?}"),
    }
    assert_eq!(app.notes(), ["first", "x"]);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_request_state_is_refused() {
    let app = App::with(Duration::from_millis(400), true, |b| b);
    let client = connect(&app, Human::new(Answer::Approve), Era::Modern).await;
    let params = call("notes.add", json!({"text": "late"}));
    let CallToolResponse::InputRequired(round) =
        client.call_tool_once(params.clone()).await.unwrap()
    else {
        panic!("no input_required")
    };
    tokio::time::sleep(Duration::from_millis(700)).await;
    let mut responses = std::collections::BTreeMap::new();
    responses.insert(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let retry = client
        .call_tool_once(
            params
                .with_request_state(round.request_state.unwrap())
                .with_input_responses(responses),
        )
        .await;
    match retry {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(app.notes(), ["first"]);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_2025_elicitation_ends_at_the_confirmations_expiry() {
    let app = App::with(Duration::from_millis(400), true, |b| b);
    let client = connect(&app, Human::new(Answer::Ignore), Era::Legacy).await;
    let started = std::time::Instant::now();
    let result = client
        .call_tool(call("notes.delete", json!({"text": "first"})))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let code = code(&result);
    assert!(
        code == "CONFIRMATION_EXPIRED" || code == "CONFIRMATION_DECLINED",
        "{code}"
    );
    assert_eq!(app.notes(), ["first"]);
    client.cancel().await.unwrap();
}
