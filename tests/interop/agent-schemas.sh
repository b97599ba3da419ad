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
# shellcheck source=tests/interop/venv.sh
. "$here/venv.sh"
make_venv "$venv" "$requirements" "$log" || unavailable "$venv_failure"

exec "$venv/bin/python" "$here/agent_schemas.py" "${args[@]}"
