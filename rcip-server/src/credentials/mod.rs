//! The service's credentials: [`Credentials`] turns a request's head into a caller
//! ([`Authenticate`]) from an opaque API token, a JWT of a configured issuer, or a console
//! session cookie; [`console_router`] is how a human gets that session.
//!
//! The rules (docs/server-design.md, "Credentials"):
//!
//! - `Authorization: Bearer rcip_...`: an opaque token of the [`TokenStore`]; its agent,
//!   scopes and one workspace. Unknown or revoked: 401 `INVALID_TOKEN`.
//! - `Authorization: Bearer <JWT>`: signed by a configured [`Issuer`]'s key (asymmetric
//!   algorithms only), `iss` that issuer, `aud` this resource, `exp`/`nbf` with a small
//!   leeway; `sub` is the agent, `scope` its delegated scopes (scopes this service does not
//!   define are ignored). Each failure has its own 401 code.
//! - Cookie `rcip_session` (REST only; on MCP a cookie is not a credential): the human
//!   signed in. Every such request must carry an allowed `Origin` exactly (403
//!   `ORIGIN_REFUSED`) and the session's `X-CSRF-Token` (403 `CSRF_REQUIRED` /
//!   `CSRF_INVALID`), whatever its method.
//! - A request with both a bearer token and the cookie is the bearer's: the cookie is
//!   ignored. A browser attaches the cookie to every same-site request on its own, so a page
//!   of this site using a token would otherwise be refused; the Authorization header is
//!   never attached by the browser, so honouring it opens no cross-site path.
//! - Nothing: 401 `UNAUTHENTICATED`. A store failure: 503 `CREDENTIALS_UNAVAILABLE`.

mod console;
mod jwt;
mod refusal;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{KeyInit, Mac};
use http::header::{AUTHORIZATION, COOKIE, ORIGIN};
use rcip_records::{Actor, Caller};
use sha2::Sha256;

pub use console::console_router;
pub use jwt::{Issuer, IssuerError};

use crate::authenticate::{AuthFuture, AuthRefusal, Authenticate, Authenticated, Door};
use crate::tokens::{self, SecretHash, Session, TokenStore};
use refusal::Refusal;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "rcip_session";

/// The header a session's requests carry its CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// How long a console session lasts when the configuration does not say.
pub const DEFAULT_SESSION_LIFETIME: Duration = Duration::from_secs(8 * 60 * 60);

/// The clock skew allowed on a JWT's `exp` and `nbf` when the configuration does not say.
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

type HmacSha256 = hmac::Hmac<Sha256>;

/// What the credentials accept.
#[derive(Debug, Clone)]
pub struct CredentialsConfig {
    /// The browser origins allowed to use a console session (`scheme://host[:port]`,
    /// compared exactly with the `Origin` header). None: no session request is accepted.
    pub allowed_origins: Vec<String>,
    /// This resource's identifier: the `aud` a JWT must carry on REST (RFC 9728's
    /// `resource`); on `/mcp` the audience is this followed by `/mcp`, as that endpoint's own
    /// metadata document names it.
    pub resource: String,
    /// The trusted JWT issuers and their keys. None: JWTs are refused.
    pub issuers: Vec<Issuer>,
    /// Whether the session cookie is `Secure` (sent over HTTPS only): on unless the service
    /// is reached over plain HTTP (a loopback development setup).
    pub secure_cookie: bool,
    /// How long a console session lasts.
    pub session_lifetime: Duration,
    /// The clock skew allowed on `exp` and `nbf`.
    pub leeway: Duration,
}

impl CredentialsConfig {
    /// The configuration for the resource `resource`: no origins and no issuers yet, a
    /// `Secure` cookie, the default session lifetime and leeway.
    #[must_use]
    pub fn new(resource: impl Into<String>) -> Self {
        Self {
            allowed_origins: Vec::new(),
            resource: resource.into(),
            issuers: Vec::new(),
            secure_cookie: true,
            session_lifetime: DEFAULT_SESSION_LIFETIME,
            leeway: DEFAULT_LEEWAY,
        }
    }
}

/// The service's [`Authenticate`]: tokens, JWTs and console sessions (see the module
/// documentation for the rules).
#[derive(Debug, Clone)]
pub struct Credentials {
    config: Arc<CredentialsConfig>,
    store: Arc<dyn TokenStore>,
}

