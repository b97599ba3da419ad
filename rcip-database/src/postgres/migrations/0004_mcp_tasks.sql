-- MCP tasks (rcip-mcp's TaskStore): a task started through one instance is polled, fetched
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
