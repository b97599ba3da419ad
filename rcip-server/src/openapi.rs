//! The OpenAPI 3.1 document of the REST API, generated from the operation registry (never
//! written by hand: a new operation appears in it by being in the registry).
//!
//! The convention: `POST /v1/operations` is the one real endpoint. Its request body is
//! `OperationRequest`, a `oneOf` of one schema per operation (`record.get.request`: the
//! constant `operation` and the operation's strict input schema as `arguments`,
//! `record.get.arguments`), with a `discriminator` on `operation`. Its 200 body is
//! `OperationResponse`: `{"result": ...}` where the result is one of the operations' output
//! schemas (`record.get.result`; `anyOf`, since several outputs share a shape). Every
//! refusal references the one `Error` schema. `x-rcip-operations` lists each operation with
//! its summary, scope, effect, whether agents may call it and the names of its two schemas,
//! for tools that want the pairing the `oneOf` cannot express.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use http::StatusCode;
use rcip_platform::{Agents, operations};
use rcip_records::DelegatedScope;
use serde_json::{Map, Value, json};

use crate::error::json_response;
use crate::shared::Shared;

/// The statuses a call may be refused with, and why.
pub const ERROR_STATUSES: [(&str, &str); 15] = [
    (
        "400",
        "Malformed JSON, an ambiguous request (two Content-Types, a member named twice), a body nesting too deep, an invalid envelope, an unknown operation or invalid arguments.",
    ),
    ("401", "No credential, or one that is not accepted."),
    (
        "403",
        "A credential lacking the operation's scope, a console-only operation called by an agent, or a browser request without its Origin or CSRF token.",
    ),
    (
        "404",
        "The workspace, collection or record is unknown or not readable by the caller.",
    ),
    ("405", "The route does not take this method."),
    ("408", "The body did not arrive within the body timeout."),
    (
        "409",
        "A stale revision, a failed transition condition, an idempotency conflict or a version conflict.",
    ),
    ("413", "The body is larger than the server accepts."),
    ("415", "The body is not application/json in UTF-8."),
    ("422", "Data or a package that fails its schema."),
    (
        "429",
        "The principal sent too many requests or has too many in flight, or the client address failed to authenticate too often (see Retry-After).",
    ),
    ("500", "The store failed; the operation had no effect."),
    ("503", "The server is serving as many requests as it can."),
    ("504", "The request took too long and was abandoned."),
    ("default", "Any other refusal, in the same shape."),
];

