//! Differential tests against the public `rcp-protocol` crate (1.0.1, imported as `rcp`):
//! on a corpus of advertisements, rcip's `supports` agrees with the crate's client wherever
//! the crate can express the key, gate errors are the same code and text, method gating and
//! error codes agree, and what the crate's server advertises reads back unchanged.
//!
//! Where rcip deliberately differs, the difference is asserted here as such (and documented in
//! `docs/beyond-the-reference.md`):
//! - vendor keys: the crate's `supports` takes only its 17-variant enum, so a vendor key can
//!   only be read from the raw `capabilities()`; rcip's `supports_vendor` agrees with that
//!   raw presence;
//! - unknown keys: present in the crate's raw object, never supported by rcip;
//! - `index/add`: the crate gates it on `index` alone, rcip also on `writable: true`.
//!
//! The crate's client only connects to a process (or over HTTP), so each case runs a tiny
//! `sh` script that answers `initialize` (and any further requests) with canned lines: no
//! network.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod rcp_corpus;

use rcip_rcp::{Capabilities, Capability, KeyKind, Method, RcpError, RcpErrorCode};
use rcp_corpus::{CORE_KEYS, corpus, full_metadata};
use serde_json::{Map, Value, json};

fn to_rcp(value: &Value) -> rcp::Json {
    rcp::Json::parse(&value.to_string()).unwrap()
}

fn from_rcp(json: &rcp::Json) -> Value {
    serde_json::from_str(&json.dump()).unwrap()
}

/// A connected `rcp::Client` whose server answers `initialize` with `capabilities`, then the
/// next requests with `replies` in order, then closes.
fn rcp_client(capabilities: &Value, replies: &[Value]) -> rcp::Client {
    rcp_client_raw(&capabilities.to_string(), replies)
}

/// As [`rcp_client`], with the capabilities as JSON text (which may say what a `Value` cannot,
/// such as a key twice).
fn rcp_client_raw(capabilities: &str, replies: &[Value]) -> rcp::Client {
    let mut argv = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        r#"for reply in "$@"; do IFS= read -r _ || exit 0; printf '%s\n' "$reply"; done"#
            .to_owned(),
        "canned-rcp-server".to_owned(),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":1,"server":{{"name":"canned"}},"capabilities":{capabilities}}}}}"#
        ),
    ];
    for (i, result) in replies.iter().enumerate() {
        argv.push(json!({"jsonrpc": "2.0", "id": i + 2, "result": result}).to_string());
    }
    rcp::connect_stdio(&argv).unwrap()
}

/// The crate's enum variant for one of rcip's capabilities (by wire key).
fn rcp_capability(capability: Capability) -> rcp::Capability {
    rcp::Capability::ALL
        .into_iter()
        .find(|c| c.wire_key() == capability.wire_key())
        .unwrap()
}

/// What the crate's users can see of a raw key: present and not null.
fn rcp_raw_presence(client: &rcp::Client, key: &str) -> bool {
    client.capabilities().get(key).is_some_and(|v| !v.is_null())
}

/// Both libraries know the same 17 keys, in the same order.
#[test]
fn the_same_seventeen_keys() {
    let theirs: Vec<&str> = rcp::Capability::ALL.iter().map(|c| c.wire_key()).collect();
    let ours: Vec<&str> = Capability::ALL.iter().map(|c| c.wire_key()).collect();
    assert_eq!(ours, theirs);
    assert_eq!(ours, CORE_KEYS);
    // The crate's `supports` cannot name a vendor key: every key it can express is core.
    assert!(theirs.iter().all(|k| !k.starts_with("x-")));
}

