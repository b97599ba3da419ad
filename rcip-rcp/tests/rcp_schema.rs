//! Every advertisement rcip serializes validates against the vendored RCP JSON Schema
//! (`tests/vectors/rcp/rcp-1.0.schema.json`, `$defs/Capabilities`), and a schema-valid
//! advertisement survives rcip's round trip unchanged.
#![allow(clippy::unwrap_used)]

mod rcp_corpus;

use std::num::NonZeroU64;

use rcip_rcp::*;
use rcp_corpus::{corpus, without_top_level_nulls};
use serde_json::{Number, Value, json};
use sha2::{Digest, Sha256};

const SCHEMA_PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/vectors/rcp/rcp-1.0.schema.json"
);
const SCHEMA_SHA256: &str = "05022477c507ca00010373265177994232d074aa7390f8972336c0d0d0775901";

/// The vendored schema, after checking it is byte for byte the recorded one.
fn schema_document() -> Value {
    let bytes = std::fs::read(SCHEMA_PATH).unwrap();
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(digest, SCHEMA_SHA256, "the vendored schema was changed");
    serde_json::from_slice(&bytes).unwrap()
}

/// A validator for one `$defs` entry of the whole document (so its local `$ref`s resolve).
fn validator_for(definition: &str) -> jsonschema::Validator {
    let mut document = schema_document();
    let root = document.as_object_mut().unwrap();
    assert!(
        root["$defs"].get(definition).is_some(),
        "no $defs/{definition}"
    );
    root.remove("oneOf");
    root.insert("$ref".into(), json!(format!("#/$defs/{definition}")));
    jsonschema::draft202012::new(&document).unwrap()
}

fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// The validator rejects what the schema rejects (so the checks below can fail).
#[test]
fn the_validator_rejects_schema_violations() {
    let validator = validator_for("Capabilities");
    for bad in [
        json!({"retrieve": {"maxK": 0}}),
        json!({"retrieve": false}),
        json!({"retrieve": {"modes": ["splade"]}}),
        json!({"citations": "yes"}),
        json!({"embed": {"dimension": "384"}}),
        json!({"retrieve": {"scoreFloor": null}}),
        json!([]),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
    }
    for good in [
        json!({}),
        json!({"citations": false}),
        json!({"x-acme": 1, "frobnicate": null}),
        json!({"retrieve": {"maxK": 200.0}}),
    ] {
        assert!(validator.is_valid(&good), "{good}");
    }
}

/// Whatever an advertisement held, what rcip writes back is valid; when the advertisement
/// was valid, rcip writes back exactly it (top-level `null`s, which mean absent, dropped).
#[test]
fn corpus_round_trips_validate() {
    let validator = validator_for("Capabilities");
    let mut valid_inputs = 0;
    for case in corpus() {
        let caps = Capabilities::from_value(case.value.clone()).unwrap();
        let written = serde_json::to_value(&caps).unwrap();
        assert_eq!(written, caps.to_value(), "{}", case.name);
        let problems = errors(&validator, &written);
        assert!(
            problems.is_empty(),
            "{}: {written} -> {problems:?}",
            case.name
        );

        let (_, misfits) = Capabilities::decode(case.value.clone()).unwrap();
        if case.name == "integer-valued floats" {
            // Integers to the schema; written back as integers.
            assert!(misfits.is_empty(), "{misfits:?}");
            assert_eq!(written, json!({"retrieve": {"maxK": 200, "levels": 2}}));
        } else if validator.is_valid(&case.value) {
            valid_inputs += 1;
            assert_eq!(
                written,
                without_top_level_nulls(&case.value),
                "{}: a valid advertisement changed",
                case.name
            );
            assert!(misfits.is_empty(), "{}: {misfits:?}", case.name);
        } else {
            assert!(
                !misfits.is_empty() || written != case.value,
                "{}: invalid input read without a problem",
                case.name
            );
        }
        // Reading what rcip wrote gives the same advertisement.
        assert_eq!(
            Capabilities::from_value(written).unwrap(),
            caps,
            "{}",
            case.name
        );
    }
    assert!(valid_inputs >= 90, "{valid_inputs}");
}

