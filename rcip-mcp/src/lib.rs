//! Any rcip application as an MCP server, on rmcp (the official Rust SDK), speaking MCP
//! 2025-11-25 and 2026-07-28 over stdio and streamable HTTP.
//!
//! The bridge is made from a client (`Arc<dyn RcipClient>`) and nothing else; trusted host
//! code may add a [`ConfirmationBroker`] so that a human's answer, asked through the MCP
//! client, can resolve a pending confirmation. The host surface stays out of reach.
//!
//! ```
//! use std::sync::Arc;
//! use rcip_mcp::{HostBroker, McpBridge};
//! use rcip_runtime::*;
//! use serde_json::json;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let definition = ApplicationDefinition::new("notes", "Notes", "Keeps notes.").capability(
//!     CapabilityDefinition::new("notes.list", Effect::Read, "List notes", "Lists the notes."),
//! );
//! let runtime = Runtime::new(definition, RuntimeOptions::default())?;
//! let _binding = runtime.host().bind(
//!     "notes.list",
//!     Binding::new(|_input, _ctx| async { Ok::<_, HandlerError>(json!({})) }),
//! )?;
//! let bridge = McpBridge::builder(runtime.client())
//!     .confirmations(Arc::new(HostBroker::new(runtime.host())))
//!     .server_info("notes", "1.0.0")
//!     .build()?;
//! // rcip_mcp::serve_stdio(bridge).await?;  or  rcip_mcp::serve_http(bridge, addr, HttpOptions::new()).await?;
//! # let _ = bridge; Ok(()) }
//! ```
//!
//! # Tools
//!
//! `tools/list` comes from the live snapshot through the MCP profiles of `rcip-export`
//! (names, titles, descriptions with usage guidance, input and output schemas, annotations
//! from the effects), in the profile of the request's revision, with `ttlMs: 0` and
//! `cacheScope: "private"` on 2026-07-28. Which capabilities are listed is the host's choice
//! ([`Listing`]). `tools/call` maps the arguments back to the capability's input and invokes
//! it; the request's cancellation (`notifications/cancelled`, an HTTP disconnect) cancels the
//! invocation. A call with `_meta.progressToken` gives the handler an [`McpProgress`] in its
//! invocation extensions, to send `notifications/progress`; every call gets an [`McpLog`]
//! to send `notifications/message` at or above the level the client asked for
//! (2025-11-25 `logging/setLevel`, 2026-07-28 `_meta` logLevel; none asked: nothing is sent).
//!
//! | outcome | MCP result |
//! |---|---|
//! | succeeded | `structuredContent` (2025-11-25: `{"result": ...}` when the output is not an object) and a text block with its JSON (a string output: the string itself), or the blocks the host's [content mapping](McpBridgeBuilder::content) makes of the output (image, audio, resources: see [`content_field`]) |
//! | failed, denied | `isError: true` and one text block, `CODE: message` (the runtime's stable code and public message only, never a handler's own error text) then a line `- /instance/path: message (keyword)` per validation issue (`the input` for the root; `the output` for `OUTPUT_INVALID`; the message names the property where the issue's params do: ``unexpected property `extra` ``, ``missing property `options` ``); no `structuredContent`, which would have to match the tool's `outputSchema` (clients on the TypeScript SDK check it even on `isError` results) |
//! | confirmation required | the human is asked (below); without a broker or a client that can show a form: `isError: true`, one text block `CONFIRMATION_PENDING: ...` saying the operation awaits approval in the application, with nothing the model could approve it with ([below](#clients-that-cannot-show-a-confirmation)) |
//! | a long-running capability, a 2026-07-28 client with the tasks extension | a task ([below](#tasks)) |
//! | unknown tool, arguments not an object | JSON-RPC error `-32602` |
//!
//! # Confirmations
//!
//! A confirmation reaches the human through the client, never the model, and only when the
//! bridge has a broker:
//!
//! - **2025-11-25**: when the client declared `elicitation` (form), an `elicitation/create`
//!   form (the confirmation's title, description and effect, and one `confirm` boolean),
//!   awaited until the confirmation expires. Accepted with `confirm: true`: the broker
//!   approves; anything else (decline, cancel, `false`, no answer): it declines, and the
//!   result is `CONFIRMATION_DECLINED`.
//! - **2026-07-28**: an `input_required` result asking the same form under the key
//!   `confirm`, with a `requestState` sealed by rmcp's `RequestStateCodec` (HMAC-SHA256) and
//!   bound to the confirmation id, the tool, a SHA-256 of the canonical (RFC 8785) arguments,
//!   the principal and the expiry. The retry's state is verified first: forged, altered,
//!   expired, or issued for another tool, other arguments or another principal is refused
//!   with `-32602` and runs nothing; each confirmation is answered once (a replay is
//!   `-32602` `CONFIRMATION_ALREADY_USED`); a retry without the answer gets the question
//!   again.
//!
//! # Clients that cannot show a confirmation
//!
//! Without a broker, or from a client that did not declare form elicitation (the MCP
//! Inspector's default, many agents), a call that needs approval answers an `isError`
//! result whose text starts `CONFIRMATION_PENDING` ([`APPROVAL_PENDING`]): the one shape every
//! SDK accepts from a tool that declares an output schema (a result without
//! `structuredContent` is refused unless it is an error), and the operation has not run. The
//! confirmation waits for the host, which shows it in its own interface
//! ([`Host::pending_confirmations`](rcip_runtime::Host::pending_confirmations)) and approves
//! or declines it there. The same principal calling the same tool again with the same
//! arguments gets the same answer while it waits (no second confirmation), then the outcome,
//! once; the next call is a new one. Anonymous callers (no authentication hook) are one
//! principal.
//!
//! **Deployments with several instances.** A [`SessionStore`] in
//! [`HttpOptions::session_store`] shares 2025-11-25 sessions: a request naming a session
//! another instance opened is served here, for the principal that opened it only; a
//! [`TaskStore`] shared through [`McpBridgeBuilder::task_store`] lets any instance answer
//! `tasks/get`, `tasks/result` and `tasks/cancel` (a store that implements
//! [`TaskStore::watch`] tells the instance running a task of a cancellation made elsewhere,
//! and its handler stops there). The runtime keeps pending confirmations in memory, in the process that
//! created them. A 2026-07-28 retry must therefore reach the
//! instance that returned the `input_required` result: a valid `requestState` is only
//! accepted there (its key is per process by default; with a shared
//! [`request_state_key`](McpBridgeBuilder::request_state_key) another instance verifies it
//! but its runtime has no such confirmation, and the result is
//! `CONFIRMATION_NOT_FOUND`). Run stateless deployments with session affinity (route by
//! principal or client), or a single instance.
//!
//! # Requests to the client: data, the model, roots
//!
//! A capability asks the calling client through the [`McpElicitor`] in its invocation's
//! extensions: the human for data ([`ask`](McpElicitor::ask)), the client's model for a
//! message ([`create_message`](McpElicitor::create_message), `sampling/createMessage`), the
//! client's roots ([`list_roots`](McpElicitor::list_roots)). On 2025-11-25 each is a request
//! it awaits; on 2026-07-28 `input_required` rounds (several requests in one round when the
//! handler makes them all before propagating an error) whose sealed `requestState` carries
//! the answers so far, the handler running again on each retry (so its requests come before
//! its side effects). A client that lacks the capability a request needs, or one
//! [`McpElicitor::require_client_capability`] names, gets `-32021`. Invoked in process, the
//! requests fail with [`ElicitError::NoClient`]; [`McpElicitor::scripted`] answers them in
//! tests. Approval never goes through these requests: only the bridge's own form asks it.
//!
//! Unlike a confirmation's, a data state is not single-use, by design: it carries only
//! answers the client itself gave (the protocol lets a client send them as `inputResponses`
//! with no state at all), so replaying one grants nothing; approval is never data.
//!
//! **Known limit:** a capability that needs approval *and* asks for data works on
//! 2025-11-25 only. On 2026-07-28 the handler first runs when the approved retry resolves
//! the confirmation, with the extensions of the request that asked for approval (its
//! elicitor holds no answers, its log and progress reach a finished request), so its first
//! question ends the call `MCP_INPUT_REQUIRED`. Ask for the data in a capability of its
//! own, or approve inside the data round (an elicited `confirm` field).
//!
//! # Tasks
//!
//! A capability declared long-running (`#[capability(long_running)]`,
//! [`CapabilityDefinition::long_running`](rcip_runtime::CapabilityDefinition::long_running))
//! called by a 2026-07-28 client that declared the tasks extension (SEP-2663,
//! `io.modelcontextprotocol/tasks`) becomes a task once its handler has started: the client
//! gets the task at once and polls `tasks/get` for its status and result, answers the
//! handler's questions with `tasks/update` (a request made inside a task waits in
//! `input_required`), or cancels it with `tasks/cancel` (the handler's cancellation signal).
//! A confirmation comes first: nothing runs, and no task exists, before the approval. A
//! handler that answers, or asks a question, within 20 ms of starting ends the call as
//! usual (so a question asked first is an ordinary `input_required` round). Other clients
//! call it inline; one declared `long_running = "required"` refuses them with `-32021`. Tasks
//! live in a [`TaskStore`] ([`MemoryTaskStore`] by default,
//! [`McpBridgeBuilder::task_store`]); a finished task's result is kept
//! [`task_ttl`](McpBridgeBuilder::task_ttl) (15 minutes by default), and only its principal
//! sees it. A principal has at most [`task_limit`](McpBridgeBuilder::task_limit) tasks
//! running in a process (64 by default); beyond it a long-running call runs inline, holding
//! its request, so no client leaves unbounded work behind it. `notifications/tasks` is not sent (rmcp cannot yet send it on a
//! `subscriptions/listen` stream): clients poll.
//!
//! # Discovery changes
//!
//! After each revision (debounced), the listed tools (names, schemas, annotations, listed
//! availability) are digested; only a changed digest is announced:
//! `notifications/tools/list_changed` to 2025-11-25 sessions, and to 2026-07-28
//! `subscriptions/listen` streams that asked for `toolsListChanged`. A successful invoke,
//! which bumps the revision, announces nothing.
//!
//! # Resources and prompts
//!
//! Trusted host code can offer MCP resources, resource templates and prompts beside the
//! tools: [`McpBridgeBuilder::resources`] with a [`ResourceProvider`] and
//! [`McpBridgeBuilder::prompts`] with a [`PromptProvider`] (results in rmcp's model types).
//! Their capabilities, and `completions`, are advertised only when a provider is set. An
//! unknown resource is `-32002` on 2025-11-25 and `-32602` on 2026-07-28 (SEP-2164), with
//! `data.uri`; `resources/subscribe` is 2025-11-25 only. A prompt provider may ask the human
//! before it renders, through [`ProviderContext::elicitor`]: on 2026-07-28 an unanswered
//! question answers `prompts/get` with `input_required`, its `requestState` sealed to the
//! prompt, its arguments and the principal (an altered or foreign state is `-32602`).
//!
//! # Transports
//!
//! **Resumable streams** (2025-11-25, SEP-1699): the events of a session's streams are kept
//! in an event store ([`MemoryEventStore`] by default, [`HttpOptions::event_store`]), so a
//! client that lost a stream reconnects with `Last-Event-ID` and gets what it missed, the
//! call's result included.
//!
//! [`serve_stdio`]; [`http_router`] (mountable in an axum application) and [`serve_http`].
//! HTTP validates `Origin` (default: `http://localhost:*`, `http://127.0.0.1:*`; another is
//! answered 403) and `Host` (loopback names by default), and can run a bearer-token hook
//! whose principal lands in the invocation's extensions ([`HttpOptions::bearer_auth`]).
//!
//! **A session belongs to its principal.** A 2025-11-25 session is owned by the principal
//! whose `initialize` opened it (the hook's answer compared whole: id, name and scopes;
//! anonymous without a hook). Every request carrying an `MCP-Session-Id` (`POST`, `GET` for
//! the event stream, `DELETE`, and 2026-07-28 requests too, which rmcp would otherwise serve
//! ignoring the id) is refused unless it comes from that principal, with exactly rmcp's
//! answer to an unknown session: `404 Not Found`, body `Not Found: Session not found`. A
//! session id this endpoint does not know gets the same answer, `DELETE` included (rmcp
//! alone accepts that one). The owners are forgotten when their session ends by `DELETE`,
//! and those of sessions rmcp ended by itself (idle for 5 minutes) once the table has
//! doubled since it was last pruned.
#![deny(missing_docs)]