/// On every advertisement of the corpus: core keys agree with the crate's
/// `Client::supports`, vendor keys with the crate's raw presence, unknown keys are present to
/// the crate and never supported by rcip; after rcip's round trip the crate still sees the
/// same.
#[test]
fn supports_agrees_on_the_corpus() {
    let cases = corpus();
    assert!(cases.len() > 120, "{}", cases.len());
    let mut vendor_checks = 0;
    let mut unknown_checks = 0;
    for case in cases {
        let ours = Capabilities::from_value(case.value.clone()).unwrap();
        // Second request (`info`) answers with what rcip writes back.
        let written = ours.to_value();
        let info =
            json!({"protocolVersion": 1, "server": {"name": "canned"}, "capabilities": written});
        let mut client = rcp_client(&case.value, &[info]);

        for capability in Capability::ALL {
            assert_eq!(
                ours.supports(capability),
                client.supports(rcp_capability(capability)),
                "{}: {capability}",
                case.name
            );
            assert_eq!(
                ours.supports_key(capability.wire_key()),
                ours.supports(capability)
            );
        }
        for key in case.value.as_object().unwrap().keys() {
            match KeyKind::of(key) {
                KeyKind::Vendor => {
                    vendor_checks += 1;
                    assert_eq!(
                        ours.supports_vendor(key),
                        rcp_raw_presence(&client, key),
                        "{}: {key}",
                        case.name
                    );
                    assert_eq!(ours.supports_key(key), ours.supports_vendor(key));
                }
                KeyKind::Unknown => {
                    unknown_checks += 1;
                    assert!(!ours.supports_key(key), "{}: {key}", case.name);
                    assert!(!ours.supports_vendor(key), "{}: {key}", case.name);
                    // Documented difference: the crate's raw object still has it.
                    assert_eq!(
                        rcp_raw_presence(&client, key),
                        !case.value[key].is_null(),
                        "{}: {key}",
                        case.name
                    );
                }
                KeyKind::Meta => assert!(!ours.supports_key(key)),
                KeyKind::Core(_) => {}
            }
        }

        // The crate reads rcip's output as it read the original.
        client.info().unwrap();
        for capability in Capability::ALL {
            assert_eq!(
                ours.supports(capability),
                client.supports(rcp_capability(capability)),
                "{} (after rcip's round trip): {capability}",
                case.name
            );
        }
        for key in ours.vendor_keys() {
            assert!(rcp_raw_presence(&client, key), "{}: {key}", case.name);
        }
        client.shutdown();
    }
    assert!(vendor_checks >= 8, "{vendor_checks}");
    assert!(unknown_checks >= 8, "{unknown_checks}");
}

/// Documented difference: a key given twice. `serde_json` keeps the last value, the crate's
/// parser the first.
#[test]
fn duplicate_keys_differ() {
    let text = r#"{"retrieve":null,"retrieve":{},"rerank":{},"rerank":null}"#;
    let client = rcp_client_raw(text, &[]);
    let ours = Capabilities::from_value(serde_json::from_str(text).unwrap()).unwrap();
    assert!(ours.supports(Capability::Retrieve));
    assert!(!client.supports(rcp::Capability::Retrieve));
    assert!(!ours.supports(Capability::Rerank));
    assert!(client.supports(rcp::Capability::Rerank));
}

/// A client connected to a server that advertises nothing: every typed call of the crate
/// fails with -32003 and the same message (and display) as rcip's gate for that method,
/// before any request (the canned server would have closed on one: a different code).
#[test]
fn gate_errors_agree() {
    let caps = Capabilities::new();
    let mut client = rcp_client(&json!({}), &[]);
    let theirs: Vec<(Method, rcp::RcpError)> = vec![
        (Method::Embed, client.embed(&["a"], None).unwrap_err()),
        (
            Method::EmbedSparse,
            client.embed_sparse(&["a"]).unwrap_err(),
        ),
        (Method::EmbedMulti, client.embed_multi(vec![]).unwrap_err()),
        (Method::Rerank, client.rerank("q", &["p"]).unwrap_err()),
        (Method::Retrieve, client.retrieve("q", 1).unwrap_err()),
        (
            Method::Transform,
            client.transform("q", "hyde").unwrap_err(),
        ),
        (Method::Graph, client.graph("local", None).unwrap_err()),
        (
            Method::IndexAdd,
            client.index_add(rcp::Json::object()).unwrap_err(),
        ),
        (
            Method::IndexDelete,
            client.index_delete(rcp::Json::object()).unwrap_err(),
        ),
        (Method::CatalogList, client.catalog().unwrap_err()),
        (Method::Feedback, client.feedback(vec![], None).unwrap_err()),
        (Method::MemoryBuild, client.memory_build(None).unwrap_err()),
        (
            Method::MemoryRecall,
            client.memory_recall("q", None).unwrap_err(),
        ),
    ];
    for (method, their_error) in theirs {
        let our_error = caps.gate_method(method).unwrap_err();
        assert_eq!(our_error.code, their_error.code, "{method}");
        assert_eq!(our_error.message, their_error.message, "{method}");
        assert_eq!(our_error.to_string(), their_error.to_string(), "{method}");
        assert!(
            our_error
                .message
                .contains(method.capability().unwrap().wire_key())
        );
    }
    // Still connected and never written to: the first real request gets the (absent)
    // second reply, so the server has closed.
    assert_ne!(client.ping(None).unwrap_err().code, -32003);
}

