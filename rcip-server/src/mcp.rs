//! `/mcp`: the registry's operations as MCP tools, through `rcip-mcp`'s bridge on a runtime
//! whose catalog is `platform_definition()` with each capability id made its tool name
//! (`record.get` -> `record_get`).
//!
//! Authentication is the server's own, asynchronous, in front of the bridge (the
//! `authenticate` layer with [`Door::Mcp`]); `rcip-mcp`'s synchronous bearer hook only reads
//! its answer from the request's extensions and hands the bridge a [`Principal`] with the
//! [`Authenticated`] caller attached. The bindings read that caller back, typed, and run
//! [`Shared::call`] — the REST path's, so the credential's workspace is enforced here too
//! (which `Platform::bind` could not do: its resolver sees the principal, never the
//! arguments).

use http::StatusCode;
use std::sync::Arc;

use axum::Router;
use axum::response::IntoResponse;
use rcip_mcp::{AuthRejection, HttpOptions, McpBridge, http_router};
use rcip_platform::{PlatformError, operations, platform_definition, tool_name};
use rcip_runtime::{
    Binding, BindingGuard, HandlerError, InvocationContext, PolicyDecision, Principal, Runtime,
    RuntimeOptions, policy_fn,
};

use crate::authenticate::{Authenticated, Door};
use crate::error::ApiError;
use crate::paths::MCP_PATH;
use crate::shared::Shared;

/// Marks of the caller's kind, client and workspace among the principal's scopes, beside its
/// delegated scopes: never read back (the binding reads the attached caller), they make the
/// principal's identity the whole caller's, which is what owns a 2025-11-25 MCP session
/// (another workspace's credential of the same agent is another owner).
const KIND: &str = "rcip:kind:";
const CLIENT: &str = "rcip:client:";
const WORKSPACE: &str = "rcip:workspace:";

/// The principal the bridge carries for `who`: its id, delegated scopes and identity marks
/// (what a runtime policy and the session guard read), with the caller itself attached,
/// typed, for the binding.
fn principal(who: &Authenticated) -> Principal {
    let caller = &who.caller;
    let mut principal = Principal::new(caller.actor.id.as_str())
        .with_scope(format!("{KIND}{}", caller.kind.as_str()));
    for scope in &caller.scopes {
        principal = principal.with_scope(scope.as_str());
    }
    if let Some(client) = &caller.actor.client {
        principal = principal.with_scope(format!("{CLIENT}{client}"));
    }
    if let Some(workspace) = &who.workspace {
        principal = principal.with_scope(format!("{WORKSPACE}{workspace}"));
    }
    principal.with_extension(who.clone())
}

/// A platform error as the tool's public failure; a store failure's details stay in the
/// log.
fn public(error: PlatformError) -> HandlerError {
    if error.status.is_server_error() {
        tracing::warn!(target: "rcip::server", code = error.code, "operation failed: {}", error.message);
        return HandlerError::public(error.code, "the platform failed", Vec::new());
    }
    HandlerError::public(error.code, error.message, error.issues)
}

/// What the MCP route keeps alive: the runtime and the bindings of every operation.
struct Kept {
    _runtime: Runtime,
    _bindings: Vec<BindingGuard>,
}

/// The `/mcp` router, without the server's layers ([`Server::router`](crate::Server::router)
/// adds them).
pub(crate) fn router(shared: &Arc<Shared>) -> Router {
    match build(shared) {
        Ok(router) => router,
        Err(error) => {
            // The catalog is the registry's own: failing here is a bug, answered, not a panic.
            tracing::error!(target: "rcip::server", %error, "MCP could not start");
            Router::new().route_service(
                MCP_PATH,
                axum::routing::any(|| async {
                    ApiError::new(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "MCP_UNAVAILABLE",
                        "MCP is not available on this server",
                    )
                    .into_response()
                }),
            )
        }
    }
}

