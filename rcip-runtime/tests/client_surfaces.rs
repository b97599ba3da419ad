//! An `RcipClient`'s optional surfaces, advertised RCP-style (`surfaces()`), and the consumer
//! helpers that gate on them: a client without preflight is handled gracefully by every
//! helper, and a helper that needs a surface the client does not advertise fails with
//! `CapabilityMissing` (-32003) before any work.
#![allow(clippy::unwrap_used)]

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rcip_runtime::rcip_rcp::{PresenceMap, RcpErrorCode};
use rcip_runtime::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Note {
    text: String,
}

#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Added {
    length: u32,
}

/// Add a note.
#[capability(effect = "write", scope = "notes")]
fn add(input: Note) -> Added {
    Added {
        length: u32::try_from(input.text.len()).unwrap_or(u32::MAX),
    }
}

thread_local! {
    /// How often a `Probe` was serialized on this thread.
    static SERIALIZED: Cell<usize> = const { Cell::new(0) };
}

/// An input whose serialization is counted, and fails when `fail` is set.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Probe {
    fail: bool,
}

impl Serialize for Probe {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeStruct};
        SERIALIZED.with(|n| n.set(n.get() + 1));
        if self.fail {
            return Err(S::Error::custom("not today"));
        }
        let mut out = serializer.serialize_struct("Probe", 1)?;
        out.serialize_field("fail", &self.fail)?;
        out.end()
    }
}

/// Probe the notes.
#[capability(effect = "read", scope = "notes")]
fn probe(input: Probe) -> bool {
    input.fail
}

catalog! {
    struct Notes {
        id = "notes",
        name = "Notes",
        description = "A notebook.",
        scopes = [("notes", "Notes", "The notes.")],
        capabilities = [add, probe],
    }
}

fn runtime() -> Runtime {
    let runtime = Runtime::new(
        Notes::definition().unwrap(),
        RuntimeOptions::default().policy(policy_fn(|_| PolicyDecision::Allow)),
    )
    .unwrap();
    runtime.host().bind_capability::<add>(()).unwrap().keep();
    runtime.host().bind_capability::<probe>(()).unwrap().keep();
    runtime
}

fn batch(n: usize) -> PreflightBatch {
    PreflightBatch::new(
        (0..n)
            .map(|_| PreflightProposal::new("notes.add", json!({"text": "hi"})))
            .collect(),
    )
}

/// What a test client offers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Offers {
    /// Neither implements nor advertises preflight (only the required methods).
    Nothing,
    /// Implements preflight, does not advertise it.
    Unadvertised,
    /// Implements and advertises preflight with this `maxProposals` (0: none stated).
    Preflight(usize),
    /// Advertises preflight but keeps the trait's default method.
    ClaimOnly,
}

/// A custom client (a proxy, say) over a runtime's client, counting what reaches it.
#[derive(Debug)]
struct TestClient {
    inner: Arc<dyn RcipClient>,
    offers: Offers,
    preflights: AtomicUsize,
    invokes: AtomicUsize,
}

impl TestClient {
    fn new(runtime: &Runtime, offers: Offers) -> Arc<TestClient> {
        Arc::new(TestClient {
            inner: runtime.client(),
            offers,
            preflights: AtomicUsize::new(0),
            invokes: AtomicUsize::new(0),
        })
    }

    fn preflights(&self) -> usize {
        self.preflights.load(Ordering::SeqCst)
    }
}

impl RcipClient for TestClient {
    fn get_snapshot(&self) -> Arc<ApplicationSnapshot> {
        self.inner.get_snapshot()
    }

    fn subscribe_boxed(&self, listener: Listener) -> Subscription {
        self.inner.subscribe_boxed(listener)
    }

    fn invoke(&self, request: InvocationRequest) -> BoxFuture<InvocationOutcome> {
        self.invokes.fetch_add(1, Ordering::SeqCst);
        self.inner.invoke(request)
    }

    fn preflight(&self, batch: PreflightBatch) -> BoxFuture<Result<PreflightReport, Error>> {
        match self.offers {
            Offers::Nothing | Offers::ClaimOnly => {
                Box::pin(std::future::ready(Err(Error::PreflightUnsupported)))
            }
            Offers::Unadvertised | Offers::Preflight(_) => {
                self.preflights.fetch_add(1, Ordering::SeqCst);
                self.inner.preflight(batch)
            }
        }
    }

