//! The bridge: its builder, the listing, the cached tool views and the shared state.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use rcip_core::jcs::{canonical_json, digest_of_canonical};
use rcip_core::{
    ApplicationSnapshot, CapabilityContract, CapabilityList, CapabilitySnapshot, LongRunning,
};
use rcip_export::{Export, ExportError, Profile, ToolSource};
use rcip_runtime::{RcipClient, Subscription};
use rmcp::model::{RequestStateCodec, Tool};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::broker::ConfirmationBroker;
use crate::content::ContentMapper;
use crate::context::lock;
use crate::providers::{PromptProvider, ResourceProvider};
use crate::tasks::{MemoryTaskStore, TaskStore};

/// How long discovery changes are gathered before the listing is compared again.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// Any rcip application as an MCP server.
///
/// Made only from a client ([`McpBridge::builder`]): nothing in it can reach the host
/// surface, except through the [`ConfirmationBroker`] trusted host code may hand it. Cheap
/// to clone (an `Arc` inside); every clone is the same server, which is what rmcp's HTTP
/// service needs (it makes a handler per session, or per request on 2026-07-28).
///
/// It implements rmcp's [`ServerHandler`](rmcp::ServerHandler), so besides
/// [`serve_stdio`](crate::serve_stdio) and [`http_router`](crate::http_router) it can be
/// served on any rmcp transport (`bridge.serve(transport)` with [`rmcp::ServiceExt`]).
#[derive(Clone)]
pub struct McpBridge {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for McpBridge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpBridge")
            .field("server_name", &self.inner.server_name)
            .field("server_version", &self.inner.server_version)
            .field("confirmations", &self.inner.broker.is_some())
            .finish_non_exhaustive()
    }
}

/// Why a bridge could not be built or served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    /// The catalog cannot be exported as MCP tools, e.g. two capability ids map to one tool
    /// name (the message names both ids).
    #[error("the catalog cannot be served over MCP: {0}")]
    Export(#[from] ExportError),
    /// The `requestState` key is shorter than 32 bytes.
    #[error("the requestState key must be at least 32 bytes long, got {0}")]
    KeyTooShort(usize),
    /// The `requestState` keyring is refused: empty, a key id repeated or not 1 to 255
    /// bytes, the active id not in it, or a key shorter than 32 bytes.
    #[error("the requestState keyring is refused: {0}")]
    Keyring(String),
    /// Binding or serving a socket failed.
    #[error("transport: {0}")]
    Io(#[from] std::io::Error),
    /// The MCP session could not start or ended with an error.
    #[error("MCP service: {0}")]
    Service(String),
}

/// Which capabilities become tools.
///
/// By default every *bound* capability is listed; a bound one that is unavailable right now
/// is listed with its reason at the end of its description (or hidden, with
/// [`hide_unavailable`](Self::hide_unavailable)). Unbound capabilities are never listed; a
/// call to one that passes the filter still reaches the runtime, which answers
/// `CAPABILITY_UNBOUND`. A capability the filter excludes is not a tool at all: calls to it
/// are `Unknown tool` protocol errors.
///
/// ```
/// use rcip_mcp::Listing;
/// let listing = Listing::new()
///     .scopes(["notes"])
///     .filter(|capability| !capability.tags.iter().any(|t| t == "internal"))
///     .hide_unavailable();
/// # let _ = listing;
/// ```
#[derive(Clone, Default)]
pub struct Listing {
    hide_unavailable: bool,
    scopes: Option<Vec<String>>,
    filter: Option<Arc<CapabilityPredicate>>,
}

type CapabilityPredicate = dyn Fn(&CapabilitySnapshot) -> bool + Send + Sync;

impl fmt::Debug for Listing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listing")
            .field("hide_unavailable", &self.hide_unavailable)
            .field("scopes", &self.scopes)
            .field("filter", &self.filter.is_some())
            .finish()
    }
}

impl Listing {
    /// The default listing: bound capabilities, unavailable ones with their reason.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Leaves out bound capabilities that are unavailable right now (they are still callable,
    /// and the runtime answers `CAPABILITY_UNAVAILABLE`).
    #[must_use]
    pub fn hide_unavailable(mut self) -> Self {
        self.hide_unavailable = true;
        self
    }

