//! The gated RCP client: every operation checks the advertisement first; when the key is
//! absent, no params are built and the transport is never called (counted on a fake
//! transport).
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;

use rcip_rcp::*;
use serde_json::{Map, Value, json};

/// Records every request and answers from a script (or `{}`).
#[derive(Debug, Default)]
struct FakeTransport {
    sent: Vec<(String, Map<String, Value>)>,
    replies: VecDeque<Result<Value, RcpError>>,
}

impl FakeTransport {
    fn answering(initialize: Value) -> Self {
        FakeTransport {
            sent: Vec::new(),
            replies: VecDeque::from([Ok(initialize)]),
        }
    }

    fn methods(&self) -> Vec<&str> {
        self.sent.iter().map(|(m, _)| m.as_str()).collect()
    }
}

impl RcpTransport for FakeTransport {
    fn request(&mut self, request: GatedRequest) -> Result<Value, RcpError> {
        self.sent
            .push((request.method().to_owned(), request.params().clone()));
        self.replies.pop_front().unwrap_or(Ok(json!({})))
    }
}

fn initialize_result(capabilities: Value) -> Value {
    json!({"protocolVersion": 1, "server": {"name": "fake", "version": "0"}, "capabilities": capabilities})
}

/// Connects to a server whose `initialize` answers `result`.
fn connect(result: Value) -> Result<RcpClient<FakeTransport>, RcpError> {
    RcpClient::connect(
        FakeTransport::answering(result),
        PeerInfo::new("test", "1"),
        Capabilities::new(),
    )
}

fn client(capabilities: Value) -> RcpClient<FakeTransport> {
    connect(initialize_result(capabilities)).unwrap()
}

fn params() -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("query".into(), json!("q"));
    params
}

type Operation = fn(&mut RcpClient<FakeTransport>, Map<String, Value>) -> Result<Value, RcpError>;

/// Every named operation, its method and the key it needs.
const OPERATIONS: [(Operation, &str, &str); 13] = [
    (RcpClient::embed, "embed", "embed"),
    (RcpClient::embed_sparse, "embed/sparse", "sparseEmbed"),
    (RcpClient::embed_multi, "embed/multi", "multiVector"),
    (RcpClient::rerank, "rerank", "rerank"),
    (RcpClient::retrieve, "retrieve", "retrieve"),
    (RcpClient::transform, "query/transform", "transform"),
    (RcpClient::graph, "graph", "graph"),
    (RcpClient::index_add, "index/add", "index"),
    (RcpClient::index_delete, "index/delete", "index"),
    (RcpClient::catalog_list, "catalog/list", "catalog"),
    (RcpClient::feedback, "feedback", "feedback"),
    (RcpClient::memory_build, "memory/build", "memory"),
    (RcpClient::memory_recall, "memory/recall", "memory"),
];

/// The handshake: one `initialize` request with version 1, the client and its hints; the
/// session keeps the server's answer.
#[test]
fn connect_sends_initialize() {
    let mut hints = Capabilities::new();
    hints.streaming = Some(MarkerCapability::default());
    let client = RcpClient::connect(
        FakeTransport::answering(json!({
            "protocolVersion": 1,
            "server": {"name": "engine"},
            "capabilities": {"retrieve": {"maxK": 10}},
            "_meta": {"conformance": "L0"},
            "futureMember": true
        })),
        PeerInfo::new("my-app", "2.0"),
        hints,
    )
    .unwrap();
    let sent = &client.transport().sent;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, "initialize");
    assert_eq!(
        Value::Object(sent[0].1.clone()),
        json!({
            "protocolVersion": 1,
            "client": {"name": "my-app", "version": "2.0"},
            "capabilities": {"streaming": {}}
        })
    );
    let session = client.session();
    assert_eq!(session.protocol_version, 1);
    assert_eq!(session.server.name, "engine");
    assert_eq!(session.server.version, None);
    assert_eq!(session.meta, Some(json!({"conformance": "L0"})));
    assert!(client.supports(Capability::Retrieve));
    assert!(!client.supports(Capability::Embed));
}

