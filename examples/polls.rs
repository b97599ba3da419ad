//! A small poll application driven by a scripted tool through the RCIP client only.
//!
//! Run with `cargo run --example polls`. The host (trusted application code) declares the
//! catalog, binds typed handlers, sets the semantic context and approves or declines
//! confirmations. The tool receives nothing but an `Arc<dyn RcipClient>`: it discovers,
//! reads, asks for a write that needs approval, sees one declined, and sends invalid input.

use std::sync::{Arc, Mutex};

use rcip_runtime::*;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

/// The application's private state: never part of a snapshot.
#[derive(Debug, Default)]
struct Polls {
    polls: Vec<Poll>,
}

#[derive(Debug, Clone)]
struct Poll {
    id: String,
    question: String,
    votes: Vec<u32>,
    closed: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreatePoll {
    question: String,
    options: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PollRef {
    poll_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Vote {
    poll_id: String,
    option: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PollSummary {
    id: String,
    question: String,
    closed: bool,
}

fn definition() -> ApplicationDefinition {
    let poll_ref = json!({
        "type": "object",
        "properties": {"pollId": {"type": "string", "minLength": 1}},
        "required": ["pollId"],
        "additionalProperties": false
    });
    let results = json!({
        "type": "object",
        "properties": {
            "pollId": {"type": "string"},
            "votes": {"type": "array", "items": {"type": "integer", "minimum": 0}}
        },
        "required": ["pollId", "votes"],
        "additionalProperties": false
    });
    ApplicationDefinition::new("polls", "Polls", "Create polls, vote, and read results.")
        .scope(ScopeDefinition::new("polls", "Poll list", "Every poll of the group."))
        .scope(ScopeDefinition::new("poll", "Open poll", "The poll on screen.").parent("polls"))
        .capability(
            CapabilityDefinition::new("polls.list", Effect::Read)
                .title("List polls")
                .description("Lists every poll with its question.")
                .scope("polls")
                .output_schema(json!({
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "question": {"type": "string"},
                            "closed": {"type": "boolean"}
                        },
                        "required": ["id", "question", "closed"],
                        "additionalProperties": false
                    }
                })),
        )
        .capability(
            CapabilityDefinition::new("polls.create", Effect::Write)
                .title("Create a poll")
                .description("Creates a poll with a question and 2 to 10 options.")
                .scope("polls")
                .tag("authoring")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "minLength": 1, "maxLength": 200},
                        "options": {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1},
                            "minItems": 2,
                            "maxItems": 10
                        }
                    },
                    "required": ["question", "options"],
                    "additionalProperties": false
                }))
                .output_schema(poll_ref.clone())
                .usage(
                    UsageGuidance::new("When the user wants to ask the group a question.")
                        .example(
                            "A lunch poll",
                            json!({"question": "Where should we meet?", "options": ["Clubhouse", "Garden"]}),
                        ),
                ),
        )
        .capability(
            CapabilityDefinition::new("polls.vote", Effect::Write)
                .title("Vote")
                .description("Casts one vote for an option of an open poll.")
                .scope("poll")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "pollId": {"type": "string", "minLength": 1},
                        "option": {"type": "integer", "minimum": 0, "maximum": 9}
                    },
                    "required": ["pollId", "option"],
                    "additionalProperties": false
                }))
                .output_schema(results.clone()),
        )
        .capability(
            CapabilityDefinition::new("polls.results", Effect::Read)
                .title("Read results")
                .description("Reads the vote counts of a poll.")
                .scope("poll")
                .input_schema(poll_ref.clone())
                .output_schema(results),
        )
        .capability(
            CapabilityDefinition::new("polls.close", Effect::Destructive)
                .title("Close a poll")
                .description("Closes a poll for good; no more votes.")
                .scope("poll")
                .input_schema(poll_ref.clone())
                .output_schema(poll_ref),
        )
}

/// The shared state, as handlers reach it.
#[derive(Debug, Clone, Default)]
struct Store(Arc<Mutex<Polls>>);

impl Store {
    /// Runs `f` on the state; a poisoned lock is a handler failure, not a crash.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Polls) -> Result<T, HandlerError>,
    ) -> Result<T, HandlerError> {
        let mut polls = self
            .0
            .lock()
            .map_err(|_| HandlerError::failed("state lock poisoned"))?;
        f(&mut polls)
    }
}