    /// Keeps only capabilities in at least one of these scopes (global capabilities, which
    /// have no scope, are left out).
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Keeps only capabilities the predicate accepts. It sees the live entry (binding,
    /// availability, relevance), is called on every discovery change and must be cheap.
    #[must_use]
    pub fn filter(
        mut self,
        predicate: impl Fn(&CapabilitySnapshot) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.filter = Some(Arc::new(predicate));
        self
    }

    /// Whether the capability is a tool of this bridge (callable, listed or not).
    fn exposes(&self, capability: &CapabilitySnapshot) -> bool {
        if let Some(scopes) = &self.scopes
            && !capability.scope_ids.iter().any(|s| scopes.contains(s))
        {
            return false;
        }
        self.filter.as_ref().is_none_or(|f| f(capability))
    }

    /// Whether an exposed capability is listed in `tools/list`.
    fn lists(&self, capability: &CapabilitySnapshot) -> bool {
        capability.bound && (capability.available || !self.hide_unavailable)
    }
}

/// Builds an [`McpBridge`].
pub struct McpBridgeBuilder {
    client: Arc<dyn RcipClient>,
    broker: Option<Arc<dyn ConfirmationBroker>>,
    server_name: Option<String>,
    server_version: Option<String>,
    listing: Listing,
    key: Option<StateKeys>,
    content: Option<Arc<ContentMapper>>,
    tool_names: HashMap<String, String>,
    task_store: Option<Arc<dyn TaskStore>>,
    task_ttl: Duration,
    task_limit: usize,
    pub(crate) resources: Option<Arc<dyn ResourceProvider>>,
    pub(crate) prompts: Option<Arc<dyn PromptProvider>>,
}

impl fmt::Debug for McpBridgeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpBridgeBuilder")
            .field("confirmations", &self.broker.is_some())
            .field("server_name", &self.server_name)
            .field("server_version", &self.server_version)
            .field("listing", &self.listing)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish_non_exhaustive()
    }
}

impl McpBridge {
    /// Starts a bridge over `client`, the only way in to the application.
    #[must_use]
    pub fn builder(client: Arc<dyn RcipClient>) -> McpBridgeBuilder {
        McpBridgeBuilder {
            client,
            broker: None,
            server_name: None,
            server_version: None,
            listing: Listing::default(),
            key: None,
            content: None,
            tool_names: HashMap::new(),
            task_store: None,
            task_ttl: crate::tasks::DEFAULT_TTL,
            task_limit: crate::tasks::DEFAULT_RUNNING_LIMIT,
            resources: None,
            prompts: None,
        }
    }

    /// Starts a bridge over `runtime`'s client whose confirmations are asked of the human
    /// through the MCP client and resolved by the runtime's host: the usual setup, the same as
    /// `builder(runtime.client()).confirmations(Arc::new(HostBroker::new(runtime.host())))`.
    ///
    /// ```no_run
    /// # async fn demo(runtime: rcip_runtime::Runtime) -> Result<(), rcip_mcp::BridgeError> {
    /// rcip_mcp::serve_stdio(rcip_mcp::McpBridge::for_runtime(&runtime).build()?).await
    /// # }
    /// ```
    #[must_use]
    pub fn for_runtime(runtime: &rcip_runtime::Runtime) -> McpBridgeBuilder {
        Self::builder(runtime.client())
            .confirmations(Arc::new(crate::HostBroker::new(runtime.host())))
    }
}

impl McpBridgeBuilder {
    /// Lets a human's answer, given through the MCP client, resolve pending confirmations:
    /// the broker (trusted host code, e.g. [`HostBroker`](crate::HostBroker)) decides what
    /// the answer does. Without one, a confirmation is never asked through MCP: the tool
    /// result says the operation awaits approval in the application.
    #[must_use]
    pub fn confirmations(mut self, broker: Arc<dyn ConfirmationBroker>) -> Self {
        self.broker = Some(broker);
        self
    }

    /// Lists capability `capability_id` as the tool `name` rather than under its id: for a
    /// name an MCP client expects that the identifier grammar does not allow (a segment
    /// starting with a digit, say). Calls to `name` reach the capability; its id is no
    /// longer a tool name. Two tools under one name fail [`build`](Self::build).
    ///
    /// ```
    /// # use rcip_runtime::*;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let runtime = Runtime::new(ApplicationDefinition::new("fx", "Fx", "Fixtures.").capability(
    /// #     CapabilityDefinition::new("fixtures.jsonSchema", Effect::Read, "Schema", "A schema.")), RuntimeOptions::default())?;
    /// let bridge = rcip_mcp::McpBridge::builder(runtime.client())
    ///     .tool_name("fixtures.jsonSchema", "json_schema_2020_12_tool")
    ///     .build()?;
    /// # let _ = bridge; Ok(()) }
    /// ```
    #[must_use]
    pub fn tool_name(mut self, capability_id: impl Into<String>, name: impl Into<String>) -> Self {
        self.tool_names.insert(capability_id.into(), name.into());
        self
    }