/// A server that negotiates a higher version is held to ours; below 1 is `VersionMismatch`;
/// a malformed result is `InvalidParams` with the reason in `data.detail`; a transport error
/// comes back unchanged.
#[test]
fn connect_failures() {
    let higher =
        connect(json!({"protocolVersion": 7, "server": {"name": "s"}, "capabilities": {}}))
            .unwrap();
    assert_eq!(higher.session().protocol_version, PROTOCOL_VERSION);

    let error = connect(json!({"protocolVersion": 0, "server": {"name": "s"}, "capabilities": {}}))
        .unwrap_err();
    assert_eq!(error.kind(), Some(RcpErrorCode::VersionMismatch));
    assert_eq!(error.message, "server offered no usable protocol version");

    for malformed in [
        json!({"server": {"name": "s"}, "capabilities": {}}),
        json!({"protocolVersion": 1, "capabilities": {}}),
        json!({"protocolVersion": 1, "server": {"name": "s"}, "capabilities": []}),
        json!({"protocolVersion": "1", "server": {"name": "s"}, "capabilities": {}}),
        json!({"protocolVersion": -1, "server": {"name": "s"}, "capabilities": {}}),
        json!(null),
    ] {
        let error = connect(malformed.clone()).unwrap_err();
        assert_eq!(
            error.kind(),
            Some(RcpErrorCode::InvalidParams),
            "{malformed}"
        );
        assert_eq!(error.message, "the initialize result is malformed");
        assert!(error.data.unwrap()["detail"].is_string());
    }

    let mut transport = FakeTransport::default();
    transport.replies.push_back(Err(RcpError::new(
        RcpErrorCode::VersionMismatch,
        "no common version",
    )));
    let error =
        RcpClient::connect(transport, PeerInfo::new("c", "1"), Capabilities::new()).unwrap_err();
    assert_eq!(error.message, "no common version");
}

/// With nothing advertised, every gated operation fails with -32003 naming its key, and
/// neither builds params nor reaches the transport.
#[test]
fn absent_key_means_no_work_and_no_io() {
    let mut client = client(json!({}));
    assert_eq!(client.transport().sent.len(), 1);
    for (operation, method, key) in OPERATIONS {
        let error = operation(&mut client, params()).unwrap_err();
        assert_eq!(error.code, -32003, "{method}");
        assert_eq!(error.message, format!("server does not advertise '{key}'"));
    }
    for method in Method::ALL.into_iter().filter(|m| m.capability().is_some()) {
        let mut built = 0;
        let error = client
            .call_with(method, || {
                built += 1;
                params()
            })
            .unwrap_err();
        assert_eq!(
            error.kind(),
            Some(RcpErrorCode::CapabilityMissing),
            "{method}"
        );
        assert_eq!(built, 0, "{method}: params were built");
    }
    let error = client.call_vendor("x-acme/search", params()).unwrap_err();
    assert_eq!(error.message, "server does not advertise 'x-acme'");
    assert_eq!(
        client.transport().methods(),
        ["initialize"],
        "a gated call reached I/O"
    );
}

/// With a key advertised, its operations send exactly one request with the method and params
/// given, and return the server's result or error unchanged.
#[test]
fn present_key_sends_one_request() {
    for (operation, method, key) in OPERATIONS {
        let mut client = client(json!({ key: {"writable": true} }));
        client
            .transport_mut()
            .replies
            .push_back(Ok(json!({"answer": method})));
        let result = operation(&mut client, params()).unwrap();
        assert_eq!(result, json!({"answer": method}));
        let sent = &client.transport().sent;
        assert_eq!(sent.len(), 2, "{method}");
        assert_eq!(sent[1].0, method);
        assert_eq!(sent[1].1, params());

        // Other keys stay closed.
        for (other, other_method, other_key) in OPERATIONS {
            if other_key != key {
                assert!(other(&mut client, params()).is_err(), "{other_method}");
            }
        }
        assert_eq!(client.transport().sent.len(), 2, "{method}");
    }

    let mut client = client(json!({"retrieve": {}}));
    let server_error =
        RcpError::new(RcpErrorCode::RateLimited, "busy").with_data(json!({"retryAfterMs": 10}));
    client
        .transport_mut()
        .replies
        .push_back(Err(server_error.clone()));
    assert_eq!(client.retrieve(params()), Err(server_error));
}

