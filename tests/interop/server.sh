#!/usr/bin/env bash
# rcip-server interop: `rcip serve` on 127.0.0.1 (a free port, a fresh SQLite file, the
# example programs folder installed, one development token for a human), then outside tools
# against it:
#
#   bash tests/interop/server.sh
#
# 1. Headless Chromium (Debian's `chromium`; installed with apt-get when /usr/bin/chromium
#    is missing and this runs as root; CHROMIUM=PATH runs another build instead) loads the explorer at `/` with --dump-dom, and
#    explorer_dom.py checks what rendered: a section per registry operation (the served
#    OpenAPI document's x-rcip-operations) with its name, each installed version with its
#    record types, no form, script or other active element, no event handler.
# 2. schemathesis (pinned with every dependency in requirements-schemathesis.txt, venv
#    target/interop/venv-schemathesis) runs the served /v1/openapi.json with the bearer
#    token: not_a_server_error, response_schema_conformance, status_code_conformance and
#    content_type_conformance, a bounded number of examples per operation.
# 3. MCP on /mcp with an agent's bearer token, an opaque API token made as an operator
#    makes one (`rcip token create` on the server's database): the Python `mcp` SDK's
#    client (2025-11-25 and 2026-07-28; the agent checkers' venv) and the MCP Inspector CLI (pinned by
#    inspector-npm/package-lock.json, `npm ci` into target/interop/inspector): server_mcp.py
#    lists the tools, creates and reads a record, executes a command, and checks that a
#    stale revision's 409 is a tool result with isError.
#
# Server log and outputs: target/interop/server/. A tool that is missing and cannot be
# installed prints one "skipped:" line and the script goes on (exit 0), unless CI is set,
# when that is an error. Any failing check: exit 1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
interop="$root/target/interop"
out="$interop/server"
mkdir -p "$out"
# shellcheck source=tests/interop/venv.sh
. "$here/venv.sh"

# shellcheck source=tests/interop/common.sh
. "$here/common.sh"

if ! command -v python3 >/dev/null 2>&1; then
    unavailable "python3 not found" "rcip-server interop" "-"
    exit 0
fi

cargo build -q -p rcip-cli
target_dir="$(workspace_target_dir)"
rcip="$target_dir/debug/rcip"

scratch="$(mktemp -d)"
server_pid=""
stop_server() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
    rm -rf "$scratch"
}
trap stop_server EXIT

# A token of this run only; the caller is a human, so that console-only operations are
# exercised too. No rate limit: schemathesis sends faster than a principal should.
token="dev-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
database="sqlite:$scratch/rcip.db"
"$rcip" serve --bind 127.0.0.1:0 --database "$database" \
    --programs "$root/examples/programs" --insecure-dev-token "$token=human:interop" \
    --rate-limit 0 >"$out/server.out" 2>"$out/server.log" &
server_pid=$!
# `rcip serve` prints "listening on http://ADDR" once it accepts; port 0 means no race for a
# free port.
base="$(python3 - "$out/server.out" "$server_pid" <<'EOF'
import os, re, sys, time
path, pid = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    match = re.search(r"^listening on (http://\S+)$", open(path).read(), re.M)
    if match:
        print(match.group(1))
        sys.exit(0)
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("rcip serve exited before listening")
    time.sleep(0.1)
sys.exit("rcip serve did not listen within 60 s")
EOF
)" || { cat "$out/server.log" >&2; exit 1; }
echo "rcip serve at $base (log: $out/server.log)"
python3 -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1] + "/v1/openapi.json").read())' \
    "$base" "$out/openapi.json"

status=0

# ----- 1. the explorer in headless Chromium -------------------------------------------
explorer() {
    local subject="explorer in Chromium" log="$out/chromium-setup.log"
    : >"$log"
    # CHROMIUM names another build (nothing is installed for it then).
    local chromium="${CHROMIUM:-/usr/bin/chromium}"
    if [ ! -x "$chromium" ] && [ -z "${CHROMIUM:-}" ] && [ "$(id -u)" = 0 ] &&
        command -v apt-get >/dev/null 2>&1; then
        { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; } >>"$log" 2>&1 || true
    fi
    if [ ! -x "$chromium" ]; then
        unavailable "$chromium not installed" "$subject" "$log"
        return 0
    fi
    local profile
    profile="$(mktemp -d -p "$scratch")"
    # Every background fetch off: the only request is the page's.
    if ! timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --disable-dev-shm-usage --user-data-dir="$profile" \
        --dump-dom "$base/" >"$out/explorer.dom.html" 2>"$out/chromium.log"; then
        echo "FAIL chromium could not load $base/ (see $out/chromium.log)"
        status=1
        return 0
    fi
    python3 "$here/explorer_dom.py" "$out/explorer.dom.html" "$out/openapi.json" \
        "$root/examples/programs" || status=1
}

