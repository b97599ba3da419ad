//! The platform's operations as RCIP capabilities: one binding per row of the registry
//! ([`platform_definition`](crate::platform_definition) declares them), each running
//! [`Platform::call`]; and a program's capabilities ([`Platform::bind_package`]), each
//! running the record or command operation it stands for through [`Platform::call`] too.

use http::StatusCode;
use std::sync::Arc;

use rcip_runtime::{Binding, BindingGuard, HandlerError, Host, InvocationContext};
use serde_json::{Value, json};

use super::error::PlatformError;
use super::platform::Platform;
use super::registry::operations;
use rcip_records::__private::{
    Call, CapabilityFuture, Context, RunCapability, Target, bind_capabilities, feed_summary,
};
use rcip_records::{Caller, RecordError, RecordStore};

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

impl<S: RecordStore + 'static> Platform<S> {
    /// Binds every capability of the program `namespace` (version `version`, or the highest
    /// visible in `workspace_id`) on `host`, as [`Engine::bind_package`](rcip_records::Engine::bind_package)
    /// declares them, in `workspace_id`, as `caller`, each invocation running the record or
    /// command operation it stands for through [`Platform::call`]: the one decision judges
    /// every invocation (membership, scopes, collections, records), as it judges the same
    /// call made directly.
    ///
    /// The program is found as a record call finds it: activated in the workspace through
    /// `program.activate` (on any instance over the same directory) or installed, so a
    /// version that only the directory holds is bound. A capability of a type acts only on
    /// records of that type and program version (any other is not found, 404).
    ///
    /// # Errors
    ///
    /// 400 `INVALID_ARGUMENTS` when the program is not visible in the workspace; 500
    /// `STORE_FAILED` when the directory cannot be read; 500 `NOT_REGISTERED` (the host's
    /// configuration) when the runtime's catalog lacks one of the program's capabilities.
    pub async fn bind_package(
        self: &Arc<Self>,
        host: &Host,
        namespace: &str,
        version: Option<u64>,
        workspace_id: &str,
        caller: &Caller,
    ) -> Result<Vec<BindingGuard>, PlatformError> {
        let package = &self
            .engine()
            .program(workspace_id, namespace, version)
            .await?;
        let context = Context::new(package, workspace_id, caller);
        bind_capabilities(host, package, &context, self).map_err(|e| {
            PlatformError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "NOT_REGISTERED",
                e.to_string(),
            )
        })
    }

    async fn run_capability(
        &self,
        context: &Context,
        target: &Target,
        input: Value,
    ) -> Result<Value, HandlerError> {
        let request = context.request(target, input)?;
        let caller = &context.caller;
        if let Some((record_id, type_name)) = request.of_type {
            let get = json!({"workspace_id": context.workspace_id, "record_id": record_id});
            let record = self.call(caller, "record.get", get).await.map_err(public)?;
            if !context.is_of_type(&record, type_name) {
                return Err(public(RecordError::NotFound.into()));
            }
        }
        let answer = self
            .call(caller, request.call.operation(), request.arguments)
            .await
            .map_err(public)?;
        Ok(if request.call == Call::Feed {
            feed_summary(answer)
        } else {
            answer
        })
    }
}

impl<S: RecordStore + 'static> RunCapability for Platform<S> {
    fn run<'a>(
        &'a self,
        context: &'a Context,
        target: &'a Target,
        input: Value,
    ) -> CapabilityFuture<'a> {
        Box::pin(self.run_capability(context, target, input))
    }
}

/// A platform error as the handler's public failure; a store failure's details stay in the
/// log, not in the answer.
fn public(error: PlatformError) -> HandlerError {
    if error.status.is_server_error() {
        tracing::warn!(
            code = error.code,
            "platform operation failed: {}",
            error.message
        );
        return HandlerError::public(error.code, "the platform failed", Vec::new());
    }
    HandlerError::public(error.code, error.message, error.issues)
}
