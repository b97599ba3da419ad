-- rcip-mcp's state, shared by a deployment's instances.
--
-- Tasks (rcip-mcp's TaskStore): a task started through one instance is polled, fetched
-- and cancelled through any. `state` is the task's status, `detail` its JSON (the input
-- requests, the result or the error); `finished_until` is when a finished task may be
-- forgotten (NULL while it runs), so expired rows are found through an index;
-- `lease_until` is how long the instance running it vouches for it (it renews the lease
-- while the task runs: a task whose lease ran out is failed, its instance gone).
CREATE TABLE rcip_mcp_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT,
    capability_id TEXT NOT NULL,
    state TEXT NOT NULL,
    detail TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    ttl_ms BIGINT NOT NULL,
    finished_until BIGINT,
    lease_until BIGINT NOT NULL
);
CREATE INDEX rcip_mcp_tasks_finished ON rcip_mcp_tasks (finished_until)
    WHERE finished_until IS NOT NULL;
-- Running tasks by lease: one whose lease ran out longer than its ttl ago (its instance
-- died and nobody read it since) is forgotten too.
CREATE INDEX rcip_mcp_tasks_lease ON rcip_mcp_tasks (lease_until)
    WHERE finished_until IS NULL;

-- 2025-11-25 sessions (rcip-mcp's SessionStore): who opened each (`owner`, JSON) and the
-- `initialize` parameters that opened it (JSON, once the handshake finished), so any
-- instance serves a session another opened.
CREATE TABLE rcip_mcp_sessions (
    id TEXT PRIMARY KEY,
    owner TEXT,
    initialize TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX rcip_mcp_sessions_created ON rcip_mcp_sessions (created_at);

-- The events of 2025-11-25 event streams (rmcp's EventStore), so a client reconnecting with
-- `Last-Event-ID` to any instance gets what it missed. An event's id is its stream's secret
-- and its `seq`; a stream is `closed` once its answer was stored, and goes (with its
-- events) when it has been idle for `touched_at`'s limit.
CREATE TABLE rcip_mcp_streams (
    stream_id TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    closed BOOLEAN NOT NULL,
    touched_at BIGINT NOT NULL
);
CREATE INDEX rcip_mcp_streams_touched ON rcip_mcp_streams (touched_at);
CREATE TABLE rcip_mcp_events (
    seq BIGSERIAL PRIMARY KEY,
    stream_id TEXT NOT NULL REFERENCES rcip_mcp_streams ON DELETE CASCADE,
    event TEXT NOT NULL
);
CREATE INDEX rcip_mcp_events_stream ON rcip_mcp_events (stream_id, seq);
