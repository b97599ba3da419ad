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
