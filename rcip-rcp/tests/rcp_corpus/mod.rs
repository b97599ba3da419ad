//! A corpus of RCP capability advertisements shared by the schema and differential tests:
//! every key alone, all keys, `{}`, `false` and `null` values, other value kinds, unknown
//! keys, vendor keys, nested unknown members, `_meta`, misfit members, and the reference's own
//! examples.

use serde_json::{Map, Value, json};

/// One advertisement.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) value: Value,
}

fn case(name: impl Into<String>, value: Value) -> Case {
    Case {
        name: name.into(),
        value,
    }
}

/// The 17 core keys in the spec's order.
pub(crate) const CORE_KEYS: [&str; 17] = [
    "embed",
    "sparseEmbed",
    "multiVector",
    "rerank",
    "retrieve",
    "transform",
    "graph",
    "index",
    "session",
    "feedback",
    "memory",
    "filter",
    "streaming",
    "pagination",
    "citations",
    "log",
    "catalog",
];

/// Full, schema-valid metadata for each core key.
pub(crate) fn full_metadata(key: &str) -> Value {
    match key {
        "embed" => json!({
            "dimension": 384, "identity": "bge-small-en", "batchLimit": 64, "normalized": true,
            "modalities": ["text", "image"], "encodings": ["json", "f32-base64"]
        }),
        "sparseEmbed" => json!({"identity": "splade-v3", "vocabulary": 30522}),
        "multiVector" => json!({
            "dimension": 128, "identity": "colbert-v2", "similarity": "dot", "modalities": ["text"]
        }),
        "rerank" => json!({
            "methods": ["cross-encoder", "colbert", "llm"], "maxCandidates": 100,
            "models": ["bge-reranker-base"]
        }),
        "retrieve" => json!({
            "maxK": 200,
            "modes": ["dense", "sparse", "hybrid"],
            "defaultMode": "hybrid",
            "modalities": ["text", "multimodal"],
            "fusion": ["rrf", "weighted", "convex"],
            "mmr": true,
            "rerankBuiltin": true,
            "deterministic": true,
            "snapshots": false,
            "units": ["chunk", "passage", "document", "node", "triplet", "path", "subgraph",
                      "community", "tree-node", "page"],
            "levels": 3,
            "tokenBudget": true,
            "confidence": true,
            "scoreScale": "cosine",
            "scoreFloor": -1
        }),
        "transform" => json!({
            "methods": ["rewrite", "hyde", "multi-query", "decompose", "step-back"]
        }),
        "graph" => json!({"ops": ["local", "global", "drift", "communities", "neighbors"]}),
        "index" => json!({"writable": true, "chunking": true, "contextual": false}),
        "session" => json!({"dedup": true, "ttlSeconds": 0}),
        "memory" => json!({"scopes": ["global", "session"], "clues": true}),
        "filter" => json!({
            "fields": {"lang": "keyword", "year": "int", "published": "date"},
            "operators": ["eq", "in", "gte", "exists"]
        }),
        "log" => json!({"levels": ["debug", "info", "warning", "error"]}),
        "catalog" => json!({"engines": 3}),
        // feedback, streaming, pagination, citations
        _ => json!({}),
    }
}

fn object(pairs: impl IntoIterator<Item = (String, Value)>) -> Value {
    Value::Object(pairs.into_iter().collect::<Map<String, Value>>())
}

