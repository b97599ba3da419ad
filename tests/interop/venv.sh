# Sourced by the interop scripts that need a Python virtual environment.
#
#   make_venv VENV REQUIREMENTS LOG
#
# Makes (once) the venv VENV with the exact versions of the file REQUIREMENTS, from PyPI (or
# the PIP_INDEX_URL mirror of it), wheels only, then `pip check`s it; it is remade when the
# requirements file changes (its SHA-256 is kept in VENV/.requirements.sha256). The output
# of the setup goes to LOG. Returns 1, with why in $venv_failure, when python3 is missing or
# a step fails.
make_venv() {
    local venv="$1" requirements="$2" log="$3"
    venv_failure=""
    if ! command -v python3 >/dev/null 2>&1; then
        venv_failure="python3 not found"
        return 1
    fi
    local stamp="$venv/.requirements.sha256" want
    want="$(python3 -c 'import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],"rb").read()).hexdigest())' "$requirements")"
    if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null || true)" = "$want" ]; then
        return 0
    fi
    rm -rf "$venv"
    if ! python3 -m venv "$venv" >>"$log" 2>&1; then
        venv_failure="python3 -m venv failed"
        return 1
    fi
    if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
        --index-url "${PIP_INDEX_URL:-https://pypi.org/simple}" --only-binary=:all: \
        -r "$requirements" >>"$log" 2>&1; then
        venv_failure="pip install failed"
        return 1
    fi
    if ! "$venv/bin/python" -m pip check >>"$log" 2>&1; then
        venv_failure="pip check failed"
        return 1
    fi
    echo "$want" >"$stamp"
}
