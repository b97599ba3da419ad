//! `POST /v1/operations`: `{"operation": NAME, "arguments": {...}}` answered
//! `{"result": {...}}` (200) or `{"error": {...}}` under the refusal's status.
//!
//! The request is refused, in this order: 415 `UNSUPPORTED_MEDIA_TYPE` when its
//! `Content-Type` is not `application/json`; 413 `BODY_TOO_LARGE`, 400 `TOO_DEEP` (the
//! limit layers); 400 `MALFORMED_JSON` when the body is not JSON; 400 `INVALID_REQUEST` when
//! it is not an object of exactly `operation` (a string) and `arguments` (with the issues);
//! then whatever the platform answers.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use rcip_core::ValidationIssue;
use serde_json::{Map, Value, json};

use crate::authenticate::Authenticated;
use crate::error::{ApiError, json_response};
use crate::limits::{is_json, read_body};
use crate::server::Shared;

/// The members of a request body.
pub(crate) const MEMBERS: [&str; 2] = ["operation", "arguments"];

pub(crate) async fn operations(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    match run(&shared, request).await {
        Ok(result) => json_response(StatusCode::OK, &json!({ "result": result })),
        Err(error) => error.into_response(),
    }
}

async fn run(shared: &Shared, request: Request) -> Result<Value, ApiError> {
    if !is_json(&request) {
        return Err(ApiError::new(
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            "send the request as Content-Type: application/json",
        ));
    }
    let who = request
        .extensions()
        .get::<Authenticated>()
        .cloned()
        .ok_or_else(|| ApiError::new(500, "INTERNAL", "the request was not authenticated"))?;
    let bytes = read_body(request.into_body()).await?;
    let body: Value = serde_json::from_slice(&bytes).map_err(|error| {
        ApiError::new(
            400,
            "MALFORMED_JSON",
            format!("the body is not JSON: {error}"),
        )
    })?;
    let (operation, arguments) = envelope(body)?;
    Ok(shared.call(&who, &operation, arguments).await?)
}

/// The operation and its arguments, or 400 `INVALID_REQUEST` with every problem of the
/// envelope (the arguments themselves are the platform's to check).
fn envelope(body: Value) -> Result<(String, Value), ApiError> {
    let invalid = |issues| {
        ApiError::new(
            400,
            "INVALID_REQUEST",
            "the body must be an object with exactly \"operation\" (a string) and \"arguments\"",
        )
        .with_issues(issues)
    };
    let Value::Object(mut members) = body else {
        return Err(invalid(vec![ValidationIssue::new(
            "",
            "type",
            "must be object",
        )]));
    };
    let mut issues = Vec::new();
    for name in members
        .keys()
        .filter(|name| !MEMBERS.contains(&name.as_str()))
    {
        let mut issue = ValidationIssue::new(
            "",
            "additionalProperties",
            "must NOT have additional properties",
        );
        issue.params = param("additionalProperty", name);
        issues.push(issue);
    }
    for name in MEMBERS.iter().filter(|name| !members.contains_key(**name)) {
        let mut issue = ValidationIssue::new(
            "",
            "required",
            format!("must have required property '{name}'"),
        );
        issue.params = param("missingProperty", name);
        issues.push(issue);
    }
    let operation = match members.remove("operation") {
        Some(Value::String(operation)) => Some(operation),
        Some(_) => {
            let mut issue = ValidationIssue::new("/operation", "type", "must be string");
            issue.params = param("type", "string");
            issues.push(issue);
            None
        }
        None => None,
    };
    match (operation, members.remove("arguments")) {
        (Some(operation), Some(arguments)) if issues.is_empty() => Ok((operation, arguments)),
        _ => {
            // A caller's unknown member is echoed at most this long.
            for issue in &mut issues {
                if let Some(Value::String(name)) = issue.params.get_mut("additionalProperty") {
                    *name = name
                        .chars()
                        .take(rcip_relationship::MAX_ECHOED_NAME)
                        .collect();
                }
            }
            Err(invalid(issues))
        }
    }
}

fn param(name: &str, value: &str) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert(name.to_owned(), Value::String(value.to_owned()));
    params
}
