//! The official MCPL manifest-digest vectors, iterated from the vendored file (never
//! transcribed): per positive vector the canonical JSON, then the SHA-256 hex, then the
//! digest; per negative vector the error code; `sameDigestAs` / `differentDigestFrom`; and the
//! sort vectors through the library's own set sort.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use rcip_mcpl::{DigestError, manifest_canonical_json, manifest_digest, sort_set};
use serde_json::Value;
use sha2::{Digest, Sha256};

const VECTORS: &str = include_str!("vectors/mcpl/manifest-digest-vectors.json");
const SHA256: &str = "b4318cb5f2e47fc640509d814536a55166d68be7938903c91e4552a7cc6f0e90";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn vectors() -> Value {
    assert_eq!(
        hex(&Sha256::digest(VECTORS.as_bytes())),
        SHA256,
        "the vendored file changed"
    );
    serde_json::from_str(VECTORS).unwrap()
}

#[test]
fn every_manifest_vector() {
    let file = vectors();
    let vectors = file["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 25);
    let mut digests: BTreeMap<String, String> = BTreeMap::new();
    let mut failures = Vec::new();
    for vector in vectors {
        let name = vector["name"].as_str().unwrap().to_owned();
        let input = &vector["input"];
        if let Some(expected) = vector.get("expectError").and_then(Value::as_str) {
            match manifest_digest(input) {
                Err(error) if error.code() == expected => {}
                other => failures.push(format!("{name}: expected {expected}, got {other:?}")),
            }
            continue;
        }
        let canonical = match manifest_canonical_json(input) {
            Ok(canonical) => canonical,
            Err(error) => {
                failures.push(format!("{name}: {error}"));
                continue;
            }
        };
        if canonical != vector["canonicalJson"].as_str().unwrap() {
            failures.push(format!(
                "{name}: canonical JSON\n  got  {canonical}\n  want {}",
                vector["canonicalJson"]
            ));
            continue;
        }
        let sha = hex(&Sha256::digest(canonical.as_bytes()));
        if sha != vector["sha256Hex"].as_str().unwrap() {
            failures.push(format!("{name}: sha256 {sha}"));
            continue;
        }
        let digest = manifest_digest(input).unwrap();
        if digest != vector["digest"].as_str().unwrap() {
            failures.push(format!("{name}: digest {digest}"));
            continue;
        }
        digests.insert(name, digest);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let mut relations = 0;
    for vector in vectors {
        let name = vector["name"].as_str().unwrap();
        if let Some(same) = vector.get("sameDigestAs").and_then(Value::as_str) {
            assert_eq!(digests[name], digests[same], "{name} sameDigestAs {same}");
            relations += 1;
        }
        if let Some(different) = vector.get("differentDigestFrom").and_then(Value::as_str) {
            assert_ne!(
                digests[name], digests[different],
                "{name} differentDigestFrom {different}"
            );
            relations += 1;
        }
    }
    assert!(relations >= 5, "the file's digest relations were read");
    assert_eq!(digests.len(), 20);
}

#[test]
fn every_sort_vector() {
    let file = vectors();
    let sorts = file["sortVectors"].as_array().unwrap();
    assert_eq!(sorts.len(), 4);
    for vector in sorts {
        let input: Vec<String> = serde_json::from_value(vector["input"].clone()).unwrap();
        let sorted: Vec<String> = serde_json::from_value(vector["sorted"].clone()).unwrap();
        assert_eq!(sort_set(input), sorted, "{}", vector["name"]);
    }
}

#[test]
fn a_manifest_that_is_not_an_object_has_no_digest() {
    for value in [
        serde_json::json!([]),
        serde_json::json!("x"),
        serde_json::json!(null),
    ] {
        assert_eq!(manifest_digest(&value), Err(DigestError::ManifestNotObject));
    }
    assert_eq!(DigestError::ManifestNotObject.code(), "manifest_not_object");
}

/// The edge inputs no vector pins (reference digest §5.5): rcip follows the spec's list plus
/// `facet`, checks the `tagsAny`/`tagsAll`/`tagsNone` strings, skips arrays with a non-string
/// member, and does not descend into arrays under capability members.
#[test]
fn identifier_positions_no_vector_pins() {
    use serde_json::json;
    let refused = |manifest: Value| {
        assert_eq!(
            manifest_digest(&manifest).map_err(|e| e.code()),
            Err("identifier_charset"),
            "{manifest}"
        );
    };
    let digests = |manifest: Value| {
        assert!(manifest_digest(&manifest).is_ok(), "{manifest}");
    };
    let ontology = |ontology: Value| json!({"featureSets": {"fs": {"tagOntology": ontology}}});
    refused(ontology(
        json!({"suggestedTreatment": [{"tagsAny": ["bad tag"]}]}),
    ));
    digests(ontology(json!({"keyed": {"k": {"values": ["a b", 1]}}})));
    digests(ontology(json!({"tags": {"t": {"facet": 5}}})));
    digests(ontology(json!({"tags": {"t": {"facet": null}}})));
    refused(ontology(json!({"tags": {"t": {"facet": "a b"}}})));
    digests(json!({"vendor": [{"a b": 1}]}));
    refused(json!({"vendor": {"a b": 1}}));
    // Free text and version are never checked.
    digests(json!({"version": "0.5 beta", "featureSets": {"fs": {"description": "Any text!"}}}));
    // The position is named in the error.
    let error =
        manifest_digest(&json!({"featureSets": {"fs": {"uses": ["ok", "no way"]}}})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "identifier_charset: \"no way\" at featureSets.fs.uses[1] is not a non-empty [A-Za-z0-9._:*-] identifier"
    );
}