    fn surfaces(&self) -> ClientSurfaces {
        match self.offers {
            Offers::Nothing | Offers::Unadvertised => ClientSurfaces::new(),
            Offers::Preflight(max) => {
                ClientSurfaces::new().with_preflight(PreflightSurface::new(max))
            }
            Offers::ClaimOnly => ClientSurfaces::new().with_preflight(PreflightSurface::default()),
        }
    }
}

/// A client written against the trait before `surfaces()` existed: required methods only.
#[derive(Debug)]
struct Minimal {
    inner: Arc<dyn RcipClient>,
}

impl RcipClient for Minimal {
    fn get_snapshot(&self) -> Arc<ApplicationSnapshot> {
        self.inner.get_snapshot()
    }

    fn subscribe_boxed(&self, listener: Listener) -> Subscription {
        self.inner.subscribe_boxed(listener)
    }

    fn invoke(&self, request: InvocationRequest) -> BoxFuture<InvocationOutcome> {
        self.inner.invoke(request)
    }
}

fn assert_preflight_missing(error: &Error) {
    let Error::CapabilityMissing(rcp) = error else {
        panic!("expected CapabilityMissing, got {error:?}");
    };
    assert_eq!(error.code(), "CAPABILITY_MISSING");
    assert_eq!(rcp.code, -32003);
    assert_eq!(rcp.kind(), Some(RcpErrorCode::CapabilityMissing));
    assert_eq!(rcp.message, "client does not advertise 'preflight'");
    assert_eq!(
        error.to_string(),
        "[RCP -32003] client does not advertise 'preflight'"
    );
}

/// The runtime's client advertises `{"preflight": {"maxProposals": 16}}`; the helper then
/// gives the same report as the method.
#[tokio::test]
async fn the_runtime_client_advertises_preflight() {
    let runtime = runtime();
    let client = runtime.client();
    let surfaces = client.surfaces();
    assert_eq!(
        surfaces.to_value(),
        json!({"preflight": {"maxProposals": 16}})
    );
    assert!(surfaces.supports(Surface::Preflight));
    assert_eq!(
        surfaces.preflight().unwrap().max_proposals.map(|n| n.get()),
        Some(16)
    );

    let direct = client.preflight(batch(2)).await.unwrap();
    let checked = client.preflight_checked(batch(2)).await.unwrap();
    assert_eq!(checked.outcomes, direct.outcomes);
    assert_eq!(checked.revision, direct.revision);
    assert!(matches!(
        &checked.outcomes[0],
        PreflightOutcome::Ready { capability_id, effect: Effect::Write } if capability_id == "notes.add"
    ));
    assert_eq!(
        client
            .preflight_checked(batch(16))
            .await
            .unwrap()
            .outcomes
            .len(),
        16
    );

    let typed = client
        .preflight_typed::<add>(&Note { text: "x".into() })
        .await
        .unwrap();
    assert_eq!(typed.outcomes, direct.outcomes[..1]);
}

/// A client without preflight: every helper handles it. `invoke_typed` works (it needs no
/// optional surface); the preflight helpers fail with `CapabilityMissing` without calling the
/// client or serializing the input; the method itself still answers `PreflightUnsupported`.
#[tokio::test]
async fn a_client_without_preflight_is_handled_by_every_helper() {
    let runtime = runtime();
    for client in [
        TestClient::new(&runtime, Offers::Nothing) as Arc<dyn RcipClient>,
        Arc::new(Minimal {
            inner: runtime.client(),
        }),
    ] {
        assert_eq!(client.surfaces(), ClientSurfaces::new());
        assert_eq!(client.surfaces().to_value(), json!({}));

        let outcome = client
            .invoke_typed::<add>(&Note {
                text: "four".into(),
            })
            .await;
        assert_eq!(outcome.output(), Some(&Added { length: 4 }));
        assert_eq!(
            client.list_capabilities(&CapabilityFilter::default()).len(),
            2
        );

        let error = client.preflight_checked(batch(1)).await.unwrap_err();
        assert_preflight_missing(&error);
        // The gate comes first: a bad batch size is not even looked at.
        assert_preflight_missing(&client.preflight_checked(batch(0)).await.unwrap_err());

        SERIALIZED.with(|n| n.set(0));
        let error = client
            .preflight_typed::<probe>(&Probe { fail: false })
            .await
            .unwrap_err();
        assert_preflight_missing(&error);
        assert_eq!(SERIALIZED.with(Cell::get), 0, "the input was serialized");

        assert_eq!(
            client.preflight(batch(1)).await.unwrap_err(),
            Error::PreflightUnsupported
        );
    }
}