/// `index/add` needs `writable: true`: a read-only index refuses it without I/O, and still
/// allows `index/delete`.
#[test]
fn index_add_needs_writable() {
    let mut client = client(json!({"index": {"writable": false}}));
    let error = client.index_add(params()).unwrap_err();
    assert_eq!(error.code, -32003);
    assert_eq!(
        error.message,
        "server does not advertise 'index' with 'writable: true'"
    );
    assert_eq!(client.transport().methods(), ["initialize"]);
    client.index_delete(params()).unwrap();
    assert_eq!(client.transport().methods(), ["initialize", "index/delete"]);
}

/// Vendor methods gate on their vendor key; names that are not vendor methods are
/// `UnknownMethod` without I/O.
#[test]
fn vendor_methods() {
    let mut client = client(json!({"x-acme": {"v": 1}, "x-other": null}));
    client.call_vendor("x-acme/search", params()).unwrap();
    for (name, code) in [
        ("x-other/search", -32003),
        ("x-acme-labs/run", -32003),
        ("x-acme", -32004),
        ("x-acme/", -32004),
        ("retrieve", -32004),
        ("X-acme/search", -32004),
    ] {
        assert_eq!(
            client.call_vendor(name, params()).unwrap_err().code,
            code,
            "{name}"
        );
    }
    assert_eq!(
        client.transport().methods(),
        ["initialize", "x-acme/search"]
    );
}

/// `info`, `ping` and `shutdown` are never gated; `info` does not change the session's
/// capabilities (frozen for the session); a second `initialize` is refused without I/O.
#[test]
fn lifecycle_methods() {
    let mut client = client(json!({}));
    client.transport_mut().replies.extend([
        Ok(initialize_result(json!({"retrieve": {}}))),
        Ok(json!({"nonce": 7})),
        Ok(json!({})),
    ]);
    let info = client.info().unwrap();
    assert!(info.capabilities.supports(Capability::Retrieve));
    assert!(!client.supports(Capability::Retrieve));
    let mut ping = Map::new();
    ping.insert("nonce".into(), json!(7));
    assert_eq!(client.ping(ping).unwrap(), json!({"nonce": 7}));
    client.shutdown().unwrap();
    let error = client.call(Method::Initialize, Map::new()).unwrap_err();
    assert_eq!(error.kind(), Some(RcpErrorCode::InvalidRequest));
    assert_eq!(error.message, "the session is already initialized");
    assert_eq!(
        client.transport().methods(),
        ["initialize", "info", "ping", "shutdown"]
    );
}

/// A client built from an existing session gates on that session; the transport can be
/// taken back; the request frame is JSON-RPC 2.0.
#[test]
fn with_session_and_frames() {
    let session: InitializeResult = serde_json::from_value(initialize_result(
        json!({"embed": {"dimension": 3, "identity": "e"}}),
    ))
    .unwrap();
    let mut client = RcpClient::with_session(FakeTransport::default(), session);
    assert!(client.rerank(params()).is_err());
    client.embed(params()).unwrap();
    assert_eq!(
        client.capabilities().advertised().collect::<Vec<_>>(),
        [Capability::Embed]
    );

    /// Keeps the frame of the one request it is sent.
    #[derive(Default)]
    struct Framing(Option<Value>);
    impl RcpTransport for Framing {
        fn request(&mut self, request: GatedRequest) -> Result<Value, RcpError> {
            self.0 = Some(request.to_frame(json!("id-1")));
            Ok(json!({}))
        }
    }
    let mut framing = Framing::default();
    let session: InitializeResult =
        serde_json::from_value(initialize_result(json!({"retrieve": {}}))).unwrap();
    let mut client = RcpClient::with_session(&mut framing, session);
    client.retrieve(params()).unwrap();
    drop(client);
    assert_eq!(
        framing.0,
        Some(
            json!({"jsonrpc": "2.0", "id": "id-1", "method": "retrieve", "params": {"query": "q"}})
        )
    );

    let transport = RcpClient::with_session(
        Box::new(FakeTransport::default()) as Box<FakeTransport>,
        serde_json::from_value(initialize_result(json!({}))).unwrap(),
    )
    .into_transport();
    assert!(transport.sent.is_empty());
}
