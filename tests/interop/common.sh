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

#   inspector_cli LOG
#
# The MCP Inspector CLI, exactly as inspector-npm/package-lock.json pins it (`npm ci` into
# target/interop/inspector, remade when the lock changes), on the machine's node: prints the
# path of its entry point, or nothing when npm or node is missing or `npm ci` failed (its
# output in LOG).
inspector_cli() {
    local log="$1" here root prefix lock want
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    root="$(cd "$here/../.." && pwd)"
    prefix="$root/target/interop/inspector"
    lock="$here/inspector-npm/package-lock.json"
    command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 || return 0
    want="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$lock")"
    if [ ! -f "$prefix/node_modules/@modelcontextprotocol/inspector-cli/build/index.js" ] ||
        [ "$(cat "$prefix/.lock.sha256" 2>/dev/null || true)" != "$want" ]; then
        rm -rf "$prefix"
        mkdir -p "$prefix"
        cp "$here/inspector-npm/package.json" "$lock" "$prefix/"
        if (cd "$prefix" && npm ci --no-audit --no-fund >>"$log" 2>&1); then
            echo "$want" >"$prefix/.lock.sha256"
        fi
    fi
    if [ -f "$prefix/.lock.sha256" ]; then
        echo "$prefix/node_modules/@modelcontextprotocol/inspector-cli/build/index.js"
    fi
}
