//! Assist over the polls application, with a scripted assistant in place of a model.
//!
//! `decide` here is a few rules over the newest user message (no model, no network), so the
//! transcript is the same on every run. A real model plugs in at the same place: build its
//! prompt from the [`AssistRequest`] (the conversation and the snapshot's capabilities with
//! their schemas), call the provider, and return its JSON answer; `docs/assist.md` shows how.
//! Whatever it proposes still goes through read-only mode, schemas, availability, the host's
//! policy and the host's own confirmation prompt.

use std::sync::Arc;
use std::time::Duration;

use rcip_assist::*;
use rcip_runtime::{BoxFuture, CancellationToken, Effect, Host, InvocationOutcome, RcipClient};
use serde_json::{Value, json};

use crate::{Store, show};

/// What the scripted assistant understands, from the newest user message.
fn decide_from(text: &str) -> AssistResponse {
    let lower = text.to_lowercase();
    if lower.contains("show") && lower.contains("poll") {
        return actions_response(&[AssistAction::new(
            "polls.list",
            DelayAfter::Short,
            json!({}),
        )]);
    }
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
    // "Close poll <id>"
    if let Some(poll_id) = text.strip_prefix("Close poll ") {
        return actions_response(&[AssistAction::new(
            "polls.close",
            DelayAfter::Short,
            json!({"pollId": poll_id.trim()}),
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
        "I'm not sure what you'd like. I can show the polls, create one \
         (\"Create a poll: Question? A, B\"), vote, or close a poll.",
    )
}

/// The summary: the list read back in words; otherwise nothing, so Assist's own fallback
/// summary says how the batch ended.
fn summarize(steps: &[AssistStep]) -> AssistResponse {
    let Some(InvocationOutcome::Succeeded {
        capability_id,
        output,
        ..
    }) = steps.last().map(|s| &s.outcome)
    else {
        return message_response("");
    };
    match (capability_id.as_str(), output) {
        ("polls.list", Value::Array(polls)) if polls.is_empty() => {
            message_response("There are no polls yet.")
        }
        ("polls.list", Value::Array(polls)) => {
            let names: Vec<String> = polls
                .iter()
                .map(|p| {
                    let id = p["id"].as_str().unwrap_or("?");
                    format!("{id} ({})", p["question"].as_str().unwrap_or("?"))
                })
                .collect();
            message_response(format!("The polls: {}.", names.join(", ")))
        }
        ("polls.create", output) => message_response(format!(
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

/// The host's confirmation prompt: approves writes, declines destructive operations. It is
/// the host's, so nothing the assistant says reaches it.
fn prompt(host: Host) -> ConfirmationResolver {
    ConfirmationResolver::new(host, |pending: PendingConfirmation, _| async move {
        let Some(confirmation) = pending.outcome.confirmation() else {
            return Ok::<_, BoxError>(false);
        };
        let approve = confirmation.effect != Effect::Destructive;
        println!(
            "  [host UI] Assist asks: \"{}\" ({}): {}",
            confirmation.title,
            confirmation.description,
            if approve { "approved" } else { "declined" }
        );
        Ok(approve)
    })
}

/// Sends one message and prints the turn.
async fn say(assist: &Assist, text: &str) {
    println!("\n  user: {text}");
    print_submission(assist.send(text).await);
}

fn print_submission(submission: Submission) {
    let Submission::Turn(turn) = submission else {
        println!("  ({submission:?})");
        return;
    };
    for step in &turn.steps {
        println!(
            "  assistant -> {} {}",
            step.action.capability_id,
            step.action.input.as_ref().unwrap_or(&Value::Null)
        );
        show(&step.outcome);
    }
    println!("  assistant: {}", turn.reply.content);
    let status = serde_json::to_value(turn.status).unwrap_or_default();
    println!("  [status: {}]", status.as_str().unwrap_or("?"));
}

/// The conversation: read-only, then interactive, then a cancelled turn.
pub(crate) async fn conversation(client: Arc<dyn RcipClient>, host: &Host, store: &Store) {
    println!("\n== Assist, read-only (the default): a scripted assistant, no model");
    let read_only = Assist::builder(client.clone(), scripted, prompt(host.clone())).build();
    say(&read_only, "Show me the polls").await;
    say(&read_only, "Create a poll: Team dinner? Pizza, Sushi").await;

    println!("\n== Assist, interactive: writes go through the host's confirmation prompt");
    // The long pause is 10 s (the most allowed), so the cancel below always lands in it.
    let assist = Assist::builder(client, scripted, prompt(host.clone()))
        .mode(AssistMode::Interactive)
        .delay(DelayAfter::Long, 10_000.0)
        .build();
    say(&assist, "Create a poll: Team dinner? Pizza, Sushi").await;
    say(&assist, "Close poll p2").await;
    say(&assist, "Do the thing").await;

    println!("\n== Assist, a turn cancelled between two actions");
    println!("\n  user: Vote 0 on p2, 3 times");
    let running = tokio::spawn({
        let assist = assist.clone();
        async move { assist.send("Vote 0 on p2, 3 times").await }
    });
    // The surface cancels once the first vote is in, during the pause after it.
    let first_vote_in = || {
        store
            .with(|p| Ok(p.polls.iter().any(|p| p.votes.iter().sum::<u32>() > 0)))
            .unwrap_or(true)
    };
    while !first_vote_in() {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    println!("  (the user presses cancel)");
    assist.cancel();
    match running.await {
        Ok(submission) => print_submission(submission),
        Err(error) => println!("  (the turn task failed: {error})"),
    }
    println!(
        "  (the conversation kept {} messages for the host)",
        assist.transcript().len()
    );
}
