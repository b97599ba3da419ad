//! Host policy: allow, deny or ask for confirmation, synchronously or asynchronously.

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use rcip_core::{CapabilitySnapshot, Effect, SemanticContext};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::extensions::{Extensions, Principal};
use crate::support::{BoxFuture, lock};

/// Why a policy is being asked. Non-exhaustive: a new surface that consults the policy (as
/// preflight was added in 2.0.4) adds a phase; a policy should treat one it does not know
/// as it treats `Invoke`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PolicyPhase {
    /// An advisory preflight check.
    Preflight,
    /// An invocation, or its confirmed re-run.
    Invoke,
}

/// What a policy sees. Everything is a shared immutable copy, so cloning it (to move it into
/// an async policy's future) copies a few `Arc`s; only the runtime builds one.
#[derive(Debug, Clone)]
pub struct PolicyContext {
    pub(crate) phase: PolicyPhase,
    pub(crate) capability: CapabilitySnapshot,
    pub(crate) input: PolicyInput,
    pub(crate) semantic_context: Arc<SemanticContext>,
    pub(crate) confirmed: bool,
    pub(crate) extensions: Extensions,
}

impl PolicyContext {
    /// Preflight or invoke.
    #[must_use]
    pub fn phase(&self) -> PolicyPhase {
        self.phase
    }

    /// A fresh snapshot entry of the capability, with live availability.
    #[must_use]
    pub fn capability(&self) -> &CapabilitySnapshot {
        &self.capability
    }

    /// The schema-valid input (shared: clone the `Arc` to keep it).
    ///
    /// Raw JSON text taken straight into a typed handler's input is only parsed into this
    /// value when a policy first asks for it: a policy that never reads the input costs
    /// nothing for it.
    #[must_use]
    pub fn input(&self) -> &Arc<Value> {
        self.input.get()
    }

    /// The semantic context at evaluation time (shared: clone the `Arc` to keep it).
    #[must_use]
    pub fn semantic_context(&self) -> &Arc<SemanticContext> {
        &self.semantic_context
    }

    /// `true` only on the re-run after a host approval.
    #[must_use]
    pub fn confirmed(&self) -> bool {
        self.confirmed
    }

    /// What the caller's transport attached to the request (the same values the handler
    /// will see).
    #[must_use]
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The authenticated caller, if the transport set one: a policy can deny on it.
    ///
    /// ```
    /// use rcip_runtime::{PolicyDecision, policy_fn};
    /// let policy = policy_fn(|ctx| match ctx.principal() {
    ///     Some(who) if who.has_scope("polls:write") => PolicyDecision::Allow,
    ///     _ => PolicyDecision::deny("Sign in with the polls:write scope."),
    /// });
    /// # let _ = policy;
    /// ```
    #[must_use]
    pub fn principal(&self) -> Option<&Principal> {
        self.extensions.principal()
    }
}

/// The input as a policy sees it: shared already (an invocation's, which goes on to the
/// handler), owned and put in an `Arc` only when first read (a preflight proposal's, which
/// nothing needs after its policy: a policy that never reads the input costs no allocation),
/// or JSON text a typed handler already took, parsed into a `Value` only when first read.
/// Either way [`PolicyContext::input`] gives the same value.
pub(crate) enum PolicyInput {
    /// Shared already: nothing to build on a read.
    Shared(Arc<Value>),
    /// Built on the first read.
    Lazy(LazyInput),
}

/// An input whose shared value is built on its first read.
pub(crate) struct LazyInput {
    shared: OnceLock<Arc<Value>>,
    /// The owned input until `shared` is first read, which takes it.
    owned: Mutex<Option<Value>>,
    /// The text, for an input that came as text (its `Value` is the text's own, shared).
    text: Option<Arc<LazyText>>,
}

impl PolicyInput {
    /// An input the caller keeps a share of.
    pub(crate) fn shared(input: Arc<Value>) -> Self {
        PolicyInput::Shared(input)
    }

    /// An input only the policy needs.
    pub(crate) fn owned(input: Value) -> Self {
        PolicyInput::Lazy(LazyInput {
            shared: OnceLock::new(),
            owned: Mutex::new(Some(input)),
            text: None,
        })
    }

