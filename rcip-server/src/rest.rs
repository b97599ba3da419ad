//! `POST /v1/operations`: `{"operation": NAME, "arguments": {...}}` answered
//! `{"result": {...}}` (200) or `{"error": {...}}` under the refusal's status.
//!
//! The request is refused, in this order: 400 `AMBIGUOUS_REQUEST` with several
//! `Content-Type` headers; 415 `UNSUPPORTED_MEDIA_TYPE` when its `Content-Type` is not
//! `application/json` in UTF-8; 413 `BODY_TOO_LARGE`, 408 `BODY_TIMEOUT`, 400 `TOO_DEEP`
//! (the limit layers); 400 `MALFORMED_JSON` when the body is not JSON; 400
//! `AMBIGUOUS_REQUEST` when an object names a member twice; 400 `INVALID_REQUEST` when
//! it is not an object of exactly `operation` (a string) and `arguments` (with the issues);
//! then whatever the platform answers.

use std::sync::Arc;

use axum::extract::{FromRequest, Request, State};
use axum::response::Response;
use http::StatusCode;
use rcip_core::ValidationIssue;
use serde_json::{Map, Value, json};

use crate::authenticate::{Authenticated, Door};
use crate::error::{ApiError, json_response};
use crate::limits::CheckedJson;
use crate::shared::Shared;

/// The members of a request body.
pub(crate) const MEMBERS: [&str; 2] = ["operation", "arguments"];

pub(crate) async fn operations(
    State(shared): State<Arc<Shared>>,
    who: Authenticated,
    OperationRequest {
        operation,
        arguments,
    }: OperationRequest,
) -> Result<Response, ApiError> {
    let result = shared.call(&who, Door::Rest, &operation, arguments).await?;
    Ok(json_response(StatusCode::OK, &json!({ "result": result })))
}

/// A request body: the operation and its arguments, from the JSON the door's guard checked.
/// 415 when the body was not JSON (the guard refuses a JSON body it cannot read, and lets
/// other bodies through), then [`parse`] and [`envelope`].
pub(crate) struct OperationRequest {
    operation: String,
    arguments: Value,
}

impl<S: Send + Sync> FromRequest<S> for OperationRequest {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Self, ApiError> {
        let Some(CheckedJson(bytes)) = request.extensions().get::<CheckedJson>() else {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "UNSUPPORTED_MEDIA_TYPE",
                "send the request as Content-Type: application/json",
            ));
        };
        let (operation, arguments) = envelope(parse(bytes)?)?;
        Ok(Self {
            operation,
            arguments,
        })
    }
}

/// The body as JSON: 400 `MALFORMED_JSON` when it is not JSON, 400 `AMBIGUOUS_REQUEST` when
/// an object names a member twice (which one counts is up to each reader: refused rather
/// than guessed).
fn parse(bytes: &[u8]) -> Result<Value, ApiError> {
    match serde_json::from_slice::<UniqueKeys>(bytes) {
        Ok(UniqueKeys(value)) => Ok(value),
        // The only data error the reader raises is a repeated member.
        Err(error) if error.is_data() => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "AMBIGUOUS_REQUEST",
            format!("the body is ambiguous: {error}"),
        )),
        Err(error) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "MALFORMED_JSON",
            format!("the body is not JSON: {error}"),
        )),
    }
}

/// A JSON value read with every object's members unique.
struct UniqueKeys(Value);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueVisitor).map(UniqueKeys)
    }
}

/// serde_json's `Value` visitor with one difference: a member named twice in one object is
/// an error (serde_json keeps the last; no option of its own refuses it).
struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            let UniqueKeys(value) = map.next_value()?;
            if members.contains_key(&name) {
                let shown: String = name.chars().take(rcip_platform::MAX_ECHOED_NAME).collect();
                return Err(serde::de::Error::custom(format_args!(
                    "member {shown:?} appears twice in one object"
                )));
            }
            members.insert(name, value);
        }
        Ok(Value::Object(members))
    }
}

/// The operation and its arguments, or 400 `INVALID_REQUEST` with every problem of the
/// envelope (the arguments themselves are the platform's to check).
fn envelope(body: Value) -> Result<(String, Value), ApiError> {
    let invalid = |issues| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
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
                    *name = name.chars().take(rcip_platform::MAX_ECHOED_NAME).collect();
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
