//! Assist over the polls application, with a scripted assistant in place of a model.
//!
//! `decide` here is a few rules over the newest user message (no model, no network), so the
//! transcript is the same on every run. A real model plugs in at the same place: build its
//! prompt from the [`AssistRequest`] (the conversation and the snapshot's capabilities with
//! their schemas), call the provider, and return its JSON answer; `docs/assist.md` shows how.
//! Whatever it proposes still goes through read-only mode, schemas, availability, the host's
//! policy and the host's own confirmation prompt.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_assist::*;
use rcip_runtime::{BoxFuture, CancellationToken, Effect, Host, InvocationOutcome, RcipClient};
use serde_json::{Value, json};

use crate::{Store, show};

/// What the scripted assistant understands, from the newest user message.
fn decide_from(text: &str) -> AssistResponse {
    // "Create a poll: <question>? <option>, <option>..."
    if let Some(rest) = text.strip_prefix("Create a poll: ")
        && let Some((question, options)) = rest.split_once('?')
    {
        let options: Vec<&str> = options.split(',').map(str::trim).collect();
        return actions_response(&[AssistAction::new(
            "polls.create",
            DelayAfter::Medium,
            json!({"question": format!("{}?", question.trim()), "options": options}),
        )]);
    }
    // "Vote <option> on <id>, <n> times": one vote per action, paced by the long delay.
    if let Some(rest) = text.strip_prefix("Vote ")
        && let Some((option, rest)) = rest.split_once(" on ")
        && let Some((poll_id, times)) = rest.split_once(", ")
        && let (Ok(option), Some(times)) = (option.parse::<u8>(), times.split(' ').next())
        && let Ok(times) = times.parse::<usize>()
    {
        let vote = AssistAction::new(
            "poll.vote",
            DelayAfter::Long,
            json!({"pollId": poll_id, "option": option}),
        );
        return actions_response(&vec![vote; times]);
    }
    message_response(
        "I'm not sure what you'd like. I can create a poll \
         (\"Create a poll: Question? A, B\") or vote (\"Vote 0 on p1, 2 times\").",
    )
}

/// The summary: a created poll in words; otherwise nothing, so Assist's own fallback
/// summary says how the batch ended.
fn summarize(steps: &[AssistStep]) -> AssistResponse {
    match steps.last().map(|s| &s.outcome) {
        Some(InvocationOutcome::Succeeded {
            capability_id,
            output,
            ..
        }) if capability_id == "polls.create" => message_response(format!(
            "Created poll {}.",
            output["pollId"].as_str().unwrap_or("?")
        )),
        _ => message_response(""),
    }
}

/// The scripted assistant.
fn scripted(
    request: AssistRequest,
    _: CancellationToken,
) -> BoxFuture<Result<AssistResponse, BoxError>> {
    let response = match request.phase {
        Phase::Decide => {
            // Shows what Assist hands a model in read-only mode.
            if request.mode == AssistMode::ReadOnly {
                let capabilities = &request.snapshot.capabilities;
                let reads = capabilities
                    .iter()
                    .filter(|c| c.effect == Effect::Read)
                    .count();
                println!(
                    "  (decide is shown {} capabilities, {reads} of them reads)",
                    capabilities.len()
                );
            }
            let newest = request.messages.last().map_or("", |m| m.content.as_str());
            decide_from(newest)
        }
        Phase::Summarize => summarize(&request.steps),
    };
    Box::pin(async move { Ok(response) })
}

/// The host's answers to Assist's confirmation requests, by action id, so each prints under
/// the action it answered (a turn is printed when it ends).
type Answers = Arc<Mutex<Vec<(Option<String>, String)>>>;