/// A console session just started by [`Credentials::sign_in`].
#[derive(Debug, Clone)]
pub struct SignedIn {
    /// The human signed in.
    pub principal: String,
    /// The `Set-Cookie` value that hands the browser the session.
    pub set_cookie: String,
    /// The CSRF token the session's requests must carry.
    pub csrf_token: String,
}

impl Credentials {
    /// Credentials checked against `config`, with tokens, tickets and sessions in `store`.
    #[must_use]
    pub fn new(config: CredentialsConfig, store: Arc<dyn TokenStore>) -> Self {
        Self {
            config: Arc::new(config),
            store,
        }
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &CredentialsConfig {
        &self.config
    }

    /// The store of tokens, tickets and sessions.
    #[must_use]
    pub fn store(&self) -> &Arc<dyn TokenStore> {
        &self.store
    }

    /// Consumes the sign-in `ticket` and starts a session for its principal.
    ///
    /// # Errors
    ///
    /// 401 `TICKET_INVALID` for a ticket unknown, used or expired; 503 on a store failure.
    pub async fn sign_in(&self, ticket: &str) -> Result<SignedIn, AuthRefusal> {
        Ok(self.sign_in_inner(ticket).await?)
    }

    async fn sign_in_inner(&self, ticket: &str) -> Result<SignedIn, Refusal> {
        if !tokens::is_secret_text(ticket) {
            return Err(refusal::TICKET_INVALID);
        }
        let now = tokens::now();
        let principal = self
            .store
            .consume_ticket(SecretHash::of(ticket), now)
            .await
            .map_err(unavailable)?
            .ok_or(refusal::TICKET_INVALID)?;
        let secret = tokens::random_text().map_err(unavailable)?;
        let lifetime = i64::try_from(self.config.session_lifetime.as_secs()).unwrap_or(i64::MAX);
        let session = Session {
            principal: principal.clone(),
            created_at: now,
            expires_at: now.saturating_add(lifetime),
        };
        self.store
            .insert_session(SecretHash::of(&secret), &session)
            .await
            .map_err(unavailable)?;
        Ok(SignedIn {
            principal,
            set_cookie: self.session_cookie(&secret),
            csrf_token: csrf_token(&secret),
        })
    }

    /// The `Set-Cookie` value carrying session `secret`.
    fn session_cookie(&self, secret: &str) -> String {
        let max_age = self.config.session_lifetime.as_secs();
        let secure = if self.config.secure_cookie {
            "; Secure"
        } else {
            ""
        };
        format!(
            "{SESSION_COOKIE}={secret}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}"
        )
    }

    /// The `Set-Cookie` value that removes the session cookie.
    fn clear_cookie(&self) -> String {
        let secure = if self.config.secure_cookie {
            "; Secure"
        } else {
            ""
        };
        format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}")
    }