    /// Where tasks live (MCP's tasks extension, 2026-07-28: calls of long-running
    /// capabilities): by default in this process's memory ([`MemoryTaskStore`]). A
    /// deployment of several instances shares one store.
    #[must_use]
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// How long a finished task's result is kept for its client to fetch (default 15
    /// minutes); the task's `ttlMs`.
    #[must_use]
    pub fn task_ttl(mut self, ttl: Duration) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// How many tasks one principal may have running in this process at once (default
    /// 64): beyond it, a long-running call runs inline, holding its request, so the
    /// endpoint's per-caller limits keep counting it.
    #[must_use]
    pub fn task_limit(mut self, limit: usize) -> Self {
        self.task_limit = limit;
        self
    }

    /// The `serverInfo` name and version (default: the application id, and its version or
    /// this crate's).
    #[must_use]
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self.server_version = Some(version.into());
        self
    }

    /// Which capabilities become tools (default: [`Listing::new`]).
    #[must_use]
    pub fn listing(mut self, listing: Listing) -> Self {
        self.listing = listing;
        self
    }

    /// The HMAC key that seals 2026-07-28 `requestState` values, at least 32 bytes of
    /// high-entropy secret. Default: a random key per process, so a state sealed by one
    /// process is refused by every other. Deployments with several instances behind one
    /// endpoint set one shared key on all of them: configured, or kept in their database
    /// (`rcip-database`'s `PostgresStore::secret("mcp-request-state")` makes it once for
    /// every instance); [`request_state_keys`](Self::request_state_keys) rotates it. The
    /// retry of a pending confirmation must still reach the instance holding it (see the
    /// crate docs).
    #[must_use]
    pub fn request_state_key(mut self, key: Vec<u8>) -> Self {
        self.key = Some(StateKeys::Single(key));
        self
    }

    /// Seals `requestState` values with the key `active` of `keys` and opens those sealed
    /// with any of them, so the key rotates without refusing the retries in flight: give
    /// every instance the new key beside the old one, then make it active everywhere, then
    /// drop the old one once the states it sealed have expired (10 minutes for an answer,
    /// a confirmation's own expiry). Replaces [`request_state_key`](Self::request_state_key).
    ///
    /// ```
    /// # use rcip_runtime::*;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let runtime = Runtime::new(ApplicationDefinition::new("app", "App", "An app."), RuntimeOptions::default())?;
    /// let bridge = rcip_mcp::McpBridge::builder(runtime.client())
    ///     .request_state_keys("2026-12", [
    ///         ("2026-11", b"the key of november, 32 bytes...".to_vec()),
    ///         ("2026-12", b"the key of december, 32 bytes...".to_vec()),
    ///     ])
    ///     .build()?;
    /// # let _ = bridge; Ok(()) }
    /// ```
    #[must_use]
    pub fn request_state_keys<K: Into<String>>(
        mut self,
        active: impl Into<String>,
        keys: impl IntoIterator<Item = (K, Vec<u8>)>,
    ) -> Self {
        self.key = Some(StateKeys::Ring {
            active: active.into(),
            keys: keys.into_iter().map(|(id, key)| (id.into(), key)).collect(),
        });
        self
    }

    /// Maps a capability's succeeded output to MCP content blocks (image, audio, embedded
    /// resources, ...): `map(capability_id, output)` sees the output as the handler returned
    /// it; its blocks replace the text block, and `None` (or no blocks) keeps it.
    /// `structuredContent` is sent either way. [`content_field`](crate::content_field) is a
    /// ready-made convention (an output whose `content` field lists the blocks).
    ///
    /// ```
    /// # use rcip_runtime::*;
    /// use rcip_mcp::rmcp::model::ContentBlock;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let runtime = Runtime::new(ApplicationDefinition::new("qr", "QR", "QR codes."), RuntimeOptions::default())?;
    /// let bridge = rcip_mcp::McpBridge::builder(runtime.client())
    ///     .content(|capability_id, output| {
    ///         let png = output.get("png")?.as_str()?;
    ///         (capability_id == "qr.render")
    ///             .then(|| vec![ContentBlock::image(png.to_owned(), "image/png".to_owned())])
    ///     })
    ///     .build()?;
    /// # let _ = bridge; Ok(()) }
    /// ```
    #[must_use]
    pub fn content(
        mut self,
        map: impl Fn(&str, &Value) -> Option<Vec<rmcp::model::ContentBlock>> + Send + Sync + 'static,
    ) -> Self {
        self.content = Some(Arc::new(map));
        self
    }

    /// Builds the bridge.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Export`] when the catalog cannot be exported for both MCP revisions
    /// (a tool-name collision names both capability ids), [`BridgeError::KeyTooShort`],
    /// [`BridgeError::Keyring`].
    pub fn build(self) -> Result<McpBridge, BridgeError> {
        let codec = match self.key.unwrap_or_else(|| StateKeys::Single(random_key())) {
            StateKeys::Single(key) => {
                let length = key.len();
                RequestStateCodec::try_new(key).map_err(|_| BridgeError::KeyTooShort(length))?
            }
            StateKeys::Ring { active, keys } => RequestStateCodec::new_with_keyring(active, keys)
                .map_err(|e| BridgeError::Keyring(e.to_string()))?,
        };
        let snapshot = self.client.get_snapshot();
        // Every capability of the catalog at once: a subset (whatever the filter keeps
        // later) can then never collide either.
        for profile in [Profile::Mcp2025_11_25, Profile::Mcp2026_07_28] {
            rcip_export::export(
                profile,
                snapshot
                    .capabilities
                    .iter()
                    .map(|c| tool_source(&self.tool_names, &c.contract)),
            )?;
        }
        let application = &snapshot.application;
        let server_name = self.server_name.unwrap_or_else(|| application.id.clone());
        let server_version = self.server_version.unwrap_or_else(|| {
            application
                .version
                .clone()
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned())
        });
        let instructions = application.description.clone();
        let changed = Arc::new(Notify::new());
        let listener = changed.clone();
        let subscription = self
            .client
            .subscribe_boxed(Box::new(move || listener.notify_one()));
        let (tools_version, _) = watch::channel(0u64);
        let tasks = Arc::new(crate::tasks::Tasks::new(
            self.task_store
                .unwrap_or_else(|| Arc::new(MemoryTaskStore::new())),
            self.task_ttl,
            self.task_limit,
        ));
        tasks.watch();
        let inner = Inner {
            client: self.client,
            broker: self.broker,
            server_name,
            server_version,
            instructions,
            listing: self.listing,
            tool_names: self.tool_names,
            tasks,
            content: self.content,
            codec,
            view: Mutex::new(None),
            confirmations: Mutex::new(Confirmations::default()),
            awaiting: crate::approval::Awaiting::default(),
            changed,
            tools_version,
            legacy_peers: Mutex::new(Vec::new()),
            watcher: OnceLock::new(),
            shutdown: CancellationToken::new(),
            _subscription: subscription,
            resources: self.resources,
            prompts: self.prompts,
            logging: crate::logging::Levels::default(),
            relay: OnceLock::new(),
            remote_change: AtomicBool::new(false),
        };
        Ok(McpBridge {
            inner: Arc::new(inner),
        })
    }
}

