//! A small poll application, declared with `#[capability]` on typed functions and driven by a
//! scripted tool through the RCIP client only.
//!
//! `cargo run --example polls` prints the tool's transcript; `cargo run --example polls --
//! export` prints the catalog as JSON (the exact schemas the runtime validates against);
//! `-- mcp` serves the application over MCP on stdio and `-- mcp-http [ADDR]` over
//! streamable HTTP (default `127.0.0.1:8001`), approvals asked through the MCP client.
//!
//! `polls.wait` ("Wait for votes") is the slow read: it waits until a poll has at least the
//! given number of votes (or is closed), for at most `timeoutMs` (default and maximum
//! 60000), woken by each vote rather than by polling. It follows the caller's cancellation
//! (an MCP `notifications/cancelled`, an Assist turn cancelled): the wait ends at once as
//! `EXECUTION_ABORTED`. While it waits, the caller is counted in its poll's `watchers` in
//! `polls.list`, so anyone can see a cancelled wait is gone.
//!
//! In the MCP modes the host has a maintenance switch: each `SIGUSR1` (Unix) toggles a
//! read-only mode, in which the host drops the bindings of the application's writes
//! (`polls.create`, `poll.rename`, `poll.vote`, `polls.close`): they leave `tools/list`, the
//! bridge sends `notifications/tools/list_changed`, and a call to one is answered
//! `CAPABILITY_UNBOUND`. The next `SIGUSR1` binds them again. Each toggle prints one line to
//! stderr (`kill -USR1 PID`).
//!
//! The host (trusted application code) builds the runtime from the catalog, binds each
//! capability with the application state, sets the semantic context and approves or declines
//! confirmations. The tool receives nothing but an `Arc<dyn RcipClient>`: it discovers,
//! reads, asks for a write that needs approval, sees a destructive action declined, and sends
//! invalid input. Then it drives the relationship program `programs/polls.json` (compiled by
//! `build.rs` with `rcip-build`) through its generated capabilities: a record created, a vote
//! through a guarded command, a repeated vote the guard refuses, a stale revision, an
//! idempotent replay, and closing through a lifecycle transition that emits work. Last,
//! Assist drives the same client with a scripted assistant (`assistant.rs`): a read-only
//! turn refused a write, an interactive turn with a confirmed write and a declined
//! destructive action, an ambiguous request answered with a message, and a cancelled turn.

use std::sync::{Arc, Mutex};
use std::time::Duration;

mod assistant;

use rcip_relationship::{Actor, Caller, DelegatedScope, Engine};
use rcip_runtime::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

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
    /// Callers of `polls.wait` waiting on this poll now.
    watchers: u32,
}

impl Polls {
    fn find(&mut self, poll_id: &str) -> Result<&mut Poll, HandlerError> {
        self.polls
            .iter_mut()
            .find(|p| p.id == poll_id)
            .ok_or_else(|| HandlerError::failed(format!("no poll {poll_id}")))
    }
}

/// The shared state, as handlers reach it (cloned for each call).
#[derive(Debug, Clone, Default)]
struct Store {
    polls: Arc<Mutex<Polls>>,
    /// Bumped at every vote and close: what wakes `polls.wait`.
    changes: Arc<watch::Sender<u64>>,
}

impl Store {
    /// Runs `f` on the state; a poisoned lock is a handler failure, not a crash.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Polls) -> Result<T, HandlerError>,
    ) -> Result<T, HandlerError> {
        let mut polls = self
            .polls
            .lock()
            .map_err(|_| HandlerError::failed("state lock poisoned"))?;
        f(&mut polls)
    }

    /// Wakes every waiting `polls.wait` to look at the votes again.
    fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// One caller of `polls.wait`, counted in its poll's `watchers` for as long as this lives:
/// however the wait ends (an answer, a failure, or its future dropped), the count goes down.
struct Watching {
    store: Store,
    poll_id: String,
}

