//! The RCP capability model: presence means supported, `null` is absent, unknown keys and
//! members are kept and ignored, vendor keys are kept and queryable, `_meta` is side-band,
//! gates fail with `CapabilityMissing` naming the key; the error-code table of spec §12.
#![allow(clippy::unwrap_used)]

use std::num::NonZeroU64;

use rcip_rcp::*;
use serde_json::{Value, json};

#[allow(dead_code)] // the corpus itself is for the schema and differential tests
mod rcp_corpus;
use rcp_corpus::CORE_KEYS as KEYS;

fn caps(value: Value) -> Capabilities {
    Capabilities::from_value(value).unwrap()
}

fn missing(key: &str) -> RcpError {
    RcpError::with_raw_code(-32003, format!("server does not advertise '{key}'"))
}

/// Each key alone, with `{}`: that key and no other is supported, gated open, and listed.
#[test]
fn each_key_alone_is_the_only_one_supported() {
    let wire: Vec<&str> = Capability::ALL.iter().map(|c| c.wire_key()).collect();
    assert_eq!(wire, KEYS);
    for capability in Capability::ALL {
        let caps = caps(json!({ capability.wire_key(): {} }));
        for other in Capability::ALL {
            assert_eq!(
                caps.supports(other),
                other == capability,
                "{capability} / {other}"
            );
            assert_eq!(caps.supports_key(other.wire_key()), other == capability);
            if other == capability {
                assert_eq!(caps.gate(other), Ok(()));
            } else {
                assert_eq!(caps.gate(other), Err(missing(other.wire_key())));
            }
        }
        assert_eq!(caps.advertised().collect::<Vec<_>>(), [capability]);
        assert_eq!(caps.to_value(), json!({ capability.wire_key(): {} }));
    }
}

/// `null` counts as absent, for every key and for vendor keys; it is not written back.
#[test]
fn null_is_absent() {
    for key in KEYS {
        let caps = caps(json!({ key: null, "x-acme": null, "frobnicate": null }));
        assert!(!caps.supports_key(key), "{key}");
        assert!(!caps.supports_vendor("x-acme"));
        assert_eq!(caps.advertised().count(), 0);
        assert_eq!(caps.to_value(), json!({}));
        assert_eq!(caps, Capabilities::new());
    }
}

/// `false` is a value, and a value means present: every key with `false` is supported (as
/// in every reference SDK). `citations: false` is valid and written back as is; for the other
/// keys `false` is a misfit value (reported), written back as `{}` so the presence survives.
#[test]
fn false_is_present() {
    for capability in Capability::ALL {
        let key = capability.wire_key();
        let (caps, problems) = Capabilities::decode(json!({ key: false })).unwrap();
        assert!(caps.supports(capability), "{key}");
        assert_eq!(caps.gate(capability), Ok(()));
        if capability == Capability::Citations {
            assert!(problems.is_empty());
            assert_eq!(caps.citations, Some(CitationsCapability::Flag(false)));
            assert_eq!(caps.to_value(), json!({"citations": false}));
        } else {
            assert_eq!(problems.len(), 1, "{key}");
            assert_eq!(problems[0].pointer, format!("/{key}"));
            assert_eq!(problems[0].expected, "an object");
            assert_eq!(problems[0].value, json!(false));
            assert_eq!(caps.to_value(), json!({ key: {} }));
        }
    }
    let caps = caps(json!({"x-acme": false}));
    assert!(caps.supports_vendor("x-acme"));
    assert_eq!(caps.vendor("x-acme"), Some(&json!(false)));
}

/// Unknown keys are kept for the round trip, listed by `unknown()`, and never supported.
#[test]
fn unknown_keys_are_kept_and_ignored() {
    let value = json!({
        "frobnicate": {"a": 1},
        "Retrieve": {},
        "x-": true,
        "x-Acme": {},
        "retrieve": {"maxK": 3}
    });
    let caps = caps(value.clone());
    assert_eq!(caps.to_value(), value);
    let mut unknown: Vec<&str> = caps.unknown().map(|(k, _)| k).collect();
    unknown.sort_unstable();
    assert_eq!(unknown, ["Retrieve", "frobnicate", "x-", "x-Acme"]);
    for key in unknown {
        assert!(!caps.supports_key(key), "{key}");
        assert!(!caps.supports_vendor(key), "{key}");
        assert_eq!(caps.vendor(key), None);
        assert_eq!(caps.gate_vendor(key), Err(missing(key)));
    }
    assert_eq!(
        caps.advertised().collect::<Vec<_>>(),
        [Capability::Retrieve]
    );
    assert_eq!(caps.vendor_keys().count(), 0);
}

