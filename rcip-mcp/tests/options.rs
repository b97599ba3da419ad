//! The builder's options: listing, keys, and what a shared key does across bridges.
#![allow(clippy::unwrap_used)]

mod common;
mod duplex;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use rcip_mcp::rmcp::model::{CallToolResponse, ErrorCode};
use rcip_mcp::rmcp::service::ServiceError;
use rcip_mcp::{BridgeError, HostBroker, Listing, McpBridge, McpBridgeBuilder};
use rcip_runtime::*;
use serde_json::{Value, json};

/// The notes catalog with `notes.list` bound but unavailable.
fn unavailable_app() -> (Runtime, BindingGuard) {
    let runtime = Runtime::new(definition(), RuntimeOptions::default()).unwrap();
    let guard = runtime
        .host()
        .bind(
            "notes.list",
            Binding::new(|_input: Value, _ctx: InvocationContext| async {
                Ok::<_, HandlerError>(json!({"notes": []}))
            })
            .with_availability(|| {
                Availability::unavailable("MAINTENANCE", "Down for maintenance.")
            }),
        )
        .unwrap();
    (runtime, guard)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_tools_are_listed_with_their_reason_or_hidden() {
    let (runtime, _guard) = unavailable_app();
    let shown = McpBridge::builder(runtime.client()).build().unwrap();
    let hidden = McpBridge::builder(runtime.client())
        .listing(Listing::new().hide_unavailable())
        .build()
        .unwrap();
    for (bridge, listed) in [(shown, true), (hidden, false)] {
        for era in ERAS {
            let client = connect_bridge(&bridge, Human::new(Answer::Approve), era).await;
            let tools = client.list_all_tools().await.unwrap();
            if listed {
                assert_eq!(tools.len(), 1);
                let description = tools[0].description.as_deref().unwrap();
                assert!(
                    description.ends_with("Unavailable right now: Down for maintenance."),
                    "{description}"
                );
            } else {
                assert!(tools.is_empty());
            }
            // Still callable: the runtime answers.
            let result = client
                .call_tool(call("notes.list", json!({})))
                .await
                .unwrap();
            assert_eq!(code(&result), "CAPABILITY_UNAVAILABLE");
            client.cancel().await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filter_leaves_capabilities_out_entirely() {
    let app = App::with(Duration::from_secs(60), true, |b| {
        b.listing(Listing::new().filter(|c| c.effect == Effect::Read))
    });
    let client = connect(&app, Human::new(Answer::Approve), Era::Modern).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(
        names,
        ["notes.list", "notes.count", "notes.slow", "notes.fail"]
    );
    let error = client
        .call_tool(call("notes.add", json!({"text": "x"})))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    let scoped = App::with(Duration::from_secs(60), true, |b| {
        b.listing(Listing::new().scopes(["elsewhere"]))
    });
    let client = connect(&scoped, Human::new(Answer::Approve), Era::Legacy).await;
    assert!(client.list_all_tools().await.unwrap().is_empty());
    client.cancel().await.unwrap();
}

#[test]
fn a_short_request_state_key_is_refused() {
    let runtime = Runtime::new(definition(), RuntimeOptions::default()).unwrap();
    let error = McpBridge::builder(runtime.client())
        .request_state_key(vec![7; 31])
        .build()
        .unwrap_err();
    assert!(matches!(error, BridgeError::KeyTooShort(31)), "{error}");
    assert!(
        McpBridge::builder(runtime.client())
            .request_state_key(vec![7; 32])
            .build()
            .is_ok()
    );
}

/// Another bridge over `app`'s runtime, its `requestState` keys set by `keys`.
fn sibling(app: &App, keys: impl FnOnce(McpBridgeBuilder) -> McpBridgeBuilder) -> McpBridge {
    let builder = McpBridge::builder(app.runtime.client())
        .confirmations(Arc::new(HostBroker::new(app.runtime.host())));
    keys(builder).build().unwrap()
}

/// Adds a note through `app`'s bridge, which asks for a confirmation: its approved retry
/// is refused by `refuses` (the state does not open there: `-32602`) and finishes on
/// `finishes`. Returns the retry, to replay.
async fn approved_retry(
    app: &App,
    text: &str,
    refuses: &McpBridge,
    finishes: &McpBridge,
) -> rcip_mcp::rmcp::model::CallToolRequestParams {
    let first = connect(app, Human::new(Answer::Approve), Era::Modern).await;
    let params = call("notes.add", json!({ "text": text }));
    let CallToolResponse::InputRequired(round) =
        first.call_tool_once(params.clone()).await.unwrap()
    else {
        panic!("no input_required")
    };
    let mut responses = std::collections::BTreeMap::new();
    responses.insert(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let retry = params
        .with_request_state(round.request_state.unwrap())
        .with_input_responses(responses);
    let client = connect_bridge(refuses, Human::new(Answer::Approve), Era::Modern).await;
    match client.call_tool_once(retry.clone()).await {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("a bridge without the key opened the state: {other:?}"),
    }
    let client = connect_bridge(finishes, Human::new(Answer::Approve), Era::Modern).await;
    let CallToolResponse::Complete(done) = client.call_tool_once(retry.clone()).await.unwrap()
    else {
        panic!("not complete")
    };
    assert_eq!(done.structured_content, Some(json!({ "added": text })));
    retry
}

/// A state sealed by one bridge is refused by a bridge with another key, and accepted by one
/// with the same key over the same runtime (the pending confirmation lives in the runtime).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_key_lets_another_bridge_of_the_same_runtime_finish() {
    const SHARED: &[u8; 32] = b"a shared key of thirty-two bytes";
    let app = App::with(Duration::from_secs(60), true, |b| {
        b.request_state_key(SHARED.to_vec())
    });
    let stranger = sibling(&app, |b| {
        b.request_state_key(b"another key, also thirty-two b..".to_vec())
    });
    let same_key = sibling(&app, |b| b.request_state_key(SHARED.to_vec()));
    let retry = approved_retry(&app, "shared", &stranger, &same_key).await;
    assert_eq!(app.notes(), ["first", "shared"]);
    // Replayed through the bridge that sealed it (its own record of used states does not
    // know the other bridge used it): the confirmation is gone, so it was answered.
    let first = connect(&app, Human::new(Answer::Approve), Era::Modern).await;
    match first.call_tool_once(retry).await {
        Err(ServiceError::McpError(e)) => {
            assert!(e.message.contains("CONFIRMATION_ALREADY_USED"), "{e:?}");
        }
        other => panic!("a replay was not refused: {other:?}"),
    }
    assert_eq!(app.notes(), ["first", "shared"], "nothing ran twice");
}

/// A keyring rotates the `requestState` key without refusing retries in flight: a state
/// sealed with the old key opens on an instance that seals with the new one and still has
/// the old, and is refused by one that dropped it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyring_opens_states_sealed_with_an_older_key() {
    const OLD: &[u8; 32] = b"the old key, thirty-two bytes...";
    const NEW: &[u8; 32] = b"the new key, thirty-two bytes...";
    let app = App::with(Duration::from_secs(60), true, |b| {
        b.request_state_keys("old", [("old", OLD.to_vec())])
    });
    let rotated = sibling(&app, |b| {
        b.request_state_keys("new", [("old", OLD.to_vec()), ("new", NEW.to_vec())])
    });
    let dropped_old = sibling(&app, |b| {
        b.request_state_keys("new", [("new", NEW.to_vec())])
    });
    let _ = approved_retry(&app, "rotated", &dropped_old, &rotated).await;
}

#[test]
fn a_bad_keyring_is_refused() {
    let runtime = Runtime::new(definition(), RuntimeOptions::default()).unwrap();
    let key = vec![7; 32];
    for (active, keys) in [
        ("missing", vec![("k1", key.clone())]),
        ("k1", vec![("k1", vec![7; 31])]),
        ("k1", vec![("k1", key.clone()), ("k1", key.clone())]),
        ("", vec![("", key.clone())]),
    ] {
        let error = McpBridge::builder(runtime.client())
            .request_state_keys(active, keys.clone())
            .build()
            .unwrap_err();
        assert!(
            matches!(error, BridgeError::Keyring(_)),
            "{active} {keys:?}: {error}"
        );
    }
}
