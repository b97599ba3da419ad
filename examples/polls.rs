//! A small poll application, declared with `#[capability]` on typed functions, and a guided
//! tour of RCIP over it.
//!
//! `cargo run --example polls` prints the tour, about 80 lines in numbered sections. The host
//! (trusted application code) builds the runtime from the catalog, binds each capability with
//! the application state, sets the semantic context, and its UI approves or declines
//! confirmations. A scripted tool holds nothing but an `Arc<dyn RcipClient>`:
//!
//! 1. discovery: the snapshot's revision (one per change the host made), the application's
//!    capabilities with their live facts (available, relevant to the current context), and
//!    how many more the relationship program adds;
//! 2. a read, which runs at once;
//! 3. a write: a confirmation ticket (shown with the time left), approved by the host UI;
//! 4. a destructive action the host UI declines (`CONFIRMATION_DECLINED`);
//! 5. invalid input, answered `INPUT_INVALID` with every schema issue;
//! 6. the relationship program `programs/polls.json` (compiled by `build.rs` with
//!    `rcip-build`) through its generated capabilities: a record created, a vote through a
//!    guarded command, the same voter again (approved by the host, refused by the program's
//!    guard), the first vote replayed with its idempotency key (its first result again, though
//!    the record has moved on), and closing through a lifecycle transition that emits work;
//! 7. Assist driving the same client with a scripted assistant (`assistant.rs`): a write
//!    refused in read-only mode, a write confirmed by the host in interactive mode, and a
//!    turn cancelled between two actions (the vote before the cancel stays done; the rest
//!    never run);
//!
//! and ends with the commands below.
//!
//! `cargo run --example polls -- export` prints the catalog as JSON (the exact schemas the
//! runtime validates against), `-- export --profile NAME` one consumer's tool list; `-- mcp`
//! serves the application over MCP on stdio and `-- mcp-http [ADDR]` over streamable HTTP
//! (default `127.0.0.1:8001`), approvals asked through the MCP client.
//!
//! `-- mcp-http ADDR --database postgres://...` keeps everything in PostgreSQL instead of
//! memory, so that several instances on one database serve one application behind a load
//! balancer without affinity: the polls (one document in a table of the example's own,
//! changed under a row lock; `polls.wait` also looks again every 250 ms, since a vote through
//! another instance wakes nothing here), the relationship program's records, pending
//! confirmations, and the MCP sessions, stream events, tasks and `requestState` key, with
//! the instances telling each other what they must know (see `docs/server-design.md`,
//! "Running several instances"). The maintenance switch stays per instance: signal each.
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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod assistant;
mod polls_shared;

use rcip_records::{Actor, Caller, DelegatedScope, Engine};
use rcip_runtime::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

/// The application's private state: never part of a snapshot.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Polls {
    polls: Vec<Poll>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    polls: Place,
    /// Bumped at every vote and close: what wakes `polls.wait`.
    changes: Arc<watch::Sender<u64>>,
    /// Whether a poll is open, as the last look at the state found: `polls.close`'s
    /// availability, which is asked synchronously.
    any_open: Arc<AtomicBool>,
}

/// Where the polls are: in this process, or (`--database`) in PostgreSQL, shared by every
/// instance on it.
#[derive(Debug, Clone)]
enum Place {
    Memory(Arc<Mutex<Polls>>),
    Database(Arc<polls_shared::SharedPolls>),
}

impl Default for Place {
    fn default() -> Self {
        Place::Memory(Arc::default())
    }
}

impl Store {
    /// The polls of the database at `url`, shared with every instance on it.
    async fn shared(url: &str) -> Result<Self, Box<dyn std::error::Error>> {
        let store = Store {
            polls: Place::Database(polls_shared::SharedPolls::open(url).await?),
            ..Store::default()
        };
        store.refresh().await;
        Ok(store)
    }

    /// Runs `f` on the state; a poisoned lock is a handler failure, not a crash.
    async fn with<T>(
        &self,
        f: impl FnOnce(&mut Polls) -> Result<T, HandlerError>,
    ) -> Result<T, HandlerError> {
        match &self.polls {
            Place::Memory(polls) => self.with_memory(polls, f),
            Place::Database(shared) => shared.with(|polls| self.look(polls, f)).await,
        }
    }

