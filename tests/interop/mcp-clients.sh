#!/usr/bin/env bash
# The Python `mcp` SDK client (mcp==2.3.0, pinned with the agent-schema checkers in
# requirements-agent-schemas.txt) against the polls example served by rcip-mcp: on stdio
# (`polls -- mcp`) and streamable HTTP (`polls -- mcp-http ADDR`), each in 2025-11-25
# (`mode="legacy"`) and 2026-07-28 (`mode="auto"`, which discovers it). It signals the server
# (SIGUSR1, the polls host's maintenance switch), so it needs a Unix host.
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

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
    out="$(bash "$here/agent-schemas.sh" --self-test 2>&1)" || { echo "$out"; exit 1; }
    case "$out" in skipped:*) echo "skipped: MCP client interop (python3 venv unavailable)"; exit 0 ;; esac
fi

cargo build -q -p rcip-examples --example polls
target_dir="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
exec "$venv/bin/python" "$here/mcp_clients.py" "$target_dir/debug/examples/polls"
