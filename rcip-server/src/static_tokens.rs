//! A fixed table of bearer tokens: for tests, local development (`rcip serve
//! --insecure-dev-token`) and applications that hand out their own long-lived secrets. It
//! is not the service's credential scheme (sessions, JWTs and opaque tokens stored hashed).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use http::request::Parts;
use http::{StatusCode, header};

use crate::authenticate::{AuthFuture, AuthRefusal, Authenticate, Authenticated, Door};

/// Bearer tokens, each standing for one [`Authenticated`] caller, on both doors.
///
/// ```
/// use rcip_records::{Actor, Caller};
/// use rcip_server::{Authenticated, StaticTokens};
/// let tokens = StaticTokens::new().token("dev-ada", Authenticated {
///     caller: Caller::human(Actor::new("ada")),
///     workspace: None,
/// });
/// assert_eq!(tokens.len(), 1);
/// ```
#[derive(Default, Clone)]
pub struct StaticTokens {
    tokens: HashMap<String, Authenticated>,
    /// Who judges the requests that carry none of the tokens (none: they are refused 401).
    otherwise: Option<Arc<dyn Authenticate>>,
}

impl fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The tokens are secrets: only how many there are is shown.
        f.debug_struct("StaticTokens")
            .field("tokens", &self.tokens.len())
            .field("otherwise", &self.otherwise.is_some())
            .finish()
    }
}

impl StaticTokens {
    /// No tokens: every request is refused 401.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `Authorization: Bearer <token>` as `who`.
    #[must_use]
    pub fn token(mut self, token: impl Into<String>, who: Authenticated) -> Self {
        self.tokens.insert(token.into(), who);
        self
    }

    /// Hands every request that carries none of the tokens to `next` (the service's own
    /// credentials, say) instead of refusing it: `rcip serve --insecure-dev-token` beside
    /// sessions, JWTs and opaque tokens.
    #[must_use]
    pub fn otherwise(mut self, next: Arc<dyn Authenticate>) -> Self {
        self.otherwise = Some(next);
        self
    }

    /// How many tokens there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

/// The token of an `Authorization: Bearer <token>` header (the scheme in any case), if the
/// request has one.
///
/// ```
/// let request = http::Request::get("/").header("authorization", "bearer abc").body(()).unwrap();
/// let (parts, _) = request.into_parts();
/// assert_eq!(rcip_server::bearer_token(&parts), Some("abc"));
/// ```
#[must_use]
pub fn bearer_token(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl Authenticate for StaticTokens {
    fn authenticate<'a>(&'a self, parts: &'a Parts, door: Door) -> AuthFuture<'a> {
        let known = bearer_token(parts).and_then(|token| self.tokens.get(token));
        if let (None, Some(next)) = (known, &self.otherwise) {
            return next.authenticate(parts, door);
        }
        let answer = match bearer_token(parts) {
            // A header that is there but is no `Bearer <token>` in ASCII: as the service's
            // credentials answer it.
            None if parts.headers.contains_key(header::AUTHORIZATION) => Err(AuthRefusal::new(
                StatusCode::UNAUTHORIZED,
                "UNSUPPORTED_AUTHORIZATION",
                "the Authorization header must be `Bearer <token>`",
            )),
            None => Err(AuthRefusal::new(
                StatusCode::UNAUTHORIZED,
                "UNAUTHENTICATED",
                "send a bearer token: Authorization: Bearer <token>",
            )),
            Some(token) => self.tokens.get(token).cloned().ok_or_else(|| {
                AuthRefusal::new(
                    StatusCode::UNAUTHORIZED,
                    "INVALID_TOKEN",
                    "the bearer token is not accepted",
                )
                .invalid_token()
            }),
        };
        Box::pin(async move { answer })
    }
}
