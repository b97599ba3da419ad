//! Assist turns, step for step as the reference's section 6.3: messages, batches validated
//! whole, sequential execution to the first non-success, confirmations, delays on a paused
//! clock, cancellation, summaries, statuses, read-only mode and the bounded history.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::*;
use rcip_assist::*;
use rcip_runtime::*;
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[tokio::test(start_paused = true)]
async fn a_message_answers_the_turn_without_a_summarize_call() {
    let app = notes_app();
    let script = Script::new([say("  Hello there.  ")]);
    let assist = interactive(&app, &script, &Prompts::default());
    assert_eq!(assist.status(), AssistStatus::Idle);
    let report = turn(assist.send("  hi  ").await);
    assert_eq!(report.ending, TurnEnding::Answered);
    assert_eq!(report.reply.content, "Hello there.");
    assert_eq!(report.reply.role, Role::Assistant);
    assert_eq!(report.status, AssistStatus::Active);
    assert_eq!(assist.status(), AssistStatus::Active);
    assert!(report.steps.is_empty());
    let requests = script.requests();
    assert_eq!(requests.len(), 1, "no summarize call after a message");
    assert_eq!(requests[0].phase, Phase::Decide);
    assert_eq!(requests[0].messages.last().unwrap().content, "hi");
    let transcript = assist.transcript();
    assert_eq!(transcript.len(), 2);
    assert_eq!(transcript[0].role, Role::User);
    assert_eq!(transcript[1], report.reply);
}

#[tokio::test(start_paused = true)]
async fn blank_text_is_ignored() {
    let app = notes_app();
    let script = Script::default();
    let assist = interactive(&app, &script, &Prompts::default());
    assert_eq!(assist.send(" \n\t ").await, Submission::Ignored);
    assert!(script.requests().is_empty());
    assert!(assist.transcript().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_nine_action_batch_is_refused_with_nothing_invoked() {
    let app = notes_app();
    let nine = (0..9)
        .map(|i| act("notes.add", "short", json!({"text": format!("n{i}")})))
        .collect();
    let script = Script::new([batch(nine)]);
    let assist = interactive(&app, &script, &Prompts::default());
    let report = turn(assist.send("add nine notes").await);
    assert_eq!(
        report.ending,
        TurnEnding::Failed(TurnFailure::Batch(BatchError::InvalidBatch))
    );
    assert_eq!(report.reply.content, FAILED_MESSAGE);
    assert_eq!(report.status, AssistStatus::Error);
    assert_eq!(app.handler_calls(), 0);
    assert!(
        app.events.phases(None).is_empty(),
        "the runtime was never called"
    );
    assert_eq!(script.requests().len(), 1, "no summarize after a failure");

    // Eight is the default limit, and is run.
    let eight = (0..8)
        .map(|i| act("notes.add", "short", json!({"text": format!("n{i}")})))
        .collect();
    script.push(batch(eight));
    let report = turn(assist.send("add eight notes").await);
    assert_eq!(report.steps.len(), 8);
    assert_eq!(app.notes.lock().unwrap().len(), 8);
}

#[tokio::test(start_paused = true)]
async fn invalid_answers_fail_the_turn_before_anything_runs() {
    let cases: Vec<(Value, BatchError)> = vec![
        (
            json!({"type": "message", "message": "   "}),
            BatchError::InvalidBatch,
        ),
        (json!({"type": "message"}), BatchError::InvalidBatch),
        (json!({"message": "no type"}), BatchError::InvalidBatch),
        (
            json!({"type": "actions", "actions": []}),
            BatchError::InvalidBatch,
        ),
        (
            json!({"type": "actions", "actions": {}}),
            BatchError::InvalidBatch,
        ),
        (json!({"type": "actions"}), BatchError::InvalidBatch),
        (json!("a string"), BatchError::InvalidBatch),
        (json!(null), BatchError::InvalidBatch),
        (
            json!({"type": "actions", "actions": [{"delayAfter": "short", "input": {}}]}),
            BatchError::InvalidAction,
        ),
        (
            json!({"type": "actions", "actions": [act(" ", "short", json!({}))]}),
            BatchError::InvalidAction,
        ),
        (
            json!({"type": "actions", "actions": [act("notes.list", "forever", json!({}))]}),
            BatchError::InvalidAction,
        ),
        (
            json!({"type": "actions", "actions": [act("notes.list", "short", json!({})), 7]}),
            BatchError::InvalidAction,
        ),
        // The first action is valid; the second is not: nothing runs.
        (
            json!({"type": "actions", "actions": [
                act("notes.add", "short", json!({"text": "x"})),
                {"capabilityId": "notes.add", "input": {}}
            ]}),
            BatchError::InvalidAction,
        ),
    ];
    for (answer, error) in cases {
        let app = notes_app();
        let script = Script::new([Answer::Json(answer.clone())]);
        let assist = interactive(&app, &script, &Prompts::default());
        let report = turn(assist.send("do it").await);
        assert_eq!(
            report.ending,
            TurnEnding::Failed(TurnFailure::Batch(error)),
            "{answer}"
        );
        assert_eq!(report.reply.content, FAILED_MESSAGE);
        assert_eq!(app.handler_calls(), 0, "{answer}");
        assert!(app.notes.lock().unwrap().is_empty());
    }
}

#[tokio::test(start_paused = true)]
async fn the_batch_stops_at_the_first_non_success() {
    let app = notes_app();
    let script = Script::new([
        batch(vec![
            act("notes.add", "short", json!({"text": "one"})),
            act("notes.broken", "short", json!({})),
            act("notes.add", "short", json!({"text": "never"})),
        ]),
        // The summary proposes more actions: they are ignored.
        batch(vec![act(
            "notes.add",
            "short",
            json!({"text": "from the summary"}),
        )]),
    ]);
    let assist = interactive(&app, &script, &Prompts::default());
    let report = turn(assist.send("add then break").await);
    assert_eq!(report.steps.len(), 2);
    assert_eq!(report.steps[0].outcome.status(), OutcomeStatus::Succeeded);
    assert_eq!(report.steps[1].outcome.status(), OutcomeStatus::Failed);
    assert_eq!(*app.notes.lock().unwrap(), ["one"]);
    assert_eq!(app.handler_calls(), 2, "the third action never ran");
    assert_eq!(report.ending, TurnEnding::FallbackSummary);
    assert_eq!(
        report.reply.content,
        "The action stopped: BROKEN: it always fails"
    );
    assert_eq!(report.status, AssistStatus::Error);
    let requests = script.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].phase, Phase::Summarize);
    assert_eq!(requests[1].steps, report.steps);
    assert_eq!(requests[1].turn_id, requests[0].turn_id);
    assert_eq!(requests[1].turn_id, report.turn_id);
}