/// The export source of a contract, under the host's name for it if it chose one.
fn tool_source<'a>(
    names: &'a HashMap<String, String>,
    contract: &'a CapabilityContract,
) -> ToolSource<'a> {
    let source = ToolSource::from(contract);
    match names.get(contract.id.as_str()) {
        Some(name) => source.named(name),
        None => source,
    }
}

/// A random 32-byte key from the runtime's one source of randomness.
fn random_key() -> Vec<u8> {
    let mut key = Vec::with_capacity(32);
    key.extend_from_slice(&rcip_runtime::__private::shared::random_128());
    key.extend_from_slice(&rcip_runtime::__private::shared::random_128());
    key
}

/// The keys that seal and open `requestState` values.
enum StateKeys {
    /// One key.
    Single(Vec<u8>),
    /// A keyring: sealing with `active`, opening with any.
    Ring {
        active: String,
        keys: Vec<(String, Vec<u8>)>,
    },
}

/// What every clone of a bridge shares.
pub(crate) struct Inner {
    pub(crate) client: Arc<dyn RcipClient>,
    pub(crate) broker: Option<Arc<dyn ConfirmationBroker>>,
    pub(crate) server_name: String,
    pub(crate) server_version: String,
    pub(crate) instructions: String,
    listing: Listing,
    /// Tool names chosen by the host, by capability id.
    tool_names: HashMap<String, String>,
    /// The host's mapping from outputs to content blocks.
    pub(crate) content: Option<Arc<ContentMapper>>,
    pub(crate) codec: RequestStateCodec,
    view: Mutex<Option<Arc<View>>>,
    pub(crate) confirmations: Mutex<Confirmations>,
    /// Calls whose confirmation waits for the host's own interface.
    pub(crate) awaiting: crate::approval::Awaiting,
    /// Calls that became tasks.
    pub(crate) tasks: Arc<crate::tasks::Tasks>,
    /// Notified (synchronously, by the runtime) at every revision.
    pub(crate) changed: Arc<Notify>,
    /// Bumped when the listed tools actually changed; 2026-07-28 listen streams watch it.
    pub(crate) tools_version: watch::Sender<u64>,
    /// The peers of live 2025-11-25 sessions, told about list changes.
    legacy_peers: Mutex<Vec<Peer<RoleServer>>>,
    watcher: OnceLock<()>,
    shutdown: CancellationToken,
    _subscription: Subscription,
    pub(crate) resources: Option<Arc<dyn ResourceProvider>>,
    pub(crate) prompts: Option<Arc<dyn PromptProvider>>,
    pub(crate) logging: crate::logging::Levels,
    /// The deployment's relay, once an endpoint with one serves this bridge.
    pub(crate) relay: OnceLock<Arc<dyn crate::Relay>>,
    /// The next listing change was told by another instance (so it is not told back).
    pub(crate) remote_change: AtomicBool,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The tools of the current listing, for both revisions of MCP.
pub(crate) struct View {
    /// The latest revision this view was found current at.
    revision: u64,
    /// The snapshot's entries it was built from: a later revision whose entries are the same
    /// where the listing looks ([`same_listing`]) keeps this view.
    capabilities: CapabilityList,
    /// The exposed contracts (pointer identity decides whether the exports can be reused).
    contracts: Vec<Arc<CapabilityContract>>,
    legacy: Arc<Export>,
    modern: Arc<Export>,
    legacy_tools: Vec<Tool>,
    modern_tools: Vec<Tool>,
    /// Each listed tool's position in the tool lists, by name.
    by_name: HashMap<String, usize>,
    /// The exposed long-running capabilities, by id.
    long_running: HashMap<String, LongRunning>,
    /// A digest of what `tools/list` shows (names, schemas, annotations, availability).
    pub(crate) digest: String,
}

impl View {
    /// The export for the era (2026-07-28 or later when `modern`).
    pub(crate) fn export(&self, modern: bool) -> &Export {
        if modern { &self.modern } else { &self.legacy }
    }

