-- The service's own credentials: opaque API tokens, console sign-in tickets and browser
-- sessions, each kept as the SHA-256 of its secret. `IF NOT EXISTS`: a database whose token
-- store made these tables before they were a migration takes it as it is.
CREATE TABLE IF NOT EXISTS rcip_api_tokens (
    id TEXT PRIMARY KEY,
    secret_hash BYTEA NOT NULL UNIQUE,
    principal TEXT NOT NULL,
    workspace TEXT NOT NULL,
    scopes TEXT NOT NULL,
    label TEXT,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE TABLE IF NOT EXISTS rcip_sign_in_tickets (
    ticket_hash BYTEA PRIMARY KEY,
    principal TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS rcip_sessions (
    session_hash BYTEA PRIMARY KEY,
    principal TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS rcip_sessions_expiry ON rcip_sessions (expires_at);
