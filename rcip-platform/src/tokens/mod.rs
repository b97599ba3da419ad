//! The service's own credentials at rest: opaque API tokens, console sign-in tickets and
//! browser sessions, behind a [`TokenStore`]: [`MemoryTokenStore`] here, and in
//! `rcip-database` the service's database (SQLite or PostgreSQL), so every instance behind a
//! load balancer sees the same ones.
//!
//! No secret is stored: a token, ticket or session id is kept as the SHA-256 of its text
//! ([`SecretHash`]) and looked up by that hash. The secrets are 256-bit random values, so the
//! hash cannot be inverted and a lookup by hash needs no constant-time comparison: what an
//! attacker could learn from the index lookup's timing is how much of a *hash* it guessed,
//! which brings it no closer to a secret whose hash matches.
//!
//! The functions here ([`create_token`], [`revoke_token`], [`list_tokens`],
//! [`issue_ticket`]) are what the `rcip token` and `rcip console ticket` commands call.

mod memory;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rcip_records::DelegatedScope;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub use memory::MemoryTokenStore;

/// What an opaque API token's text starts with.
pub const TOKEN_PREFIX: &str = "rcip_";

/// How long a sign-in ticket stays valid when the caller gives no lifetime.
pub const DEFAULT_TICKET_LIFETIME: Duration = Duration::from_secs(300);

/// The random bytes behind every secret (tokens, tickets, session ids).
const SECRET_BYTES: usize = 32;

/// Length of those bytes in unpadded base64url.
const SECRET_TEXT_LEN: usize = 43;

/// The future every [`TokenStore`] method returns.
pub type TokenFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// A token store's failure is a record store's: the database's own text, for logs, not
/// for callers.
pub use rcip_records::StoreError;

/// The SHA-256 of a secret's text: the only form a secret is stored in.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SecretHash(pub [u8; 32]);

impl SecretHash {
    /// The hash of `secret`.
    #[must_use]
    pub fn of(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }
}

impl fmt::Debug for SecretHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Enough to tell two apart in a log; the hash is not secret but need not be printed.
        write!(f, "SecretHash({:02x}{:02x}..)", self.0[0], self.0[1])
    }
}

/// An opaque API token as stored (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenInfo {
    /// Its id (`tok_` and hex), what `rcip token revoke` names; not a secret.
    pub id: String,
    /// The agent principal it authenticates.
    pub principal: String,
    /// The one workspace it may reach.
    pub workspace: String,
    /// The scopes it delegates.
    pub scopes: Vec<DelegatedScope>,
    /// The operator's note, if any.
    pub label: Option<String>,
    /// When it was made (seconds since the Unix epoch).
    pub created_at: i64,
    /// When it was revoked, if it was.
    pub revoked_at: Option<i64>,
}

/// A browser session as stored (its id is the cookie's secret, stored hashed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The human principal signed in.
    pub principal: String,
    /// When it started (seconds since the Unix epoch).
    pub created_at: i64,
    /// When it ends, unless signed out before.
    pub expires_at: i64,
}

/// Where tokens, tickets and sessions are kept. The SQLite and PostgreSQL stores share them
/// between instances through the database; [`MemoryTokenStore`] is for tests.
///
/// Times are seconds since the Unix epoch and are passed in (`now`), so a store does no
/// clock reading of its own and the rules are testable.
pub trait TokenStore: Send + Sync + fmt::Debug + 'static {
    /// Stores a new token under the hash of its secret.
    ///
    /// # Errors
    ///
    /// A store failure (an id or hash taken counts as one: both are random).
    fn insert_token<'a>(&'a self, token: &'a TokenInfo, hash: SecretHash) -> TokenFuture<'a, ()>;

    /// Marks token `id` revoked at `now`; `false` when no such token is active.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn revoke_token<'a>(&'a self, id: &'a str, now: i64) -> TokenFuture<'a, bool>;

    /// Every token, revoked ones included, oldest first (then by id).
    ///
    /// # Errors
    ///
    /// A store failure.
    fn list_tokens(&self) -> TokenFuture<'_, Vec<TokenInfo>>;

    /// The token whose secret hashes to `hash`, revoked or not.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn find_token(&self, hash: SecretHash) -> TokenFuture<'_, Option<TokenInfo>>;

    /// Stores a sign-in ticket for `principal`, valid until `expires_at` (and drops tickets
    /// already expired at `now`).
    ///
    /// # Errors
    ///
    /// A store failure.
    fn insert_ticket<'a>(
        &'a self,
        hash: SecretHash,
        principal: &'a str,
        expires_at: i64,
        now: i64,
    ) -> TokenFuture<'a, ()>;

    /// Consumes the ticket: the principal it was for when it exists and has not expired at
    /// `now`. Atomic: of several callers (on any instance) presenting one ticket, at most one
    /// gets `Some`; the ticket is gone afterwards either way.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn consume_ticket(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<String>>;

    /// Stores a session under the hash of its id (and drops sessions expired at its start).
    ///
    /// # Errors
    ///
    /// A store failure.
    fn insert_session<'a>(&'a self, hash: SecretHash, session: &'a Session) -> TokenFuture<'a, ()>;

    /// The session whose id hashes to `hash`, when it exists and has not expired at `now`.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn find_session(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<Session>>;

    /// Ends the session (sign-out); `false` when there was none.
    ///
    /// # Errors
    ///
    /// A store failure.
    fn revoke_session(&self, hash: SecretHash) -> TokenFuture<'_, bool>;
}