    /// An input that came as text.
    pub(crate) fn text(text: Arc<LazyText>) -> Self {
        PolicyInput::Lazy(LazyInput {
            shared: OnceLock::new(),
            owned: Mutex::new(None),
            text: Some(text),
        })
    }

    fn get(&self) -> &Arc<Value> {
        match self {
            PolicyInput::Shared(input) => input,
            PolicyInput::Lazy(lazy) => lazy.shared.get_or_init(|| match &lazy.text {
                Some(text) => text.value().clone(),
                // `owned` is `Some` until this first (and only) initialization takes it.
                None => Arc::new(lock(&lazy.owned).take().unwrap_or_default()),
            }),
        }
    }
}

impl Clone for PolicyInput {
    fn clone(&self) -> Self {
        match self {
            // Still unread text stays unread.
            PolicyInput::Lazy(LazyInput {
                shared,
                text: Some(text),
                ..
            }) if shared.get().is_none() => PolicyInput::text(text.clone()),
            _ => PolicyInput::shared(self.get().clone()),
        }
    }
}

impl std::fmt::Debug for PolicyInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// Raw JSON text that already passed the input schema (by the typed parse), and its
/// `Value`, built on first use.
#[derive(Debug)]
pub(crate) struct LazyText {
    text: String,
    value: OnceLock<Arc<Value>>,
}

impl LazyText {
    /// Text the typed parse accepted: JSON within the depth limit.
    pub(crate) fn new(text: String) -> Self {
        LazyText {
            text,
            value: OnceLock::new(),
        }
    }

    /// The text as a `Value`: exactly what parsing it the `Value` way gives (it parsed
    /// once already, so it always does; `null` would only stand for a text that does not).
    pub(crate) fn value(&self) -> &Arc<Value> {
        self.value
            .get_or_init(|| Arc::new(serde_json::from_str(&self.text).unwrap_or(Value::Null)))
    }
}

/// A policy's answer. Non-exhaustive: a later protocol may add answers (the runtime is the
/// only one that matches on it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PolicyDecision {
    /// Run it.
    Allow,
    /// Refuse (`POLICY_DENIED`); the reason is shown to the consumer, so keep it safe.
    Deny {
        /// Shown instead of the default denial message.
        reason: Option<String>,
    },
    /// Ask the host first; the reason becomes the confirmation description.
    Confirm {
        /// Shown instead of the capability description.
        reason: Option<String>,
    },
}

impl PolicyDecision {
    /// `Deny` with a reason.
    #[must_use]
    pub fn deny(reason: impl Into<String>) -> Self {
        PolicyDecision::Deny {
            reason: Some(reason.into()),
        }
    }

    /// `Confirm` with a reason.
    #[must_use]
    pub fn confirm(reason: impl Into<String>) -> Self {
        PolicyDecision::Confirm {
            reason: Some(reason.into()),
        }
    }
}

/// A policy evaluation failure (`POLICY_EVALUATION_FAILED`); its text stays host-side.
pub type PolicyError = Box<dyn std::error::Error + Send + Sync>;

/// A policy's answer, now or later.
pub enum PolicyVerdict {
    /// Decided synchronously (no allocation, no await).
    Ready(Result<PolicyDecision, PolicyError>),
    /// Decided asynchronously; the runtime stops waiting if the invocation is cancelled.
    Pending(BoxFuture<Result<PolicyDecision, PolicyError>>),
}

impl std::fmt::Debug for PolicyVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicyVerdict::Ready(r) => f.debug_tuple("Ready").field(r).finish(),
            PolicyVerdict::Pending(_) => f.write_str("Pending(..)"),
        }
    }
}

/// Host policy. It must be read-only and safe to call concurrently: preflight calls it for
/// many proposals at once, and its answers are advisory there. A panic in it is
/// `POLICY_EVALUATION_FAILED`.
pub trait Policy: Send + Sync + 'static {
    /// Decides one invocation or proposal.
    fn evaluate(&self, context: PolicyContext) -> PolicyVerdict;
}

