//! The documents the server publishes: the OpenAPI 3.1 document (generated from the
//! registry: every schema a valid JSON Schema, one request branch per operation, and a
//! request built from each operation's schema alone accepted as well-formed by the running
//! server, with an answer inside the document) and the RFC 9728 metadata of both resources.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use common::start;
use rcip_platform::operations;
use rcip_records::DelegatedScope;
use rcip_server::{Limits, openapi_document};
use serde_json::{Map, Value, json};

/// The smallest value `schema` admits, built from its keywords (enough for the registry's
/// flat input schemas: required members only; every pattern there accepts "a").
fn example(schema: &Value) -> Value {
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("object") => {
            let mut members = Map::new();
            for name in schema["required"].as_array().into_iter().flatten() {
                let name = name.as_str().unwrap();
                members.insert(name.to_owned(), example(&schema["properties"][name]));
            }
            Value::Object(members)
        }
        Some("array") => json!([]),
        Some("integer") => schema.get("minimum").cloned().unwrap_or(json!(1)),
        Some("boolean") => json!(false),
        Some("string") if schema["format"] == "uuid" => json!(uuid::Uuid::nil()),
        Some("string") => json!("a"),
        other => panic!("no example for type {other:?} in {schema}"),
    }
}

#[tokio::test]
async fn the_openapi_document_is_generated_from_the_registry() {
    let s = start(Limits::default()).await;
    let served = s.get("/v1/openapi.json").await.body;
    assert_eq!(served, openapi_document(&s.base));
    assert_eq!(served["openapi"], "3.1.0");
    assert_eq!(served["servers"][0]["url"], s.base.as_str());
    let schemas = served["components"]["schemas"].as_object().unwrap();
    for (name, schema) in schemas {
        if let Err(error) = jsonschema::meta::validate(schema) {
            panic!("{name} is not a valid JSON Schema: {error}");
        }
    }
    let names: BTreeSet<&str> = operations().iter().map(|spec| spec.name).collect();
    let mapped: BTreeSet<&str> = schemas["OperationRequest"]["discriminator"]["mapping"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(mapped, names);
    for spec in operations() {
        assert_eq!(schemas[&format!("{}.arguments", spec.name)], spec.input);
        assert_eq!(schemas[&format!("{}.result", spec.name)], spec.output);
    }
    let listed: Vec<&str> = served["x-rcip-operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["operation"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        operations()
            .iter()
            .map(|spec| spec.name)
            .collect::<Vec<_>>()
    );
    // Every refusal points at the one error schema.
    let responses = served["paths"]["/v1/operations"]["post"]["responses"]
        .as_object()
        .unwrap();
    for (status, response) in responses {
        let schema = &response["content"]["application/json"]["schema"]["$ref"];
        if status == "200" {
            assert_eq!(schema, "#/components/schemas/OperationResponse");
        } else {
            assert_eq!(schema, "#/components/schemas/Error", "{status}");
        }
    }
    for status in [
        "400", "401", "403", "404", "409", "413", "415", "422", "429", "503", "504",
    ] {
        assert!(responses.contains_key(status), "{status} is not documented");
    }
}

#[tokio::test]
async fn a_request_built_from_the_document_alone_is_well_formed_for_the_server() {
    let s = start(Limits::default()).await;
    s.world().await;
    let served = s.get("/v1/openapi.json").await.body;
    for spec in operations() {
        let schema = &served["components"]["schemas"][&format!("{}.arguments", spec.name)];
        let arguments = example(schema);
        // `call` checks the request against the document and the answer against its schema.
        let answer = s.call("ada", spec.name, arguments.clone()).await;
        assert!(answer.status < 500, "{}: {:#}", spec.name, answer.body);
        if answer.code() == "INVALID_ARGUMENTS" {
            // Only the rules across arguments, which the schemas leave out, may refuse it.
            let keyword = answer.body["error"]["issues"][0]["keyword"]
                .as_str()
                .unwrap();
            assert!(
                ["oneOf", "const"].contains(&keyword),
                "{}: {arguments} refused: {:#}",
                spec.name,
                answer.body
            );
        }
    }
}

#[tokio::test]
async fn the_protected_resource_metadata_names_the_issuers_and_the_scopes() {
    let s = start(Limits::default()).await;
    let scopes: Vec<&str> = DelegatedScope::ALL.map(DelegatedScope::as_str).to_vec();
    for (path, resource) in [
        ("/.well-known/oauth-protected-resource", s.base.clone()),
        (
            "/.well-known/oauth-protected-resource/mcp",
            format!("{}/mcp", s.base),
        ),
    ] {
        let answer = s.get(path).await;
        assert_eq!(answer.status, 200, "{path}");
        let document = answer.body;
        assert_eq!(document["resource"], resource.as_str());
        assert_eq!(
            document["authorization_servers"],
            json!(["https://issuer.example"])
        );
        assert_eq!(document["bearer_methods_supported"], json!(["header"]));
        assert_eq!(document["scopes_supported"], json!(scopes));
    }
}
