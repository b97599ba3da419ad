#!/usr/bin/env bash
# The Python `mcp` SDK client (mcp==2.3.0, pinned with the agent-schema checkers in
# requirements-agent-schemas.txt) against the polls example served by rcip-mcp: on stdio
# (`polls -- mcp`) and streamable HTTP (`polls -- mcp-http ADDR`), each in 2025-11-25
# (`mode="legacy"`) and 2026-07-28 (`mode="auto"`, which discovers it). It signals the server
# (SIGUSR1, the polls host's maintenance switch), so it needs a Unix host. Then the Python
# client and the MCP Inspector CLI (pinned in inspector-npm/) against the conformance fixture
# (mcp_fixture_clients.py): sampling, roots, tasks, and approval by the host for a client
# without elicitation. Last, the Python client through two fixtures on one PostgreSQL schema
# behind a round-robin proxy (mcp_instances_clients.py).
#
#   bash tests/interop/mcp-clients.sh
#
# The venv is the one agent-schemas.sh makes (target/interop/venv); when it is missing or
# stale, its self-test is run first to make it. Without python3 or a usable venv it prints
# one "skipped" line and exits 0, unless CI is set, when that is an error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/target/interop/venv"

# shellcheck source=tests/interop/common.sh
. "$here/common.sh"
mcp_venv "MCP client interop" || exit 0

cargo build -q -p rcip-examples --example polls --example mcp_conformance
target_dir="$(workspace_target_dir)"
status=0
"$venv/bin/python" "$here/mcp_clients.py" "$target_dir/debug/examples/polls" || status=1

# The conformance fixture: sampling, roots, tasks, and a write from a client without
# elicitation approved by the host; with the Inspector CLI too (skipped without npm, an error
# under CI).
log="$target_dir/interop/inspector-setup.log"
mkdir -p "$target_dir/interop"
: >"$log"
cli="$(inspector_cli "$log")"
if [ -n "$cli" ]; then
    "$venv/bin/python" "$here/mcp_fixture_clients.py" "$target_dir/debug/examples/mcp_conformance" \
        "$(command -v node)" "$cli" || status=1
else
    unavailable "npm ci of the Inspector CLI failed or npm missing" "MCP Inspector CLI" "$log"
    "$venv/bin/python" "$here/mcp_fixture_clients.py" "$target_dir/debug/examples/mcp_conformance" ||
        status=1
fi

# Two instances of the fixture on one PostgreSQL schema of this run's own, behind the
# per-request round-robin proxy (examples/round_robin.rs): elicitation, a 2026-07-28 retry, a
# task's cancellation and a Last-Event-ID resumption, each crossing between the instances
# (mcp_instances_clients.py). Needs RCIP_TEST_POSTGRES_URL and psql.
instances() {
    local subject="MCP clients through two instances" url="${RCIP_TEST_POSTGRES_URL:-}"
    local out="$target_dir/interop/mcp-instances-clients.log"
    if [ -z "$url" ]; then
        unavailable "RCIP_TEST_POSTGRES_URL not set" "$subject" "$out"
        return 0
    fi
    command -v psql >/dev/null 2>&1 || { unavailable "psql not found" "$subject" "$out"; return 0; }
    local schema="rcip_interop_clients_$$" separator="?"
    psql -q "$url" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" >"$out" 2>&1 ||
        { unavailable "PostgreSQL not reachable at $url" "$subject" "$out"; return 0; }
    case "$url" in *\?*) separator="&" ;; esac
    cargo build -q -p rcip-examples --example round_robin
    (cd "$here" && "$venv/bin/python" mcp_instances_clients.py \
        "$target_dir/debug/examples/mcp_conformance" "$target_dir/debug/examples/round_robin" \
        "$url${separator}options=-csearch_path%3D$schema") || status=1
    psql -q "$url" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >>"$out" 2>&1 || true
}
instances
exit "$status"