impl Watching {
    fn start(store: &Store, poll_id: &str) -> Result<Self, HandlerError> {
        store.with(|polls| {
            polls.find(poll_id)?.watchers += 1;
            Ok(())
        })?;
        Ok(Watching {
            store: store.clone(),
            poll_id: poll_id.to_owned(),
        })
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.store.with(|polls| {
            if let Ok(poll) = polls.find(&self.poll_id) {
                poll.watchers = poll.watchers.saturating_sub(1);
            }
            Ok(())
        });
    }
}

// ----- the contract types: their strict schemas are derived from them ----------------------

/// No input.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// A new poll.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreatePoll {
    /// The question to ask.
    #[schemars(length(min = 1, max = 200))]
    question: String,
    /// Two to ten answers to choose from.
    #[schemars(length(min = 2, max = 10))]
    options: Vec<String>,
}

/// One poll, by id.
#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PollRef {
    /// The poll id.
    #[schemars(length(min = 1))]
    poll_id: String,
}

/// A new question for a poll.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Rename {
    /// The poll id.
    poll_id: String,
    /// The new question.
    #[schemars(length(min = 1, max = 200))]
    question: String,
}

/// One vote.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Vote {
    /// The poll id.
    poll_id: String,
    /// The chosen option's position, from 0.
    option: u8,
}

/// How long `polls.wait` waits at most, in milliseconds.
const MAX_WAIT_MS: u32 = 60_000;

/// A vote count to wait for.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WaitFor {
    /// The poll id.
    #[schemars(length(min = 1))]
    poll_id: String,
    /// The total number of votes to wait for.
    #[schemars(range(min = 1, max = 1_000_000))]
    votes: u32,
    /// How long to wait at most, in milliseconds (default and maximum 60000).
    #[schemars(range(min = 0, max = 60_000))]
    timeout_ms: Option<u32>,
}

/// A poll in the list.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct PollSummary {
    id: String,
    question: String,
    closed: bool,
    /// Callers of `polls.wait` waiting on this poll now.
    watchers: u32,
}

/// A poll's votes when a wait ended.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Waited {
    poll_id: String,
    votes: Vec<u32>,
    /// The votes, all options together.
    total: u32,
    /// Whether `total` reached the count waited for (if not, time ran out or the poll closed).
    reached: bool,
    closed: bool,
}

/// Vote counts, in option order.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Results {
    poll_id: String,
    votes: Vec<u32>,
}

// ----- the capabilities ----------------------------------------------------------------------

/// List polls.
///
/// Lists every poll with its question, and how many callers of polls.wait wait on it now.
#[capability(effect = "read", scope = "polls", id = "polls.list")]
fn list_polls(store: Store, _input: Nothing) -> Result<Vec<PollSummary>, HandlerError> {
    store.with(|polls| {
        Ok(polls
            .polls
            .iter()
            .map(|p| PollSummary {
                id: p.id.clone(),
                question: p.question.clone(),
                closed: p.closed,
                watchers: p.watchers,
            })
            .collect())
    })
}

/// Create a poll.
///
/// Creates a poll with a question and 2 to 10 options.
#[capability(
    effect = "write",
    scope = "polls",
    id = "polls.create",
    tags = ["authoring"],
    when_to_use = "When the user wants to ask the group a question.",
    example(
        description = "A lunch poll",
        input = r#"{"question": "Where should we meet?", "options": ["Clubhouse", "Garden"]}"#
    )
)]
fn create_poll(store: Store, input: CreatePoll) -> Result<PollRef, HandlerError> {
    store.with(|polls| {
        let poll_id = format!("p{}", polls.polls.len() + 1);
        polls.polls.push(Poll {
            id: poll_id.clone(),
            question: input.question,
            votes: vec![0; input.options.len()],
            closed: false,
            watchers: 0,
        });
        Ok(PollRef { poll_id })
    })
}