    fn with_memory<T>(
        &self,
        polls: &Mutex<Polls>,
        f: impl FnOnce(&mut Polls) -> Result<T, HandlerError>,
    ) -> Result<T, HandlerError> {
        let mut polls = polls
            .lock()
            .map_err(|_| HandlerError::failed("state lock poisoned"))?;
        self.look(&mut polls, f)
    }

    /// `f` on the state, noting whether a poll is open.
    fn look<T>(
        &self,
        polls: &mut Polls,
        f: impl FnOnce(&mut Polls) -> Result<T, HandlerError>,
    ) -> Result<T, HandlerError> {
        let result = f(polls);
        // (A change that failed is not written: the flag stays as it was.)
        if result.is_ok() {
            let open = polls.polls.iter().any(|p| !p.closed);
            self.any_open.store(open, Ordering::Relaxed);
        }
        result
    }

    /// Runs `f` on the state without waiting for the database (where nothing can wait: a
    /// `Drop`).
    fn with_detached(
        &self,
        f: impl FnOnce(&mut Polls) -> Result<(), HandlerError> + Send + 'static,
    ) {
        match &self.polls {
            Place::Memory(polls) => {
                let _ = self.with_memory(polls, f);
            }
            Place::Database(_) => {
                let store = self.clone();
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move { store.with(f).await });
                }
            }
        }
    }

    /// Looks at the state again (another instance may have changed it).
    async fn refresh(&self) {
        let _ = self.with(|_| Ok(())).await;
    }

    /// Whether the state is shared by several instances (then `polls.wait` also looks
    /// again now and then: a vote through another instance wakes nothing here).
    fn is_shared(&self) -> bool {
        matches!(self.polls, Place::Database(_))
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
    async fn start(store: &Store, poll_id: &str) -> Result<Self, HandlerError> {
        store
            .with(|polls| {
                polls.find(poll_id)?.watchers += 1;
                Ok(())
            })
            .await?;
        Ok(Watching {
            store: store.clone(),
            poll_id: poll_id.to_owned(),
        })
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let poll_id = std::mem::take(&mut self.poll_id);
        self.store.with_detached(move |polls| {
            if let Ok(poll) = polls.find(&poll_id) {
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
async fn list_polls(store: Store, _input: Nothing) -> Result<Vec<PollSummary>, HandlerError> {
    store
        .with(|polls| {
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
        .await
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
async fn create_poll(store: Store, input: CreatePoll) -> Result<PollRef, HandlerError> {
    store
        .with(|polls| {
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
        .await
}

/// Rename a poll.
///
/// Replaces the question of an open poll.
#[capability(effect = "write", scope = "poll")]
async fn rename(store: Store, input: Rename) -> Result<PollRef, HandlerError> {
    store
        .with(|polls| {
            let poll = polls.find(&input.poll_id)?;
            poll.question = input.question;
            Ok(PollRef {
                poll_id: poll.id.clone(),
            })
        })
        .await
}

/// Vote.
///
/// Casts one vote for an option of an open poll.
#[capability(effect = "write", scope = "poll")]
async fn vote(store: Store, input: Vote) -> Result<Results, HandlerError> {
    let voted = store
        .with(|polls| {
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
        })
        .await?;
    store.changed();
    Ok(voted)
}

/// Read results.
///
/// Reads the vote counts of a poll.
#[capability(effect = "read", scope = "poll")]
async fn results(store: Store, input: PollRef) -> Result<Results, HandlerError> {
    store
        .with(|polls| {
            let poll = polls.find(&input.poll_id)?;
            Ok(Results {
                poll_id: poll.id.clone(),
                votes: poll.votes.clone(),
            })
        })
        .await
}

/// Close a poll.
///
/// Closes a poll for good; no more votes.
#[capability(effect = "destructive", scope = "poll", id = "polls.close")]
async fn close_poll(store: Store, input: PollRef) -> Result<PollRef, HandlerError> {
    let closed = store
        .with(|polls| {
            let poll = polls.find(&input.poll_id)?;
            poll.closed = true;
            Ok(PollRef {
                poll_id: poll.id.clone(),
            })
        })
        .await?;
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
    let _watching = Watching::start(&store, &input.poll_id).await?;
    // Shared by several instances, the votes are also looked at again now and then.
    let look_again = if store.is_shared() {
        Duration::from_millis(250)
    } else {
        Duration::MAX
    };
    let mut timed_out = false;
    loop {
        let now = store
            .with(|polls| {
                let poll = polls.find(&input.poll_id)?;
                let total = poll.votes.iter().sum::<u32>();
                Ok(Waited {
                    poll_id: poll.id.clone(),
                    votes: poll.votes.clone(),
                    total,
                    reached: total >= input.votes,
                    closed: poll.closed,
                })
            })
            .await?;
        if now.reached || now.closed || timed_out {
            return Ok(now);
        }
        tokio::select! {
            () = cancellation.cancelled() => return Err(HandlerError::aborted()),
            () = tokio::time::sleep_until(deadline) => timed_out = true,
            changed = changes.changed() => timed_out = changed.is_err(),
            () = sleep_at_most(look_again) => {}
        }
    }
}

/// Sleeps `duration`, or for ever when it is `Duration::MAX`.
async fn sleep_at_most(duration: Duration) {
    if duration == Duration::MAX {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(duration).await;
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

/// Binds the relationship program's capabilities, over `engine`'s records, for one
/// workspace, as the agent.
fn bind_records<S: rcip_records::RecordStore + 'static>(
    engine: Engine<S>,
    host: &Host,
) -> Result<Vec<BindingGuard>, Box<dyn std::error::Error>> {
    let engine = Arc::new(engine.with_program(programs::polls::PACKAGE.clone())?);
    Ok(engine.bind_package(
        host,
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
    )?)
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
        if open.any_open.load(Ordering::Relaxed) {
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
#[derive(Debug)]
struct Approval {
    confirmation: ConfirmationInfo,
    /// Whether the host UI prints its answer (the tour prints it where it is the point).
    shown: bool,
    reply: oneshot::Sender<InvocationOutcome>,
}

/// "2 min": how long until `at_ms` (milliseconds since the Unix epoch), rounded.
fn time_left(at_ms: u64) -> String {
    let seconds = at_ms
        .saturating_sub(SystemClock.now_ms())
        .saturating_add(500)
        / 1000;
    if seconds < 60 {
        format!("{seconds} s")
    } else {
        format!("{} min", (seconds + 30) / 60)
    }
}

/// An outcome the way a tool would show it: one line, then one per validation issue.
fn describe(outcome: &InvocationOutcome) -> String {
    use std::fmt::Write as _;
    match outcome {
        InvocationOutcome::Succeeded {
            capability_id,
            output,
            ..
        } => format!("<- succeeded {capability_id}: {}", brief(output)),
        InvocationOutcome::ConfirmationRequired {
            capability_id,
            confirmation,
            ..
        } => format!(
            "<- confirmation_required {capability_id}: \"{}\" ({}, expires in {})",
            confirmation.description,
            confirmation.effect,
            time_left(confirmation.expires_at)
        ),
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
            let mut text = format!(
                "<- {} {capability_id}: {} {}",
                status.as_str().unwrap_or("?"),
                error.code,
                error.message
            );
            for issue in error.validation_issues.iter().flatten() {
                let at = match issue.instance_path.as_str() {
                    "" => "the top level".to_owned(),
                    path => format!("{path:?}"),
                };
                let _ = write!(
                    text,
                    "\n       issue at {at} ({}): {}",
                    issue.keyword, issue.message
                );
            }
            text
        }
    }
}

/// An output, shortened when it is a whole relationship record (its id, revision, state).
fn brief(output: &serde_json::Value) -> String {
    match (
        &output["kind"],
        &output["id"],
        &output["revision"],
        &output["state"],
    ) {
        (serde_json::Value::String(_), serde_json::Value::String(id), revision, state)
            if revision.is_u64() && state.is_string() =>
        {
            format!("record {id}, revision {revision}, state {state}")
        }
        _ => output.to_string(),
    }
}

/// Prints an outcome the way a tool would show it.
fn show(outcome: &InvocationOutcome) {
    println!("  {}", describe(outcome));
}

/// The tool: it holds only the client, and a channel to ask the host UI for approval.
struct Tool {
    client: Arc<dyn RcipClient>,
    approvals: mpsc::Sender<Approval>,
}

impl Tool {
    /// Invokes, printing the request and the outcome; when the host must approve, hands the
    /// ticket to the host UI and returns its answer.
    async fn call(&self, capability_id: &str, input: serde_json::Value) -> InvocationOutcome {
        self.invoke(capability_id, input, true, |text| text).await
    }

    /// [`call`](Self::call), printing every text through `shorten`; with `approvals_shown`
    /// false, only the request and its final outcome are printed.
    async fn invoke(
        &self,
        capability_id: &str,
        input: serde_json::Value,
        approvals_shown: bool,
        shorten: impl Fn(String) -> String,
    ) -> InvocationOutcome {
        println!("  {}", shorten(format!("-> {capability_id} {input}")));
        let outcome = self
            .client
            .invoke(InvocationRequest::new(capability_id, input))
            .await;
        let Some(confirmation) = outcome.confirmation().cloned() else {
            println!("  {}", shorten(describe(&outcome)));
            return outcome;
        };
        if approvals_shown {
            println!("  {}", describe(&outcome));
        }
        let (reply, answer) = oneshot::channel();
        let approval = Approval {
            confirmation,
            shown: approvals_shown,
            reply,
        };
        let outcome = match self.approvals.send(approval).await {
            Ok(()) => answer.await.unwrap_or(outcome),
            Err(_) => outcome,
        };
        println!("  {}", shorten(describe(&outcome)));
        outcome
    }
}

/// The application's own capabilities (the functions above), in catalog order; the rest of
/// the catalog is generated from the relationship program.
const FUNCTIONS: [&str; 7] = [
    list_polls::ID,
    create_poll::ID,
    rename::ID,
    vote::ID,
    results::ID,
    wait_for_votes::ID,
    close_poll::ID,
];

/// Section 1: the snapshot, as a table of the application's functions and a count of the
/// relationship program's capabilities.
fn discovery(client: &dyn RcipClient) {
    let snapshot = client.get_snapshot();
    let bound = snapshot.capabilities.iter().filter(|c| c.bound).count();
    let others = snapshot
        .revision
        .saturating_sub(u64::try_from(bound).unwrap_or(u64::MAX));
    println!(
        "== 1. Discovery: what a tool sees (snapshot revision {}: one per change the host \
         made, {bound} bindings + {others} context)",
        snapshot.revision
    );
    let rows: Vec<[String; 4]> = snapshot
        .capabilities
        .iter()
        .filter(|c| FUNCTIONS.contains(&c.id.as_str()))
        .map(|c| {
            let note = match (&c.availability, c.relevance) {
                (
                    Some(Availability {
                        available: false,
                        reason,
                        ..
                    }),
                    _,
                ) => format!("unavailable: {}", reason.as_deref().unwrap_or("no reason")),
                _ if !c.bound => "unbound".to_owned(),
                (_, Relevance::Other) => format!(
                    "available, outside the current context (scope \"{}\")",
                    c.scope_ids.join("\", \"")
                ),
                _ => "available".to_owned(),
            };
            [
                c.id.clone(),
                c.effect.as_str().to_owned(),
                c.title.clone(),
                note,
            ]
        })
        .collect();
    let width = |column: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (id, effect, title) = (width(0), width(1), width(2));
    for [i, e, t, note] in &rows {
        println!("  {i:<id$}  {e:<effect$}  {t:<title$}  {note}");
    }
    let generated: Vec<_> = snapshot
        .capabilities
        .iter()
        .filter(|c| !FUNCTIONS.contains(&c.id.as_str()))
        .collect();
    let mut effects = Vec::new();
    for effect in [Effect::Read, Effect::Write, Effect::Destructive] {
        let count = generated.iter().filter(|c| c.effect == effect).count();
        if count > 0 {
            effects.push(format!("{count} {}", effect.as_str()));
        }
    }
    println!(
        "  + {} more ({}) generated from the relationship program programs/polls.json: see 6",
        generated.len(),
        effects.join(", ")
    );
}

/// The scripted tool's tour: discovery, a read, an approved write, a declined destructive
/// action, invalid input, then the relationship program.
async fn tour(tool: &Tool) {
    discovery(&*tool.client);

    println!("\n== 2. A read: it runs at once (the host's policy lets reads through)");
    tool.call("polls.list", json!({})).await;

    println!("\n== 3. A write: the tool gets a confirmation ticket, the host UI approves it");
    let created = tool
        .call(
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

    println!(
        "\n== 4. A destructive action (available now that {poll_id} is open): the host UI \
         declines it, nothing runs"
    );
    tool.call("polls.close", json!({"pollId": poll_id})).await;

    println!("\n== 5. Invalid input: refused before any handler runs, with every issue");
    tool.call(
        "polls.create",
        json!({"question": "", "options": ["Only one"], "extra": true}),
    )
    .await;

    println!(
        "\n== 6. A relationship program (programs/polls.json): a versioned record, guarded \
         commands, a lifecycle\n   (the host UI approves every write here, as in 3: only the \
         outcomes are shown)"
    );
    let created = tool
        .invoke(
            "polls.poll.create",
            json!({"collection_id": "team", "idempotency_key": "create-lunch",
                   "data": {"question": "Lunch at noon?", "options": ["yes", "no"], "vote_count": 0}}),
            false,
            |text| text,
        )
        .await;
    let record_id = created
        .output()
        .and_then(|o| o.get("id"))
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned();
    // The record id is a random UUID: printed as its first 8 characters.
    let short = format!("{}…", record_id.get(..8).unwrap_or(&record_id));
    let shorten = |text: String| text.replace(&record_id, &short);
    let record = |mut input: serde_json::Value| {
        input["record_id"] = json!(record_id);
        input
    };
    let vote = |revision: u64, key: &str, voter: &str| {
        let input = json!({"voter": voter, "choice": 0});
        record(json!({"expected_revision": revision, "idempotency_key": key, "input": input}))
    };
    let call =
        |capability_id: &'static str, input| tool.invoke(capability_id, input, false, shorten);
    println!(
        "  -- ada votes \"yes\": the guard passes (ada is not the last voter), revision 1 -> 2"
    );
    call("polls.poll.vote", vote(1, "vote-ada", "ada")).await;
    println!(
        "  -- ada again: the host UI approves, but the program's guard refuses (no voter twice \
         in a row)"
    );
    call("polls.poll.vote", vote(2, "vote-ada-again", "ada")).await;
    println!(
        "  -- ada's first vote replayed (same idempotency_key): its first result again, no second \
         vote, no stale-revision error"
    );
    call("polls.poll.vote", vote(1, "vote-ada", "ada")).await;
    println!(
        "  -- the tally (vote_count 1: the close command's guard needs a vote), then close: \
         open -> closed, requesting work"
    );
    let patch = json!({"set": {"vote_count": 1}});
    let tally = json!({"expected_revision": 2, "idempotency_key": "tally", "patch": patch});
    call("polls.poll.update", record(tally)).await;
    let input = json!({"reason": "decided"});
    let close = json!({"expected_revision": 3, "idempotency_key": "close-lunch", "input": input});
    call("polls.poll.close", record(close)).await;
}

/// The last section: where to go from here.
fn next_steps() {
    let profiles: Vec<&str> = rcip_export::Profile::ALL.iter().map(|p| p.name()).collect();
    let rows = [
        (
            "cargo run --example polls -- mcp",
            "MCP on stdio (approvals are asked through the MCP client)".to_owned(),
        ),
        (
            "cargo run --example polls -- mcp-http 127.0.0.1:8001",
            "MCP over streamable HTTP, at /mcp".to_owned(),
        ),
        (
            "cargo run --example polls -- export",
            "the catalog as JSON, with every schema".to_owned(),
        ),
        (
            "cargo run --example polls -- export --profile openai",
            format!("one model API's tools ({})", profiles.join(", ")),
        ),
    ];
    let width = rows.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    println!("\n== Next: serve the same application to an MCP client, or export it as tools");
    for (command, what) in &rows {
        println!("  {command:<width$}  {what}");
    }
    println!(
        "  MCP client config: {{\"mcpServers\": {{\"polls\": {{\"command\": \"cargo\", \
         \"args\": [\"run\", \"-q\", \"--example\", \"polls\", \"--\", \"mcp\"]}}}}}}"
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("export") {
        let definition = PollsApp::definition()?;
        let json = match args.get(1..) {
            // The catalog with its content revision (RFC 8785 canonical JSON, SHA-256).
            Some([]) | None => PollsApp::catalog_export()?,
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
    // `--database URL` (MCP modes): every instance on that PostgreSQL database serves the
    // same polls, records, confirmations and MCP sessions.
    let database = match args.iter().position(|a| a == "--database") {
        Some(at) if at + 1 < args.len() => {
            let url = args.remove(at + 1);
            args.remove(at);
            Some(
                rcip_database::PostgresStore::open(&url)
                    .await
                    .map(|db| (url, Arc::new(db)))?,
            )
        }
        Some(_) => return Err("--database needs a URL".into()),
        None => None,
    };
    let mode = args.first().map(String::as_str);
    if database.is_some() && !matches!(mode, Some("mcp" | "mcp-http")) {
        return Err("--database goes with `mcp` or `mcp-http`".into());
    }
    // Reads run at once; anything else needs the host's approval.
    let policy = policy_fn(|ctx| match ctx.capability().effect {
        Effect::Read => PolicyDecision::Allow,
        _ if ctx.confirmed() => PolicyDecision::Allow,
        Effect::Destructive => PolicyDecision::confirm("This cannot be undone."),
        _ => PolicyDecision::Confirm { reason: None },
    });
    let mut options = RuntimeOptions::default().policy(policy);
    if let Some((_, db)) = &database {
        options = options.confirmation_store(Arc::new(db.confirmations()));
    }
    let runtime = Runtime::new(PollsApp::definition()?, options)?;
    let host = runtime.host();
    let store = match &database {
        Some((url, _)) => Store::shared(url).await?,
        None => Store::default(),
    };
    let _reads = bind_reads(&host, &store)?;
    let writes = bind_writes(&host, &store)?;
    // The relationship program's records live in the engine (in memory here, or in the
    // database); its capabilities serve one workspace, as the agent.
    let _records = match &database {
        Some((_, db)) => bind_records(Engine::new(Arc::clone(db)), &host)?,
        None => bind_records(Engine::in_memory(), &host)?,
    };
    host.set_context(SemanticContext::active(["polls"]).primary("polls"))?;

    // As an MCP server: `-- mcp` on stdio, `-- mcp-http [ADDR]` over streamable HTTP. Every
    // approval is asked of the human through the MCP client's elicitation.
    if let Some(mode @ ("mcp" | "mcp-http")) = mode {
        let http_addr: std::net::SocketAddr = args
            .get(1)
            .map_or("127.0.0.1:8001", String::as_str)
            .parse()?;
        let mut builder = rcip_mcp::McpBridge::builder(runtime.client())
            .confirmations(Arc::new(rcip_mcp::HostBroker::new(host.clone())));
        let mut http = rcip_mcp::HttpOptions::new();
        if let Some((_, db)) = &database {
            let key = db.secret("mcp-request-state").await?;
            builder = builder
                .task_store(Arc::new(db.mcp_tasks()))
                .request_state_key(key.to_vec());
            let polls = store.clone();
            http = http
                .session_store(Arc::new(db.mcp_sessions()))
                .event_store(Arc::new(db.mcp_events()))
                .relay(Arc::new(db.mcp_relay()))
                // Another instance changed the listing (closed the last open poll, say):
                // look at the polls again before comparing this instance's listing.
                .on_remote_change(move || {
                    let polls = polls.clone();
                    Box::pin(async move { polls.refresh().await })
                });
        }
        let bridge = builder.build()?;
        let switch = maintenance(host.clone(), store.clone(), writes)?;
        let serve = async {
            if mode == "mcp" {
                return rcip_mcp::serve_stdio(bridge).await;
            }
            eprintln!("polls: MCP over streamable HTTP at http://{http_addr}/mcp");
            rcip_mcp::serve_http(bridge, http_addr, http).await
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
            while let Some(Approval {
                confirmation,
                shown,
                reply,
            }) = requests.recv().await
            {
                let approve = confirmation.effect != Effect::Destructive;
                if shown {
                    println!(
                        "  [host UI] {} \"{}\"",
                        if approve { "approves" } else { "declines" },
                        confirmation.title
                    );
                }
                let _ = reply.send(host.resolve_confirmation(&confirmation.id, approve).await);
            }
        })
    };

    println!(
        "A tour of RCIP {RCIP_PROTOCOL_VERSION} with the \"polls\" app: a scripted tool holding only \
         the RCIP client, and the host, which approves or declines.\n"
    );
    let tool = Tool {
        client: runtime.client(),
        approvals,
    };
    tour(&tool).await;
    drop(tool);
    let _ = approver.await;

    // Assist: an agent driving the same client, one bounded turn at a time.
    assistant::conversation(runtime.client(), &host, &store).await;
    next_steps();
    Ok(())
}