    /// The listed tools for the era.
    pub(crate) fn tools(&self, modern: bool) -> &[Tool] {
        if modern {
            &self.modern_tools
        } else {
            &self.legacy_tools
        }
    }

    /// How capability `id` may run as a task, if it is long-running.
    pub(crate) fn long_running(&self, id: &str) -> Option<LongRunning> {
        self.long_running.get(id).copied()
    }

    /// The listed tool `name` for the era.
    pub(crate) fn tool(&self, name: &str, modern: bool) -> Option<&Tool> {
        let tools = self.tools(modern);
        match self.by_name.get(name).and_then(|&i| tools.get(i)) {
            Some(tool) if tool.name == name => Some(tool),
            // Only if one era's export could not read a tool the other's could.
            _ => tools.iter().find(|tool| tool.name == name),
        }
    }
}

/// Whether two entries of one capability show the same thing to the listing: the same
/// contract (by identity: contracts are shared between revisions), binding, availability and
/// relevance (which a [`Listing::filter`] may read).
fn same_listing(a: &CapabilitySnapshot, b: &CapabilitySnapshot) -> bool {
    Arc::ptr_eq(&a.contract, &b.contract)
        && a.bound == b.bound
        && a.available == b.available
        && a.availability == b.availability
        && a.relevance == b.relevance
}

impl Inner {
    /// The tools of the current snapshot, rebuilt only when a revision changed what the
    /// listing looks at (the exports only when the exposed contracts changed). Every
    /// successful invoke moves the revision and changes none of it: the check is a pointer
    /// comparison per page of the catalog, plus the entries the runtime read anew (those
    /// with an availability check).
    pub(crate) fn view(&self) -> Result<Arc<View>, ExportError> {
        let snapshot = self.client.get_snapshot();
        let previous = lock(&self.view).clone();
        if let Some(view) = &previous
            && (view.revision == snapshot.revision
                // A host filter may read anything (a feature flag): it is asked again at
                // every revision, as documented; without one, the entries decide.
                || (self.listing.filter.is_none()
                    && view
                        .capabilities
                        .same_entries_as(&snapshot.capabilities, same_listing)))
        {
            return Ok(view.clone());
        }
        let view = Arc::new(self.build_view(&snapshot, previous.as_deref())?);
        let mut slot = lock(&self.view);
        if slot.as_ref().is_none_or(|v| v.revision <= view.revision) {
            *slot = Some(view.clone());
        }
        Ok(view)
    }

