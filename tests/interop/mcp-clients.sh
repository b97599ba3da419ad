#!/usr/bin/env bash
# The Python `mcp` SDK client (mcp==2.3.0, pinned with the agent-schema checkers in
# requirements-agent-schemas.txt) against the polls example served by rcip-mcp: on stdio
# (`polls -- mcp`) and streamable HTTP (`polls -- mcp-http ADDR`), each in 2025-11-25
# (`mode="legacy"`) and 2026-07-28 (`mode="auto"`, which discovers it). It signals the server
# (SIGUSR1, the polls host's maintenance switch), so it needs a Unix host. Then the Python
# client and the MCP Inspector CLI (pinned in inspector-npm/) against the conformance fixture
# (mcp_fixture_clients.py): sampling, roots, tasks, and approval by the host for a client
# without elicitation.
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
exit "$status"