/// Digest B.11 case 15: a server without `rerank`; `rerank(...)` fails with -32003, the text
/// names `rerank`. Then, with `rerank` advertised, the same call goes out.
#[test]
fn interop_case_fifteen() {
    let mut client = rcp_client(
        &json!({"retrieve": {"maxK": 100}}),
        &[json!({"scores": [0.5]})],
    );
    let error = client.rerank("q", &["p"]).unwrap_err();
    assert_eq!(error.code, -32003);
    assert!(error.to_string().contains("rerank"));
    let ours = Capabilities::from_value(json!({"retrieve": {"maxK": 100}})).unwrap();
    assert_eq!(
        ours.gate(Capability::Rerank).unwrap_err().to_string(),
        error.to_string()
    );

    let mut client = rcp_client(&json!({"rerank": {}}), &[json!({"scores": [0.5]})]);
    assert_eq!(client.rerank("q", &["p"]).unwrap(), [0.5]);
}

/// Documented difference: with `index` advertised but not writable, the crate sends
/// `index/add` (the canned server answers it), rcip refuses it at the gate.
#[test]
fn index_add_needs_writable_in_rcip_only() {
    for index in [
        json!({"writable": false}),
        json!({}),
        json!({"writable": "yes"}),
    ] {
        let advertised = json!({ "index": index });
        let mut client = rcp_client(&advertised, &[json!({"ids": []})]);
        assert_eq!(
            from_rcp(&client.index_add(rcp::Json::object()).unwrap()),
            json!({"ids": []})
        );

        let ours = Capabilities::from_value(advertised).unwrap();
        assert!(ours.supports(Capability::Index));
        assert!(ours.gate_method(Method::IndexDelete).is_ok());
        let error = ours.gate_method(Method::IndexAdd).unwrap_err();
        assert_eq!(error.kind(), Some(RcpErrorCode::CapabilityMissing));
        assert_eq!(
            error.message,
            "server does not advertise 'index' with 'writable: true'"
        );
    }
    let ours = Capabilities::from_value(json!({"index": {"writable": true}})).unwrap();
    assert!(ours.gate_method(Method::IndexAdd).is_ok());
}

/// Which capability gates which method: the crate's `cap_for_method` and rcip's `Method`
/// agree on every name the crate knows, and on vendor and unknown names (no core capability).
#[test]
fn method_gating_agrees() {
    let names = [
        rcp::Method::INITIALIZE,
        rcp::Method::INFO,
        rcp::Method::EMBED,
        rcp::Method::EMBED_SPARSE,
        rcp::Method::EMBED_MULTI,
        rcp::Method::RERANK,
        rcp::Method::RETRIEVE,
        rcp::Method::TRANSFORM,
        rcp::Method::GRAPH,
        rcp::Method::INDEX_ADD,
        rcp::Method::INDEX_DELETE,
        rcp::Method::FEEDBACK,
        rcp::Method::MEMORY_BUILD,
        rcp::Method::MEMORY_RECALL,
        rcp::Method::CATALOG_LIST,
        rcp::Method::PING,
        rcp::Method::SHUTDOWN,
    ];
    for name in names {
        let ours = name.parse::<Method>().unwrap();
        assert_eq!(ours.name(), name);
        let theirs = rcp::cap_for_method(name).map(|c| c.wire_key());
        assert_eq!(
            ours.capability().map(Capability::wire_key),
            theirs,
            "{name}"
        );
    }
    assert_eq!(names.len(), Method::ALL.len());
    for name in [
        rcp::Method::CANCEL,
        rcp::Method::PROGRESS,
        rcp::Method::LOG,
        "x-acme/search",
        "no/such",
    ] {
        assert!(rcp::cap_for_method(name).is_none());
        let error = name.parse::<Method>().unwrap_err();
        assert_eq!(error.kind(), Some(RcpErrorCode::UnknownMethod));
    }
}

