//! Who is calling: the one seam between the routes and the credentials they accept.
use std::future::Future;
use std::pin::Pin;

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

/// Why a request was refused before any operation ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthRefusal {
    /// 401 (no credential, or a bad one) or 403 (a browser request with a wrong Origin or CSRF token).
    pub status: u16,
    /// A stable code, e.g. `UNAUTHENTICATED`, `INVALID_TOKEN`, `ORIGIN_REFUSED`, `CSRF_REQUIRED`.
    pub code: &'static str,
    /// The public message.
    pub message: String,
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
