//! The host surface: binding handlers, setting the semantic context, refreshing, and
//! resolving confirmations. It stays in trusted application code.

use std::sync::{Arc, Weak};

use rcip_core::{ApplicationDefinition, InvocationOutcome, SemanticContext};

use crate::binding::Binding;
use crate::catalog::CompiledCatalog;
use crate::client::RcipClient;
use crate::runtime::{Inner, Runtime, RuntimeOptions};

/// The runtime's host side: the methods of [`Runtime`] that hand out a [`Host`] (here, so that
/// `runtime.rs` needs nothing of this file).
impl Runtime {
    /// Creates a runtime and binds its capabilities with `bind` before anything can use it;
    /// with [`RuntimeOptions::require_all_bound`], fails if a declared capability is still
    /// unbound afterwards. `bind` keeps what it binds (e.g. with
    /// [`BindingGuard::keep`](crate::BindingGuard::keep)): guards it drops unbind at once.
    ///
    /// # Errors
    ///
    /// [`Error::Definition`](crate::Error::Definition), `bind`'s own error, or
    /// [`Error::Unbound`](crate::Error::Unbound) naming the capabilities left unbound.
    pub fn with_bindings(
        definition: ApplicationDefinition,
        options: RuntimeOptions,
        bind: impl FnOnce(&Host) -> Result<(), crate::Error>,
    ) -> Result<Self, crate::Error> {
        let required = options.require_all_bound;
        let runtime = Self::from_catalog(CompiledCatalog::compile(definition)?, options);
        bind(&runtime.host())?;
        if required {
            runtime.check_bound()?;
        }
        Ok(runtime)
    }

    /// The host surface, for trusted application code.
    #[must_use]
    pub fn host(&self) -> Host {
        Host::new(self.inner.clone())
    }
}

/// The host controller of one runtime. Cloning it is cheap.
#[derive(Clone)]
pub struct Host {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("application", &self.inner.catalog.application.id)
            .finish_non_exhaustive()
    }
}

