-- rcip-mcp's state, shared by a deployment's instances.
--
-- Tasks (rcip-mcp's TaskStore): a task started through one instance is polled, fetched
-- and cancelled through any. `state` is the task's status, `detail` its JSON (the input
-- requests, the result or the error); `finished_until` is when a finished task may be
-- forgotten (NULL while it runs), so expired rows are found through an index.
CREATE TABLE rcip_mcp_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT,
    capability_id TEXT NOT NULL,
    state TEXT NOT NULL,
    detail TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    ttl_ms BIGINT NOT NULL,
    finished_until BIGINT
);
CREATE INDEX rcip_mcp_tasks_finished ON rcip_mcp_tasks (finished_until)
    WHERE finished_until IS NOT NULL;

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