fn build(shared: &Arc<Shared>) -> Result<Router, String> {
    // The platform makes every decision (membership, scopes, console-only): the runtime's
    // policy lets every invocation through to it.
    let options = RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow));
    // The bridge names each tool by its capability id, and the seed's tools are the
    // operations with dots as underscores (`record_get`): this runtime, private to the MCP
    // door, registers them so.
    let mut definition = platform_definition();
    for capability in &mut definition.capabilities {
        capability.id = tool_name(&capability.id);
    }
    let runtime = Runtime::new(definition, options).map_err(|e| e.to_string())?;
    let host = runtime.host();
    let bindings = operations()
        .iter()
        .map(|spec| {
            let (shared, name) = (Arc::clone(shared), spec.name);
            let binding = Binding::new(move |input, context: InvocationContext| {
                let who = context
                    .principal()
                    .and_then(|principal| principal.extension::<Authenticated>())
                    .cloned();
                let shared = Arc::clone(&shared);
                async move {
                    let who = who.ok_or_else(|| {
                        HandlerError::public(
                            "UNAUTHENTICATED",
                            "the invocation names no caller",
                            Vec::new(),
                        )
                    })?;
                    shared.call(&who, DOOR, name, input).await.map_err(public)
                }
            });
            host.bind(&spec.tool_name(), binding)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let bridge = McpBridge::builder(runtime.client())
        .server_info("rcip-server", env!("CARGO_PKG_VERSION"))
        .build()
        .map_err(|e| e.to_string())?;
    let kept = Arc::new(Kept {
        _runtime: runtime,
        _bindings: bindings,
    });
    let mut options = HttpOptions::new()
        .path(MCP_PATH)
        .shutdown(shared.shutdown.clone())
        .bearer_auth(move |parts| {
            let _alive = &kept;
            // The server's authentication layer ran first; without its answer nothing passes.
            parts
                .extensions
                .get::<Authenticated>()
                .map(|who| Some(principal(who)))
                .ok_or_else(AuthRejection::new)
        });
    if let Some(hosts) = public_hosts(&shared.base_url) {
        options = options.allowed_hosts(hosts);
    }
    if let Some(store) = &shared.mcp_sessions {
        options = options.session_store(Arc::clone(store));
    }
    if let Some(store) = &shared.mcp_events {
        options = options.event_store(Arc::clone(store));
    }
    if let Some(relay) = &shared.mcp_relay {
        options = options.relay(Arc::clone(relay));
    }
    Ok(http_router(bridge, options))
}

/// The `Host` values a request through the public base URL carries, beside the loopback
/// names (`None`: the base URL is on loopback, and rmcp's loopback default applies).
fn public_hosts(base_url: &str) -> Option<Vec<String>> {
    let authority = base_url.split_once("://")?.1.split('/').next()?;
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    };
    let loopback = ["localhost", "127.0.0.1", "[::1]"];
    if loopback.contains(&host) {
        return None;
    }
    let mut hosts: Vec<String> = loopback.iter().map(|h| (*h).to_owned()).collect();
    hosts.push(host.to_owned());
    hosts.push(authority.to_owned());
    Some(hosts)
}

/// Which door `/mcp` is.
pub(crate) const DOOR: Door = Door::Mcp;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rcip_records::{Actor, Caller, DelegatedScope};

    #[test]
    fn a_principal_carries_the_whole_caller_and_back() {
        for who in [
            Authenticated {
                caller: Caller::agent(
                    Actor::new("bot").via("triage"),
                    [DelegatedScope::RecordsRead, DelegatedScope::CommandsExecute],
                ),
                workspace: Some("acme".to_owned()),
            },
            Authenticated {
                caller: Caller::human(Actor::new("ada")),
                workspace: None,
            },
            Authenticated {
                caller: Caller::agent(Actor::new("idle"), []),
                workspace: None,
            },
        ] {
            assert_eq!(principal(&who).extension::<Authenticated>(), Some(&who));
            // Another workspace's credential of the same caller is another principal (and so
            // another session owner).
            let elsewhere = Authenticated {
                workspace: Some("elsewhere".to_owned()),
                ..who.clone()
            };
            assert_ne!(principal(&elsewhere), principal(&who));
        }
    }

    #[test]
    fn the_public_host_is_accepted_beside_loopback() {
        assert_eq!(public_hosts("http://127.0.0.1:8080"), None);
        let hosts = public_hosts("https://relationships.example:8443/base").unwrap();
        assert!(hosts.contains(&"relationships.example".to_owned()));
        assert!(hosts.contains(&"relationships.example:8443".to_owned()));
    }
}