#[tokio::test(start_paused = true)]
async fn action_ids_are_the_invocation_ids() {
    let app = notes_app();
    let script = Script::new([batch(vec![
        json!({"capabilityId": "notes.add", "delayAfter": "short", "id": "mine-1", "input": {"text": "a"}}),
        json!({"capabilityId": "notes.add", "delayAfter": "short", "id": "  ", "input": {"text": "b"}}),
        act("notes.list", "short", json!({})),
    ])]);
    let assist = interactive(&app, &script, &Prompts::default());
    let report = turn(assist.send("go").await);
    assert_eq!(report.steps.len(), 3);
    assert_eq!(report.steps[0].action.id.as_deref(), Some("mine-1"));
    for step in &report.steps {
        let id = step.action.id.as_deref().unwrap();
        assert_eq!(step.outcome.invocation_id(), id);
        assert!(!app.events.phases(Some(id)).is_empty(), "{id}");
    }
    for step in &report.steps[1..] {
        assert!(step.action.id.as_deref().unwrap().starts_with("action_"));
    }
    assert_ne!(report.steps[1].action.id, report.steps[2].action.id);
}

#[tokio::test(start_paused = true)]
async fn every_fallback_summary_a_turn_can_reach() {
    // One success.
    let app = notes_app();
    let script = Script::new([
        batch(vec![act("notes.add", "short", json!({"text": "a"}))]),
        Answer::Fail("summarizer down"),
    ]);
    let assist = interactive(&app, &script, &Prompts::default());
    let report = turn(assist.send("one").await);
    assert_eq!(report.ending, TurnEnding::FallbackSummary);
    assert_eq!(
        report.reply.content,
        "The requested action completed successfully."
    );
    assert_eq!(report.status, AssistStatus::Success);

    // Three successes; a blank summary.
    script.push(batch(vec![
        act("notes.add", "short", json!({"text": "b"})),
        act("notes.add", "short", json!({"text": "c"})),
        act("notes.list", "short", json!({})),
    ]));
    script.push(say("  "));
    let report = turn(assist.send("three").await);
    assert_eq!(report.reply.content, "3 actions completed successfully.");

    // A stop; the summarizer panics.
    script.push(batch(vec![act("notes.add", "short", json!({}))]));
    script.push(Answer::Panic);
    let report = turn(assist.send("bad input").await);
    assert_eq!(
        report.steps[0].outcome.error_code(),
        Some(ErrorCode::InputInvalid)
    );
    let message = &report.steps[0].outcome.error().unwrap().message;
    assert_eq!(
        report.reply.content,
        format!("The action stopped: {message}")
    );
    assert_eq!(report.status, AssistStatus::Error);

    // A usable summary is used as written (trimmed).
    script.push(batch(vec![act("notes.list", "short", json!({}))]));
    script.push(say(" There are 3 notes. "));
    let report = turn(assist.send("count").await);
    assert_eq!(report.ending, TurnEnding::Summarized);
    assert_eq!(report.reply.content, "There are 3 notes.");
}