/// Rename a poll.
///
/// Replaces the question of an open poll.
#[capability(effect = "write", scope = "poll")]
fn rename(store: Store, input: Rename) -> Result<PollRef, HandlerError> {
    store.with(|polls| {
        let poll = polls.find(&input.poll_id)?;
        poll.question = input.question;
        Ok(PollRef {
            poll_id: poll.id.clone(),
        })
    })
}

/// Vote.
///
/// Casts one vote for an option of an open poll.
#[capability(effect = "write", scope = "poll")]
fn vote(store: Store, input: Vote) -> Result<Results, HandlerError> {
    let voted = store.with(|polls| {
        let poll = polls.find(&input.poll_id)?;
        if poll.closed {
            return Err(HandlerError::failed("the poll is closed"));
        }
        let count = poll
            .votes
            .get_mut(usize::from(input.option))
            .ok_or_else(|| HandlerError::failed("no such option"))?;
        *count += 1;
        Ok(Results {
            poll_id: poll.id.clone(),
            votes: poll.votes.clone(),
        })
    })?;
    store.changed();
    Ok(voted)
}

/// Read results.
///
/// Reads the vote counts of a poll.
#[capability(effect = "read", scope = "poll")]
async fn results(store: Store, input: PollRef) -> Result<Results, HandlerError> {
    store.with(|polls| {
        let poll = polls.find(&input.poll_id)?;
        Ok(Results {
            poll_id: poll.id.clone(),
            votes: poll.votes.clone(),
        })
    })
}

/// Close a poll.
///
/// Closes a poll for good; no more votes.
#[capability(effect = "destructive", scope = "poll", id = "polls.close")]
fn close_poll(store: Store, input: PollRef) -> Result<PollRef, HandlerError> {
    let closed = store.with(|polls| {
        let poll = polls.find(&input.poll_id)?;
        poll.closed = true;
        Ok(PollRef {
            poll_id: poll.id.clone(),
        })
    })?;
    store.changed();
    Ok(closed)
}

/// Wait for votes.
///
/// Waits until a poll has at least that many votes or is closed, at most timeoutMs (60000 max).
#[capability(
    effect = "read",
    scope = "poll",
    id = "polls.wait",
    when_to_use = "When the user wants to hear back once enough people have voted."
)]
async fn wait_for_votes(
    store: Store,
    input: WaitFor,
    cancellation: CancellationSignal,
) -> Result<Waited, HandlerError> {
    let wait = input.timeout_ms.unwrap_or(MAX_WAIT_MS).min(MAX_WAIT_MS);
    let deadline = tokio::time::Instant::now() + Duration::from_millis(u64::from(wait));
    // Subscribed before the first look, so a vote between the look and the wait still wakes.
    let mut changes = store.changes.subscribe();
    let _watching = Watching::start(&store, &input.poll_id)?;
    let mut timed_out = false;
    loop {
        let now = store.with(|polls| {
            let poll = polls.find(&input.poll_id)?;
            let total = poll.votes.iter().sum::<u32>();
            Ok(Waited {
                poll_id: poll.id.clone(),
                votes: poll.votes.clone(),
                total,
                reached: total >= input.votes,
                closed: poll.closed,
            })
        })?;
        if now.reached || now.closed || timed_out {
            return Ok(now);
        }
        tokio::select! {
            () = cancellation.cancelled() => return Err(HandlerError::aborted()),
            () = tokio::time::sleep_until(deadline) => timed_out = true,
            changed = changes.changed() => timed_out = changed.is_err(),
        }
    }
}

/// The relationship programs of `programs/`, compiled by `build.rs`.
mod programs {
    rcip_relationship::include_programs!();
}