/// Unknown members inside known keys are kept in `extra`, written back, and change nothing.
#[test]
fn unknown_members_are_kept_and_ignored() {
    let value = json!({
        "retrieve": {"maxK": 5, "x-acme-boost": 1.5, "futureField": [1, null], "_meta": {"m": 1}, "citations": true},
        "index": {"writable": false, "x-acme-sharded": true},
        "feedback": {"futureField": {}}
    });
    let (caps, problems) = Capabilities::decode(value.clone()).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let retrieve = caps.retrieve.as_ref().unwrap();
    assert_eq!(retrieve.max_k, NonZeroU64::new(5));
    assert_eq!(retrieve.extra.len(), 4);
    assert_eq!(retrieve.extra["futureField"], json!([1, null]));
    // Appendix D's `citations: true` inside retrieve is an unknown member, not the key.
    assert!(!caps.supports(Capability::Citations));
    // `writable: false` plus a vendor member: still not writable.
    assert!(!caps.index.as_ref().unwrap().is_writable());
    assert!(caps.gate_method(Method::IndexAdd).is_err());
    assert_eq!(caps.to_value(), value);
}

/// Vendor keys: kept, queryable, gated with the reference message; inserted only under
/// `x-<vendor>` names; `null` withdraws.
#[test]
fn vendor_keys() {
    let mut caps = caps(json!({"x-acme": {"boost": true}, "x-acme-rank": {}, "retrieve": {}}));
    assert!(caps.supports_vendor("x-acme"));
    assert!(caps.supports_key("x-acme-rank"));
    assert!(!caps.supports_vendor("x-other"));
    assert_eq!(caps.vendor("x-acme"), Some(&json!({"boost": true})));
    assert_eq!(caps.gate_vendor("x-acme"), Ok(&json!({"boost": true})));
    assert_eq!(caps.gate_vendor("x-other"), Err(missing("x-other")));
    let mut keys: Vec<&str> = caps.vendor_keys().collect();
    keys.sort_unstable();
    assert_eq!(keys, ["x-acme", "x-acme-rank"]);
    // Vendor keys never count as core ones.
    assert!(!caps.supports_vendor("retrieve"));
    assert_eq!(caps.vendor("retrieve"), None);

    assert_eq!(caps.insert_vendor("x-new", json!(1)), Ok(None));
    assert!(caps.supports_vendor("x-new"));
    assert_eq!(caps.insert_vendor("x-new", Value::Null), Ok(Some(json!(1))));
    assert!(!caps.supports_vendor("x-new"));
    for bad in [
        "retrieve",
        "frobnicate",
        "_meta",
        "x-",
        "X-acme",
        "x-acme/m",
    ] {
        let error = caps.insert_vendor(bad, json!({})).unwrap_err();
        assert_eq!(error.kind(), Some(RcpErrorCode::InvalidParams), "{bad}");
        assert_eq!(
            error.message,
            format!("'{bad}' is not a vendor capability key (x-<vendor>)")
        );
    }
    assert_eq!(
        caps.to_value(),
        json!({"x-acme": {"boost": true}, "x-acme-rank": {}, "retrieve": {}})
    );
}

/// `_meta` is side-band: kept, written back, never a capability.
#[test]
fn meta_is_side_band() {
    let value = json!({"_meta": {"traceId": "t1", "retrieve": {}}, "rerank": {}});
    let mut caps = caps(value.clone());
    assert_eq!(caps.meta(), Some(&json!({"traceId": "t1", "retrieve": {}})));
    assert!(!caps.supports_key("_meta"));
    assert!(!caps.supports(Capability::Retrieve));
    assert_eq!(caps.unknown().count(), 0);
    assert_eq!(caps.to_value(), value);
    caps.set_meta(None);
    assert_eq!(caps.to_value(), json!({"rerank": {}}));
    caps.set_meta(Some(Value::Null));
    assert_eq!(caps.meta(), None);
}