#[tokio::test(start_paused = true)]
async fn decide_failures_answer_with_the_generic_message() {
    let app = notes_app();
    let script = Script::new([Answer::Fail("model timeout"), Answer::Panic]);
    let assist = interactive(&app, &script, &Prompts::default());
    let report = turn(assist.send("one").await);
    assert_eq!(
        report.ending,
        TurnEnding::Failed(TurnFailure::Decide("model timeout".into()))
    );
    assert_eq!(
        report.reply.content,
        "The configured assistant could not process that request. The application remains available."
    );
    assert_eq!(report.status, AssistStatus::Error);
    let report = turn(assist.send("two").await);
    assert!(matches!(
        report.ending,
        TurnEnding::Failed(TurnFailure::Decide(_))
    ));
    // Still usable.
    let report = turn(assist.send("three").await);
    assert_eq!(report.ending, TurnEnding::Answered);
}

#[tokio::test(start_paused = true)]
async fn an_approved_confirmation_runs_the_action() {
    let app = notes_app();
    app.notes.lock().unwrap().push("old".into());
    let script = Script::new([batch(vec![act("notes.clear", "short", json!({}))])]);
    let prompts = Prompts::new([Some(true)]);
    let assist = interactive(&app, &script, &prompts);
    let report = turn(assist.send("clear everything").await);
    let shown = prompts.shown.lock().unwrap().clone();
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0].action.capability_id, "notes.clear");
    assert_eq!(
        shown[0].outcome.status(),
        OutcomeStatus::ConfirmationRequired
    );
    assert_eq!(
        shown[0].outcome.invocation_id(),
        shown[0].action.id.as_deref().unwrap()
    );
    assert_eq!(report.steps.len(), 1);
    assert_eq!(report.steps[0].outcome.status(), OutcomeStatus::Succeeded);
    assert_eq!(report.steps[0].outcome.output(), Some(&json!(1)));
    assert!(app.notes.lock().unwrap().is_empty());
    assert_eq!(report.status, AssistStatus::Success);
    assert_eq!(assist.pending_confirmation(), None);
}

#[tokio::test(start_paused = true)]
async fn a_declined_confirmation_stops_the_batch() {
    let app = notes_app();
    app.notes.lock().unwrap().push("keep".into());
    let script = Script::new([
        batch(vec![
            act("notes.clear", "short", json!({})),
            act("notes.add", "short", json!({"text": "after"})),
        ]),
        Answer::Fail("no summary"),
    ]);
    let prompts = Prompts::new([Some(false)]);
    let assist = interactive(&app, &script, &prompts);
    let report = turn(assist.send("clear then add").await);
    assert_eq!(report.steps.len(), 1);
    assert_eq!(
        report.steps[0].outcome.error_code(),
        Some(ErrorCode::ConfirmationDeclined)
    );
    assert_eq!(*app.notes.lock().unwrap(), ["keep"]);
    assert_eq!(app.handler_calls(), 0);
    assert_eq!(report.status, AssistStatus::Error);
    assert_eq!(
        report.reply.content,
        "The action stopped: The user declined the requested operation."
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_prompt_declines_and_fails_the_turn() {
    let app = notes_app();
    let script = Script::new([batch(vec![act("notes.clear", "short", json!({}))])]);
    let prompts = Prompts::new([None]);
    let assist = interactive(&app, &script, &prompts);
    let report = turn(assist.send("clear").await);
    assert_eq!(report.ending, TurnEnding::Failed(TurnFailure::Confirmation));
    assert_eq!(
        TurnFailure::Confirmation.to_string(),
        "The confirmation could not be resolved."
    );
    assert_eq!(report.reply.content, FAILED_MESSAGE);
    assert_eq!(
        report.steps[0].outcome.error_code(),
        Some(ErrorCode::ConfirmationDeclined)
    );
    assert_eq!(app.handler_calls(), 0);
    assert_eq!(script.requests().len(), 1, "no summarize after a failure");
}

/// Waits (on the paused clock) until `ready` holds.
async fn until(mut ready: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if ready() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("condition never held");
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_turn_declines_its_pending_confirmation() {
    let app = notes_app();
    app.notes.lock().unwrap().push("keep".into());
    let script = Script::new([batch(vec![act("notes.clear", "short", json!({}))])]);
    let prompts = Prompts::hanging();
    let assist = interactive(&app, &script, &prompts);
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send("clear").await }
    });
    until(|| assist.pending_confirmation().is_some()).await;
    assert_eq!(assist.status(), AssistStatus::Attention);
    assert!(assist.is_busy());
    let pending = assist.pending_confirmation().unwrap();
    let ticket = pending.outcome.confirmation().unwrap().id.clone();
    assert_eq!(assist.send("another").await, Submission::Ignored, "busy");
    assert!(!assist.clear(), "clear is ignored while busy");

    assist.cancel();
    let report = turn(running.await.unwrap());
    assert_eq!(report.ending, TurnEnding::Cancelled);
    assert_eq!(report.reply.content, "The request was cancelled.");
    assert_eq!(report.status, AssistStatus::Active);
    assert_eq!(
        report.steps[0].outcome.error_code(),
        Some(ErrorCode::ExecutionAborted),
        "the reference's receipt for a ticket whose invocation was aborted"
    );
    assert_eq!(*app.notes.lock().unwrap(), ["keep"]);
    assert_eq!(app.handler_calls(), 0);
    assert!(!assist.is_busy());
    assert_eq!(assist.pending_confirmation(), None);
    // The ticket is gone: its receipt was handed out once.
    let again = app.host.resolve_confirmation(&ticket, true).await;
    assert_eq!(again.error_code(), Some(ErrorCode::ConfirmationNotFound));
    assert_eq!(
        script.requests().len(),
        1,
        "no summarize after a cancellation"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_decide_stops_waiting_at_once() {
    let app = notes_app();
    let script = Script::new([Answer::Hang]);
    let assist = interactive(&app, &script, &Prompts::default());
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send("think hard").await }
    });
    until(|| !script.requests().is_empty()).await;
    assert_eq!(assist.status(), AssistStatus::Working);
    assist.cancel();
    let report = turn(running.await.unwrap());
    assert_eq!(report.ending, TurnEnding::Cancelled);
    assert!(script.tokens.lock().unwrap()[0].is_cancelled());
    assert_eq!(assist.status(), AssistStatus::Active);
    // The next turn works.
    let report = turn(assist.send("again").await);
    assert_eq!(report.ending, TurnEnding::Answered);
}

