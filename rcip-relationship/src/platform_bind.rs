//! The platform's operations as RCIP capabilities: one binding per row of the registry
//! ([`platform_definition`](crate::platform_definition) declares them), each running
//! [`Platform::call`].

use std::sync::Arc;

use rcip_runtime::{Binding, BindingGuard, HandlerError, Host, InvocationContext};

use super::platform::Platform;
use super::platform_error::PlatformError;
use super::principal::Caller;
use super::registry::operations;
use super::store::RecordStore;

impl<S: RecordStore + 'static> Platform<S> {
    /// Binds every operation of the registry on `host` (its catalog must hold
    /// [`platform_definition`](crate::platform_definition)'s capabilities). `resolve` says
    /// who calls from the invocation's context (its principal, typically); an invocation it
    /// resolves to no caller fails `UNAUTHENTICATED` before anything runs. Every other
    /// outcome is [`Platform::call`]'s: a failure's message starts with its stable code
    /// (`WORKSPACE_NOT_FOUND: ...`), with its issues. Dropping the guards unbinds them.
    ///
    /// # Errors
    ///
    /// [`rcip_runtime::Error::NotRegistered`] for an operation the catalog lacks.
    pub fn bind(
        self: &Arc<Self>,
        host: &Host,
        resolve: impl Fn(&InvocationContext) -> Option<Caller> + Send + Sync + 'static,
    ) -> Result<Vec<BindingGuard>, rcip_runtime::Error> {
        let resolve = Arc::new(resolve);
        operations()
            .iter()
            .map(|spec| {
                let (platform, resolve, name) = (Arc::clone(self), Arc::clone(&resolve), spec.name);
                let binding = Binding::new(move |input, context: InvocationContext| {
                    let caller = resolve(&context);
                    let platform = Arc::clone(&platform);
                    async move {
                        let caller = caller.ok_or_else(|| {
                            HandlerError::public(
                                "UNAUTHENTICATED",
                                "the invocation names no caller",
                                Vec::new(),
                            )
                        })?;
                        platform.call(&caller, name, input).await.map_err(public)
                    }
                });
                host.bind(name, binding)
            })
            .collect()
    }
}

/// A platform error as the handler's public failure; a store failure's details stay in the
/// log, not in the answer.
fn public(error: PlatformError) -> HandlerError {
    if error.status >= 500 {
        tracing::warn!(
            code = error.code,
            "platform operation failed: {}",
            error.message
        );
        return HandlerError::public(error.code, "the platform failed", Vec::new());
    }
    HandlerError::public(error.code, error.message, error.issues)
}