catalog! {
    /// The polls application.
    struct PollsApp {
        id = "polls",
        name = "Polls",
        description = "Create polls, vote, and read results.",
        version = "0.1.0",
        scopes = [
            ("polls", "Poll list", "Every poll of the group."),
            ("poll", "Open poll", "The poll on screen.", parent = "polls"),
        ],
        capabilities = [list_polls, create_poll, rename, vote, results, wait_for_votes, close_poll],
        capability_sets = [programs::polls::Capabilities],
    }
}

/// Binds the application's reads over the shared state.
fn bind_reads(host: &Host, store: &Store) -> Result<Vec<BindingGuard>, Error> {
    Ok(vec![
        host.bind_capability::<list_polls>(store.clone())?,
        host.bind_capability::<results>(store.clone())?,
        host.bind_capability::<wait_for_votes>(store.clone())?,
    ])
}

/// Binds the application's writes over the shared state (what maintenance unbinds).
fn bind_writes(host: &Host, store: &Store) -> Result<Vec<BindingGuard>, Error> {
    let open = store.clone();
    // Closing needs at least one open poll: a live availability fact.
    let close = <close_poll as Capability>::binding(store.clone()).with_availability(move || {
        let any_open = open.with(|p| Ok(p.polls.iter().any(|p| !p.closed)));
        if any_open.unwrap_or(false) {
            Availability::available()
        } else {
            Availability::unavailable("NO_OPEN_POLL", "There is no open poll to close.")
        }
    });
    Ok(vec![
        host.bind_capability::<create_poll>(store.clone())?,
        host.bind_capability::<rename>(store.clone())?,
        host.bind_capability::<vote>(store.clone())?,
        host.bind(close_poll::ID, close)?,
    ])
}

/// The host's maintenance switch in the MCP modes: each `SIGUSR1` drops the write bindings
/// (read-only mode) or binds them again. The bridge sees the snapshot change and tells its
/// clients `tools/list` changed. The handler is installed here, before the server answers
/// anything: SIGUSR1's default action would end the process.
#[cfg(unix)]
fn maintenance(
    host: Host,
    store: Store,
    writes: Vec<BindingGuard>,
) -> std::io::Result<impl Future<Output = Result<(), Error>>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut signals = signal(SignalKind::user_defined1())?;
    Ok(async move {
        let mut writes = Some(writes);
        while signals.recv().await.is_some() {
            if let Some(guards) = writes.take() {
                drop(guards);
                eprintln!(
                    "polls: maintenance on (read-only): polls.create, poll.rename, poll.vote \
                     and polls.close unbound"
                );
            } else {
                writes = Some(bind_writes(&host, &store)?);
                eprintln!("polls: maintenance off: the writes are bound again");
            }
        }
        Ok(())
    })
}