/// A token to make with [`create_token`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    /// The agent principal it authenticates.
    pub principal: String,
    /// The one workspace it may reach.
    pub workspace: String,
    /// The scopes it delegates.
    pub scopes: Vec<DelegatedScope>,
    /// An operator's note.
    pub label: Option<String>,
}

/// A token just made: its record and its secret, which is shown this once and never again.
#[derive(Debug, Clone)]
pub struct CreatedToken {
    /// What is stored.
    pub info: TokenInfo,
    /// `rcip_...`: what the agent sends as `Authorization: Bearer`.
    pub secret: String,
}

/// Why a token could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// A principal or workspace that is empty or holds a control character.
    #[error("{0} must be non-empty text without control characters")]
    InvalidName(&'static str),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Makes an opaque API token for `new` and stores its hash.
///
/// # Errors
///
/// An empty principal or workspace, or a store failure.
pub async fn create_token(
    store: &dyn TokenStore,
    new: NewToken,
) -> Result<CreatedToken, TokenError> {
    check_name("principal", &new.principal)?;
    check_name("workspace", &new.workspace)?;
    let secret = format!("{TOKEN_PREFIX}{}", random_text()?);
    let mut scopes = new.scopes;
    scopes.sort();
    scopes.dedup();
    let info = TokenInfo {
        id: format!("tok_{}", hex(&random_bytes::<8>()?)),
        principal: new.principal,
        workspace: new.workspace,
        scopes,
        label: new.label,
        created_at: now(),
        revoked_at: None,
    };
    store.insert_token(&info, SecretHash::of(&secret)).await?;
    Ok(CreatedToken { info, secret })
}

/// Revokes token `id`: `false` when no such token is active.
///
/// # Errors
///
/// A store failure.
pub async fn revoke_token(store: &dyn TokenStore, id: &str) -> Result<bool, StoreError> {
    store.revoke_token(id, now()).await
}

/// Every token (no secrets), oldest first.
///
/// # Errors
///
/// A store failure.
pub async fn list_tokens(store: &dyn TokenStore) -> Result<Vec<TokenInfo>, StoreError> {
    store.list_tokens().await
}

/// The active token `secret` names, if any: `None` for text that is not a token, an unknown
/// token, or a revoked one.
///
/// # Errors
///
/// A store failure.
pub async fn active_token(
    store: &dyn TokenStore,
    secret: &str,
) -> Result<Option<TokenInfo>, StoreError> {
    // Text that cannot be a token costs no database round trip.
    let Some(body) = secret.strip_prefix(TOKEN_PREFIX) else {
        return Ok(None);
    };
    if !is_secret_text(body) {
        return Ok(None);
    }
    Ok(store
        .find_token(SecretHash::of(secret))
        .await?
        .filter(|token| token.revoked_at.is_none()))
}

/// Issues a one-time sign-in ticket for the human `principal`, valid for `lifetime`; returns
/// the ticket's text (open `/console/sign-in?ticket=TEXT`, see [`sign_in_path`]).
///
/// # Errors
///
/// An empty principal, or a store failure.
pub async fn issue_ticket(
    store: &dyn TokenStore,
    principal: &str,
    lifetime: Duration,
) -> Result<String, TokenError> {
    check_name("principal", principal)?;
    let ticket = random_text()?;
    let now = now();
    let expires_at = now.saturating_add(i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX));
    store
        .insert_ticket(SecretHash::of(&ticket), principal, expires_at, now)
        .await?;
    Ok(ticket)
}

/// The path (and query) that signs in with `ticket`, to put after the service's base URL.
#[must_use]
pub fn sign_in_path(ticket: &str) -> String {
    // Ticket text is base64url: nothing in it needs escaping in a query.
    format!("/console/sign-in?ticket={ticket}")
}

/// Whether `text` has the shape of a secret this module makes (43 base64url characters).
pub fn is_secret_text(text: &str) -> bool {
    text.len() == SECRET_TEXT_LEN
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A new secret: 32 random bytes, unpadded base64url.
pub fn random_text() -> Result<String, StoreError> {
    Ok(URL_SAFE_NO_PAD.encode(random_bytes::<SECRET_BYTES>()?))
}

fn random_bytes<const N: usize>() -> Result<[u8; N], StoreError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| StoreError(format!("random: {e}")))?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn check_name(what: &'static str, value: &str) -> Result<(), TokenError> {
    if value.is_empty() || value.chars().any(char::is_control) {
        return Err(TokenError::InvalidName(what));
    }
    Ok(())
}

/// Seconds since the Unix epoch (0 for a clock set before it).
#[must_use]
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Scopes as stored: their wire spellings, space-separated (the OAuth `scope` form).
pub fn scopes_text(scopes: &[DelegatedScope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The stored form back; a scope this build does not know is a store failure (the row was
/// written by something else).
pub fn parse_scopes(text: &str) -> Result<Vec<DelegatedScope>, StoreError> {
    text.split_whitespace()
        .map(|s| {
            s.parse()
                .map_err(|_| StoreError(format!("stored token has unknown scope {s:?}")))
        })
        .collect()
}