#[tokio::test(start_paused = true)]
async fn delays_follow_each_actions_preset_and_none_follows_the_last() {
    let app = notes_app();
    let script = Script::new([batch(vec![
        act("notes.add", "long", json!({"text": "a"})),
        act("notes.add", "medium", json!({"text": "b"})),
        act("notes.add", "short", json!({"text": "c"})),
    ])]);
    let assist = interactive(&app, &script, &Prompts::default());
    let start = Instant::now();
    let report = turn(assist.send("three").await);
    assert_eq!(report.steps.len(), 3);
    assert_eq!(start.elapsed(), Duration::from_millis(1500 + 750));

    // Configured presets, clamped.
    let script = Script::new([batch(vec![
        act("notes.add", "long", json!({"text": "a"})),
        act("notes.add", "short", json!({"text": "b"})),
        act("notes.add", "medium", json!({"text": "c"})),
    ])]);
    let assist = builder(&app, &script)
        .mode(AssistMode::Interactive)
        .delay(DelayAfter::Long, 1e12)
        .delay(DelayAfter::Short, -1.0)
        .build();
    let start = Instant::now();
    turn(assist.send("three").await);
    assert_eq!(start.elapsed(), Duration::from_millis(10_000));

    // All three at once, as durations: also clamped.
    let script = Script::new([batch(vec![
        act("notes.add", "long", json!({"text": "a"})),
        act("notes.add", "medium", json!({"text": "b"})),
        act("notes.add", "short", json!({"text": "c"})),
    ])]);
    let assist = builder(&app, &script)
        .mode(AssistMode::Interactive)
        .delays(DelayPresets {
            short: Duration::ZERO,
            medium: Duration::from_millis(5),
            long: Duration::from_secs(3600),
        })
        .build();
    let start = Instant::now();
    turn(assist.send("three").await);
    assert_eq!(start.elapsed(), Duration::from_millis(10_005));
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_a_delay_stops_the_batch() {
    let app = notes_app();
    let script = Script::new([batch(vec![
        act("notes.add", "long", json!({"text": "a"})),
        act("notes.add", "short", json!({"text": "b"})),
    ])]);
    let assist = interactive(&app, &script, &Prompts::default());
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send("two").await }
    });
    let start = Instant::now();
    until(|| app.notes.lock().unwrap().len() == 1).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assist.cancel();
    let report = turn(running.await.unwrap());
    assert!(start.elapsed() < Duration::from_millis(1500));
    assert_eq!(report.ending, TurnEnding::Cancelled);
    assert_eq!(report.steps.len(), 1);
    assert_eq!(*app.notes.lock().unwrap(), ["a"]);
}

#[tokio::test(start_paused = true)]
async fn success_reads_active_after_a_second_and_a_half() {
    let app = notes_app();
    let script = Script::new([batch(vec![act("notes.list", "short", json!({}))])]);
    let assist = interactive(&app, &script, &Prompts::default());
    let report = turn(assist.send("list").await);
    assert_eq!(report.status, AssistStatus::Success);
    assert_eq!(assist.status(), AssistStatus::Success);
    tokio::time::sleep(Duration::from_millis(1499)).await;
    assert_eq!(assist.status(), AssistStatus::Success);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(assist.status(), AssistStatus::Active);
}

