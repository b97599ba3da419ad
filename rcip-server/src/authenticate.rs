//! Who is calling: the one seam between the routes and the credentials they accept.
use std::future::Future;
use std::pin::Pin;

use http::StatusCode;
use rcip_records::Caller;

/// Which door a request came through: browser sessions are accepted on REST only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `POST /v1/operations` (and the console's own routes).
    Rest,
    /// `/mcp`.
    Mcp,
}

/// An authenticated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    /// Who calls, with the scopes the credential delegates.
    pub caller: Caller,
    /// The one workspace the credential may reach (an opaque token's), or `None` for any.
    pub workspace: Option<String>,
}

/// The caller of a request behind a door, as its admission layer found it (a handler
/// argument). A route outside the doors has none: 500, never a guess.
impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Authenticated {
    type Rejection = crate::error::ApiError;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Authenticated>()
            .cloned()
            .ok_or_else(|| {
                crate::error::ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL",
                    "the request was not authenticated",
                )
            })
    }
}

/// Why a request was refused before any operation ran.
///
/// ```
/// use http::StatusCode;
/// use rcip_server::AuthRefusal;
/// let refused = AuthRefusal::new(StatusCode::UNAUTHORIZED, "TOKEN_EXPIRED", "the token has expired")
///     .invalid_token();
/// assert!(refused.invalid_token);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRefusal {
    /// 401 (no credential, or a bad one) or 403 (a browser request with a wrong Origin or CSRF token).
    pub status: StatusCode,
    /// A stable code, e.g. `UNAUTHENTICATED`, `INVALID_TOKEN`, `ORIGIN_REFUSED`, `CSRF_REQUIRED`.
    pub code: &'static str,
    /// The public message.
    pub message: String,
    /// A bearer token was presented and refused (unknown, revoked, expired, forged, for
    /// another audience...): the 401's challenge then says `error="invalid_token"` (RFC 6750,
    /// 3.1), so a client knows to get a new one.
    pub invalid_token: bool,
}

impl AuthRefusal {
    /// A refusal that is not about a presented bearer token.
    #[must_use]
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            invalid_token: false,
        }
    }

    /// The same refusal, of a bearer token that was presented.
    #[must_use]
    pub fn invalid_token(mut self) -> Self {
        self.invalid_token = true;
        self
    }
}

/// The future [`Authenticate::authenticate`] returns.
pub type AuthFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Authenticated, AuthRefusal>> + Send + 'a>>;

/// Turns a request's head into a caller, or a refusal. `rcip_server::Credentials` is the
/// service's own; tests and applications may supply theirs.
pub trait Authenticate: Send + Sync + 'static {
    /// Authenticates one request that came through `door`.
    fn authenticate<'a>(&'a self, parts: &'a http::request::Parts, door: Door) -> AuthFuture<'a>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::extract::FromRequestParts;

    #[tokio::test]
    async fn a_route_outside_a_door_gets_no_caller_but_a_500() {
        let (mut parts, ()) = http::Request::new(()).into_parts();
        let refused = Authenticated::from_request_parts(&mut parts, &())
            .await
            .err()
            .map(|error| (error.status, error.code));
        assert_eq!(
            refused,
            Some((StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL"))
        );
        let who = Authenticated {
            caller: Caller::human(rcip_records::Actor::new("ada")),
            workspace: None,
        };
        parts.extensions.insert(who.clone());
        let found = Authenticated::from_request_parts(&mut parts, &()).await;
        assert_eq!(found.ok(), Some(who));
    }
}
