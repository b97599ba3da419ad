# Sourced by the interop scripts: what they share beyond the venv (venv.sh).
#
#   unavailable WHAT SUBJECT LOG
#
# A tool the step needs is missing: one "skipped: SUBJECT (WHAT)" line, or, under CI (where
# a skip would hide a broken setup), an error naming LOG and exit 1.
unavailable() {
    if [ -n "${CI:-}" ]; then
        echo "error: $2: $1 (see $3)" >&2
        exit 1
    fi
    echo "skipped: $2 ($1)"
}

#   workspace_target_dir
#
# Cargo's target directory for this workspace (CARGO_TARGET_DIR or `target`), as cargo
# metadata reports it.
workspace_target_dir() {
    cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])'
}

#   mcp_venv SUBJECT
#
# The venv agent-schemas.sh makes (target/interop/venv), with the Python `mcp` SDK: made by
# its self-test when missing or stale. Returns 1 after one "skipped: SUBJECT ..." line when
# python3 cannot make it (the self-test fails the script under CI), and exits 1 when the
# self-test fails otherwise.
mcp_venv() {
    local here out
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    if [ ! -x "$here/../../target/interop/venv/bin/python" ] ||
        ! "$here/../../target/interop/venv/bin/python" -c 'import mcp' >/dev/null 2>&1; then
        out="$(bash "$here/agent-schemas.sh" --self-test 2>&1)" || { echo "$out"; exit 1; }
        case "$out" in skipped:*) echo "skipped: $1 (python3 venv unavailable)"; return 1 ;; esac
    fi
}

#   inspector_cli LOG
#   inspector_strict_cli LOG
#
# The MCP Inspector CLI, exactly as inspector-npm/package-lock.json pins it (`npm ci` into
# target/interop/inspector, remade when the lock changes), on the machine's node: prints the
# path of its entry point, or nothing when npm or node is missing or `npm ci` failed (its
# output in LOG). inspector_strict_cli is the Inspector 2.x CLI (inspector-strict-npm/), the
# one with `--strict` tool-schema portability reports.
inspector_cli() {
    pinned_npm_entry inspector-npm inspector \
        node_modules/@modelcontextprotocol/inspector-cli/build/index.js "$1"
}

inspector_strict_cli() {
    pinned_npm_entry inspector-strict-npm inspector-strict \
        node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js "$1"
}

# pinned_npm_entry PACKAGE_DIR TARGET_NAME ENTRY LOG: `npm ci` of tests/interop/PACKAGE_DIR
# into target/interop/TARGET_NAME (remade when its lock changes); prints the path of ENTRY
# there, or nothing.
pinned_npm_entry() {
    local package="$1" name="$2" entry="$3" log="$4" here root prefix lock want
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    root="$(cd "$here/../.." && pwd)"
    prefix="$root/target/interop/$name"
    lock="$here/$package/package-lock.json"
    command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || return 0
    want="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$lock")"
    if [ ! -f "$prefix/$entry" ] ||
        [ "$(cat "$prefix/.lock.sha256" 2>/dev/null || true)" != "$want" ]; then
        rm -rf "$prefix"
        mkdir -p "$prefix"
        cp "$here/$package/package.json" "$lock" "$prefix/"
        if (cd "$prefix" && npm ci --no-audit --no-fund >>"$log" 2>&1); then
            echo "$want" >"$prefix/.lock.sha256"
        fi
    fi
    if [ -f "$prefix/.lock.sha256" ]; then
        echo "$prefix/$entry"
    fi
}