#[tokio::test(start_paused = true)]
async fn read_only_mode_hides_and_refuses_state_changes_without_calling_the_runtime() {
    let app = notes_app();
    let script = Script::new([
        batch(vec![
            act("notes.list", "short", json!({})),
            act("notes.add", "short", json!({"text": "sneaky"})),
        ]),
        Answer::Fail("no summary"),
        batch(vec![act("notes.nope", "short", json!({}))]),
    ]);
    let prompts = Prompts::default();
    let assist = Assist::builder(
        app.runtime.client(),
        script.decide(),
        prompts.resolver(app.host.clone()),
    )
    .build();
    assert_eq!(assist.mode(), AssistMode::ReadOnly, "the default");
    let full = app.runtime.client().get_snapshot();
    let report = turn(assist.send("list, then add").await);

    let seen = &script.requests()[0];
    assert_eq!(seen.mode, AssistMode::ReadOnly);
    let ids: Vec<_> = seen
        .snapshot
        .capabilities
        .iter()
        .map(|c| c.contract.id.as_str())
        .collect();
    assert_eq!(ids, ["notes.list"], "decide sees read capabilities only");
    assert_eq!(seen.snapshot.revision, full.revision);
    assert_eq!(seen.snapshot.application, full.application);

    assert_eq!(report.steps.len(), 2);
    assert_eq!(report.steps[0].outcome.status(), OutcomeStatus::Succeeded);
    let refused = &report.steps[1].outcome;
    assert_eq!(refused.status(), OutcomeStatus::Denied);
    assert_eq!(refused.error_code(), Some(ErrorCode::PolicyDenied));
    assert_eq!(
        refused.error().unwrap().message,
        "Assist read-only mode denied a state-changing capability."
    );
    assert_eq!(
        refused.invocation_id(),
        report.steps[1].action.id.as_deref().unwrap()
    );
    assert!(
        app.events.phases(Some(refused.invocation_id())).is_empty(),
        "no runtime call"
    );
    assert!(app.notes.lock().unwrap().is_empty());
    assert!(prompts.shown.lock().unwrap().is_empty(), "no confirmation");
    assert_eq!(
        report.reply.content,
        "The action stopped: Assist read-only mode denied a state-changing capability."
    );

    // An unknown id is reported as the runtime would: CAPABILITY_NOT_FOUND.
    let report = turn(assist.send("do something unknown").await);
    let unknown = &report.steps[0].outcome;
    assert_eq!(unknown.error_code(), Some(ErrorCode::CapabilityNotFound));
    assert!(app.events.phases(Some(unknown.invocation_id())).is_empty());
    let via_runtime = app
        .runtime
        .client()
        .invoke(InvocationRequest::new("notes.nope", json!({})))
        .await;
    assert_eq!(unknown.error(), via_runtime.error());
    assert_eq!(unknown.status(), via_runtime.status());
}

#[tokio::test(start_paused = true)]
async fn decide_sees_a_bounded_history_and_the_host_keeps_everything() {
    let app = notes_app();
    let script = Script::default();
    let assist = builder(&app, &script)
        .history_limit(3)
        .welcome_message("How can I help with this application?")
        .build();
    assert_eq!(assist.transcript().len(), 1);
    for text in ["one", "two", "three"] {
        turn(assist.send(text).await);
    }
    let last = script.requests().pop().unwrap();
    let seen: Vec<_> = last.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(seen, ["two", "ok", "three"]);
    let transcript = assist.transcript();
    assert_eq!(transcript.len(), 7);
    assert_eq!(
        transcript[0].content,
        "How can I help with this application?"
    );
    assert_eq!(transcript[0].role, Role::Assistant);
    let ids: std::collections::HashSet<_> = transcript.iter().map(|m| &m.id).collect();
    assert_eq!(ids.len(), 7, "message ids are distinct");

    // The default keeps the newest 50.
    assert_eq!(DEFAULT_HISTORY_LIMIT, 50);
    let script = Script::default();
    let assist = interactive(&app, &script, &Prompts::default());
    for i in 0..30 {
        turn(assist.send(&format!("m{i}")).await);
    }
    let last = script.requests().pop().unwrap();
    assert_eq!(last.messages.len(), 50);
    assert_eq!(last.messages.last().unwrap().content, "m29");
    assert_eq!(assist.transcript().len(), 60);

    // A limit of 0 still shows the new message.
    let script = Script::default();
    let assist = builder(&app, &script).history_limit(0).build();
    turn(assist.send("first").await);
    turn(assist.send("second").await);
    let last = script.requests().pop().unwrap();
    assert_eq!(last.messages.len(), 1);
    assert_eq!(last.messages[0].content, "second");

    // Clearing without a welcome message empties the conversation.
    assert!(assist.clear());
    assert!(assist.transcript().is_empty());
    assert_eq!(assist.status(), AssistStatus::Idle);
}