/// The document for a server reached at `base_url`.
///
/// ```
/// let document = rcip_server::openapi_document("https://relationships.example");
/// assert_eq!(document["openapi"], "3.1.0");
/// let requests = document["components"]["schemas"]["OperationRequest"]["oneOf"]
///     .as_array().unwrap();
/// assert_eq!(requests.len(), rcip_platform::operations().len());
/// ```
#[must_use]
pub fn openapi_document(base_url: &str) -> Value {
    let mut schemas = Map::new();
    let mut requests = Vec::new();
    let mut mapping = Map::new();
    let mut results = Vec::new();
    let mut listed = Vec::new();
    for spec in operations() {
        let name = spec.name;
        let (arguments, result, request) = (
            format!("{name}.arguments"),
            format!("{name}.result"),
            format!("{name}.request"),
        );
        schemas.insert(arguments.clone(), spec.input.clone());
        schemas.insert(result.clone(), spec.output.clone());
        schemas.insert(
            request.clone(),
            json!({
                "type": "object",
                "title": name,
                "description": spec.summary,
                "properties": {
                    "operation": {"const": name},
                    "arguments": {"$ref": reference(&arguments)},
                },
                "required": ["operation", "arguments"],
                "additionalProperties": false,
            }),
        );
        requests.push(json!({"$ref": reference(&request)}));
        mapping.insert(name.to_owned(), Value::String(reference(&request)));
        results.push(json!({"$ref": reference(&result)}));
        listed.push(json!({
            "operation": name,
            "summary": spec.summary,
            "scope": spec.scope.map(DelegatedScope::as_str),
            "agents": match spec.agents {
                Agents::Allowed => "allowed",
                Agents::ConsoleOnly => "console-only",
                Agents::AgentMembersOnly => "agent-members-only",
            },
            "effect": spec.effect.as_str(),
            "tool": spec.tool_name(),
            "arguments": reference(&arguments),
            "result": reference(&result),
        }));
    }
    schemas.insert(
        "OperationRequest".to_owned(),
        json!({
            "description": "One operation of the registry and its arguments.",
            "oneOf": requests,
            "discriminator": {"propertyName": "operation", "mapping": mapping},
        }),
    );
    schemas.insert(
        "OperationResponse".to_owned(),
        json!({
            "type": "object",
            "properties": {"result": {"anyOf": results}},
            "required": ["result"],
            "additionalProperties": false,
        }),
    );
    schemas.insert("Issue".to_owned(), issue_schema());
    schemas.insert("Error".to_owned(), error_schema());
    schemas.insert("ProtectedResourceMetadata".to_owned(), metadata_schema());

    let mut responses = Map::new();
    responses.insert(
        "200".to_owned(),
        json!({"description": "The operation's result.",
               "content": {"application/json": {"schema": {"$ref": reference("OperationResponse")}}}}),
    );
    for (status, why) in ERROR_STATUSES {
        let mut response = json!({
            "description": why,
            "content": {"application/json": {"schema": {"$ref": reference("Error")}}},
        });
        match status {
            "401" => {
                response["headers"] = json!({"WWW-Authenticate": {
                    "description": "Bearer, with resource_metadata: where the protected-resource metadata is (RFC 9728).",
                    "schema": {"type": "string"}}});
            }
            "429" => {
                response["headers"] = json!({"Retry-After": {
                    "description": "Seconds until the principal may send again.",
                    "schema": {"type": "integer", "minimum": 1}}});
            }
            _ => {}
        }
        responses.insert(status.to_owned(), response);
    }

    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "rcip Relationship Protocol platform",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Every operation of the relationship/v1 platform through one endpoint: POST /v1/operations with {\"operation\", \"arguments\"}. Generated from the operation registry.",
        },
        "servers": [{"url": base_url}],
        "paths": {
            "/v1/operations": {"post": {
                "operationId": "callOperation",
                "summary": "Run one operation of the registry.",
                "description": "The request names the operation and gives its arguments; see x-rcip-operations for the arguments and result schema of each operation.",
                "security": [{"bearer": []}],
                "requestBody": {"required": true, "content": {"application/json": {
                    "schema": {"$ref": reference("OperationRequest")}}}},
                "responses": responses,
            }},
            "/v1/openapi.json": {"get": {
                "operationId": "openapiDocument",
                "summary": "This document.",
                "security": [],
                "responses": {"200": {"description": "The OpenAPI 3.1 document.",
                    "content": {"application/json": {"schema": {"type": "object"}}}}},
            }},
            "/.well-known/oauth-protected-resource": {"get": {
                "operationId": "protectedResourceMetadata",
                "summary": "RFC 9728 protected-resource metadata of the REST API.",
                "security": [],
                "responses": {"200": {"description": "The metadata.",
                    "content": {"application/json": {"schema": {"$ref": reference("ProtectedResourceMetadata")}}}}},
            }},
            "/.well-known/oauth-protected-resource/mcp": {"get": {
                "operationId": "mcpProtectedResourceMetadata",
                "summary": "RFC 9728 protected-resource metadata of the MCP endpoint.",
                "security": [],
                "responses": {"200": {"description": "The metadata.",
                    "content": {"application/json": {"schema": {"$ref": reference("ProtectedResourceMetadata")}}}}},
            }},
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {
                "type": "http", "scheme": "bearer",
                "description": "A JWT from a configured issuer, or an opaque token minted by `rcip token create`.",
            }},
        },
        "x-rcip-operations": listed,
    })
}

fn reference(name: &str) -> String {
    format!("#/components/schemas/{name}")
}

fn issue_schema() -> Value {
    json!({
        "type": "object",
        "description": "One failing part of what was sent.",
        "properties": {
            "instancePath": {"type": "string", "description": "JSON Pointer into what was sent."},
            "keyword": {"type": "string", "description": "The failing schema keyword."},
            "message": {"type": "string"},
            "params": {"type": "object"},
        },
        "required": ["instancePath", "keyword", "message"],
        "additionalProperties": false,
    })
}

fn error_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$",
                         "description": "Stable: branch on it."},
                "message": {"type": "string", "description": "Public: safe to show."},
                "issues": {"type": "array", "items": {"$ref": reference("Issue")}},
            },
            "required": ["code", "message"],
            "additionalProperties": false,
        }},
        "required": ["error"],
        "additionalProperties": false,
    })
}

fn metadata_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "resource": {"type": "string"},
            "authorization_servers": {"type": "array", "items": {"type": "string"}},
            "bearer_methods_supported": {"type": "array", "items": {"type": "string"}},
            "scopes_supported": {"type": "array", "items": {"type": "string"}},
            "resource_name": {"type": "string"},
            "resource_documentation": {"type": "string"},
        },
        "required": ["resource"],
    })
}

pub(crate) async fn serve(State(shared): State<Arc<Shared>>) -> Response {
    json_response(StatusCode::OK, &shared.openapi)
}