/// A client that implements preflight but does not advertise it: the helpers refuse without
/// calling it (counted); the method itself works.
#[tokio::test]
async fn the_gate_is_the_advertisement() {
    let runtime = runtime();
    let client = TestClient::new(&runtime, Offers::Unadvertised);
    assert_preflight_missing(&client.preflight_checked(batch(1)).await.unwrap_err());
    assert_preflight_missing(
        &client
            .preflight_typed::<add>(&Note { text: "x".into() })
            .await
            .unwrap_err(),
    );
    assert_eq!(client.preflights(), 0);
    client.preflight(batch(1)).await.unwrap();
    assert_eq!(client.preflights(), 1);
    assert_eq!(client.invokes.load(Ordering::SeqCst), 0);
}

/// The advertised `maxProposals` and the protocol's bounds are checked before the client is
/// called: over the advertised limit is `OptionUnsupported` (-32005), outside 1..=16 is the
/// reference's `PreflightBatchSize`.
#[tokio::test]
async fn advertised_limits_are_kept() {
    let runtime = runtime();
    let client = TestClient::new(&runtime, Offers::Preflight(2));
    let error = client.preflight_checked(batch(3)).await.unwrap_err();
    let Error::OptionUnsupported(rcp) = &error else {
        panic!("{error:?}");
    };
    assert_eq!(error.code(), "OPTION_UNSUPPORTED");
    assert_eq!(rcp.kind(), Some(RcpErrorCode::OptionUnsupported));
    assert_eq!(
        rcp.message,
        "client advertises 'preflight' with 'maxProposals' 2; the batch has 3 proposals"
    );
    assert_eq!(rcp.data, Some(json!({"option": "maxProposals"})));
    for size in [0, 17] {
        assert_eq!(
            client.preflight_checked(batch(size)).await.unwrap_err(),
            Error::PreflightBatchSize(size)
        );
    }
    assert_eq!(client.preflights(), 0);
    assert_eq!(
        client
            .preflight_checked(batch(2))
            .await
            .unwrap()
            .outcomes
            .len(),
        2
    );
    assert_eq!(client.preflights(), 1);

    // No stated limit, or one above the protocol's: the protocol's bounds still hold.
    for max in [0, 32] {
        let client = TestClient::new(&runtime, Offers::Preflight(max));
        assert_eq!(
            client.preflight_checked(batch(17)).await.unwrap_err(),
            Error::PreflightBatchSize(17)
        );
        assert_eq!(
            client
                .preflight_checked(batch(16))
                .await
                .unwrap()
                .outcomes
                .len(),
            16
        );
        assert_eq!(client.preflights(), 1);
    }
}

/// A client that advertises preflight but keeps the default method: the helper passes the
/// call on, and the client's own `PreflightUnsupported` comes back.
#[tokio::test]
async fn advertising_without_implementing() {
    let runtime = runtime();
    let client = TestClient::new(&runtime, Offers::ClaimOnly);
    assert_eq!(client.surfaces().to_value(), json!({"preflight": {}}));
    assert_eq!(
        client.preflight_checked(batch(1)).await.unwrap_err(),
        Error::PreflightUnsupported
    );
}

/// A typed input that does not serialize reaches the runtime as input that is not JSON: a
/// `blocked` outcome with the reference's message, serialized once, after the gate.
#[tokio::test]
async fn an_unserializable_typed_input_is_blocked() {
    let runtime = runtime();
    let client = runtime.client();
    SERIALIZED.with(|n| n.set(0));
    let report = client
        .preflight_typed::<probe>(&Probe { fail: true })
        .await
        .unwrap();
    assert_eq!(SERIALIZED.with(Cell::get), 1);
    assert_eq!(
        report.outcomes,
        [PreflightOutcome::Blocked {
            capability_id: "notes.probe".into(),
            error: RcipError::new(
                ErrorCode::InputInvalid,
                "The proposed capability input must be a JSON value."
            ),
        }]
    );
    let ready = client
        .preflight_typed::<probe>(&Probe { fail: false })
        .await
        .unwrap();
    assert!(matches!(ready.outcomes[0], PreflightOutcome::Ready { .. }));
}