/// Members that do not fit their shape are dropped and reported; the key stays present.
#[test]
fn misfit_members_are_reported_not_fatal() {
    let (caps, problems) = Capabilities::decode(json!({
        "retrieve": {"maxK": 0, "modes": ["dense", "splade"], "scoreScale": "percent",
                     "levels": -1, "mmr": "yes", "fusion": "rrf", "scoreFloor": "low",
                     "defaultMode": "dense", "confidence": null},
        "session": {"ttlSeconds": -5, "dedup": true},
        "embed": {"dimension": "384", "identity": 7, "batchLimit": 1.5},
        "filter": {"fields": [1], "operators": "eq"},
        "citations": "yes",
        "rerank": []
    }))
    .unwrap();
    let mut got: Vec<(String, &str)> = problems
        .iter()
        .map(|p| (p.pointer.clone(), p.expected))
        .collect();
    got.sort();
    let mut want = vec![
        ("/citations".to_owned(), "a boolean or an object"),
        ("/embed/batchLimit".to_owned(), "an integer >= 1"),
        ("/embed/dimension".to_owned(), "an integer >= 1"),
        ("/embed/identity".to_owned(), "a string"),
        (
            "/filter/fields".to_owned(),
            "an array of strings or an object of strings",
        ),
        ("/filter/operators".to_owned(), "an array of strings"),
        ("/rerank".to_owned(), "an object"),
        ("/retrieve/fusion".to_owned(), "an array of fusion methods"),
        ("/retrieve/levels".to_owned(), "an integer >= 1"),
        ("/retrieve/maxK".to_owned(), "an integer >= 1"),
        ("/retrieve/mmr".to_owned(), "a boolean"),
        ("/retrieve/modes".to_owned(), "an array of retrieval modes"),
        ("/retrieve/scoreFloor".to_owned(), "a number"),
        ("/retrieve/scoreScale".to_owned(), "a score scale"),
        ("/session/ttlSeconds".to_owned(), "an integer >= 0"),
    ];
    want.sort();
    assert_eq!(got, want);
    let maxk = problems
        .iter()
        .find(|p| p.pointer == "/retrieve/maxK")
        .unwrap();
    assert_eq!(maxk.value, json!(0));
    assert_eq!(
        maxk.to_string(),
        "/retrieve/maxK: expected an integer >= 1; the value is ignored"
    );

    for capability in [
        Capability::Retrieve,
        Capability::Session,
        Capability::Embed,
        Capability::Filter,
        Capability::Citations,
        Capability::Rerank,
    ] {
        assert!(caps.supports(capability), "{capability}");
    }
    let retrieve = caps.retrieve.as_ref().unwrap();
    assert_eq!(retrieve.default_mode, Some(RetrievalMode::Dense));
    assert_eq!(retrieve.confidence, None);
    assert_eq!(retrieve.max_k, None);
    assert!(retrieve.extra.is_empty(), "misfits do not move to extra");
    assert_eq!(caps.session.as_ref().unwrap().dedup, Some(true));
    assert_eq!(
        caps.to_value(),
        json!({
            "rerank": {}, "retrieve": {"defaultMode": "dense"}, "session": {"dedup": true},
            "embed": {}, "filter": {}, "citations": {}
        })
    );
}

/// Integers follow the schema: `200.0` is an integer; negative, fractional and (as floats)
/// over 2^53 are not; big integers are kept exactly.
#[test]
fn integers_follow_the_schema() {
    let read = |v: Value| {
        caps(json!({"retrieve": {"maxK": v}}))
            .retrieve
            .unwrap()
            .max_k
    };
    assert_eq!(read(json!(200.0)), NonZeroU64::new(200));
    assert_eq!(
        read(json!(9_007_199_254_740_992.0)),
        NonZeroU64::new(1 << 53)
    );
    assert_eq!(read(json!(u64::MAX)), NonZeroU64::new(u64::MAX));
    assert_eq!(read(json!(1e300)), None);
    assert_eq!(read(json!(-1)), None);
    assert_eq!(read(json!(0.0)), None);
    assert_eq!(read(json!(2.5)), None);
    assert_eq!(read(json!("200")), None);
    let session = caps(json!({"session": {"ttlSeconds": 0.0}}))
        .session
        .unwrap();
    assert_eq!(session.ttl_seconds, Some(0));
    // scoreFloor keeps the number as written.
    let retrieve = caps(json!({"retrieve": {"scoreFloor": -1}}))
        .retrieve
        .unwrap();
    assert_eq!(
        serde_json::to_value(&retrieve).unwrap(),
        json!({"scoreFloor": -1})
    );
}