    fn build_view(
        &self,
        snapshot: &ApplicationSnapshot,
        previous: Option<&View>,
    ) -> Result<View, ExportError> {
        let exposed: Vec<&CapabilitySnapshot> = snapshot
            .capabilities
            .iter()
            .filter(|c| self.listing.exposes(c))
            .collect();
        let contracts: Vec<Arc<CapabilityContract>> =
            exposed.iter().map(|c| c.contract.clone()).collect();
        let reusable = previous.filter(|p| {
            p.contracts.len() == contracts.len()
                && p.contracts
                    .iter()
                    .zip(&contracts)
                    .all(|(a, b)| Arc::ptr_eq(a, b))
        });
        let (legacy, modern) = match reusable {
            Some(p) => (p.legacy.clone(), p.modern.clone()),
            None => {
                let export = |profile| {
                    rcip_export::export(
                        profile,
                        contracts.iter().map(|c| tool_source(&self.tool_names, c)),
                    )
                    .map(Arc::new)
                };
                (
                    export(Profile::Mcp2025_11_25)?,
                    export(Profile::Mcp2026_07_28)?,
                )
            }
        };
        let listed: Vec<&CapabilitySnapshot> = exposed
            .into_iter()
            .filter(|c| self.listing.lists(c))
            .collect();
        let legacy_tools = listed_tools(&legacy, &listed);
        let modern_tools = listed_tools(&modern, &listed);
        let by_name = modern_tools
            .iter()
            .enumerate()
            .map(|(index, tool)| (tool.name.to_string(), index))
            .collect();
        let long_running = contracts
            .iter()
            .filter_map(|c| c.long_running.map(|l| (c.id.clone(), l)))
            .collect();
        let digest = serde_json::to_value(&modern_tools)
            .ok()
            .and_then(|v| canonical_json(&v).ok())
            .map(|c| digest_of_canonical(&c))
            .unwrap_or_default();
        Ok(View {
            revision: snapshot.revision,
            capabilities: snapshot.capabilities.clone(),
            contracts,
            legacy,
            modern,
            legacy_tools,
            modern_tools,
            by_name,
            long_running,
            digest,
        })
    }

    /// Starts the list-change watcher once (it needs a tokio runtime, so it starts with the
    /// first request or transport rather than in `build`).
    pub(crate) fn ensure_watcher(self: &Arc<Self>) {
        self.watcher.get_or_init(|| {
            let weak = Arc::downgrade(self);
            let changed = self.changed.clone();
            let shutdown = self.shutdown.clone();
            let first = self.view().map(|v| v.digest.clone()).unwrap_or_default();
            tokio::spawn(watch_changes(weak, changed, shutdown, first));
        });
    }

    /// Remembers the peer of a 2025-11-25 session, to tell it about list changes.
    pub(crate) fn add_legacy_peer(&self, peer: Peer<RoleServer>) {
        let mut peers = lock(&self.legacy_peers);
        peers.retain(|p| !p.is_transport_closed());
        peers.push(peer);
    }

    /// Tells every listener that the listed tools changed.
    async fn announce(&self) {
        self.tools_version.send_modify(|v| *v = v.wrapping_add(1));
        let peers: Vec<Peer<RoleServer>> = lock(&self.legacy_peers).clone();
        let mut gone = Vec::new();
        for (index, peer) in peers.iter().enumerate() {
            if peer.is_transport_closed() || peer.notify_tool_list_changed().await.is_err() {
                gone.push(index);
            }
        }
        if !gone.is_empty() {
            lock(&self.legacy_peers).retain(|p| !p.is_transport_closed());
        }
    }
}

// 2025-11-25's `logging/setLevel` is deprecated in rmcp (SEP-2577), and still served.
#[allow(deprecated)]
impl crate::relay::Heard for Inner {
    fn set_level(&self, session: &str, level: rmcp::model::LoggingLevel) {
        self.logging.set_for(session, level);
    }

