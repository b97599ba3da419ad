//! The four poll tools of ../rcip-app written directly on rmcp, as its README writes a server:
//! `#[tool_router]` methods taking schemars-derived parameters, served over MCP streamable
//! HTTP in an axum router (the idioms of examples/mcp_bench.rs's peer). Issue 39 weighs
//! rcip-app against it; see scripts/weight.sh.
//!
//! With the `validate` feature it is the validating peer: each call's arguments are checked
//! against the tool's input schema with jsonschema (the validator rcip links) before the
//! router runs it, and a call that breaks its schema is a tool error.
//!
//! `rmcp-app [PORT] [--check]`: serves `http://127.0.0.1:PORT/mcp` (PORT from the argument,
//! else `$PORT`, else 8001); `--check` exits 0 once bound (port 0: any free port).

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

struct Poll {
    id: String,
    question: String,
    votes: Vec<u32>,
    closed: bool,
}

/// The server: one per session, every one over the same polls.
#[derive(Clone, Default)]
struct Polls(Arc<Mutex<Vec<Poll>>>);

impl Polls {
    fn lock(&self) -> Result<MutexGuard<'_, Vec<Poll>>, String> {
        self.0.lock().map_err(|_| "state lock poisoned".to_owned())
    }

    /// Runs `f` on the poll `poll_id`.
    fn with_poll<T>(
        &self,
        poll_id: &str,
        f: impl FnOnce(&mut Poll) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut polls = self.lock()?;
        let poll = polls
            .iter_mut()
            .find(|p| p.id == poll_id)
            .ok_or_else(|| format!("no poll {poll_id}"))?;
        f(poll)
    }
}

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

// The names are rcip-app's tool names, so both serve the same `tools/list`.
#[cfg_attr(not(feature = "validate"), tool_router(server_handler))]
#[cfg_attr(feature = "validate", tool_router)]
impl Polls {
    #[tool(
        name = "polls.list",
        title = "List polls",
        description = "Lists every poll with its question."
    )]
    fn list_polls(&self) -> Result<Json<PollList>, String> {
        let polls = self
            .lock()?
            .iter()
            .map(|p| PollSummary {
                id: p.id.clone(),
                question: p.question.clone(),
                closed: p.closed,
            })
            .collect();
        Ok(Json(PollList { polls }))
    }

    #[tool(
        name = "polls.create",
        title = "Create a poll",
        description = "Creates a poll with a question and 2 to 10 options."
    )]
    fn create_poll(
        &self,
        Parameters(input): Parameters<CreatePoll>,
    ) -> Result<Json<PollRef>, String> {
        let mut polls = self.lock()?;
        let poll_id = format!("p{}", polls.len() + 1);
        polls.push(Poll {
            id: poll_id.clone(),
            question: input.question,
            votes: vec![0; input.options.len()],
            closed: false,
        });
        Ok(Json(PollRef { poll_id }))
    }

    #[tool(
        name = "poll.vote",
        title = "Vote",
        description = "Casts one vote for an option of an open poll."
    )]
    fn vote(&self, Parameters(input): Parameters<Vote>) -> Result<Json<Results>, String> {
        self.with_poll(&input.poll_id, |poll| {
            if poll.closed {
                return Err("the poll is closed".to_owned());
            }
            let count = poll
                .votes
                .get_mut(usize::from(input.option))
                .ok_or("no such option")?;
            *count += 1;
            Ok(Json(Results {
                poll_id: poll.id.clone(),
                votes: poll.votes.clone(),
            }))
        })
    }

    #[tool(
        name = "polls.close",
        title = "Close a poll",
        description = "Closes a poll for good; no more votes."
    )]
    fn close_poll(&self, Parameters(input): Parameters<PollRef>) -> Result<Json<PollRef>, String> {
        self.with_poll(&input.poll_id, |poll| {
            poll.closed = true;
            Ok(Json(PollRef {
                poll_id: poll.id.clone(),
            }))
        })
    }
}

/// The validating peer's handler: arguments checked against the tool's schema, then routed.
#[cfg(feature = "validate")]
mod validated {
    use std::collections::HashMap;
    use std::sync::LazyLock;

    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::tool::ToolCallContext;
    use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
    use rmcp::service::RequestContext;
    use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

    use super::Polls;

    /// The router and each tool's compiled input schema, built once.
    pub(crate) static TOOLS: LazyLock<(ToolRouter<Polls>, HashMap<String, jsonschema::Validator>)> =
        LazyLock::new(|| {
            let router = Polls::tool_router();
            let validators = router
                .list_all()
                .into_iter()
                .map(|tool| {
                    let schema = serde_json::Value::Object((*tool.input_schema).clone());
                    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
                    (tool.name.to_string(), validator)
                })
                .collect();
            (router, validators)
        });

    #[tool_handler(router = TOOLS.0)]
    impl ServerHandler for Polls {
        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            if let Some(validator) = TOOLS.1.get(&*request.name) {
                let arguments =
                    serde_json::Value::Object(request.arguments.clone().unwrap_or_default());
                if let Err(error) = validator.validate(&arguments) {
                    let message = format!("invalid arguments: {error}");
                    return Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into());
                }
            }
            TOOLS
                .0
                .call(ToolCallContext::new(self, request, context))
                .await
        }
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
    let polls = Polls::default();
    let service = StreamableHttpService::new(
        move || Ok(polls.clone()),
        LocalSessionManager::default().into(),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    if check {
        // The validators are built at the first call; `--check` builds them now, so a
        // schema jsonschema refuses fails here.
        #[cfg(feature = "validate")]
        std::sync::LazyLock::force(&validated::TOOLS);
        eprintln!("rmcp-app: ok");
        return Ok(());
    }
    eprintln!("rmcp-app: MCP over streamable HTTP at http://127.0.0.1:{port}/mcp");
    axum::serve(listener, router).await?;
    Ok(())
}