#[tokio::test(start_paused = true)]
async fn clearing_restores_the_welcome_message_and_the_statuses() {
    let app = notes_app();
    let script = Script::new([batch(vec![act("notes.broken", "short", json!({}))])]);
    let welcome = "How can I help with this application?";
    let assist = builder(&app, &script)
        .mode(AssistMode::Interactive)
        .welcome_message(welcome)
        .build();
    let welcomed = assist.transcript();
    turn(assist.send("break it").await);
    assert_eq!(assist.status(), AssistStatus::Error);
    assert_eq!(assist.transcript().len(), 3);
    assert!(assist.clear());
    let cleared = assist.transcript();
    assert_eq!(cleared.len(), 1);
    assert_eq!(cleared[0].content, welcome);
    assert_eq!(cleared[0].role, Role::Assistant);
    assert_ne!(cleared[0].id, welcomed[0].id, "a new welcome message");
    assert_eq!(assist.status(), AssistStatus::Idle);
    assert_eq!(assist.input_status(), InputStatus::Idle);
}

fn is_sequenced_id(id: &str, prefix: &str) -> bool {
    let Some(rest) = id.strip_prefix(prefix) else {
        return false;
    };
    let parts: Vec<_> = rest.split('_').collect();
    parts.len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
        })
}

#[tokio::test(start_paused = true)]
async fn decide_requests_are_the_sdks_json() {
    let app = notes_app();
    let script = Script::new([
        batch(vec![act("notes.add", "medium", json!({"text": "a"}))]),
        say("Added."),
    ]);
    let assist = interactive(&app, &script, &Prompts::default());
    let before = serde_json::to_value(&*app.runtime.client().get_snapshot()).unwrap();
    turn(assist.send("add a").await);
    let requests = script.requests();
    let decide = serde_json::to_value(&requests[0]).unwrap();
    let keys: Vec<_> = decide.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        ["messages", "mode", "phase", "snapshot", "steps", "turnId"]
    );
    assert_eq!(decide["mode"], "interactive");
    assert_eq!(decide["phase"], "decide");
    assert_eq!(decide["steps"], json!([]));
    assert!(is_sequenced_id(decide["turnId"].as_str().unwrap(), "turn_"));
    let message = &decide["messages"][0];
    let keys: Vec<_> = message.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["content", "createdAt", "id", "role"]);
    assert_eq!(message["role"], "user");
    assert!(message["createdAt"].as_u64().unwrap() > 1_600_000_000_000);
    assert!(is_sequenced_id(message["id"].as_str().unwrap(), "message_"));
    assert_eq!(decide["snapshot"], before);

    let summarize = serde_json::to_value(&requests[1]).unwrap();
    assert_eq!(summarize["phase"], "summarize");
    let step = &summarize["steps"][0];
    let action_id = step["action"]["id"].as_str().unwrap();
    assert!(is_sequenced_id(action_id, "action_"));
    assert_eq!(
        step["action"],
        json!({"capabilityId": "notes.add", "delayAfter": "medium", "id": action_id, "input": {"text": "a"}})
    );
    assert_eq!(
        step["outcome"],
        json!({"status": "succeeded", "invocationId": action_id, "capabilityId": "notes.add", "output": 1})
    );
    // A request read back from JSON is the same request (a decide service can echo it).
    let back: AssistRequest = serde_json::from_value(summarize).unwrap();
    assert_eq!(back, requests[1]);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_turn_leaves_nothing_pending() {
    let app = notes_app();
    let script = Script::new([batch(vec![act("notes.clear", "short", json!({}))])]);
    let prompts = Prompts::hanging();
    let assist = interactive(&app, &script, &prompts);
    let send = assist.send("clear");
    // Poll until the prompt is shown, then drop the turn.
    tokio::select! {
        _ = send => panic!("the prompt never answers"),
        () = until(|| assist.pending_confirmation().is_some()) => {}
    }
    assert!(!assist.is_busy());
    assert_eq!(assist.pending_confirmation(), None);
    let ticket = prompts.shown.lock().unwrap()[0]
        .outcome
        .confirmation()
        .unwrap()
        .id
        .clone();
    let late = app.host.resolve_confirmation(&ticket, true).await;
    assert_eq!(late.error_code(), Some(ErrorCode::ExecutionAborted));
    assert_eq!(app.handler_calls(), 0);
    // The conversation reads as a cancelled turn, and the controller is ready.
    assert_eq!(assist.status(), AssistStatus::Active);
    let transcript = assist.transcript();
    assert_eq!(transcript.last().unwrap().content, CANCELLED_MESSAGE);
    assert_eq!(transcript.len(), 2);
    script.push(say("fine"));
    assert_eq!(turn(assist.send("again").await).reply.content, "fine");
}

