//! Who is calling: typed values a caller's transport attaches to a request
//! ([`Extensions`]), and the two every transport has, the authenticated [`Principal`] and
//! [`RequestMetadata`].
//!
//! A transport (an MCP bridge, an HTTP service) sets them on the
//! [`InvocationRequest`](crate::InvocationRequest) or [`PreflightBatch`](crate::PreflightBatch);
//! the runtime hands them, unchanged, to the policy ([`PolicyContext`](crate::PolicyContext))
//! and to the handler ([`InvocationContext`](crate::InvocationContext)). They never enter a
//! snapshot, an outcome or a runtime event: nothing a consumer or an observer sees carries
//! them.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// A map from a type to one value of it, cheap to clone (the values are shared).
///
/// ```
/// use rcip_runtime::{Extensions, Principal};
/// #[derive(Clone, Debug, PartialEq)]
/// struct TenantId(u32);
///
/// let mut extensions = Extensions::new();
/// extensions.insert(Principal::new("user-7"));
/// extensions.insert(TenantId(3));
/// assert_eq!(extensions.get::<TenantId>(), Some(&TenantId(3)));
/// assert_eq!(extensions.get::<Principal>().map(Principal::id), Some("user-7"));
/// assert_eq!(extensions.insert(TenantId(4)), Some(TenantId(3)));
/// assert!(extensions.get::<String>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    // `None` until the first insert: requests without extensions allocate nothing.
    map: Option<Arc<AnyMap>>,
}

type AnyMap = HashMap<TypeId, Arc<dyn Any + Send + Sync>, BuildHasherDefault<TypeIdHasher>>;

impl Extensions {
    /// An empty map.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the value of type `T`, returning the one it replaces.
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        let map = Arc::make_mut(self.map.get_or_insert_with(Default::default));
        map.insert(TypeId::of::<T>(), Arc::new(value))
            .and_then(|old| old.downcast_ref::<T>().cloned())
    }

    /// The value of type `T`, if one was set.
    #[must_use]
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .as_ref()?
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
    }

    /// Removes the value of type `T`, returning it.
    pub fn remove<T: Clone + Send + Sync + 'static>(&mut self) -> Option<T> {
        let map = Arc::make_mut(self.map.as_mut()?);
        map.remove(&TypeId::of::<T>())
            .and_then(|old| old.downcast_ref::<T>().cloned())
    }

    /// Whether a value of type `T` is set.
    #[must_use]
    pub fn contains<T: Send + Sync + 'static>(&self) -> bool {
        self.get::<T>().is_some()
    }

    /// How many values are set.
    #[must_use]
    pub fn len(&self) -> usize {
        self.map.as_ref().map_or(0, |map| map.len())
    }

    /// Whether no value is set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The authenticated principal, if the transport set one.
    #[must_use]
    pub fn principal(&self) -> Option<&Principal> {
        self.get::<Principal>()
    }

    /// The request metadata, if the transport set it.
    #[must_use]
    pub fn metadata(&self) -> Option<&RequestMetadata> {
        self.get::<RequestMetadata>()
    }
}

impl fmt::Debug for Extensions {
    // The values are opaque (`Any`); only how many there are is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.len())
            .finish()
    }
}

/// A `TypeId` is already a hash; hashing it again would be wasted work.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write(&mut self, bytes: &[u8]) {
        // `TypeId` hashes through `write_u64` on current Rust; stay correct if that changes.
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 ^= value;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// An authenticated caller, as the transport established it (a token's subject, an OAuth
/// client, a local user). rcip never authenticates anyone itself: a principal is exactly
/// what the transport vouches for.
///
/// ```
/// use rcip_runtime::Principal;
/// let admin = Principal::new("user-1").with_name("Ada").with_scope("polls:write");
/// assert_eq!(admin.id(), "user-1");
/// assert_eq!(admin.name(), Some("Ada"));
/// assert!(admin.has_scope("polls:write"));
/// assert!(!admin.has_scope("polls:admin"));
/// ```
///
/// What the authenticator knows beyond that (its own typed caller, a tenant) travels with the
/// principal as an extension, so that a handler reads it typed instead of parsing it back
/// from scope strings:
///
/// ```
/// use rcip_runtime::Principal;
/// #[derive(Clone, Debug, PartialEq)]
/// struct Tenant(u32);
/// let principal = Principal::new("user-1").with_extension(Tenant(7));
/// assert_eq!(principal.extension::<Tenant>(), Some(&Tenant(7)));
/// ```
#[derive(Debug, Clone)]
pub struct Principal {
    id: Arc<str>,
    name: Option<Arc<str>>,
    scopes: Arc<[String]>,
    extensions: Extensions,
}