/// The crate's server dispatch (`Server::handle`) gates as rcip's `gate_method` does, for
/// every gated method and every corpus advertisement of core keys, except `index/add` on a
/// non-writable `index` (documented difference).
#[test]
fn server_dispatch_gating_agrees() {
    let mut compared = 0;
    for case in corpus() {
        let ours = Capabilities::from_value(case.value.clone()).unwrap();
        let mut server = rcp::Server::new();
        for (key, value) in case.value.as_object().unwrap() {
            if let Some(capability) = rcp::Capability::ALL
                .into_iter()
                .find(|c| c.wire_key() == key)
            {
                server.advertise(capability, to_rcp(value));
            }
        }
        for method in Method::ALL.into_iter().filter(|m| m.capability().is_some()) {
            server.on(method.name(), |_| Ok(rcp::Json::object()));
        }
        let init = to_rcp(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}),
        );
        assert!(server.handle(&init).unwrap().get("result").is_some());

        for method in Method::ALL.into_iter().filter(|m| m.capability().is_some()) {
            let request =
                to_rcp(&json!({"jsonrpc": "2.0", "id": 1, "method": method.name(), "params": {}}));
            let reply = from_rcp(&server.handle(&request).unwrap());
            let theirs_gated = reply["error"]["code"] == json!(-32003);
            let ours_gated = ours.gate_method(method).is_err();
            if method == Method::IndexAdd
                && ours.supports(Capability::Index)
                && !ours.index.as_ref().unwrap().is_writable()
            {
                assert!(ours_gated && !theirs_gated, "{}", case.name);
            } else {
                assert_eq!(
                    ours_gated, theirs_gated,
                    "{}: {method} -> {reply}",
                    case.name
                );
            }
            compared += 1;
        }
    }
    assert!(compared > 1000, "{compared}");
}

/// What the crate's server advertises (every key with full metadata, and every key alone
/// with `{}`) reads into rcip's typed model and writes back unchanged.
#[test]
fn sdk_server_advertisements_read_back() {
    let mut everything = rcp::Server::new();
    everything.set_info("engine", "1.0");
    for capability in rcp::Capability::ALL {
        everything.advertise(capability, to_rcp(&full_metadata(capability.wire_key())));
        let mut alone = rcp::Server::new();
        alone.advertise(capability, rcp::Json::object());
        let result = initialize(&mut alone);
        let ours: rcip_rcp::InitializeResult = serde_json::from_value(result.clone()).unwrap();
        assert_eq!(ours.capabilities.advertised().count(), 1);
        assert!(ours.capabilities.supports_key(capability.wire_key()));
        assert_eq!(ours.capabilities.to_value(), result["capabilities"]);
    }
    let result = initialize(&mut everything);
    let (ours, problems) = Capabilities::decode(result["capabilities"].clone()).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(ours.advertised().count(), 17);
    assert_eq!(ours.to_value(), result["capabilities"]);
    let session: rcip_rcp::InitializeResult = serde_json::from_value(result.clone()).unwrap();
    assert_eq!(session.server.name, "engine");
    assert_eq!(serde_json::to_value(&session).unwrap(), result);
}

fn initialize(server: &mut rcp::Server) -> Value {
    let request = to_rcp(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
    );
    from_rcp(&server.handle(&request).unwrap())["result"].clone()
}

