-- The directory (DirectoryStore): workspaces, members, collections and their grants, program
-- drafts and program versions. Applied once per schema by PostgresStore::open, like 0001.
--
-- Every change of a workspace first locks its row (SELECT ... FOR UPDATE), so the rules that
-- read before they write (the last owner kept, a member's kind, grants only to members) hold
-- across instances. Packages are TEXT for the reason records are (0001).

CREATE TABLE workspaces (
    workspace_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- `scopes`: the JSON array of an agent's delegated scopes ("[]" for humans).
CREATE TABLE members (
    workspace_id TEXT NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    principal_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    role TEXT NOT NULL,
    scopes TEXT NOT NULL,
    PRIMARY KEY (workspace_id, principal_id)
);
-- workspace.list: the workspaces of one principal.
CREATE INDEX members_by_principal ON members (principal_id, workspace_id);

CREATE TABLE collections (
    workspace_id TEXT NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    collection_id TEXT NOT NULL,
    name TEXT NOT NULL,
    visibility TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, collection_id)
);

-- A grant names a member: removing the member removes its grants (the cascade), so a
-- principal added again starts without them.
CREATE TABLE collection_grants (
    workspace_id TEXT NOT NULL,
    collection_id TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    access TEXT NOT NULL,
    PRIMARY KEY (workspace_id, collection_id, principal_id),
    FOREIGN KEY (workspace_id, collection_id)
        REFERENCES collections (workspace_id, collection_id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, principal_id)
        REFERENCES members (workspace_id, principal_id) ON DELETE CASCADE
);
CREATE INDEX collection_grants_by_member ON collection_grants (workspace_id, principal_id);

-- `position`: drafts list oldest first (insertion order, not id order).
CREATE TABLE program_drafts (
    position BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    draft_id UUID NOT NULL,
    namespace TEXT NOT NULL,
    version BIGINT NOT NULL,
    digest TEXT NOT NULL,
    package TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    UNIQUE (workspace_id, draft_id)
);

-- Activated versions; `workspace_id` NULL: an installed package, which every workspace sees.
-- One content per namespace/version in a workspace and among the installed ones (the unique
-- indexes); across the two, the store checks under an advisory lock on namespace/version.
CREATE TABLE program_versions (
    workspace_id TEXT REFERENCES workspaces ON DELETE CASCADE,
    namespace TEXT NOT NULL,
    version BIGINT NOT NULL,
    digest TEXT NOT NULL,
    package TEXT NOT NULL,
    activated_at BIGINT NOT NULL,
    activated_by TEXT NOT NULL
);
CREATE UNIQUE INDEX program_versions_of_workspace
    ON program_versions (workspace_id, namespace, version) WHERE workspace_id IS NOT NULL;
CREATE UNIQUE INDEX program_versions_installed
    ON program_versions (namespace, version) WHERE workspace_id IS NULL;

-- The directory's idempotency entries: a key space apart from the records' (the idempotency
-- table), as the memory directory and memory record store keep theirs apart, so a key used
-- for a record change and again for a directory change is two keys, on every store.
CREATE TABLE directory_idempotency (
    workspace_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (workspace_id, key)
);
