//! The console's own routes: how a human gets (and ends) a browser session.
//!
//! - `GET /console/sign-in?ticket=T` consumes the one-time ticket the operator made with
//!   `rcip console ticket`, starts a session and sets its cookie. It answers a small page
//!   that moves on to `/` rather than a redirect: the sign-in link is opened from outside the
//!   site (a terminal, a mail), and a browser does not send a `SameSite=Strict` cookie on a
//!   redirect that a cross-site navigation started, so `/` would look signed out; the
//!   page's own navigation is same-site.
//! - `GET /console/session` answers `{principal, csrf_token, expires_at}` for the session
//!   cookie, so a page (which cannot read the HttpOnly cookie) can send `X-CSRF-Token`. An
//!   `Origin`, when present, must be allowed; the answer is readable by this origin only
//!   (no CORS), and `SameSite=Strict` keeps the cookie off other sites' requests.
//! - `POST /console/sign-out` (allowed `Origin` and `X-CSRF-Token` required) ends the
//!   session in the store, on every instance, and clears the cookie.

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::StatusCode;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, REFERRER_POLICY, SET_COOKIE};
use serde::Deserialize;
use serde_json::json;

use super::refusal::{self, Refusal};
use super::{Credentials, CsrfCheck, csrf_token, session_secret, unavailable};
use crate::authenticate::AuthRefusal;
use crate::tokens::SecretHash;

/// The console's routes (`/console/sign-in`, `/console/session`, `/console/sign-out`) on
/// `credentials`; mount them beside the service's other routes.
pub fn console_router(credentials: Credentials) -> Router {
    Router::new()
        .route("/console/sign-in", get(sign_in))
        .route("/console/session", get(session))
        .route("/console/sign-out", post(sign_out))
        .with_state(credentials)
}

#[derive(Deserialize)]
struct SignInQuery {
    ticket: Option<String>,
}

/// The service's one error body, `{"error": {"code", "message"}}`.
fn refused(refusal: impl Into<AuthRefusal>) -> Response {
    let refusal = refusal.into();
    let status = refusal.status;
    (
        status,
        [(CACHE_CONTROL, "no-store")],
        axum::Json(json!({"error": {"code": refusal.code, "message": refusal.message}})),
    )
        .into_response()
}

async fn sign_in(
    State(credentials): State<Credentials>,
    query: Result<Query<SignInQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Some(ticket) = query.ok().and_then(|Query(q)| q.ticket) else {
        return refused(refusal::TICKET_REQUIRED);
    };
    let signed_in = match credentials.sign_in(&ticket).await {
        Ok(signed_in) => signed_in,
        Err(refusal) => return refused(refusal),
    };
    let page = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"0; url=/\"><title>Signed in</title></head>\
         <body><p>Signed in as {}. <a href=\"/\">Continue</a></p></body></html>",
        crate::explorer::escape(&signed_in.principal)
    );
    (
        StatusCode::OK,
        [
            (SET_COOKIE, signed_in.set_cookie),
            (CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
            (CACHE_CONTROL, "no-store".to_owned()),
            // The ticket is in this page's URL: keep it out of any Referer.
            (REFERRER_POLICY, "no-referrer".to_owned()),
        ],
        page,
    )
        .into_response()
}

async fn session(State(credentials): State<Credentials>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let Some(secret) = session_secret(&parts) else {
        return refused(refusal::UNAUTHENTICATED);
    };
    match credentials.session(&parts, secret, CsrfCheck::NotYet).await {
        Ok(session) => (
            [(CACHE_CONTROL, "no-store")],
            axum::Json(json!({
                "principal": session.principal,
                "csrf_token": csrf_token(secret),
                "expires_at": session.expires_at,
            })),
        )
            .into_response(),
        Err(refusal) => refused(refusal),
    }
}

async fn sign_out(State(credentials): State<Credentials>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    let Some(secret) = session_secret(&parts) else {
        return refused(refusal::UNAUTHENTICATED);
    };
    let result: Result<(), Refusal> = async {
        credentials
            .session(&parts, secret, CsrfCheck::Required)
            .await?;
        credentials
            .store()
            .revoke_session(SecretHash::of(secret))
            .await
            .map_err(unavailable)?;
        Ok(())
    }
    .await;
    match result {
        Ok(()) => (
            [
                (SET_COOKIE, credentials.clear_cookie()),
                (CACHE_CONTROL, "no-store".to_owned()),
            ],
            axum::Json(json!({"signed_out": true})),
        )
            .into_response(),
        Err(refusal) => refused(refusal),
    }
}