/// The reference's default: reads allowed; confirmed operations allowed; destructive
/// operations ask for confirmation; writes and external operations denied.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultPolicy;

impl Policy for DefaultPolicy {
    fn evaluate(&self, context: PolicyContext) -> PolicyVerdict {
        PolicyVerdict::Ready(Ok(match context.capability().effect {
            Effect::Read => PolicyDecision::Allow,
            _ if context.confirmed() => PolicyDecision::Allow,
            Effect::Destructive => PolicyDecision::Confirm { reason: None },
            Effect::Write | Effect::External => {
                // Preflight is advisory: nothing was refused yet.
                if context.phase() == PolicyPhase::Invoke {
                    default_policy_denied(&context.capability().id);
                }
                PolicyDecision::Deny { reason: None }
            }
        }))
    }
}

/// Tells the host's log, once per process at `warn` and then at `debug`, why a write was
/// denied: the consumer only sees the reference's `POLICY_DENIED`, and an application that
/// never set a policy would not know it runs on this one.
fn default_policy_denied(capability: &str) {
    static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    const WHY: &str = "the default policy denied a write or external call \
        (POLICY_DENIED); set `RuntimeOptions::policy` to allow or confirm writes, e.g. \
        `policy_fn(|call| match call.capability().effect { Effect::Destructive if \
        !call.confirmed() => PolicyDecision::confirm(\"...\"), _ => PolicyDecision::Allow })`";
    // A load first: after the first denial, no write to a shared cache line per call.
    if TOLD.load(std::sync::atomic::Ordering::Relaxed)
        || TOLD.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        tracing::debug!(target: "rcip::host", capability, "{WHY}");
    } else {
        tracing::warn!(target: "rcip::host", capability, "{WHY}");
    }
}

struct SyncPolicy<F>(F);

impl<F> Policy for SyncPolicy<F>
where
    F: Fn(PolicyContext) -> PolicyDecision + Send + Sync + 'static,
{
    fn evaluate(&self, context: PolicyContext) -> PolicyVerdict {
        PolicyVerdict::Ready(Ok((self.0)(context)))
    }
}

struct AsyncPolicy<F>(F);

impl<F, Fut> Policy for AsyncPolicy<F>
where
    F: Fn(PolicyContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PolicyDecision, PolicyError>> + Send + 'static,
{
    fn evaluate(&self, context: PolicyContext) -> PolicyVerdict {
        PolicyVerdict::Pending(Box::pin((self.0)(context)))
    }
}

/// A synchronous policy from a closure. It takes the context by value, as
/// [`async_policy_fn`] and [`Policy::evaluate`] do (an async closure has to own what its
/// future uses, so by value is the one form both can share).
///
/// ```
/// use rcip_runtime::{Effect, PolicyDecision, policy_fn};
/// // Allow reads, confirm everything else (the pilot's policy).
/// let policy = policy_fn(|ctx| match ctx.capability().effect {
///     Effect::Read => PolicyDecision::Allow,
///     _ if ctx.confirmed() => PolicyDecision::Allow,
///     _ => PolicyDecision::Confirm { reason: None },
/// });
/// # let _ = policy;
/// ```
pub fn policy_fn<F>(f: F) -> Arc<dyn Policy>
where
    F: Fn(PolicyContext) -> PolicyDecision + Send + Sync + 'static,
{
    Arc::new(SyncPolicy(f))
}

/// An asynchronous policy from a closure returning a future; the context moves into it.
///
/// ```
/// use rcip_runtime::{Effect, PolicyDecision, PolicyError, async_policy_fn};
/// let policy = async_policy_fn(|ctx| async move {
///     // e.g. ask an authorization service about ctx.principal() here
///     Ok::<_, PolicyError>(match ctx.capability().effect {
///         Effect::Read => PolicyDecision::Allow,
///         _ => PolicyDecision::deny("Read-only today."),
///     })
/// });
/// # let _ = policy;
/// ```
pub fn async_policy_fn<F, Fut>(f: F) -> Arc<dyn Policy>
where
    F: Fn(PolicyContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PolicyDecision, PolicyError>> + Send + 'static,
{
    Arc::new(AsyncPolicy(f))
}