/// The surfaces follow RCP's presence rules: `null` absent, `false` present, unknown keys kept
/// but never supported, vendor keys kept and queryable, `_meta` side-band.
#[test]
fn surfaces_follow_the_presence_rules() {
    let value = json!({
        "preflight": false,
        "subscribe": {},
        "x-acme": {"streams": 2},
        "x-gone": null,
        "_meta": {"build": 7}
    });
    let surfaces = ClientSurfaces::from_value(value).unwrap();
    assert!(surfaces.supports(Surface::Preflight));
    assert_eq!(surfaces.preflight(), Some(PreflightSurface::default()));
    assert!(surfaces.supports_key("preflight"));
    assert!(
        !surfaces.supports_key("subscribe"),
        "unknown surfaces are ignored"
    );
    assert!(surfaces.supports_key("x-acme"));
    assert!(!surfaces.supports_key("x-gone"));
    assert!(!surfaces.supports_key("_meta"));
    assert_eq!(surfaces.vendor("x-acme"), Some(&json!({"streams": 2})));
    assert_eq!(surfaces.meta(), Some(&json!({"build": 7})));
    let error = surfaces.gate_vendor("x-gone").unwrap_err();
    assert_eq!(
        error.to_string(),
        "[RCP -32003] client does not advertise 'x-gone'"
    );
    assert_eq!(
        surfaces.to_value(),
        json!({"preflight": false, "subscribe": {}, "x-acme": {"streams": 2}, "_meta": {"build": 7}})
    );
    let read: ClientSurfaces = serde_json::from_value(surfaces.to_value()).unwrap();
    assert_eq!(read, surfaces);
    assert_eq!(serde_json::to_value(&read).unwrap(), surfaces.to_value());
    assert_eq!(read.as_presence_map(), surfaces.as_presence_map());

    assert!(
        !ClientSurfaces::from_value(json!({"preflight": null}))
            .unwrap()
            .supports(Surface::Preflight)
    );
    let error = ClientSurfaces::from_value(json!(["preflight"])).unwrap_err();
    assert_eq!(error.kind(), Some(RcpErrorCode::InvalidParams));
    assert!(serde_json::from_value::<ClientSurfaces>(json!("preflight")).is_err());

    let built = ClientSurfaces::new()
        .with_vendor("x-acme", json!({}))
        .with_vendor("preflight", json!({}))
        .with_vendor("x-acme", Value::Null)
        .with_vendor("x-beta", json!(true));
    assert_eq!(built.to_value(), json!({"x-beta": true}));
    assert_eq!(
        PresenceMap::from_value(built.to_value()).unwrap(),
        *built.as_presence_map()
    );
    assert_eq!(Surface::from_key("preflight"), Some(Surface::Preflight));
    assert_eq!(Surface::Preflight.to_string(), "preflight");
}

/// The `preflight` metadata reads leniently and keeps unknown members.
#[test]
fn preflight_metadata() {
    for (value, max) in [
        (json!({"maxProposals": 16}), Some(16)),
        (json!({"maxProposals": 16.0}), Some(16)),
        (json!({"maxProposals": 16.5}), None),
        (json!({"maxProposals": 0}), None),
        (json!({"maxProposals": "16"}), None),
        (json!({"maxProposals": -1}), None),
        (json!({}), None),
        (json!(true), None),
    ] {
        let surface = PreflightSurface::from_value(&value);
        assert_eq!(surface.max_proposals.map(|n| n.get()), max, "{value}");
    }
    let surface = PreflightSurface::from_value(&json!({"maxProposals": 4, "x-acme-batches": 2}));
    assert_eq!(
        surface.to_value(),
        json!({"maxProposals": 4, "x-acme-batches": 2})
    );
    assert_eq!(PreflightSurface::new(0).to_value(), json!({}));
}

/// The new error variants have stable codes and carry the RCP error.
#[test]
fn error_codes() {
    let missing = ClientSurfaces::new().gate(Surface::Preflight).unwrap_err();
    assert_preflight_missing(&missing);
}