/// The 18 codes: the crate's `Errc` constants are rcip's codes; `retryable()` and
/// `retry_after_ms()` agree for every code, unknown codes, and `data` overrides.
#[test]
fn error_codes_agree() {
    let theirs = [
        (rcp::Errc::PARSE_ERROR, "ParseError"),
        (rcp::Errc::INVALID_REQUEST, "InvalidRequest"),
        (rcp::Errc::METHOD_NOT_FOUND, "MethodNotFound"),
        (rcp::Errc::INVALID_PARAMS, "InvalidParams"),
        (rcp::Errc::INTERNAL_ERROR, "InternalError"),
        (rcp::Errc::NOT_INITIALIZED, "NotInitialized"),
        (rcp::Errc::VERSION_MISMATCH, "VersionMismatch"),
        (rcp::Errc::CAPABILITY_MISSING, "CapabilityMissing"),
        (rcp::Errc::UNKNOWN_METHOD, "UnknownMethod"),
        (rcp::Errc::OPTION_UNSUPPORTED, "OptionUnsupported"),
        (rcp::Errc::CANCELLED, "Cancelled"),
        (rcp::Errc::BACKEND_UNAVAILABLE, "BackendUnavailable"),
        (rcp::Errc::RATE_LIMITED, "RateLimited"),
        (rcp::Errc::UNAUTHORIZED, "Unauthorized"),
        (rcp::Errc::PAYLOAD_TOO_LARGE, "PayloadTooLarge"),
        (rcp::Errc::TIMEOUT, "Timeout"),
        (rcp::Errc::NOT_FOUND, "NotFound"),
        (rcp::Errc::CONFLICT, "Conflict"),
    ];
    for (code, name) in theirs {
        let ours = RcpErrorCode::from_name(name).unwrap();
        assert_eq!(ours.code(), code, "{name}");
        assert_eq!(RcpErrorCode::from_code(code), Some(ours));
    }
    assert_eq!(theirs.len(), RcpErrorCode::ALL.len());

    let datas = [
        None,
        Some(json!({})),
        Some(json!({"retryable": true})),
        Some(json!({"retryable": false, "retryAfterMs": 250})),
        Some(json!({"retryable": "yes", "retryAfterMs": "soon"})),
        Some(json!({"retryAfterMs": 0})),
    ];
    let codes = theirs.iter().map(|(c, _)| *c).chain([-32000, -32099, 0, 1]);
    for code in codes {
        for data in &datas {
            let ours = RcpError::with_raw_code(code, "m");
            let ours = match data {
                Some(d) => ours.with_data(d.clone()),
                None => ours,
            };
            let theirs = match data {
                Some(d) => rcp::RcpError::with_data(code, "m", to_rcp(d)),
                None => rcp::RcpError::new(code, "m"),
            };
            assert_eq!(ours.retryable(), theirs.retryable(), "{code} {data:?}");
            assert_eq!(
                ours.retry_after_ms()
                    .map_or(-1, |ms| i64::try_from(ms).unwrap()),
                theirs.retry_after_ms(),
                "{code} {data:?}"
            );
            assert_eq!(ours.to_string(), theirs.to_string());
        }
    }
}

/// The crate's client sends `initialize` with params rcip's `InitializeResult`-side types read
/// (a sanity check of the shared handshake shape), and the `initialize` params rcip's client
/// sends are ones the crate's server accepts.
#[test]
fn handshake_shapes_agree() {
    use rcip_rcp::{GatedRequest, PeerInfo, RcpClient, RcpTransport};

    /// Forwards to the crate's server in process.
    struct ToSdkServer(rcp::Server, i64);
    impl RcpTransport for ToSdkServer {
        fn request(&mut self, request: GatedRequest) -> Result<Value, RcpError> {
            self.1 += 1;
            let reply = self
                .0
                .handle(&to_rcp(&request.to_frame(json!(self.1))))
                .unwrap();
            let reply = from_rcp(&reply);
            match reply.get("error") {
                Some(error) => Err(serde_json::from_value(error.clone()).unwrap()),
                None => Ok(reply["result"].clone()),
            }
        }
    }

    let mut server = rcp::Server::new();
    server.set_info("sdk-server", "1.0.1");
    server.advertise(rcp::Capability::Retrieve, to_rcp(&json!({"maxK": 100})));
    server.on(rcp::Method::RETRIEVE, |params| {
        let query = params.get_str("query").unwrap_or("").to_owned();
        Ok(rcp::obj(&[(
            "hits",
            vec![rcp::obj(&[
                ("id", "d1".into()),
                ("score", 0.9.into()),
                ("text", query.into()),
            ])]
            .into(),
        )]))
    });
    let mut client = RcpClient::connect(
        ToSdkServer(server, 0),
        PeerInfo::new("rcip-test", "0"),
        Capabilities::new(),
    )
    .unwrap();
    assert_eq!(client.session().server.name, "sdk-server");
    assert!(client.supports(Capability::Retrieve));

    let mut params = Map::new();
    params.insert("query".into(), json!("hello"));
    params.insert("k".into(), json!(1));
    let result = client.retrieve(params).unwrap();
    assert_eq!(result["hits"][0]["text"], "hello");

    // Gated by rcip before the SDK server could answer its own -32003.
    let error = client.embed(Map::new()).unwrap_err();
    assert_eq!(error.message, "server does not advertise 'embed'");
    assert_eq!(client.transport().1, 2);
    // The SDK server rejects a second initialize (-32600); rcip does not send one.
    let error = client.call(Method::Initialize, Map::new()).unwrap_err();
    assert_eq!(error.kind(), Some(RcpErrorCode::InvalidRequest));
    assert_eq!(client.transport().1, 2);
    // `info` is always allowed; the SDK server answers with the same capabilities.
    let info = client.info().unwrap();
    assert_eq!(&info.capabilities, client.capabilities());
}