/// Every member of B.5's `retrieve` and of the other keys is read into its typed field.
#[test]
fn typed_members() {
    let caps = caps(json!({
        "embed": {"dimension": 384, "identity": "bge", "batchLimit": 8, "normalized": true,
                  "modalities": ["text", "code"], "encodings": ["f32-base64"]},
        "sparseEmbed": {"identity": "splade", "vocabulary": 30522},
        "multiVector": {"dimension": 128, "identity": "colbert", "similarity": "cosine", "modalities": ["image"]},
        "rerank": {"methods": ["llm"], "maxCandidates": 50, "models": ["m1"]},
        "retrieve": {"maxK": 200, "modes": ["sparse"], "defaultMode": "sparse", "modalities": ["audio"],
                     "fusion": ["convex"], "mmr": true, "rerankBuiltin": false, "deterministic": true,
                     "snapshots": true, "units": ["tree-node", "page"], "levels": 3, "tokenBudget": false,
                     "confidence": true, "scoreScale": "bm25", "scoreFloor": 0.25},
        "transform": {"methods": ["multi-query", "step-back"]},
        "graph": {"ops": ["drift", "x-acme-walk"]},
        "index": {"writable": true, "chunking": false, "contextual": true},
        "session": {"dedup": false, "ttlSeconds": 600},
        "memory": {"scopes": ["session"], "clues": false},
        "filter": {"fields": {"lang": "keyword"}, "operators": ["eq"]},
        "citations": true,
        "log": {"levels": ["info"]},
        "catalog": {"engines": 4}
    }));
    let embed = caps.embed.unwrap();
    assert_eq!(embed.dimension, NonZeroU64::new(384));
    assert_eq!(embed.identity.as_deref(), Some("bge"));
    assert_eq!(embed.batch_limit, NonZeroU64::new(8));
    assert_eq!(embed.normalized, Some(true));
    assert_eq!(embed.modalities, Some(vec![Modality::Text, Modality::Code]));
    assert_eq!(embed.encodings, Some(vec![VectorEncoding::F32Base64]));
    let sparse = caps.sparse_embed.unwrap();
    assert_eq!(sparse.vocabulary, NonZeroU64::new(30522));
    let multi = caps.multi_vector.unwrap();
    assert_eq!(multi.similarity, Some(Similarity::Cosine));
    assert_eq!(multi.modalities, Some(vec![Modality::Image]));
    let rerank = caps.rerank.unwrap();
    assert_eq!(rerank.methods, Some(vec![RerankMethod::Llm]));
    assert_eq!(rerank.max_candidates, NonZeroU64::new(50));
    assert_eq!(rerank.models, Some(vec!["m1".to_owned()]));
    let r = caps.retrieve.unwrap();
    assert_eq!(r.max_k, NonZeroU64::new(200));
    assert_eq!(r.modes, Some(vec![RetrievalMode::Sparse]));
    assert_eq!(r.default_mode, Some(RetrievalMode::Sparse));
    assert_eq!(r.modalities, Some(vec![Modality::Audio]));
    assert_eq!(r.fusion, Some(vec![FusionMethod::Convex]));
    assert_eq!(r.mmr, Some(true));
    assert_eq!(r.rerank_builtin, Some(false));
    assert_eq!(r.deterministic, Some(true));
    assert_eq!(r.snapshots, Some(true));
    assert_eq!(
        r.units,
        Some(vec![RetrievalUnit::TreeNode, RetrievalUnit::Page])
    );
    assert_eq!(r.levels, NonZeroU64::new(3));
    assert_eq!(r.token_budget, Some(false));
    assert_eq!(r.confidence, Some(true));
    assert_eq!(r.score_scale, Some(ScoreScale::Bm25));
    assert_eq!(r.score_floor.and_then(|n| n.as_f64()), Some(0.25));
    assert_eq!(RetrieveCapability::FIELDS.len(), 15);
    assert_eq!(
        caps.transform.unwrap().methods,
        Some(vec![TransformMethod::MultiQuery, TransformMethod::StepBack])
    );
    assert_eq!(
        caps.graph.unwrap().ops,
        Some(vec!["drift".to_owned(), "x-acme-walk".to_owned()])
    );
    let index = caps.index.unwrap();
    assert!(index.is_writable());
    assert_eq!(
        (index.chunking, index.contextual),
        (Some(false), Some(true))
    );
    let session = caps.session.unwrap();
    assert_eq!(
        (session.dedup, session.ttl_seconds),
        (Some(false), Some(600))
    );
    let memory = caps.memory.unwrap();
    assert_eq!(memory.scopes, Some(vec![MemoryScope::Session]));
    assert_eq!(memory.clues, Some(false));
    let filter = caps.filter.unwrap();
    assert_eq!(
        filter.fields,
        Some(FilterFields::Typed(
            [("lang".to_owned(), "keyword".to_owned())]
                .into_iter()
                .collect()
        ))
    );
    assert_eq!(caps.citations, Some(CitationsCapability::Flag(true)));
    assert_eq!(caps.log.unwrap().levels, Some(vec!["info".to_owned()]));
    assert_eq!(caps.catalog.unwrap().engines, Some(4));
    // The enum wire strings.
    assert_eq!(VectorEncoding::F32Base64.as_str(), "f32-base64");
    assert_eq!(RerankMethod::CrossEncoder.to_string(), "cross-encoder");
    assert_eq!(RetrievalUnit::ALL.len(), 10);
}