/// Principals are equal when their id, name and scopes are: the extensions are what an
/// authenticator attached about the same identity, not part of it.
impl PartialEq for Principal {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.name == other.name && self.scopes == other.scopes
    }
}

impl Eq for Principal {}

impl Principal {
    /// A principal with this stable id and no scopes.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self {
            id: id.into(),
            name: None,
            scopes: Arc::new([]),
            extensions: Extensions::new(),
        }
    }

    /// Sets a display name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Adds a granted scope (the transport's own vocabulary, e.g. an OAuth scope).
    #[must_use]
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        let mut scopes = self.scopes.to_vec();
        scopes.push(scope.into());
        self.scopes = scopes.into();
        self
    }

    /// The stable id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The display name, if any.
    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The granted scopes, in the order they were added.
    #[must_use]
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Attaches `value`, replacing the value of its type attached before.
    #[must_use]
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The value of type `T` attached with [`with_extension`](Self::with_extension).
    #[must_use]
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// Whether `scope` was granted.
    #[must_use]
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|granted| granted == scope)
    }
}

/// What the transport knows about the request itself.
///
/// ```
/// use rcip_runtime::RequestMetadata;
/// let metadata = RequestMetadata::new("mcp").with_request_id("42").with_client("claude-desktop");
/// assert_eq!(metadata.transport(), "mcp");
/// assert_eq!(metadata.request_id(), Some("42"));
/// assert_eq!(metadata.client(), Some("claude-desktop"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestMetadata {
    transport: Arc<str>,
    request_id: Option<Arc<str>>,
    client: Option<Arc<str>>,
}

impl RequestMetadata {
    /// Metadata for a request that came through `transport` (e.g. `"mcp"`, `"http"`).
    pub fn new(transport: impl Into<Arc<str>>) -> Self {
        Self {
            transport: transport.into(),
            request_id: None,
            client: None,
        }
    }

    /// Sets the transport's own request id.
    #[must_use]
    pub fn with_request_id(mut self, id: impl Into<Arc<str>>) -> Self {
        self.request_id = Some(id.into());
        self
    }

    /// Sets the calling client's self-reported name.
    #[must_use]
    pub fn with_client(mut self, client: impl Into<Arc<str>>) -> Self {
        self.client = Some(client.into());
        self
    }

    /// The transport.
    #[must_use]
    pub fn transport(&self) -> &str {
        &self.transport
    }

    /// The transport's request id, if any.
    #[must_use]
    pub fn request_id(&self) -> Option<&str> {
        self.request_id.as_deref()
    }

    /// The client's self-reported name, if any (not authenticated).
    #[must_use]
    pub fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }
}

/// Hears that an invocation passed its checks, its policy and any confirmation, and its
/// handler is about to run: put into a request's extensions, it is called once, at the
/// runtime's `started` event (for a confirmed call, when the host approves). A caller that
/// hands long work to the background (an MCP bridge answering with a task) uses it to tell
/// work that started from a call that ended before running anything.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use rcip_runtime::*;
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
/// let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
///     CapabilityDefinition::new("notes.count", Effect::Read, "Count", "Counts the notes.")
///         .output_schema(json!({"type": "integer"})),
/// );
/// let runtime = Runtime::new(definition, RuntimeOptions::default())?;
/// let _binding = runtime.host().bind("notes.count", Binding::new(|_input, _ctx| async {
///     Ok::<_, HandlerError>(json!(3))
/// }))?;
/// let started = Arc::new(AtomicBool::new(false));
/// let heard = started.clone();
/// let request = InvocationRequest::new("notes.count", json!({}))
///     .with_extension(StartObserver::new(move || heard.store(true, Ordering::SeqCst)));
/// runtime.client().invoke(request).await;
/// assert!(started.load(Ordering::SeqCst));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct StartObserver(Arc<dyn Fn() + Send + Sync>);

impl StartObserver {
    /// An observer calling `hear` when the handler is about to run.
    pub fn new(hear: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Arc::new(hear))
    }

    pub(crate) fn tell(&self) {
        (self.0)();
    }
}

impl fmt::Debug for StartObserver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StartObserver")
    }
}