impl Polls {
    fn find(&mut self, poll_id: &str) -> Result<&mut Poll, HandlerError> {
        self.polls
            .iter_mut()
            .find(|p| p.id == poll_id)
            .ok_or_else(|| HandlerError::failed(format!("no poll {poll_id}")))
    }
}

/// Binds every capability to a typed handler over the shared state.
fn bind_all(host: &Host, store: &Store) -> Result<Vec<BindingGuard>, Error> {
    let s = store.clone();
    let list = Binding::typed(move |_: serde_json::Value, _ctx| {
        std::future::ready(s.with(|polls| {
            Ok(polls
                .polls
                .iter()
                .map(|p| PollSummary {
                    id: p.id.clone(),
                    question: p.question.clone(),
                    closed: p.closed,
                })
                .collect::<Vec<_>>())
        }))
    });
    let s = store.clone();
    let create = Binding::typed(move |input: CreatePoll, _ctx| {
        std::future::ready(s.with(|polls| {
            let id = format!("p{}", polls.polls.len() + 1);
            polls.polls.push(Poll {
                id: id.clone(),
                question: input.question,
                votes: vec![0; input.options.len()],
                closed: false,
            });
            Ok(json!({"pollId": id}))
        }))
    });
    let s = store.clone();
    let vote = Binding::typed(move |input: Vote, _ctx| {
        std::future::ready(s.with(|polls| {
            let poll = polls.find(&input.poll_id)?;
            if poll.closed {
                return Err(HandlerError::failed("the poll is closed"));
            }
            let count = poll
                .votes
                .get_mut(input.option)
                .ok_or_else(|| HandlerError::failed("no such option"))?;
            *count += 1;
            Ok(json!({"pollId": poll.id, "votes": poll.votes}))
        }))
    });
    let s = store.clone();
    let results = Binding::typed(move |input: PollRef, _ctx| {
        std::future::ready(s.with(|polls| {
            let poll = polls.find(&input.poll_id)?;
            Ok(json!({"pollId": poll.id, "votes": poll.votes}))
        }))
    });
    let s = store.clone();
    let open = store.clone();
    let close = Binding::typed(move |input: PollRef, _ctx| {
        std::future::ready(s.with(|polls| {
            let poll = polls.find(&input.poll_id)?;
            poll.closed = true;
            Ok(json!({"pollId": poll.id}))
        }))
    })
    // Closing needs at least one open poll: a live availability fact.
    .with_availability(move || {
        let any_open = open.with(|p| Ok(p.polls.iter().any(|p| !p.closed)));
        if any_open.unwrap_or(false) {
            Availability::available()
        } else {
            Availability::unavailable("NO_OPEN_POLL", "There is no open poll to close.")
        }
    });
    Ok(vec![
        host.bind("polls.list", list)?,
        host.bind("polls.create", create)?,
        host.bind("polls.vote", vote)?,
        host.bind("polls.results", results)?,
        host.bind("polls.close", close)?,
    ])
}

/// A confirmation the tool hands to the trusted host UI, with a way to hear the result.
type Approval = (ConfirmationInfo, oneshot::Sender<InvocationOutcome>);

/// Prints an outcome the way a tool would show it.
fn show(outcome: &InvocationOutcome) {
    match outcome {
        InvocationOutcome::Succeeded {
            capability_id,
            output,
            ..
        } => {
            println!("  <- succeeded {capability_id}: {output}");
        }
        InvocationOutcome::ConfirmationRequired {
            capability_id,
            confirmation,
            ..
        } => {
            println!(
                "  <- confirmation_required {capability_id}: \"{}\" ({}, expires at {})",
                confirmation.description, confirmation.effect, confirmation.expires_at
            );
        }
        InvocationOutcome::Failed {
            capability_id,
            error,
            ..
        }
        | InvocationOutcome::Denied {
            capability_id,
            error,
            ..
        } => {
            let status = serde_json::to_value(outcome.status()).unwrap_or_default();
            println!(
                "  <- {} {capability_id}: {} {}",
                status.as_str().unwrap_or("?"),
                error.code,
                error.message
            );
            for issue in error.validation_issues.iter().flatten() {
                println!(
                    "       issue at {:?} ({}): {}",
                    issue.instance_path, issue.keyword, issue.message
                );
            }
        }
    }
}