/// The host's confirmation prompt: approves writes, declines destructive operations. It is
/// the host's, so nothing the assistant says reaches it.
fn prompt(host: Host, answers: Answers) -> ConfirmationResolver {
    ConfirmationResolver::new(host, move |pending: PendingConfirmation, _| {
        let answers = answers.clone();
        async move {
            let Some(confirmation) = pending.outcome.confirmation() else {
                return Ok::<_, BoxError>(false);
            };
            let approve = confirmation.effect != Effect::Destructive;
            let line = format!(
                "  [host UI] Assist asks: \"{}\" ({}): {}",
                confirmation.title,
                confirmation.description,
                if approve { "approved" } else { "declined" }
            );
            if let Ok(mut answers) = answers.lock() {
                answers.push((pending.action.id.clone(), line));
            }
            Ok(approve)
        }
    })
}

/// Prints each action of a turn, the host's answer if it was asked, and its outcome.
fn print_steps(turn: &TurnReport, answers: &Answers) {
    for step in &turn.steps {
        println!(
            "  assistant -> {} {}",
            step.action.capability_id,
            step.action.input.as_ref().unwrap_or(&Value::Null)
        );
        if let Ok(answers) = answers.lock()
            && let Some((_, line)) = answers.iter().find(|(id, _)| *id == step.action.id)
        {
            println!("{line}");
        }
        show(&step.outcome);
    }
}

/// Prints the assistant's reply and the status the turn left.
fn print_reply(turn: &TurnReport) {
    let status = serde_json::to_value(turn.status).unwrap_or_default();
    let status = status.as_str().unwrap_or("?");
    // `active` after a turn that ran nothing to the end: ready for the next message.
    let gloss = if turn.status == AssistStatus::Active {
        " (ready for the next message)"
    } else {
        ""
    };
    println!(
        "  assistant: {}  [status: {status}{gloss}]",
        turn.reply.content
    );
}

/// Sends one message and prints the turn.
async fn say(assist: &Assist, answers: &Answers, text: &str) {
    println!("  user: {text}");
    match assist.send(text).await {
        Submission::Turn(turn) => {
            print_steps(&turn, answers);
            print_reply(&turn);
        }
        other => println!("  ({other:?})"),
    }
}

/// The conversation: read-only, then interactive, then a cancelled turn.
pub(crate) async fn conversation(client: Arc<dyn RcipClient>, host: &Host, store: &Store) {
    println!(
        "\n== 7. Assist: an assistant (scripted here, no model) drives the same client, one \
         bounded turn per message"
    );
    let answers = Answers::default();
    println!(
        "  -- read-only (the default): the assistant may read; a write it asks for is refused"
    );
    let read_only = Assist::builder(
        client.clone(),
        scripted,
        prompt(host.clone(), answers.clone()),
    )
    .build();
    say(
        &read_only,
        &answers,
        "Create a poll: Team dinner? Pizza, Sushi",
    )
    .await;

    println!("  -- interactive: each write goes through the host's confirmation prompt");
    // The long pause is 10 s (the most allowed), so the cancel below always lands in it.
    let assist = Assist::builder(client, scripted, prompt(host.clone(), answers.clone()))
        .mode(AssistMode::Interactive)
        .delay(DelayAfter::Long, 10_000.0)
        .build();
    say(
        &assist,
        &answers,
        "Create a poll: Team dinner? Pizza, Sushi",
    )
    .await;

    println!("  -- a turn cancelled: three votes asked for, cancel pressed after the first");
    let text = "Vote 0 on p2, 3 times";
    println!("  user: {text}");
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send(text).await }
    });
    // The surface cancels once the first vote is in, during the pause after it.
    let first_vote_in = || async {
        store
            .with(|p| Ok(p.polls.iter().any(|p| p.votes.iter().sum::<u32>() > 0)))
            .await
            .unwrap_or(true)
    };
    while !first_vote_in().await {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assist.cancel();
    match running.await {
        Ok(Submission::Turn(turn)) => {
            print_steps(&turn, &answers);
            let done = turn.steps.len();
            println!(
                "  (cancel pressed in the pause after vote {done}: already done before the \
                 cancel; the other {} never ran)",
                3_usize.saturating_sub(done)
            );
            print_reply(&turn);
        }
        Ok(other) => println!("  ({other:?})"),
        Err(error) => println!("  (the turn task failed: {error})"),
    }
}