# Calls one operation as the token's principal; refused: the answer on stderr, status 1.
call() { # $1: operation, $2: arguments (JSON)
    python3 - "$base" "$token" "$1" "$2" <<'EOF'
import json, sys, urllib.error, urllib.request
base, token, operation, arguments = sys.argv[1:5]
body = json.dumps({"operation": operation, "arguments": json.loads(arguments)}).encode()
request = urllib.request.Request(base + "/v1/operations", data=body, headers={
    "Authorization": "Bearer " + token, "Content-Type": "application/json"})
try:
    urllib.request.urlopen(request).read()
except urllib.error.HTTPError as error:
    sys.exit(f"{operation}: {error.code} {error.read().decode()}")
EOF
}

seed_world() {
    call workspace.create '{"workspace_id": "0", "name": "Zero", "idempotency_key": "seed-w"}' &&
        call collection.create '{"workspace_id": "0", "collection_id": "0", "name": "Zero", "idempotency_key": "seed-c"}'
}

# ----- 2. schemathesis on the OpenAPI document ------------------------------------------
schemathesis() {
    local subject="schemathesis" log="$interop/venv-schemathesis-setup.log"
    local venv="$interop/venv-schemathesis"
    : >"$log"
    if ! make_venv "$venv" "$here/requirements-schemathesis.txt" "$log"; then
        unavailable "$venv_failure" "$subject" "$log"
        return 0
    fi
    # Hypothesis starts from the smallest values, so ids come out as "0": a workspace "0"
    # (owned by the token's principal) with a collection "0" lets generated calls get past
    # WORKSPACE_NOT_FOUND to the collection, record and program rules.
    seed_world || { status=1; return 0; }
    # 100 examples an operation and phase take well under a minute on 2 cores; the fixed
    # seed (override with SCHEMATHESIS_SEED) and no example database make a run repeatable.
    # Its working folder is $out, where it leaves its own files.
    if (cd "$out" && "$venv/bin/schemathesis" run "$base/v1/openapi.json" \
        --header "Authorization: Bearer $token" \
        --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance \
        --phases examples,coverage,fuzzing --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-100}" \
        --seed "${SCHEMATHESIS_SEED:-18}" --generation-database none --workers 2 \
        --request-timeout 10 --no-color --report junit --report-dir "$out/schemathesis" \
        >"$out/schemathesis.log" 2>&1); then
        echo "schemathesis: passed ($(grep -Eo '[0-9]+ passed' "$out/schemathesis.log" | tail -1 || true); log: $out/schemathesis.log)"
    else
        echo "FAIL schemathesis (log: $out/schemathesis.log):"
        tail -n 60 "$out/schemathesis.log"
        status=1
    fi
}

# ----- 3. MCP at /mcp: the Python SDK's client and the MCP Inspector CLI ----------------
mcp_clients() {
    local subject="MCP clients on /mcp" log="$out/inspector-setup.log"
    : >"$log"
    # The Python SDK is in the agent checkers' venv (mcp-clients.sh's): made when missing.
    local venv="$interop/venv"
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
        local made
        made="$(bash "$here/agent-schemas.sh" --self-test 2>&1)" || { echo "$made"; status=1; return 0; }
        case "$made" in skipped:*)
            unavailable "python3 venv unavailable" "$subject" "$interop/venv-setup.log"
            return 0
            ;;
        esac
    fi
    # The Inspector CLI (common.sh). Without npm the Python client still runs, and the
    # Inspector part is skipped (an error under CI).
    local cli node=""
    cli="$(inspector_cli "$log")"
    [ -z "$cli" ] || node="$(command -v node)"
    [ -n "$cli" ] || unavailable "npm ci of the Inspector CLI failed or npm missing" "MCP Inspector CLI" "$log"
    # An agent member of a workspace of its own, with every scope, and a collection.
    call workspace.create '{"workspace_id": "mcp-interop", "name": "MCP", "idempotency_key": "mcp-w"}' &&
        call member.add '{"workspace_id": "mcp-interop", "principal_id": "interop-bot", "kind": "agent", "scopes": ["records:read", "records:write", "commands:execute", "programs:draft", "programs:activate", "collections:manage", "members:manage"], "idempotency_key": "mcp-m"}' &&
        call collection.create '{"workspace_id": "mcp-interop", "collection_id": "main", "name": "Main", "idempotency_key": "mcp-c"}' ||
        { status=1; return 0; }
    # The agent's credential, made as an operator makes one: an opaque API token of that
    # workspace only, with every scope (the membership's bound them), in the server's own
    # database; the running server accepts it at once. Its secret is printed once, on stdout.
    local agent_token
    if ! agent_token="$("$rcip" token create --database "$database" --workspace mcp-interop \
        --principal interop-bot --label interop-mcp --scope records:read --scope records:write \
        --scope commands:execute --scope programs:draft --scope programs:activate \
        --scope collections:manage --scope members:manage 2>"$out/token-create.log")"; then
        echo "FAIL rcip token create (see $out/token-create.log)"
        status=1
        return 0
    fi
    "$venv/bin/python" "$here/server_mcp.py" "$base" "$agent_token" mcp-interop main \
        "$out/openapi.json" "$node" "$cli" || status=1
}

explorer
mcp_clients
schemathesis
exit "$status"
