//! A caller bound to one workspace (`Caller::within`, an API token's): every other
//! workspace is answered as one it is no member of, after the refusals that come first, and
//! `workspace.list` lists the bound one only, paged over what it may see.
#![allow(clippy::unwrap_used, clippy::panic)] // Tests: a failure is the report.

use std::sync::Arc;

use rcip_platform::{MemoryDirectory, Platform};
use rcip_records::{Actor, Caller, DelegatedScope, Engine};
use serde_json::{Value, json};

async fn call(
    platform: &Platform,
    caller: &Caller,
    operation: &str,
    arguments: Value,
) -> Result<Value, (u16, &'static str)> {
    platform
        .call(caller, operation, arguments)
        .await
        .map_err(|e| (e.status.as_u16(), e.code))
}

#[tokio::test]
async fn a_bound_caller_reaches_its_workspace_only() {
    let platform = Platform::open(Engine::in_memory(), Arc::new(MemoryDirectory::new()))
        .await
        .unwrap();
    let ada = Caller::human(Actor::new("ada"));
    for (n, workspace) in ["acme", "beta", "gamma"].into_iter().enumerate() {
        let key = format!("w{n}");
        call(
            &platform,
            &ada,
            "workspace.create",
            json!({"workspace_id": workspace, "name": workspace, "idempotency_key": key}),
        )
        .await
        .unwrap();
        let key = format!("m{n}");
        call(
            &platform,
            &ada,
            "member.add",
            json!({"workspace_id": workspace, "principal_id": "bot",
            "kind": "agent", "scopes": ["records:read"], "idempotency_key": key}),
        )
        .await
        .unwrap();
    }
    let bot = Caller::agent(Actor::new("bot"), DelegatedScope::ALL);
    let bound = bot.clone().within("beta");

    // Unbound, the agent reads every workspace it is a member of.
    assert!(
        call(
            &platform,
            &bot,
            "workspace.get",
            json!({"workspace_id": "acme"})
        )
        .await
        .is_ok()
    );
    assert!(
        call(
            &platform,
            &bound,
            "workspace.get",
            json!({"workspace_id": "beta"})
        )
        .await
        .is_ok()
    );
    assert_eq!(
        call(
            &platform,
            &bound,
            "workspace.get",
            json!({"workspace_id": "acme"})
        )
        .await,
        Err((404, "WORKSPACE_NOT_FOUND"))
    );
    // The refusals that come before the workspace still come first.
    assert_eq!(
        call(
            &platform,
            &bound,
            "workspace.get",
            json!({"workspace_id": "acme", "extra": 1})
        )
        .await,
        Err((400, "INVALID_ARGUMENTS"))
    );
    assert_eq!(
        call(
            &platform,
            &bound,
            "workspace.create",
            json!({"workspace_id": "delta", "name": "Delta", "idempotency_key": "w9"})
        )
        .await,
        Err((403, "CONSOLE_ONLY"))
    );
    // Listed: the bound workspace only, on a full first page (filtered before paging).
    let listed = call(&platform, &bound, "workspace.list", json!({"limit": 1}))
        .await
        .unwrap();
    let ids: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["workspace_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["beta"], "{listed}");
    assert!(
        listed.get("next_cursor").is_none_or(Value::is_null),
        "{listed}"
    );
    let all = call(&platform, &bot, "workspace.list", json!({}))
        .await
        .unwrap();
    assert_eq!(all["items"].as_array().unwrap().len(), 3, "{all}");
}