    fn listing_changed(&self) {
        // The watcher compares the listing again, and announces only a change.
        self.remote_change.store(true, Ordering::Relaxed);
        self.changed.notify_one();
    }

    fn answer_task(&self, id: String, answers: rmcp::model::InputResponses) {
        let tasks = self.tasks.clone();
        tokio::spawn(async move {
            let _ = tasks.answer(&id, answers).await;
        });
    }
}

/// Compares the listing after each (debounced) discovery change, and announces only real
/// changes: every successful invoke bumps the revision, which changes nothing listed.
async fn watch_changes(
    inner: Weak<Inner>,
    changed: Arc<Notify>,
    shutdown: CancellationToken,
    mut last: String,
) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = changed.notified() => {}
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(DEBOUNCE) => {}
        }
        let Some(inner) = inner.upgrade() else { return };
        // Whether this wake came from another instance's notice: taken on every wake, so a
        // notice that changed nothing here does not silence this instance's next change.
        let told_elsewhere = inner.remote_change.swap(false, Ordering::Relaxed);
        let Ok(view) = inner.view() else { continue };
        if view.digest != last {
            last.clone_from(&view.digest);
            inner.announce().await;
            // The deployment's other instances look again too (their clients hear of it
            // if their own listing changed); a change another instance told of is not told
            // back (listings that differ between instances would echo for ever).
            if let Some(relay) = inner.relay.get().filter(|_| !told_elsewhere) {
                let notice = serde_json::json!({ crate::relay::LIST_CHANGED: true });
                if let Err(error) = relay.publish(notice).await {
                    tracing::warn!(target: "rcip::mcp", %error, "a listing change was not relayed");
                }
            }
        }
    }
}

/// The listed capabilities' tools of `export`, each as rmcp's `Tool`; an unavailable one
/// has its reason at the end of its description.
fn listed_tools(export: &Export, listed: &[&CapabilitySnapshot]) -> Vec<Tool> {
    let Value::Array(entries) = export.to_json() else {
        return Vec::new();
    };
    let mut by_id: HashMap<&str, Value> = export
        .tools()
        .iter()
        .map(|t| t.capability_id())
        .zip(entries)
        .collect();
    let mut tools = Vec::with_capacity(listed.len());
    for capability in listed {
        let Some(entry) = by_id.remove(capability.id.as_str()) else {
            continue;
        };
        let Ok(mut tool) = serde_json::from_value::<Tool>(entry) else {
            tracing::warn!(capability = %capability.id, "an exported tool rmcp does not read");
            continue;
        };
        if !capability.available {
            let reason = capability
                .availability
                .as_ref()
                .and_then(|a| a.reason.as_deref())
                .unwrap_or("no reason given");
            let description = tool.description.as_deref().unwrap_or_default();
            tool.description =
                Some(format!("{description}\n\nUnavailable right now: {reason}").into());
        }
        tools.push(tool);
    }
    tools
}

/// The bridge's record of 2026-07-28 confirmations: the pending ones it sealed a state for,
/// and the ones already used (so a replayed state is refused even where the runtime would
/// still answer).
#[derive(Default)]
pub(crate) struct Confirmations {
    pending: HashMap<String, PendingConfirmation>,
    consumed: HashMap<String, u64>,
}

/// A pending confirmation sealed into a `requestState`.
pub(crate) struct PendingConfirmation {
    /// The original invocation's token: a retry's cancellation cancels the confirmed run.
    pub(crate) token: CancellationToken,
    pub(crate) expires_at: u64,
    /// The call may become a task once approved (a long-running capability, a client with
    /// the tasks extension).
    pub(crate) task: Option<crate::tasks::TaskSetup>,
}

/// What [`Confirmations::consume`] found.
pub(crate) enum Consumed {
    /// First use; the pending entry if this instance sealed the state.
    First(Option<PendingConfirmation>),
    /// Used before.
    Again,
}

impl Confirmations {
    /// Records a pending confirmation, dropping entries long expired.
    pub(crate) fn insert(&mut self, id: String, pending: PendingConfirmation, now: u64) {
        self.prune(now);
        self.pending.insert(id, pending);
    }

    /// Whether the confirmation was already used.
    pub(crate) fn is_consumed(&self, id: &str) -> bool {
        self.consumed.contains_key(id)
    }