#[tokio::test(start_paused = true)]
async fn the_configured_batch_limit_applies() {
    let app = notes_app();
    let three = || {
        batch(
            (0..3)
                .map(|i| act("notes.add", "short", json!({"text": format!("n{i}")})))
                .collect(),
        )
    };
    let script = Script::new([three()]);
    let assist = builder(&app, &script)
        .mode(AssistMode::Interactive)
        .max_batch_size(2.9)
        .build();
    let report = turn(assist.send("three").await);
    assert_eq!(
        report.ending,
        TurnEnding::Failed(TurnFailure::Batch(BatchError::InvalidBatch))
    );
    assert_eq!(app.handler_calls(), 0);
    script.push(batch(vec![
        act("notes.add", "short", json!({"text": "a"})),
        act("notes.add", "short", json!({"text": "b"})),
    ]));
    assert_eq!(turn(assist.send("two").await).steps.len(), 2);

    // 33 is read as 32: a batch of 32 runs.
    let script = Script::new([batch(
        (0..32)
            .map(|_| act("notes.list", "short", json!({})))
            .collect(),
    )]);
    let assist = builder(&app, &script).max_batch_size(33.0).build();
    assert_eq!(turn(assist.send("many").await).steps.len(), 32);
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_summarize_ends_the_turn_as_cancelled() {
    let app = notes_app();
    let script = Script::new([
        batch(vec![act("notes.add", "short", json!({"text": "a"}))]),
        Answer::Hang,
    ]);
    let assist = interactive(&app, &script, &Prompts::default());
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send("add").await }
    });
    until(|| script.requests().len() == 2).await;
    assist.cancel();
    let report = turn(running.await.unwrap());
    assert_eq!(report.ending, TurnEnding::Cancelled);
    assert_eq!(report.steps.len(), 1, "the step that ran is reported");
    assert_eq!(*app.notes.lock().unwrap(), ["a"], "no rollback");
}

#[tokio::test(start_paused = true)]
async fn a_typescript_services_answer_is_read_as_the_sdk_reads_it() {
    let app = notes_app();
    // Extra fields anywhere are ignored; a missing input is the reference's undefined input,
    // refused without a runtime call.
    let script = Script::new([
        Answer::Json(json!({
            "type": "actions",
            "reasoning": "the user asked for a list",
            "actions": [
                {"capabilityId": "notes.list", "delayAfter": "short", "input": {}, "confidence": 0.9},
                {"capabilityId": "notes.add", "delayAfter": "short"}
            ]
        })),
        Answer::Json(json!({"type": "message", "message": "Listed.", "usage": {"tokens": 12}})),
        Answer::Json(json!({"type": "message", "message": "Hi", "actions": []})),
    ]);
    let assist = interactive(&app, &script, &Prompts::default());
    let report = turn(assist.send("list").await);
    assert_eq!(report.steps.len(), 2);
    assert_eq!(report.steps[0].outcome.status(), OutcomeStatus::Succeeded);
    let missing = &report.steps[1].outcome;
    assert_eq!(missing.status(), OutcomeStatus::Failed);
    assert_eq!(missing.error_code(), Some(ErrorCode::InputInvalid));
    assert_eq!(
        missing.error().unwrap().message,
        "The capability input must be a JSON value."
    );
    assert!(app.events.phases(Some(missing.invocation_id())).is_empty());
    assert!(app.notes.lock().unwrap().is_empty());
    assert_eq!(report.reply.content, "Listed.");
    // The step is sent back without an input, as the SDK would.
    let summarize = serde_json::to_value(&script.requests()[1]).unwrap();
    assert!(summarize["steps"][1]["action"].get("input").is_none());
    assert_eq!(
        turn(assist.send("hello").await).ending,
        TurnEnding::Answered
    );
}

/// A `Decide` that panics when called, before it has a future to return.
struct PanicsAtOnce;

impl Decide for PanicsAtOnce {
    fn decide(
        &self,
        _: AssistRequest,
        _: CancellationToken,
    ) -> BoxFuture<Result<AssistResponse, BoxError>> {
        panic!("no future for you")
    }
}

#[tokio::test(start_paused = true)]
async fn a_decide_that_panics_when_called_fails_the_turn_only() {
    let app = notes_app();
    let assist = Assist::builder(
        app.runtime.client(),
        PanicsAtOnce,
        Prompts::default().resolver(app.host.clone()),
    )
    .build();
    let report = turn(assist.send("hi").await);
    assert!(matches!(
        report.ending,
        TurnEnding::Failed(TurnFailure::Decide(_))
    ));
    assert_eq!(assist.status(), AssistStatus::Error);
    assert!(!assist.is_busy());
    assert!(matches!(assist.send("again").await, Submission::Turn(_)));
}