/// An advertisement must be an object; everything else is `InvalidParams` with a stable
/// message, never a panic.
#[test]
fn not_an_object() {
    for value in [
        json!(null),
        json!([]),
        json!("retrieve"),
        json!(1),
        json!(true),
    ] {
        let error = Capabilities::from_value(value.clone()).unwrap_err();
        assert_eq!(error.kind(), Some(RcpErrorCode::InvalidParams), "{value}");
        assert_eq!(error.message, "an advertisement must be a JSON object");
        assert!(PresenceMap::from_value(value.clone()).is_err());
        let serde_error = serde_json::from_value::<Capabilities>(value).unwrap_err();
        assert_eq!(
            serde_error.to_string(),
            "an advertisement must be a JSON object"
        );
    }
    // Value types read leniently on their own too.
    let retrieve: RetrieveCapability =
        serde_json::from_value(json!({"maxK": "x", "mmr": true})).unwrap();
    assert_eq!((retrieve.max_k, retrieve.mmr), (None, Some(true)));
    let citations: CitationsCapability = serde_json::from_value(json!(false)).unwrap();
    assert_eq!(citations, CitationsCapability::Flag(false));
}

/// B.6: which capability gates which method; the four lifecycle methods are never gated;
/// `index/add` also needs `writable: true`.
#[test]
fn method_gates() {
    let table = [
        ("initialize", None),
        ("info", None),
        ("ping", None),
        ("shutdown", None),
        ("embed", Some("embed")),
        ("embed/sparse", Some("sparseEmbed")),
        ("embed/multi", Some("multiVector")),
        ("rerank", Some("rerank")),
        ("retrieve", Some("retrieve")),
        ("query/transform", Some("transform")),
        ("graph", Some("graph")),
        ("index/add", Some("index")),
        ("index/delete", Some("index")),
        ("catalog/list", Some("catalog")),
        ("feedback", Some("feedback")),
        ("memory/build", Some("memory")),
        ("memory/recall", Some("memory")),
    ];
    assert_eq!(table.len(), Method::ALL.len());
    let nothing = Capabilities::new();
    let everything = caps(serde_json::Value::Object(
        KEYS.iter()
            .map(|k| ((*k).to_owned(), json!({"writable": true})))
            .collect(),
    ));
    for (name, key) in table {
        let method: Method = name.parse().unwrap();
        assert_eq!(method.name(), name);
        assert_eq!(method.to_string(), name);
        assert_eq!(method.capability().map(Capability::wire_key), key);
        assert!(everything.gate_method(method).is_ok(), "{name}");
        assert!(everything.gate_method_name(name).is_ok(), "{name}");
        match key {
            None => assert!(nothing.gate_method(method).is_ok()),
            Some(key) => {
                assert_eq!(nothing.gate_method(method), Err(missing(key)), "{name}");
                assert_eq!(nothing.gate_method_name(name), Err(missing(key)), "{name}");
                let only = caps(json!({ key: {"writable": true} }));
                assert!(only.gate_method(method).is_ok(), "{name}");
            }
        }
    }
}