/// The tool: it holds only the client, and a channel to ask the host for approval.
async fn tool(client: Arc<dyn RcipClient>, approvals: mpsc::Sender<Approval>) {
    // Invoke; when the host must approve, hand the ticket over and wait for its answer.
    let run = |capability_id: &str, input: serde_json::Value| {
        let client = client.clone();
        let approvals = approvals.clone();
        let capability_id = capability_id.to_owned();
        async move {
            println!("\n-> invoke {capability_id} {input}");
            let outcome = client
                .invoke(InvocationRequest::new(capability_id, input))
                .await;
            show(&outcome);
            let Some(confirmation) = outcome.confirmation().cloned() else {
                return outcome;
            };
            let (reply, answer) = oneshot::channel();
            if approvals.send((confirmation, reply)).await.is_err() {
                return outcome;
            }
            let outcome = answer.await.unwrap_or(outcome);
            show(&outcome);
            outcome
        }
    };

    println!("== discovery (revision {})", client.get_snapshot().revision);
    let filter = CapabilityFilter {
        context: Some(ContextFilter::Current),
        available_only: true,
        ..CapabilityFilter::default()
    };
    for capability in client.list_capabilities(&filter) {
        println!(
            "  {:<14} {:<12} {}",
            capability.id,
            capability.effect.as_str(),
            capability.title
        );
    }
    let other: Vec<_> = client
        .list_capabilities(&CapabilityFilter::default())
        .into_iter()
        .filter(|c| !c.available)
        .map(|c| match &c.availability {
            Some(Availability {
                reason: Some(reason),
                ..
            }) => format!("{} ({reason})", c.id),
            _ => c.id.to_string(),
        })
        .collect();
    println!("  not available now: {}", other.join(", "));

    println!("\n== a read");
    run("polls.list", json!({})).await;

    println!("\n== a write the host approves");
    let created = run(
        "polls.create",
        json!({"question": "Where should we meet?", "options": ["Clubhouse", "Garden"]}),
    )
    .await;
    let poll_id = created
        .output()
        .and_then(|o| o.get("pollId"))
        .and_then(|v| v.as_str())
        .unwrap_or("p1")
        .to_owned();
    run("polls.list", json!({})).await;

    println!("\n== a destructive operation the host declines");
    run("polls.close", json!({"pollId": poll_id})).await;

    println!("\n== invalid input");
    run(
        "polls.create",
        json!({"question": "", "options": ["Only one"], "extra": true}),
    )
    .await;
    println!("\n-> invoke polls.delete {{}}");
    let unknown = client
        .invoke(InvocationRequest::new("polls.delete", json!({})))
        .await;
    show(&unknown);

    println!(
        "\n== discovery again (revision {})",
        client.get_snapshot().revision
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    // Reads run at once; anything else needs the host's approval.
    let policy = policy_fn(|ctx| match ctx.capability.effect {
        Effect::Read => PolicyDecision::Allow,
        _ if ctx.confirmed => PolicyDecision::Allow,
        Effect::Destructive => PolicyDecision::confirm("This cannot be undone."),
        _ => PolicyDecision::Confirm { reason: None },
    });
    let runtime = Runtime::new(definition(), RuntimeOptions::default().with_policy(policy))?;
    let host = runtime.host();
    let _bindings = bind_all(&host, &Store::default())?;
    host.set_context(SemanticContext::active(["polls"]).primary("polls"))?;

    // The trusted host UI: approves creating and voting, declines closing.
    let (approvals, mut requests) = mpsc::channel::<Approval>(4);
    let approver = {
        let host = host.clone();
        tokio::spawn(async move {
            while let Some((confirmation, reply)) = requests.recv().await {
                let approve = confirmation.effect != Effect::Destructive;
                println!(
                    "  [host UI] {} \"{}\"",
                    if approve { "approves" } else { "declines" },
                    confirmation.title
                );
                let _ = reply.send(host.resolve_confirmation(&confirmation.id, approve).await);
            }
        })
    };

    println!("RCIP protocol {RCIP_PROTOCOL_VERSION}: application \"polls\"");
    tool(runtime.client(), approvals).await;
    let _ = approver.await;
    Ok(())
}