/// The whole corpus.
pub(crate) fn corpus() -> Vec<Case> {
    let mut cases = vec![case("empty", json!({}))];
    for key in CORE_KEYS {
        cases.push(case(
            format!("{key} alone, full"),
            json!({ key: full_metadata(key) }),
        ));
        cases.push(case(format!("{key} alone, empty"), json!({ key: {} })));
        cases.push(case(format!("{key} alone, false"), json!({ key: false })));
        cases.push(case(format!("{key} alone, true"), json!({ key: true })));
        cases.push(case(format!("{key} alone, null"), json!({ key: null })));
        cases.push(case(
            format!("{key} with an unknown member"),
            json!({ key: {"futureMember": [1, {"deep": null}], "x-acme-hint": "fast"} }),
        ));
        cases.push(case(
            format!("all but {key}"),
            object(
                CORE_KEYS
                    .iter()
                    .filter(|k| **k != key)
                    .map(|k| ((*k).to_owned(), full_metadata(k))),
            ),
        ));
    }
    cases.push(case(
        "all keys, full",
        object(
            CORE_KEYS
                .iter()
                .map(|k| ((*k).to_owned(), full_metadata(k))),
        ),
    ));
    cases.push(case(
        "all keys, empty",
        object(CORE_KEYS.iter().map(|k| ((*k).to_owned(), json!({})))),
    ));
    cases.push(case(
        "all keys, null",
        object(CORE_KEYS.iter().map(|k| ((*k).to_owned(), Value::Null))),
    ));
    cases.push(case(
        "all keys, false",
        object(CORE_KEYS.iter().map(|k| ((*k).to_owned(), json!(false)))),
    ));
    cases.push(case(
        "every other key null",
        object(CORE_KEYS.iter().enumerate().map(|(i, k)| {
            let value = if i % 2 == 0 {
                Value::Null
            } else {
                full_metadata(k)
            };
            ((*k).to_owned(), value)
        })),
    ));
    cases.extend([
        case("citations true", json!({"citations": true})),
        case("citations false with retrieve", json!({"citations": false, "retrieve": {"maxK": 10}})),
        case("false members", json!({
            "retrieve": {"mmr": false, "rerankBuiltin": false, "tokenBudget": false, "confidence": false},
            "index": {"writable": false},
            "embed": {"normalized": false, "dimension": 8, "identity": "tiny"}
        })),
        case("index without writable", json!({"index": {}})),
        case("filter fields as names", json!({"filter": {"fields": ["lang", "year"]}})),
        case("other value kinds", json!({
            "retrieve": 0, "rerank": "yes", "embed": [], "graph": 1.5, "feedback": "", "log": []
        })),
        case("unknown key", json!({"frobnicate": {}})),
        case("unknown key beside core", json!({"retrieve": {"maxK": 5}, "futureKey": {"a": 1}})),
        case("unknown key, wrong case", json!({"Retrieve": {}, "RERANK": {}})),
        case("unknown key null", json!({"frobnicate": null, "embed": {"dimension": 3, "identity": "e"}})),
        case("vendor key", json!({"x-acme": {}})),
        case("vendor key with metadata", json!({"x-acme-rank": {"levels": [1, 2]}, "retrieve": {}})),
        case("vendor key false", json!({"x-acme": false})),
        case("vendor key null", json!({"x-acme": null, "retrieve": {}})),
        case("vendor keys of every value kind", json!({
            "x-a": true, "x-b": 0, "x-c": "on", "x-d": [], "x-e": {"nested": {"x-f": 1}}
        })),
        case("vendor keys beside null core keys", json!({
            "x-acme": {}, "x-acme-rank": null, "retrieve": null, "rerank": null
        })),
        case("vendor-like keys", json!({"x-": {}, "x-Acme": {}, "x_acme": {}, "x-acme/search": {}})),
        case("nested unknown members", json!({
            "retrieve": {"maxK": 5, "x-acme-boost": 1.5, "futureField": [1, 2], "_meta": {"a": 1}},
            "embed": {"dimension": 384, "identity": "e5", "poolings": ["mean"]},
            "index": {"writable": true, "x-acme-sharded": true}
        })),
        case("_meta beside capabilities", json!({"_meta": {"trace": "abc"}, "retrieve": {}})),
        case("_meta alone", json!({"_meta": {"conformance": "L1"}})),
        case("_meta null", json!({"_meta": null, "rerank": {}})),
        case("misfit members", json!({
            "retrieve": {"maxK": 0, "modes": ["dense", "splade"], "scoreScale": "percent",
                         "levels": -1, "mmr": "yes", "fusion": "rrf"},
            "session": {"ttlSeconds": -5},
            "embed": {"dimension": "384", "identity": 7}
        })),
        case("integer-valued floats", json!({"retrieve": {"maxK": 200.0, "levels": 2.0}})),
        // The seed's example (docs/concepts/capabilities.mdx).
        case("seed example", json!({
            "retrieve": {"maxK": 200, "modes": ["dense", "sparse", "hybrid"]},
            "rerank": {"methods": ["cross-encoder", "colbert"]},
            "embed": {"dimension": 384, "identity": "bge-small-en"}
        })),
        // Spec §7.1 handshake (digest B.3).
        case("handshake example", json!({
            "retrieve": {"maxK": 200, "modes": ["dense", "sparse", "hybrid"], "fusion": ["rrf"], "mmr": true},
            "rerank": {"methods": ["cross-encoder", "colbert"]},
            "embed": {"dimension": 384, "identity": "bge-small-en"}
        })),
        // Spec §6.1 retrieve example.
        case("retrieve example", json!({"retrieve": {
            "maxK": 200, "modes": ["dense", "sparse", "hybrid"], "fusion": ["rrf", "weighted"],
            "mmr": true, "rerankBuiltin": true, "units": ["chunk", "document", "tree-node", "community"],
            "levels": 3, "tokenBudget": true, "confidence": true, "scoreScale": "cosine",
            "defaultMode": "hybrid"
        }})),
        // Appendix D puts `citations: true` inside retrieve: an unknown member there.
        case("appendix D citations inside retrieve", json!({"retrieve": {"maxK": 50, "citations": true}})),
        // The interop test's server (digest B.11).
        case("interop server", json!({"retrieve": {"maxK": 100}})),
    ]);
    cases
}

/// `value` with its top-level `null` members removed: what an advertisement means.
#[allow(dead_code)] // used by one of the two test crates
pub(crate) fn without_top_level_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone())),
        ),
        other => other.clone(),
    }
}
