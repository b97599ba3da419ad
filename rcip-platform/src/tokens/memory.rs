//! [`TokenStore`] in memory: one instance's, gone when dropped (tests, examples).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::{SecretHash, Session, StoreError, TokenFuture, TokenInfo, TokenStore};

/// Tokens, tickets and sessions in this process only. Several instances cannot share it:
/// the service uses the SQLite or PostgreSQL store.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    tokens: HashMap<SecretHash, TokenInfo>,
    tickets: HashMap<SecretHash, (String, i64)>,
    sessions: HashMap<SecretHash, Session>,
}

impl MemoryTokenStore {
    /// An empty store.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves maps that are still consistent (every
        // change is one insert or remove).
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn ready<'a, T: Send + 'a>(value: Result<T, StoreError>) -> TokenFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl TokenStore for MemoryTokenStore {
    fn insert_token<'a>(&'a self, token: &'a TokenInfo, hash: SecretHash) -> TokenFuture<'a, ()> {
        let mut state = self.state();
        let taken = state.tokens.contains_key(&hash)
            || state.tokens.values().any(|other| other.id == token.id);
        if taken {
            return ready(Err(StoreError("token id or secret taken".into())));
        }
        state.tokens.insert(hash, token.clone());
        ready(Ok(()))
    }

    fn revoke_token<'a>(&'a self, id: &'a str, now: i64) -> TokenFuture<'a, bool> {
        let mut state = self.state();
        let revoked = state
            .tokens
            .values_mut()
            .find(|token| token.id == id && token.revoked_at.is_none())
            .map(|token| token.revoked_at = Some(now))
            .is_some();
        ready(Ok(revoked))
    }

    fn list_tokens(&self) -> TokenFuture<'_, Vec<TokenInfo>> {
        let mut tokens: Vec<TokenInfo> = self.state().tokens.values().cloned().collect();
        tokens.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        ready(Ok(tokens))
    }

    fn find_token(&self, hash: SecretHash) -> TokenFuture<'_, Option<TokenInfo>> {
        ready(Ok(self.state().tokens.get(&hash).cloned()))
    }

    fn insert_ticket<'a>(
        &'a self,
        hash: SecretHash,
        principal: &'a str,
        expires_at: i64,
        now: i64,
    ) -> TokenFuture<'a, ()> {
        let mut state = self.state();
        state.tickets.retain(|_, (_, expires)| *expires > now);
        state
            .tickets
            .insert(hash, (principal.to_owned(), expires_at));
        ready(Ok(()))
    }

    fn consume_ticket(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<String>> {
        let taken = self.state().tickets.remove(&hash);
        ready(Ok(taken
            .filter(|(_, expires)| *expires > now)
            .map(|(principal, _)| principal)))
    }

    fn insert_session<'a>(&'a self, hash: SecretHash, session: &'a Session) -> TokenFuture<'a, ()> {
        let mut state = self.state();
        state
            .sessions
            .retain(|_, other| other.expires_at > session.created_at);
        state.sessions.insert(hash, session.clone());
        ready(Ok(()))
    }

    fn find_session(&self, hash: SecretHash, now: i64) -> TokenFuture<'_, Option<Session>> {
        ready(Ok(self
            .state()
            .sessions
            .get(&hash)
            .filter(|session| session.expires_at > now)
            .cloned()))
    }

    fn revoke_session(&self, hash: SecretHash) -> TokenFuture<'_, bool> {
        ready(Ok(self.state().sessions.remove(&hash).is_some()))
    }
}