mod approval;
mod bridge;
mod broker;
mod confirm;
mod content;
mod context;
mod elicit;
mod events;
mod logging;
mod progress;
mod prompts;
mod providers;
mod relay;
mod request_ids;
mod resources;
mod results;
mod server;
mod session_owner;
mod sessions;
mod tasks;
mod transport;

pub use approval::APPROVAL_PENDING;
pub use bridge::{BridgeError, Listing, McpBridge, McpBridgeBuilder};
pub use broker::{ConfirmationAnswer, ConfirmationBroker, HostBroker};
pub use content::content_field;
pub use elicit::{
    CLIENT_CAPABILITY_MISSING, ELICITATION_FAILED, ELICITOR_UNAVAILABLE, ElicitAnswer, ElicitError,
    INPUT_REQUIRED, McpElicitor, ScriptedAnswers,
};
pub use events::{MemoryEventStore, ends_stream, event_id_parts, unknown_event};
pub use logging::{McpLog, McpLogLevel};
pub use progress::McpProgress;
pub use providers::{PromptProvider, ProviderContext, ResourceProvider};
pub use relay::Relay;
pub use rmcp;
pub use sessions::{SessionOwner, SessionStore, SessionStoreError};
pub use tasks::{MemoryTaskStore, TaskRecord, TaskState, TaskStore, TaskStoreError};
/// The token [`HttpOptions::shutdown`] takes (tokio-util's).
pub use tokio_util::sync::CancellationToken;
pub use transport::{AuthRejection, HttpOptions, http_router, serve_http, serve_stdio};
