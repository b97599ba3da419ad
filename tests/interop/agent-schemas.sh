#!/usr/bin/env bash
# Runs the provider SDKs' own checkers over exported agent tool lists.
#
#   bash tests/interop/agent-schemas.sh DIR              check DIR/<profile>.json
#   bash tests/interop/agent-schemas.sh --self-test [DIR]
#                                  accepted and refused fixtures (default:
#                                  tests/interop/fixtures/agent-schemas)
#
# Makes (once) a virtual environment at target/interop/venv with the exact versions of
# requirements-agent-schemas.txt, from PyPI (or the PIP_INDEX_URL mirror of it), wheels only;
# it is remade when the requirements change. Without python3 or a usable venv it prints one
# "skipped" line and exits 0, unless CI is set, when that is an error.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/target/interop/venv"
requirements="$here/requirements-agent-schemas.txt"
log="$root/target/interop/venv-setup.log"

unavailable() {
    if [ -n "${CI:-}" ]; then
        echo "error: agent schema interop: $1 (see $log)" >&2
        exit 1
    fi
    echo "skipped: agent schema interop (python3 venv unavailable)"
    exit 0
}

case "${1:-}" in
    --self-test) args=(--self-test "${2:-$here/fixtures/agent-schemas}") ;;
    "" | -*)
        echo "usage: $0 DIR | --self-test [DIR]" >&2
        exit 2
        ;;
    *) args=("$1") ;;
esac

mkdir -p "$root/target/interop"
: >"$log"
command -v python3 >/dev/null 2>&1 || unavailable "python3 not found"

stamp="$venv/.requirements.sha256"
want="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$requirements")"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >>"$log" 2>&1 || unavailable "python3 -m venv failed"
    "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
        --index-url "${PIP_INDEX_URL:-https://pypi.org/simple}" --only-binary=:all: \
        -r "$requirements" >>"$log" 2>&1 || unavailable "pip install failed"
    "$venv/bin/python" -m pip check >>"$log" 2>&1 || unavailable "pip check failed"
    echo "$want" >"$stamp"
fi

exec "$venv/bin/python" "$here/agent_schemas.py" "${args[@]}"
