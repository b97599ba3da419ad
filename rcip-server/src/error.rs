//! The one error body every route answers with: `{"error": {"code", "message", "issues"?}}`,
//! under the status the refusal carries.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use rcip_core::ValidationIssue;
use rcip_platform::PlatformError;
use serde_json::{Value, json};

/// `application/json`, the type of every answer of the API.
pub(crate) const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// A refusal answered before, or instead of, an operation's result.
///
/// ```
/// use http::StatusCode;
/// use rcip_server::ApiError;
/// let error = ApiError::new(
///     StatusCode::PAYLOAD_TOO_LARGE,
///     "BODY_TOO_LARGE",
///     "the body is larger than 1048576 bytes",
/// );
/// assert_eq!(
///     error.body(),
///     serde_json::json!({"error": {"code": "BODY_TOO_LARGE",
///                                  "message": "the body is larger than 1048576 bytes"}})
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable SCREAMING_SNAKE_CASE code.
    pub code: &'static str,
    /// The public message.
    pub message: String,
    /// Validation issues (JSON Pointers into what was sent), when there are any.
    pub issues: Vec<ValidationIssue>,
    /// Seconds to wait before trying again (429: sent as `Retry-After`).
    pub retry_after: Option<u64>,
    /// The `WWW-Authenticate` challenge of a 401.
    pub challenge: Option<String>,
}

impl ApiError {
    /// An error without issues: the status, the code and the message (the order of
    /// [`PlatformError::new`]).
    #[must_use]
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            issues: Vec::new(),
            retry_after: None,
            challenge: None,
        }
    }

    /// The same error with these issues.
    #[must_use]
    pub fn with_issues(mut self, issues: Vec<ValidationIssue>) -> Self {
        self.issues = issues;
        self
    }

    /// The JSON body.
    #[must_use]
    pub fn body(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if !self.issues.is_empty() {
            error["issues"] = serde_json::to_value(&self.issues).unwrap_or(Value::Null);
        }
        json!({ "error": error })
    }
}

impl From<PlatformError> for ApiError {
    fn from(error: PlatformError) -> Self {
        // The platform's message is public already (a store failure's text went to the log).
        Self {
            status: error.status,
            code: error.code,
            message: error.message,
            issues: error.issues,
            retry_after: None,
            challenge: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = json_response(self.status, &self.body());
        let headers = response.headers_mut();
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(value) = self
            .challenge
            .as_deref()
            .and_then(|c| HeaderValue::from_str(c).ok())
        {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        response.extensions_mut().insert(RefusalCode(self.code));
        response
    }
}

/// The stable code of an error body, left in the answer's extensions by
/// [`ApiError`]'s response for the metrics layer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RefusalCode(pub(crate) &'static str);

/// `value` as a JSON response that no cache keeps (answers depend on who asks).
pub(crate) fn json_response(status: StatusCode, value: &Value) -> Response {
    let mut response = Response::new(Body::from(value.to_string()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, JSON);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
