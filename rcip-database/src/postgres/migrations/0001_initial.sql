-- The record store's tables. Applied once per schema by PostgresStore::open, inside the
-- transaction that records it in rcip_migrations.
--
-- JSON columns are TEXT, not jsonb: jsonb reorders keys and rewrites numbers, and a record
-- must read back exactly as it was written (as it does from the memory and SQLite stores).

-- Records. `position` is the insertion order scans page by; it is taken from the workspace's
-- counter (feed_counters) inside the creating transaction, so positions, like event ids,
-- appear in commit order and a paging scan never skips a record committed late with a lower
-- position.
CREATE TABLE records (
    id UUID PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    collection_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    version BIGINT NOT NULL,
    type_name TEXT NOT NULL,
    kind TEXT NOT NULL,
    revision BIGINT NOT NULL,
    data TEXT NOT NULL,
    participants TEXT NOT NULL,
    state TEXT,
    archived BOOLEAN NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (workspace_id, position)
);

-- The change feed: ids are per workspace, 1.., in commit order (see feed_counters).
CREATE TABLE events (
    workspace_id TEXT NOT NULL,
    id BIGINT NOT NULL,
    event_id UUID NOT NULL UNIQUE,
    actor TEXT NOT NULL,
    record_id UUID NOT NULL,
    revision BIGINT NOT NULL,
    kind TEXT NOT NULL,
    at TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (workspace_id, id)
);
CREATE INDEX events_by_record ON events (workspace_id, record_id, id);

-- Remembered mutations: replaying a key answers its first result.
CREATE TABLE idempotency (
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);

-- One row per workspace: the last event id and record position given out. A commit updates
-- its workspace's row inside its transaction, and the row lock it takes is held until COMMIT,
-- so commits of one workspace take their ids one after the other, in the order they commit.
-- (A sequence would not do: nextval() is not transactional, so a transaction could take id 5,
-- another take 6 and commit first, and a consumer that read 6 and moved its checkpoint past 5
-- would never see 5 when it commits.) Different workspaces do not wait for each other.
CREATE TABLE feed_counters (
    workspace_id TEXT PRIMARY KEY,
    last_event BIGINT NOT NULL,
    last_position BIGINT NOT NULL
);

-- Keys the engine needs to agree on across instances (the cursor MAC key): created once, by
-- whichever instance asks first.
CREATE TABLE secrets (
    name TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
