//! Four tools of the polls example (examples/polls.rs) over MCP streamable HTTP, as an rcip
//! application writes them: `#[capability]` functions over a shared store, `catalog!`, and
//! rcip-mcp's `serve_http`. Issue 39 weighs it against ../rmcp-app (the same tools on rmcp);
//! see scripts/weight.sh.
//!
//! `rcip-app [PORT] [--check]`: serves `http://127.0.0.1:PORT/mcp` (PORT from the argument,
//! else `$PORT`, else 8001); `--check` exits 0 once the server is up (port 0: any free port).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rcip_runtime::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone)]
struct Poll {
    id: String,
    question: String,
    votes: Vec<u32>,
    closed: bool,
}

/// The polls, in memory, shared by every call.
#[derive(Clone, Default)]
struct Store(Arc<Mutex<Vec<Poll>>>);

impl Store {
    /// Runs `f` on the poll `poll_id`.
    fn with_poll<T>(
        &self,
        poll_id: &str,
        f: impl FnOnce(&mut Poll) -> Result<T, HandlerError>,
    ) -> Result<T, HandlerError> {
        let mut polls = self
            .0
            .lock()
            .map_err(|_| HandlerError::failed("state lock poisoned"))?;
        let poll = polls
            .iter_mut()
            .find(|p| p.id == poll_id)
            .ok_or_else(|| HandlerError::failed(format!("no poll {poll_id}")))?;
        f(poll)
    }
}

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

/// One vote.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Vote {
    /// The poll id.
    poll_id: String,
    /// The chosen option's position, from 0.
    option: u8,
}

/// A poll in the list.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct PollSummary {
    id: String,
    question: String,
    closed: bool,
}

/// Every poll.
#[derive(Serialize, JsonSchema)]
struct PollList {
    polls: Vec<PollSummary>,
}

/// Vote counts, in option order.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Results {
    poll_id: String,
    votes: Vec<u32>,
}

/// List polls.
///
/// Lists every poll with its question.
#[capability(effect = "read", scope = "polls", id = "polls.list")]
async fn list_polls(store: Store, _input: Nothing) -> Result<PollList, HandlerError> {
    let polls = store
        .0
        .lock()
        .map_err(|_| HandlerError::failed("state lock poisoned"))?;
    let polls = polls
        .iter()
        .map(|p| PollSummary {
            id: p.id.clone(),
            question: p.question.clone(),
            closed: p.closed,
        })
        .collect();
    Ok(PollList { polls })
}

/// Create a poll.
///
/// Creates a poll with a question and 2 to 10 options.
#[capability(effect = "write", scope = "polls", id = "polls.create")]
async fn create_poll(store: Store, input: CreatePoll) -> Result<PollRef, HandlerError> {
    let mut polls = store
        .0
        .lock()
        .map_err(|_| HandlerError::failed("state lock poisoned"))?;
    let poll_id = format!("p{}", polls.len() + 1);
    polls.push(Poll {
        id: poll_id.clone(),
        question: input.question,
        votes: vec![0; input.options.len()],
        closed: false,
    });
    Ok(PollRef { poll_id })
}

/// Vote.
///
/// Casts one vote for an option of an open poll.
#[capability(effect = "write", scope = "poll")]
async fn vote(store: Store, input: Vote) -> Result<Results, HandlerError> {
    store.with_poll(&input.poll_id, |poll| {
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
}

/// Close a poll.
///
/// Closes a poll for good; no more votes.
#[capability(effect = "destructive", scope = "poll", id = "polls.close")]
async fn close_poll(store: Store, input: PollRef) -> Result<PollRef, HandlerError> {
    store.with_poll(&input.poll_id, |poll| {
        poll.closed = true;
        Ok(PollRef {
            poll_id: poll.id.clone(),
        })
    })
}

catalog! {
    /// The polls application.
    struct PollsApp {
        id = "polls",
        name = "Polls",
        description = "Create polls, vote, and close them.",
        version = "0.1.0",
        scopes = [
            ("polls", "Poll list", "Every poll of the group."),
            ("poll", "Open poll", "The poll on screen.", parent = "polls"),
        ],
        capabilities = [list_polls, create_poll, vote, close_poll],
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    let port: u16 = match args.iter().find(|a| !a.starts_with("--")) {
        Some(port) => port.parse()?,
        None => std::env::var("PORT").map_or(Ok(8001), |p| p.parse())?,
    };
    // Every call runs (the rmcp twin asks no one either); the default policy would deny the
    // writes.
    let policy = policy_fn(|_| PolicyDecision::Allow);
    let runtime = PollsApp::runtime(
        RuntimeOptions::default().policy(policy),
        (Store::default(),),
    )?;
    let bridge = rcip_mcp::McpBridge::for_runtime(&runtime)
        .server_info("polls", "0.1.0")
        .build()?;
    let serve = rcip_mcp::serve_http(
        bridge,
        ([127, 0, 0, 1], port).into(),
        rcip_mcp::HttpOptions::new(),
    );
    if check {
        // `serve_http` binds, then serves until the process ends: a failed bind returns at
        // once, so still serving a moment later means the server is up.
        tokio::select! {
            served = serve => served?,
            () = tokio::time::sleep(Duration::from_millis(200)) => eprintln!("rcip-app: ok"),
        }
        return Ok(());
    }
    eprintln!("rcip-app: MCP over streamable HTTP at http://127.0.0.1:{port}/mcp");
    serve.await?;
    Ok(())
}
