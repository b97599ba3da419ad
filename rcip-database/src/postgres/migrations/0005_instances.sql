-- Pending confirmations (rcip-runtime's ConfirmationStore): raised on one instance, listed
-- and resolved on any. `ticket` is the JSON of what another instance needs to run it (the
-- ticket the caller got, the capability, its input, the principal, the invocation id and
-- the semantic context). Taking one deletes its row, so of any number of instances taking
-- it at once exactly one gets it; rows are forgotten an hour after they expired.
-- `key` is the caller's ConfirmationKey, when it gave one: its next request finds the
-- ticket, and then the ticket's outcome, in rcip_confirmation_outcomes (read once).
CREATE TABLE rcip_confirmations (
    id TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    ticket TEXT NOT NULL,
    key TEXT
);
CREATE INDEX rcip_confirmations_expires ON rcip_confirmations (expires_at, id);
CREATE INDEX rcip_confirmations_key ON rcip_confirmations (key) WHERE key IS NOT NULL;
CREATE TABLE rcip_confirmation_outcomes (
    key TEXT PRIMARY KEY,
    outcome TEXT NOT NULL,
    keep_until BIGINT NOT NULL
);
CREATE INDEX rcip_confirmation_outcomes_kept ON rcip_confirmation_outcomes (keep_until);

-- What one instance tells the others (rcip-mcp's Relay): a client's answer to a request
-- another instance sent it, a session ended, a session's log level. A row per notice, in
-- `seq` order; `NOTIFY rcip_relay` wakes the listeners, which read the rows after the last
-- they saw (and look every second besides, in case a notification was lost). Rows are
-- forgotten a minute after they were written.
CREATE TABLE rcip_relay (
    seq BIGSERIAL PRIMARY KEY,
    origin TEXT NOT NULL,
    notice TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX rcip_relay_created ON rcip_relay (created_at);

-- How many events each stream has had: past 256 (the memory store's limit) its oldest go.
ALTER TABLE rcip_mcp_streams ADD COLUMN events BIGINT NOT NULL DEFAULT 0;

-- Which instance may have requests outstanding to a 2025-11-25 session's client (rcip-mcp's
-- Relay::take_turn): rmcp numbers them from 0 on each instance, so instances ask one at a
-- time. `holders` counts the holder's requests outstanding; `until` (the database's clock,
-- epoch ms) is when the turn lapses whatever the count, should the holder die.
CREATE TABLE rcip_mcp_turns (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    holders INT NOT NULL,
    until BIGINT NOT NULL
);
CREATE INDEX rcip_mcp_turns_until ON rcip_mcp_turns (until);
