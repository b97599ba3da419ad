//! Every refusal the credentials give, each with its stable code, status and public message
//! (the table in docs/server-design.md, "Credentials"). A refused bearer token's refusal is
//! made with [`bad_token`] (`INVALID_TOKEN` and the `TOKEN_*` codes): its 401's challenge
//! adds `error="invalid_token"`.

use http::StatusCode;

use crate::authenticate::AuthRefusal;

/// A refusal as a constant (made into an [`AuthRefusal`] at the edge).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) code: &'static str,
    pub(crate) message: &'static str,
    /// Of a bearer token that was presented ([`AuthRefusal::invalid_token`]).
    pub(crate) invalid_token: bool,
}

impl From<Refusal> for AuthRefusal {
    fn from(refusal: Refusal) -> Self {
        AuthRefusal {
            status: refusal.status,
            code: refusal.code,
            message: refusal.message.to_owned(),
            invalid_token: refusal.invalid_token,
        }
    }
}

const fn r(status: StatusCode, code: &'static str, message: &'static str) -> Refusal {
    Refusal {
        status,
        code,
        message,
        invalid_token: false,
    }
}

/// A refusal of a bearer token that was presented.
const fn bad_token(code: &'static str, message: &'static str) -> Refusal {
    Refusal {
        status: StatusCode::UNAUTHORIZED,
        code,
        message,
        invalid_token: true,
    }
}

pub(crate) const UNAUTHENTICATED: Refusal = r(
    StatusCode::UNAUTHORIZED,
    "UNAUTHENTICATED",
    "this request needs a bearer token or a console session",
);
pub(crate) const INVALID_TOKEN: Refusal = bad_token(
    "INVALID_TOKEN",
    "the bearer token is not valid (unknown, revoked or malformed)",
);
pub(crate) const UNSUPPORTED_AUTHORIZATION: Refusal = r(
    StatusCode::UNAUTHORIZED,
    "UNSUPPORTED_AUTHORIZATION",
    "the Authorization header must be `Bearer <token>`",
);
pub(crate) const TOKEN_SIGNATURE_INVALID: Refusal = bad_token(
    "TOKEN_SIGNATURE_INVALID",
    "the token's signature does not verify against its issuer's key",
);
pub(crate) const TOKEN_EXPIRED: Refusal = bad_token("TOKEN_EXPIRED", "the token has expired");
pub(crate) const TOKEN_NOT_YET_VALID: Refusal =
    bad_token("TOKEN_NOT_YET_VALID", "the token is not valid yet (nbf)");
pub(crate) const TOKEN_AUDIENCE_INVALID: Refusal = bad_token(
    "TOKEN_AUDIENCE_INVALID",
    "the token was not issued for this resource (aud)",
);
pub(crate) const TOKEN_ISSUER_UNKNOWN: Refusal = bad_token(
    "TOKEN_ISSUER_UNKNOWN",
    "the token's issuer (iss) is not one this service trusts",
);
pub(crate) const TOKEN_KEY_UNKNOWN: Refusal = bad_token(
    "TOKEN_KEY_UNKNOWN",
    "the token's key (kid) is not one of its issuer's keys",
);
pub(crate) const TOKEN_ALGORITHM_REFUSED: Refusal = bad_token(
    "TOKEN_ALGORITHM_REFUSED",
    "the token's algorithm is refused (none, HMAC, or not its key's)",
);
pub(crate) const SESSION_INVALID: Refusal = r(
    StatusCode::UNAUTHORIZED,
    "SESSION_INVALID",
    "the console session is unknown, expired or signed out: sign in again",
);
pub(crate) const ORIGIN_REFUSED: Refusal = r(
    StatusCode::FORBIDDEN,
    "ORIGIN_REFUSED",
    "a request with a console session must come from an allowed Origin",
);
pub(crate) const CSRF_REQUIRED: Refusal = r(
    StatusCode::FORBIDDEN,
    "CSRF_REQUIRED",
    "a request with a console session must carry X-CSRF-Token (from GET /console/session)",
);
pub(crate) const CSRF_INVALID: Refusal = r(
    StatusCode::FORBIDDEN,
    "CSRF_INVALID",
    "the X-CSRF-Token does not belong to this session",
);
pub(crate) const CREDENTIALS_UNAVAILABLE: Refusal = r(
    StatusCode::SERVICE_UNAVAILABLE,
    "CREDENTIALS_UNAVAILABLE",
    "credentials cannot be checked right now; try again",
);
pub(crate) const TICKET_REQUIRED: Refusal = r(
    StatusCode::BAD_REQUEST,
    "TICKET_REQUIRED",
    "sign-in needs ?ticket=... (from `rcip console ticket`)",
);
pub(crate) const TICKET_INVALID: Refusal = r(
    StatusCode::UNAUTHORIZED,
    "TICKET_INVALID",
    "the sign-in ticket is unknown, used or expired: ask for a new one",
);