/// Method names: vendor methods gate on their vendor key, unknown names are `UnknownMethod`
/// (which wins over a missing capability), notifications are not request methods.
#[test]
fn method_names() {
    let caps = caps(json!({"x-acme": {}, "retrieve": {}}));
    assert_eq!(caps.gate_method_name("x-acme/search"), Ok(()));
    assert_eq!(caps.gate_method_name("x-acme/v2/search"), Ok(()));
    assert_eq!(
        caps.gate_method_name("x-other/search"),
        Err(missing("x-other"))
    );
    assert_eq!(
        caps.gate_method_name("x-acme-labs/run"),
        Err(missing("x-acme-labs"))
    );
    for name in [
        "no/such",
        "Retrieve",
        "x-acme/",
        "x-acme",
        "notifications/cancel",
        "",
    ] {
        let error = caps.gate_method_name(name).unwrap_err();
        assert_eq!(error.code, -32004, "{name}");
        assert_eq!(error.message, format!("unknown method '{name}'"));
    }
}

/// Spec §12: the 18 codes, their names and order; `retryable()` is true exactly for
/// BackendUnavailable, RateLimited and Timeout.
#[test]
fn error_code_table() {
    let table = [
        (-32700, "ParseError", false),
        (-32600, "InvalidRequest", false),
        (-32601, "MethodNotFound", false),
        (-32602, "InvalidParams", false),
        (-32603, "InternalError", false),
        (-32001, "NotInitialized", false),
        (-32002, "VersionMismatch", false),
        (-32003, "CapabilityMissing", false),
        (-32004, "UnknownMethod", false),
        (-32005, "OptionUnsupported", false),
        (-32006, "Cancelled", false),
        (-32010, "BackendUnavailable", true),
        (-32011, "RateLimited", true),
        (-32012, "Unauthorized", false),
        (-32013, "PayloadTooLarge", false),
        (-32014, "Timeout", true),
        (-32015, "NotFound", false),
        (-32016, "Conflict", false),
    ];
    assert_eq!(RcpErrorCode::ALL.len(), table.len());
    for (code, (number, name, retryable)) in RcpErrorCode::ALL.into_iter().zip(table) {
        assert_eq!(code.code(), number);
        assert_eq!(code.name(), name);
        assert_eq!(code.to_string(), name);
        assert_eq!(code.retryable(), retryable, "{name}");
        assert_eq!(RcpErrorCode::from_code(number), Some(code));
        assert_eq!(RcpErrorCode::from_name(name), Some(code));
        assert_eq!(serde_json::to_value(code).unwrap(), json!(number));
        assert_eq!(
            serde_json::from_value::<RcpErrorCode>(json!(number)).unwrap(),
            code
        );
        let error = RcpError::new(code, "m");
        assert_eq!(error.kind(), Some(code));
        assert_eq!(error.retryable(), retryable);
        assert_eq!(error.to_string(), format!("[RCP {number}] m"));
    }
    for unknown in [-32000, -32007, -32099, -32604, 0, 42] {
        assert_eq!(RcpErrorCode::from_code(unknown), None);
        let error = RcpError::with_raw_code(unknown, "m");
        assert_eq!(error.kind(), None);
        assert!(!error.retryable());
        assert!(serde_json::from_value::<RcpErrorCode>(json!(unknown)).is_err());
    }
    assert_eq!(RcpErrorCode::from_name("capabilityMissing"), None);
}