/// Without Unix signals there is no maintenance switch: the writes stay bound.
#[cfg(not(unix))]
fn maintenance(
    _host: Host,
    _store: Store,
    writes: Vec<BindingGuard>,
) -> std::io::Result<impl Future<Output = Result<(), Error>>> {
    Ok(async move {
        let _writes = writes;
        std::future::pending().await
    })
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

    println!("\n== relationship records (program polls v1)");
    let created = run(
        "polls.poll.create",
        json!({"collection_id": "team", "idempotency_key": "create-lunch",
               "data": {"question": "Lunch at noon?", "options": ["yes", "no"], "vote_count": 0}}),
    )
    .await;
    let record_id = created
        .output()
        .and_then(|o| o.get("id"))
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    let vote = |revision: u64, key: &str, voter: &str| {
        json!({"record_id": record_id, "expected_revision": revision, "idempotency_key": key,
               "input": {"voter": voter, "choice": 0}})
    };
    println!("\n-- a vote through the guarded command");
    run("polls.poll.vote", vote(1, "vote-ada", "ada")).await;
    println!("\n-- the same voter again: the guard refuses");
    run("polls.poll.vote", vote(2, "vote-ada-again", "ada")).await;
    println!("\n-- a stale revision");
    run("polls.poll.vote", vote(1, "vote-grace", "grace")).await;
    println!(
        "\n-- the first vote replayed with its idempotency key: the first result, no second vote"
    );
    run("polls.poll.vote", vote(1, "vote-ada", "ada")).await;
    println!("\n-- the tally, then closing: a lifecycle transition that emits work");
    run(
        "polls.poll.update",
        json!({"record_id": record_id, "expected_revision": 2, "idempotency_key": "tally",
               "patch": {"set": {"vote_count": 1}}}),
    )
    .await;
    run(
        "polls.poll.close",
        json!({"record_id": record_id, "expected_revision": 3, "idempotency_key": "close-lunch",
               "input": {"reason": "decided"}}),
    )
    .await;

    println!(
        "\n== discovery again (revision {})",
        client.get_snapshot().revision
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("export") {
        let definition = PollsApp::definition()?;
        let json = match args.get(1..) {
            // The catalog with its content revision (RFC 8785 canonical JSON, SHA-256).
            Some([]) | None => catalog_export(&definition)?,
            // One consumer's tool list: `-- export --profile openai`.
            Some([flag, name]) if flag == "--profile" => {
                let profile: rcip_export::Profile = name.parse().map_err(|e| format!("{e}"))?;
                rcip_export::export_definition(profile, &definition)?.to_json()
            }
            Some(_) => return Err("usage: polls export [--profile NAME]".into()),
        };
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    // Reads run at once; anything else needs the host's approval.
    let policy = policy_fn(|ctx| match ctx.capability().effect {
        Effect::Read => PolicyDecision::Allow,
        _ if ctx.confirmed() => PolicyDecision::Allow,
        Effect::Destructive => PolicyDecision::confirm("This cannot be undone."),
        _ => PolicyDecision::Confirm { reason: None },
    });
    let runtime = Runtime::new(
        PollsApp::definition()?,
        RuntimeOptions::default().policy(policy),
    )?;
    let host = runtime.host();
    let store = Store::default();
    let _reads = bind_reads(&host, &store)?;
    let writes = bind_writes(&host, &store)?;
    // The relationship program's records live in the engine (in memory here); its
    // capabilities serve one workspace, as the agent.
    let engine = Arc::new(Engine::in_memory().with_program(programs::polls::PACKAGE.clone())?);
    let _records = engine.bind_package(
        &host,
        "polls",
        None,
        "demo",
        &Caller::agent(
            Actor::new("agent").via("polls-tool"),
            [
                DelegatedScope::RecordsRead,
                DelegatedScope::RecordsWrite,
                DelegatedScope::CommandsExecute,
            ],
        ),
    )?;
    host.set_context(SemanticContext::active(["polls"]).primary("polls"))?;

    // As an MCP server: `-- mcp` on stdio, `-- mcp-http [ADDR]` over streamable HTTP. Every
    // approval is asked of the human through the MCP client's elicitation.
    if let Some(mode @ ("mcp" | "mcp-http")) = args.first().map(String::as_str) {
        let http_addr: std::net::SocketAddr = args
            .get(1)
            .map_or("127.0.0.1:8001", String::as_str)
            .parse()?;
        let bridge = rcip_mcp::McpBridge::builder(runtime.client())
            .confirmations(Arc::new(rcip_mcp::HostBroker::new(host.clone())))
            .build()?;
        let switch = maintenance(host.clone(), store.clone(), writes)?;
        let serve = async {
            if mode == "mcp" {
                return rcip_mcp::serve_stdio(bridge).await;
            }
            eprintln!("polls: MCP over streamable HTTP at http://{http_addr}/mcp");
            rcip_mcp::serve_http(bridge, http_addr, rcip_mcp::HttpOptions::new()).await
        };
        tokio::select! {
            served = serve => served?,
            switched = switch => switched?,
        }
        return Ok(());
    }

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

    // Assist: an agent driving the same client, one bounded turn at a time.
    assistant::conversation(runtime.client(), &host, &store).await;
    Ok(())
}