/// Advertisements built in Rust validate, including every enum value and the extreme
/// numbers the types allow.
#[test]
fn built_advertisements_validate() {
    let validator = validator_for("Capabilities");
    let mut caps = Capabilities::new();
    caps.embed = Some(EmbedCapability {
        dimension: NonZeroU64::new(u64::MAX),
        identity: Some(String::new()),
        batch_limit: NonZeroU64::new(1),
        normalized: Some(false),
        modalities: Some(Modality::ALL.to_vec()),
        encodings: Some(VectorEncoding::ALL.to_vec()),
        extra: Default::default(),
    });
    caps.sparse_embed = Some(SparseEmbedCapability {
        identity: Some("splade".into()),
        vocabulary: NonZeroU64::new(30522),
        ..Default::default()
    });
    caps.multi_vector = Some(MultiVectorCapability {
        similarity: Some(Similarity::Cosine),
        modalities: Some(Modality::ALL.to_vec()),
        ..Default::default()
    });
    caps.rerank = Some(RerankCapability {
        methods: Some(RerankMethod::ALL.to_vec()),
        max_candidates: NonZeroU64::new(1000),
        models: Some(vec!["m".into()]),
        ..Default::default()
    });
    caps.retrieve = Some(RetrieveCapability {
        max_k: NonZeroU64::new(1),
        modes: Some(RetrievalMode::ALL.to_vec()),
        default_mode: Some(RetrievalMode::Sparse),
        modalities: Some(Modality::ALL.to_vec()),
        fusion: Some(FusionMethod::ALL.to_vec()),
        mmr: Some(true),
        rerank_builtin: Some(false),
        deterministic: Some(true),
        snapshots: Some(true),
        units: Some(RetrievalUnit::ALL.to_vec()),
        levels: NonZeroU64::new(7),
        token_budget: Some(true),
        confidence: Some(false),
        score_scale: Some(ScoreScale::Unbounded),
        score_floor: Number::from_f64(-0.5),
        extra: [("x-acme-boost".to_owned(), json!(true))]
            .into_iter()
            .collect(),
    });
    caps.transform = Some(TransformCapability {
        methods: Some(TransformMethod::ALL.to_vec()),
        ..Default::default()
    });
    caps.graph = Some(GraphCapability {
        ops: Some(vec!["local".into(), "x-acme-walk".into()]),
        ..Default::default()
    });
    caps.index = Some(IndexCapability {
        writable: Some(true),
        ..Default::default()
    });
    caps.session = Some(SessionCapability {
        ttl_seconds: Some(0),
        ..Default::default()
    });
    caps.feedback = Some(MarkerCapability::default());
    caps.memory = Some(MemoryCapability {
        scopes: Some(MemoryScope::ALL.to_vec()),
        clues: Some(true),
        ..Default::default()
    });
    caps.filter = Some(FilterCapability {
        fields: Some(FilterFields::Names(vec!["lang".into()])),
        operators: Some(vec!["eq".into()]),
        ..Default::default()
    });
    caps.streaming = Some(MarkerCapability::default());
    caps.pagination = Some(MarkerCapability::default());
    caps.citations = Some(CitationsCapability::Flag(false));
    caps.log = Some(LogCapability::default());
    caps.catalog = Some(CatalogCapability {
        engines: Some(0),
        ..Default::default()
    });
    caps.insert_vendor("x-acme", json!({"version": 2})).unwrap();
    caps.set_meta(Some(json!({"traceId": "t"})));

    let written = caps.to_value();
    assert_eq!(caps.advertised().count(), 17);
    let problems = errors(&validator, &written);
    assert!(problems.is_empty(), "{written} -> {problems:?}");
    assert_eq!(Capabilities::from_value(written).unwrap(), caps);

    // A known member's name in `extra` is not written twice, and does not override.
    let mut retrieve = RetrieveCapability {
        max_k: NonZeroU64::new(5),
        ..Default::default()
    };
    retrieve.extra.insert("maxK".into(), json!("lots"));
    let written = serde_json::to_value(&retrieve).unwrap();
    assert_eq!(written, json!({"maxK": 5}));
    assert!(validator.is_valid(&json!({ "retrieve": written })));
}

/// A whole `initialize` result rcip writes validates against `$defs/InitializeResult`, and
/// the handshake example of spec §7.1 reads into the typed model.
#[test]
fn initialize_result_validates() {
    let validator = validator_for("InitializeResult");
    let example = json!({
        "protocolVersion": 1,
        "server": {"name": "my-engine", "version": "2.3.1"},
        "capabilities": {
            "retrieve": {"maxK": 200, "modes": ["dense", "sparse", "hybrid"], "fusion": ["rrf"], "mmr": true},
            "rerank": {"methods": ["cross-encoder", "colbert"]},
            "embed": {"dimension": 384, "identity": "bge-small-en"}
        },
        "_meta": {"conformance": "L1"}
    });
    assert!(validator.is_valid(&example));
    let result: InitializeResult = serde_json::from_value(example.clone()).unwrap();
    let written = serde_json::to_value(&result).unwrap();
    assert_eq!(written, example);
    assert!(errors(&validator, &written).is_empty());

    let bare = InitializeResult {
        protocol_version: PROTOCOL_VERSION,
        server: PeerInfo {
            name: "n".into(),
            version: None,
        },
        capabilities: Capabilities::new(),
        meta: None,
    };
    let written = serde_json::to_value(&bare).unwrap();
    assert_eq!(
        written,
        json!({"protocolVersion": 1, "server": {"name": "n"}, "capabilities": {}})
    );
    assert!(errors(&validator, &written).is_empty());
}

/// The error codes rcip knows are the schema's `ErrorCode` enumeration, and its error
/// objects validate as the `error` member of `$defs/JsonRpcError`.
#[test]
fn error_codes_match_the_schema() {
    let document = schema_document();
    let listed: Vec<i64> = document["$defs"]["ErrorCode"]["anyOf"][0]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    let ours: Vec<i64> = RcpErrorCode::ALL.iter().map(|c| c.code()).collect();
    assert_eq!(ours, listed);

    let validator = validator_for("JsonRpcError");
    for code in RcpErrorCode::ALL {
        let error =
            RcpError::new(code, "m").with_data(json!({"retryable": true, "retryAfterMs": 5}));
        let frame = json!({"jsonrpc": "2.0", "id": 1, "error": error});
        assert!(errors(&validator, &frame).is_empty(), "{frame}");
    }
}

/// The method names rcip knows are the schema's `MethodName` core enumeration, and its
/// vendor method grammar agrees with the schema's pattern.
#[test]
fn method_names_match_the_schema() {
    let document = schema_document();
    let listed: Vec<&str> = document["$defs"]["MethodName"]["anyOf"][0]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(ours, listed);

    let validator = validator_for("MethodName");
    for name in [
        "x-acme/search",
        "x-acme-labs/v2/run",
        "x-Acme/search",
        "x-/search",
        "x-acme",
        "x_acme/search",
    ] {
        assert_eq!(
            vendor_method_key(name).is_some(),
            validator.is_valid(&json!(name)),
            "{name}"
        );
    }
}