/// The error object: JSON-RPC shape, `data.retryable` overrides the code, `retryAfterMs`.
#[test]
fn error_object() {
    let error = RcpError::new(RcpErrorCode::RateLimited, "slow down")
        .with_data(json!({"retryable": false, "retryAfterMs": 1500}));
    assert!(!error.retryable());
    assert_eq!(error.retry_after_ms(), Some(1500));
    assert_eq!(
        serde_json::to_value(&error).unwrap(),
        json!({"code": -32011, "message": "slow down", "data": {"retryable": false, "retryAfterMs": 1500}})
    );
    let read: RcpError = serde_json::from_value(
        json!({"code": -32099, "message": "new", "data": {"retryable": true}}),
    )
    .unwrap();
    assert!(read.retryable());
    assert_eq!(read.kind(), None);
    let plain = RcpError::new(RcpErrorCode::NotFound, "gone");
    assert_eq!(
        serde_json::to_value(&plain).unwrap(),
        json!({"code": -32015, "message": "gone"})
    );
    assert_eq!(plain.retry_after_ms(), None);
    let negative = plain.clone().with_data(json!({"retryAfterMs": -1}));
    assert_eq!(negative.retry_after_ms(), None);
    assert_eq!(
        RcpError::capability_missing(Advertiser::Client, "preflight").to_string(),
        "[RCP -32003] client does not advertise 'preflight'"
    );
}

/// Names: the core keys parse, anything else does not; the vendor grammar.
#[test]
fn names() {
    for capability in Capability::ALL {
        assert_eq!(capability.wire_key().parse::<Capability>(), Ok(capability));
        assert_eq!(capability.to_string(), capability.wire_key());
        assert_eq!(
            KeyKind::of(capability.wire_key()),
            KeyKind::Core(capability)
        );
    }
    let error = "sparse_embed".parse::<Capability>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "'sparse_embed' is not an RCP/1 capability key"
    );
    for (key, vendor) in [
        ("x-a", true),
        ("x-acme-rank-2", true),
        ("x--", true),
        ("x-", false),
        ("x", false),
        ("y-acme", false),
        ("X-acme", false),
        ("x-acmé", false),
        ("x-acme_rank", false),
        ("x-acme/search", false),
        ("", false),
    ] {
        assert_eq!(is_vendor_key(key), vendor, "{key}");
        assert_eq!(KeyKind::of(key) == KeyKind::Vendor, vendor, "{key}");
    }
    assert_eq!(KeyKind::of(META_KEY), KeyKind::Meta);
}

/// The raw presence rules on their own.
#[test]
fn presence_map() {
    let mut map = PresenceMap::from_value(json!({
        "preflight": {"maxProposals": 16}, "subscribe": null, "x-acme": 0, "_meta": {"a": 1}
    }))
    .unwrap();
    assert!(map.is_present("preflight"));
    assert!(!map.is_present("subscribe"));
    assert!(map.is_present("x-acme"));
    assert!(!map.is_present("_meta"));
    assert_eq!(map.vendor_keys().collect::<Vec<_>>(), ["x-acme"]);
    assert_eq!(
        map.gate(Advertiser::Client, "preflight"),
        Ok(&json!({"maxProposals": 16}))
    );
    assert_eq!(
        map.gate(Advertiser::Client, "subscribe")
            .unwrap_err()
            .message,
        "client does not advertise 'subscribe'"
    );
    assert_eq!(map.insert("subscribe", json!({})), None);
    assert_eq!(map.insert("subscribe", Value::Null), Some(json!({})));
    assert_eq!(map.insert("_meta", Value::Null), Some(json!({"a": 1})));
    assert_eq!(map.remove("x-acme"), Some(json!(0)));
    assert_eq!(
        serde_json::to_value(&map).unwrap(),
        json!({"preflight": {"maxProposals": 16}})
    );
    assert!(!map.is_empty());
    assert!(PresenceMap::new().is_empty());
    let read: PresenceMap = serde_json::from_value(json!({"a": {}, "_meta": 1})).unwrap();
    assert_eq!(read.meta(), Some(&json!(1)));
    assert_eq!(read.iter().count(), 1);
}