impl Host {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Host { inner }
    }

    /// Installs a live handler for a declared capability and publishes a new revision.
    /// Dropping the returned guard unbinds it (and publishes a new revision); a stale guard
    /// never removes a newer binding.
    ///
    /// # Errors
    ///
    /// [`Error::NotRegistered`](crate::Error::NotRegistered) for an id that is not in the
    /// catalog; [`Error::AlreadyBound`](crate::Error::AlreadyBound) while another binding
    /// of the id is live.
    pub fn bind(
        &self,
        capability_id: &str,
        binding: Binding,
    ) -> Result<BindingGuard, crate::Error> {
        let index = self.inner.catalog.position(capability_id).ok_or_else(|| {
            let error = crate::Error::NotRegistered(capability_id.to_owned());
            let hint = error.hint().unwrap_or_default();
            tracing::warn!(target: "rcip::host", capability = capability_id, "{error} {hint}");
            error
        })?;
        let generation = self
            .inner
            .install(index, binding.handler, binding.availability)
            .ok_or_else(|| crate::Error::AlreadyBound(capability_id.to_owned()))?;
        self.inner.refresh();
        Ok(BindingGuard {
            inner: Arc::downgrade(&self.inner),
            index,
            generation,
            armed: true,
        })
    }

    /// Binds a typed capability (see [`Capability`](crate::Capability)) over `state`.
    ///
    /// # Errors
    ///
    /// As [`bind`](Self::bind).
    pub fn bind_capability<C: crate::Capability>(
        &self,
        state: C::State,
    ) -> Result<BindingGuard, crate::Error> {
        self.bind(C::ID, C::binding(state))
    }

    /// Binds a handler to a declared contract (see [`CapabilitySpec`](crate::CapabilitySpec),
    /// e.g. from `#[derive(Capability)]`): `handler` takes the typed input and returns the
    /// typed output.
    ///
    /// # Errors
    ///
    /// As [`bind`](Self::bind).
    pub fn bind_typed<C, F, Fut>(&self, handler: F) -> Result<BindingGuard, crate::Error>
    where
        C: crate::CapabilitySpec,
        F: Fn(C::Input, crate::InvocationContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<C::Output, crate::HandlerError>> + Send + 'static,
    {
        self.bind(C::ID, Binding::typed(handler))
    }

    /// Replaces the semantic context and publishes a new revision (always, even when the
    /// context is unchanged). Active ids are de-duplicated, first occurrence kept.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownScope`](crate::Error::UnknownScope) for an undeclared scope;
    /// [`Error::PrimaryScopeNotActive`](crate::Error::PrimaryScopeNotActive) when the
    /// primary scope is set but not active. Nothing changes on error.
    pub fn set_context(&self, context: SemanticContext) -> Result<(), crate::Error> {
        let mut active: Vec<String> = Vec::with_capacity(context.active_scope_ids.len());
        for id in context.active_scope_ids {
            if !active.contains(&id) {
                active.push(id);
            }
        }
        if let Some(unknown) = active
            .iter()
            .find(|id| !self.inner.catalog.scope_ids.contains(id.as_str()))
        {
            return Err(crate::Error::UnknownScope(unknown.clone()));
        }
        // As in the reference, an empty primary id counts as "not set" for this check and
        // is stored as given.
        if let Some(primary) = context.primary_scope_id.as_deref()
            && !primary.is_empty()
            && !active.iter().any(|id| id == primary)
        {
            return Err(crate::Error::PrimaryScopeNotActive);
        }
        self.inner.replace_context(SemanticContext {
            active_scope_ids: active,
            primary_scope_id: context.primary_scope_id,
        });
        self.inner.refresh();
        Ok(())
    }

    /// Publishes a new revision, so the next snapshot re-reads availability.
    pub fn refresh(&self) {
        self.inner.refresh();
    }

    /// The confirmations waiting for an answer (not expired, not cancelled), soonest expiry
    /// first: what a host's own approval interface shows, for callers that cannot put the
    /// question to a human themselves (an MCP client without elicitation, a script).
    ///
    /// ```
    /// use rcip_runtime::*;
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Error> {
    /// let definition = ApplicationDefinition::new("notes", "Notes", "A notebook.").capability(
    ///     CapabilityDefinition::new("notes.clear", Effect::Destructive, "Clear", "Clears the notes."),
    /// );
    /// let policy = policy_fn(|ctx| if ctx.confirmed() { PolicyDecision::Allow } else { PolicyDecision::Confirm { reason: None } });
    /// let runtime = Runtime::new(definition, RuntimeOptions::default().policy(policy))?;
    /// let _binding = runtime.host().bind("notes.clear", Binding::new(|_input, _ctx| async {
    ///     Ok::<_, HandlerError>(json!(null))
    /// }))?;
    /// runtime.client().invoke(InvocationRequest::new("notes.clear", json!({}))).await;
    /// let pending = runtime.host().pending_confirmations();
    /// assert_eq!(pending.len(), 1);
    /// assert_eq!(pending[0].capability_id, "notes.clear");
    /// let outcome = runtime.host().resolve_confirmation(&pending[0].confirmation.id, true).await;
    /// assert_eq!(outcome.status(), OutcomeStatus::Succeeded);
    /// assert!(runtime.host().pending_confirmations().is_empty());
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn pending_confirmations(&self) -> Vec<crate::ConfirmationTicket> {
        self.inner.pending_confirmations()
    }

    /// Whether this runtime shares its confirmations through a
    /// [`ConfirmationStore`](crate::ConfirmationStore).
    #[must_use]
    pub fn shares_confirmations(&self) -> bool {
        self.inner.confirmation_store.is_some()
    }

    /// The confirmations pending on every instance sharing this runtime's
    /// [`ConfirmationStore`](crate::ConfirmationStore), oldest expiry first; without a store,
    /// the same as [`pending_confirmations`](Self::pending_confirmations). Any of them can be
    /// resolved here.
    ///
    /// # Errors
    ///
    /// [`Error::ConfirmationStore`](crate::Error::ConfirmationStore) when the store fails.
    pub async fn shared_pending_confirmations(
        &self,
    ) -> Result<Vec<crate::ConfirmationTicket>, crate::Error> {
        self.inner.shared_pending_confirmations().await
    }

    /// Approves or declines a pending confirmation. Approval re-runs the whole invocation
    /// with `confirmed: true`.
    ///
    /// With a [`ConfirmationStore`](crate::ConfirmationStore), a confirmation raised on
    /// another instance is resolved (and, approved, run) here; of several resolutions of one
    /// confirmation on any instances, exactly one happens, and the others get
    /// `CONFIRMATION_NOT_FOUND`. When the store cannot be reached the confirmation stays
    /// pending and the answer is `EXECUTION_FAILED`.
    pub async fn resolve_confirmation(
        &self,
        confirmation_id: &str,
        approved: bool,
    ) -> InvocationOutcome {
        self.inner
            .resolve_confirmation(confirmation_id, approved)
            .await
    }

    /// A client of the same runtime.
    #[must_use]
    pub fn client(&self) -> Arc<dyn RcipClient> {
        Runtime::from_inner(self.inner.clone()).client()
    }
}

/// Keeps a binding installed. Dropping it (or [`unbind`](Self::unbind)) removes the binding
/// if it is still the installed one; [`keep`](Self::keep) leaves it for the runtime's life.
#[must_use = "dropping a BindingGuard unbinds the capability at once"]
#[derive(Debug)]
pub struct BindingGuard {
    inner: Weak<Inner>,
    index: usize,
    generation: u64,
    armed: bool,
}

impl BindingGuard {
    /// Unbinds now. Returns whether this guard's binding was still installed.
    pub fn unbind(mut self) -> bool {
        self.release()
    }

    /// Leaves the binding installed for as long as the runtime lives.
    pub fn keep(mut self) {
        self.armed = false;
    }

    fn release(&mut self) -> bool {
        if !std::mem::replace(&mut self.armed, false) {
            return false;
        }
        let Some(inner) = self.inner.upgrade() else {
            return false;
        };
        let removed = inner.uninstall(self.index, self.generation);
        if removed {
            inner.refresh();
        }
        removed
    }
}

impl Drop for BindingGuard {
    fn drop(&mut self) {
        self.release();
    }
}

/// The guards of several bindings, e.g. everything `catalog!`'s `bind_all` bound. Dropping it
/// unbinds them all; [`keep`](Self::keep) leaves them for the runtime's life.
#[must_use = "dropping BindingGuards unbinds the capabilities at once"]
#[derive(Debug, Default)]
pub struct BindingGuards(Vec<BindingGuard>);

impl BindingGuards {
    /// Leaves every binding installed for as long as the runtime lives.
    pub fn keep(self) {
        self.0.into_iter().for_each(BindingGuard::keep);
    }

    /// How many bindings there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The guards, one per binding.
    #[must_use]
    pub fn into_vec(self) -> Vec<BindingGuard> {
        self.0
    }
}

impl From<Vec<BindingGuard>> for BindingGuards {
    fn from(guards: Vec<BindingGuard>) -> Self {
        BindingGuards(guards)
    }
}