    async fn bearer(
        &self,
        value: &http::HeaderValue,
        door: Door,
    ) -> Result<Authenticated, Refusal> {
        let value = value
            .to_str()
            .map_err(|_| refusal::UNSUPPORTED_AUTHORIZATION)?;
        let (scheme, token) = value
            .split_once(' ')
            .ok_or(refusal::UNSUPPORTED_AUTHORIZATION)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(refusal::UNSUPPORTED_AUTHORIZATION);
        }
        let token = token.trim();
        if token.starts_with(tokens::TOKEN_PREFIX) {
            let info = tokens::active_token(self.store.as_ref(), token)
                .await
                .map_err(unavailable)?
                .ok_or(refusal::INVALID_TOKEN)?;
            return Ok(Authenticated {
                caller: Caller::agent(Actor::new(info.principal), info.scopes),
                workspace: Some(info.workspace),
            });
        }
        // `/mcp` is a resource of its own (its metadata document names `<resource>/mcp`), so
        // an MCP client asks its authorization server for a token with that audience.
        let audience = match door {
            Door::Rest => self.config.resource.clone(),
            Door::Mcp => format!(
                "{}{}",
                self.config.resource.trim_end_matches('/'),
                crate::paths::MCP_PATH
            ),
        };
        let verified = jwt::verify(
            token,
            &self.config.issuers,
            &audience,
            self.config.leeway.as_secs(),
        )?;
        Ok(Authenticated {
            caller: Caller::agent(Actor::new(verified.subject), verified.scopes),
            workspace: None,
        })
    }

    /// The session a browser request carries, after its Origin and CSRF token are checked
    /// (the cheap checks first: a refused request costs no database round trip). Also the
    /// session's secret, which sign-out needs.
    async fn session(
        &self,
        parts: &http::request::Parts,
        secret: &str,
        csrf: CsrfCheck,
    ) -> Result<Session, Refusal> {
        self.check_origin(parts, csrf == CsrfCheck::Required)?;
        if csrf == CsrfCheck::Required {
            let presented = parts
                .headers
                .get(CSRF_HEADER)
                .ok_or(refusal::CSRF_REQUIRED)?;
            if !csrf_matches(secret, presented.as_bytes()) {
                return Err(refusal::CSRF_INVALID);
            }
        }
        self.store
            .find_session(SecretHash::of(secret), tokens::now())
            .await
            .map_err(unavailable)?
            .ok_or(refusal::SESSION_INVALID)
    }

    /// The request's `Origin` must be an allowed one; when not `required`, a request
    /// without one passes (a same-origin `GET` from a page carries none).
    fn check_origin(&self, parts: &http::request::Parts, required: bool) -> Result<(), Refusal> {
        let mut origins = parts.headers.get_all(ORIGIN).iter();
        match (origins.next(), origins.next()) {
            (None, _) if !required => Ok(()),
            (Some(origin), None)
                if self
                    .config
                    .allowed_origins
                    .iter()
                    .any(|allowed| allowed.as_bytes() == origin.as_bytes()) =>
            {
                Ok(())
            }
            _ => Err(refusal::ORIGIN_REFUSED),
        }
    }
}

/// Whether a session request must carry its CSRF token (every request but the one that
/// hands the token out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CsrfCheck {
    Required,
    NotYet,
}

impl Authenticate for Credentials {
    fn authenticate<'a>(&'a self, parts: &'a http::request::Parts, door: Door) -> AuthFuture<'a> {
        Box::pin(async move {
            let mut authorization = parts.headers.get_all(AUTHORIZATION).iter();
            match (authorization.next(), authorization.next()) {
                (Some(value), None) => return Ok(self.bearer(value, door).await?),
                (Some(_), Some(_)) => return Err(refusal::UNSUPPORTED_AUTHORIZATION.into()),
                (None, _) => {}
            }
            if door == Door::Rest
                && let Some(secret) = session_secret(parts)
            {
                let session = self.session(parts, secret, CsrfCheck::Required).await?;
                return Ok(Authenticated {
                    caller: Caller::human(Actor::new(session.principal)),
                    workspace: None,
                });
            }
            Err(refusal::UNAUTHENTICATED.into())
        })
    }
}

/// The session cookie's value, when the request has one of the right shape.
fn session_secret(parts: &http::request::Parts) -> Option<&str> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|value| tokens::is_secret_text(value))
}

/// The CSRF token bound to session `secret`: HMAC-SHA256 keyed by the session's secret.
/// Only a holder of the cookie can compute it (the cookie is HttpOnly, so page scripts get
/// it from `GET /console/session`), every instance recomputes it without shared state, and
/// the store's hash of the secret does not reveal it.
fn csrf_mac(secret: &str) -> HmacSha256 {
    let mut mac = <HmacSha256 as KeyInit>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
    mac.update(b"rcip-csrf/v1");
    mac
}

fn csrf_token(secret: &str) -> String {
    URL_SAFE_NO_PAD.encode(csrf_mac(secret).finalize().into_bytes())
}

fn csrf_matches(secret: &str, presented: &[u8]) -> bool {
    let Ok(tag) = URL_SAFE_NO_PAD.decode(presented) else {
        return false;
    };
    // `verify_slice` compares in constant time: the token is compared with a value an
    // attacker is guessing, unlike the store's lookups by hash.
    csrf_mac(secret).verify_slice(&tag).is_ok()
}

/// A store failure: logged with its text, answered without it.
fn unavailable(error: tokens::StoreError) -> Refusal {
    tracing::error!(%error, "credential check failed");
    refusal::CREDENTIALS_UNAVAILABLE
}