#[tokio::test(start_paused = true)]
async fn listeners_hear_every_change_in_order() {
    let app = notes_app();
    let script = Script::new([batch(vec![act("notes.clear", "short", json!({}))])]);
    let assist = interactive(&app, &script, &Prompts::new([Some(true)]));
    let heard = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let subscription = assist.subscribe({
        let heard = heard.clone();
        move |update: &AssistUpdate| heard.lock().unwrap().push(update.clone())
    });
    // A listener that panics is skipped; the others still hear everything.
    let _panicky = assist.subscribe(|_: &AssistUpdate| panic!("listener bug"));
    let report = turn(assist.send("clear").await);
    let updates = heard.lock().unwrap().clone();
    let names: Vec<String> = updates
        .iter()
        .map(|u| match u {
            AssistUpdate::Message(m) => format!("message {:?}: {}", m.role, m.content),
            AssistUpdate::Status(s) => format!("status {s:?}"),
            AssistUpdate::Input(s) => format!("input {s:?}"),
            AssistUpdate::ConfirmationPending(p) => {
                format!("pending {}", p.action.capability_id)
            }
            AssistUpdate::ConfirmationEnded => "ended".into(),
            AssistUpdate::Busy(busy) => format!("busy {busy}"),
            AssistUpdate::Cleared => "cleared".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        names,
        [
            "busy true",
            "input Processing",
            "input Idle",
            "message User: clear",
            "status Working",
            "pending notes.clear",
            "status Attention",
            "ended",
            "status Working",
            "message Assistant: ok",
            "status Success",
            "busy false",
        ]
    );
    assert_eq!(updates[9], AssistUpdate::Message(report.reply.clone()));
    // The pending confirmation as JSON: the reference's `{action, outcome}`.
    let pending = serde_json::to_value(&updates[5]).unwrap();
    assert_eq!(pending["type"], "confirmationPending");
    assert_eq!(pending["value"]["action"]["capabilityId"], "notes.clear");
    assert_eq!(
        pending["value"]["outcome"]["status"],
        "confirmation_required"
    );

    // success settles to active after 1.5 s, and listeners hear it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    tokio::task::yield_now().await;
    assert_eq!(
        heard.lock().unwrap().last(),
        Some(&AssistUpdate::Status(AssistStatus::Active))
    );
    assert!(assist.clear());
    assert_eq!(heard.lock().unwrap().last(), Some(&AssistUpdate::Cleared));

    // Unsubscribed: nothing more.
    let before = heard.lock().unwrap().len();
    subscription.unsubscribe();
    turn(assist.send("again").await);
    assert_eq!(heard.lock().unwrap().len(), before);
}

#[tokio::test(start_paused = true)]
async fn listeners_may_call_back_into_assist() {
    let app = notes_app();
    let script = Script::new([batch(vec![act("notes.clear", "short", json!({}))])]);
    let assist = interactive(&app, &script, &Prompts::new([Some(true)]));
    let shared = std::sync::Arc::new(std::sync::OnceLock::<Assist>::new());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let calls = app.handler_calls.clone();
    let _subscription = assist.subscribe({
        let (shared, seen) = (shared.clone(), seen.clone());
        move |update: &AssistUpdate| {
            let assist = shared.get().unwrap();
            match update {
                // The approved action runs as `working`, after the card is gone.
                AssistUpdate::Status(AssistStatus::Working)
                    if assist.pending_confirmation().is_none() =>
                {
                    let handled = calls.load(std::sync::atomic::Ordering::SeqCst);
                    seen.lock()
                        .unwrap()
                        .push(format!("working, {handled} handled"));
                }
                // Busy ends after everything else: new input is accepted from here.
                AssistUpdate::Busy(false) => {
                    seen.lock()
                        .unwrap()
                        .push(format!("idle: busy {}", assist.is_busy()));
                    assert!(assist.clear(), "not busy any more");
                }
                AssistUpdate::Cleared => seen.lock().unwrap().push("cleared".into()),
                _ => {}
            }
        }
    });
    shared.set(assist.clone()).unwrap();
    turn(assist.send("clear").await);
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "working, 0 handled",
            "working, 0 handled",
            "idle: busy false",
            "cleared"
        ]
    );
    assert!(assist.transcript().is_empty(), "cleared by the listener");
}

#[tokio::test(start_paused = true)]
async fn a_cancel_as_the_pipeline_ends_starts_no_turn_and_no_decide_call() {
    let app = notes_app();
    let script = Script::default();
    let shared = std::sync::Arc::new(std::sync::OnceLock::<Assist>::new());
    let assist = builder(&app, &script)
        .processor(processor("cancels", {
            let shared = shared.clone();
            move |input: AssistInput, _: InputContext| {
                shared.get().unwrap().cancel();
                async move { Ok::<_, BoxError>(Some(input)) }
            }
        }))
        .build();
    shared.set(assist.clone()).unwrap();
    assert_eq!(assist.send("hi").await, Submission::Cancelled);
    assert!(script.requests().is_empty());
    assert!(assist.transcript().is_empty());
    assert!(!assist.is_busy());
}