    /// Marks the confirmation used, once.
    pub(crate) fn consume(&mut self, id: &str, expires_at: u64, now: u64) -> Consumed {
        self.prune(now);
        if self.consumed.contains_key(id) {
            return Consumed::Again;
        }
        self.consumed.insert(id.to_owned(), expires_at);
        Consumed::First(self.pending.remove(id))
    }

    /// Forgets entries whose state can no longer be opened (expired a minute ago: the codec
    /// refuses them by then, so forgetting a consumed id cannot re-open it).
    fn prune(&mut self, now: u64) {
        let horizon = now.saturating_sub(60_000);
        self.pending.retain(|_, p| p.expires_at >= horizon);
        self.consumed.retain(|_, expires_at| *expires_at >= horizon);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use rcip_core::Availability;
    use rcip_runtime::{
        ApplicationDefinition, Binding, CapabilityDefinition, Effect, HandlerError,
        InvocationRequest, OutcomeStatus, Runtime, RuntimeOptions,
    };
    use serde_json::json;

    use super::*;

    /// Two capabilities, one of them with an availability check the test flips.
    fn app() -> (Runtime, Arc<AtomicBool>) {
        let definition = ApplicationDefinition::new("notes", "Notes", "Keeps notes.")
            .capability(CapabilityDefinition::new(
                "notes.list",
                Effect::Read,
                "List",
                "Lists the notes.",
            ))
            .capability(CapabilityDefinition::new(
                "notes.count",
                Effect::Read,
                "Count",
                "Counts the notes.",
            ));
        let runtime = Runtime::new(definition, RuntimeOptions::default()).unwrap();
        let open = Arc::new(AtomicBool::new(true));
        let flag = open.clone();
        let host = runtime.host();
        host.bind(
            "notes.list",
            Binding::new(|_input, _ctx| async { Ok::<_, HandlerError>(json!(null)) }),
        )
        .unwrap()
        .keep();
        host.bind(
            "notes.count",
            Binding::new(|_input, _ctx| async { Ok::<_, HandlerError>(json!(null)) })
                .with_availability(move || {
                    if flag.load(Ordering::SeqCst) {
                        Availability::available()
                    } else {
                        Availability::unavailable("closed", "Closed for the night.")
                    }
                }),
        )
        .unwrap()
        .keep();
        (runtime, open)
    }

    #[tokio::test]
    async fn an_invoke_keeps_the_tool_view_and_a_listing_change_replaces_it() {
        let (runtime, open) = app();
        let bridge = McpBridge::builder(runtime.client()).build().unwrap();
        let first = bridge.inner.view().unwrap();
        let outcome = runtime
            .client()
            .invoke(InvocationRequest::new("notes.list", json!({})))
            .await;
        assert_eq!(outcome.status(), OutcomeStatus::Succeeded, "{outcome:?}");
        assert!(runtime.client().get_snapshot().revision > first.revision);
        // The revision moved, the listing did not: the same view, nothing listed again
        // (the chunk with the availability check was read anew and compared).
        assert!(Arc::ptr_eq(&first, &bridge.inner.view().unwrap()));
        // A change the listing shows replaces it.
        open.store(false, Ordering::SeqCst);
        runtime.host().refresh();
        let second = bridge.inner.view().unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_ne!(first.digest, second.digest);
        let count = second.tool("notes.count", true).unwrap();
        assert!(
            count
                .description
                .as_deref()
                .unwrap()
                .ends_with("Unavailable right now: Closed for the night."),
            "{count:?}"
        );
        assert_eq!(second.tool("notes.list", false).unwrap().name, "notes.list");
        assert!(second.tool("notes.absent", true).is_none());
    }

    #[tokio::test]
    async fn a_filter_is_asked_again_at_every_revision() {
        let (runtime, _open) = app();
        let shown = Arc::new(AtomicBool::new(true));
        let flag = shown.clone();
        let listing =
            Listing::new().filter(move |c| c.id != "notes.count" || flag.load(Ordering::SeqCst));
        let bridge = McpBridge::builder(runtime.client())
            .listing(listing)
            .build()
            .unwrap();
        let listed = || {
            bridge
                .inner
                .view()
                .unwrap()
                .tool("notes.count", true)
                .is_some()
        };
        assert!(listed());
        // Only the filter's own state changed: a refresh shows it.
        shown.store(false, Ordering::SeqCst);
        runtime.host().refresh();
        assert!(!listed());
    }
}
