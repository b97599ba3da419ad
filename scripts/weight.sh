#!/usr/bin/env bash
# Issue 39's weight measurement: one MCP application over streamable HTTP written two ways,
# tests/weight/rcip-app (`#[capability]` functions, `catalog!`, rcip-mcp) and
# tests/weight/rmcp-app (the same four tools on rmcp directly: `#[tool_router]`, schemars,
# axum), and beside them rmcp-app+validate (rmcp-app's `validate` feature: each call's
# arguments checked against the tool's schema with jsonschema, the validator rcip links, as
# rcip checks every input: the validating peer, reported for comparison; the issue's target
# is against rmcp-app), weighed in one run by
#   (a) unique packages in the normal dependency tree (`cargo tree -e normal`; names, and
#       name+version pairs; each app itself counted, as the issue's figures were),
#   (b) cold release build: a fresh target dir, every dependency compiled (wall seconds),
#   (c) release binary size (as built, and stripped when `strip` exists).
# The issue's target: each of rcip's at most 1.25 times rmcp's. This is a measurement: it
# exits 0 whether or not the target is met (a build that fails is an error).
#
# Usage:
#   scripts/weight.sh [--runs N] [--keep]   (a) once, then N (default 1) cold builds of each
#                                           variant, rotating which goes first (N a
#                                           multiple of 3 gives each the first place as
#                                           often); medians.
#                                           Each build's target dir, target/weight/<app>-<n>
#                                           (a full release build), is removed once measured
#                                           unless --keep.
#   scripts/weight.sh --check-count CEILING (a) only, no build: exits 1 when rcip-app has
#                                           more than CEILING unique package names
#                                           (scripts/check-dependencies.sh's guard).
#   scripts/weight.sh --smoke               no measurement: every variant built (debug, no debug
#                                           information, target/weight-smoke, kept between
#                                           runs) and started with `--check 0`, so an API
#                                           change cannot leave them broken until the next
#                                           measurement (.ci/run).
# Offline throughout (`--offline`): each app resolves from a fresh copy of the workspace's
# Cargo.lock (so the versions are the workspace's), and every package must already be
# downloaded: run it after building the workspace, or after `cargo fetch`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# A variant is an app, and `+FEATURE` when built with that feature.
APPS=(rcip-app rmcp-app rmcp-app+validate)
RUNS=1
KEEP=false
CEILING=
SMOKE=false
while [ $# -gt 0 ]; do
    case $1 in
        --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
        --keep) KEEP=true; shift ;;
        --check-count) CEILING=${2:?--check-count needs a ceiling}; shift 2 ;;
        --smoke) SMOKE=true; shift ;;
        *) echo "usage: $0 [--runs N] [--keep] | --check-count CEILING | --smoke" >&2; exit 2 ;;
    esac
done

manifest() { echo "$ROOT/tests/weight/${1%%+*}/Cargo.toml"; }
binary() { echo "${1%%+*}"; }
# The cargo arguments of a variant's features (none, or `--features FEATURE`).
features() { if [[ $1 == *+* ]]; then echo "--features ${1#*+}"; fi; }

# --smoke needs no dependency tree.
if [ "$SMOKE" = true ]; then
    for app in "${APPS[@]}"; do
        # Resolved as the measurement resolves it: the workspace's versions.
        cp "$ROOT/Cargo.lock" "$(dirname "$(manifest "$app")")/Cargo.lock"
        dir="$ROOT/target/weight-smoke"
        # shellcheck disable=SC2046 # the features are words
        if ! CARGO_TARGET_DIR="$dir" CARGO_PROFILE_DEV_DEBUG=false \
            cargo build --offline -q --manifest-path "$(manifest "$app")" $(features "$app"); then
            echo "weight: $app does not build" >&2
            exit 1
        fi
        if ! out=$("$dir/debug/$(binary "$app")" --check 0 2>&1); then
            echo "$out" >&2
            echo "weight: $app was built but does not start (\`$dir/debug/$(binary "$app") --check 0\`)" >&2
            exit 1
        fi
        echo "weight: $app builds and starts"
    done
    exit 0
fi

# The normal dependency tree, one `name vX.Y.Z [...]` line per package occurrence.
declare -A TREE
for app in "${APPS[@]}"; do
    # Fresh each time: the app resolves to the workspace's versions, as they are today.
    cp "$ROOT/Cargo.lock" "$(dirname "$(manifest "$app")")/Cargo.lock"
    # shellcheck disable=SC2046 # the features are words
    TREE[$app]=$(cargo tree --offline -e normal --prefix none --manifest-path "$(manifest "$app")" \
        $(features "$app"))
done
names() { sed -E 's/ v[0-9].*//' <<<"${TREE[$1]}" | sort -u; }
pairs() { awk '{print $1, $2}' <<<"${TREE[$1]}" | sort -u; }
declare -A NAMES PAIRS
for app in "${APPS[@]}"; do
    NAMES[$app]=$(names "$app" | wc -l)
    PAIRS[$app]=$(pairs "$app" | wc -l)
done
# On one line, for the report (the apps themselves left out).
only_rcip=$(comm -23 <(names rcip-app) <(names rmcp-app) | { grep -vx rcip-app || true; } | paste -sd ' ')
only_rmcp=$(comm -13 <(names rcip-app) <(names rmcp-app) | { grep -vx rmcp-app || true; } | paste -sd ' ')
only_rcip_validating=$(comm -23 <(names rcip-app) <(names rmcp-app+validate) \
    | { grep -vx rcip-app || true; } | paste -sd ' ')
words() { wc -w <<<"$1"; }

if [ -n "$CEILING" ]; then
    target=$(awk -v r="${NAMES[rmcp-app]}" 'BEGIN {printf "%d", r * 1.25}')
    echo "weight: unique packages: rcip-app ${NAMES[rcip-app]}, rmcp-app ${NAMES[rmcp-app]}" \
        "(issue 39's target: rcip <= $target; ceiling here: $CEILING)"
    if [ "${NAMES[rcip-app]}" -gt "$CEILING" ]; then
        echo "weight: rcip-app's dependency tree grew past $CEILING packages; those rmcp-app" \
            "does not have: $only_rcip" >&2
        exit 1
    fi
    exit 0
fi

if command -v strip >/dev/null; then
    STRIP="strip --strip-all ($(strip --version | head -n 1))"
else
    STRIP=
fi

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# build APP N: one cold release build in target/weight/APP-N; appends "seconds bytes
# stripped-bytes" to that app's results, after checking the binary starts and binds.
declare -A RESULTS
build() {
    local app=$1 n=$2 dir="$ROOT/target/weight/$1-$2" start end seconds bin bytes stripped
    rm -rf "$dir"
    mkdir -p "$dir"
    start=$(date +%s.%N)
    # No incremental data: a cold build as CI makes it (.ci/run sets the same).
    if ! CARGO_TARGET_DIR="$dir" CARGO_INCREMENTAL=0 \
        cargo build --release --offline --manifest-path "$(manifest "$app")" $(features "$app") \
        >"$dir/build.log" 2>&1; then
        echo "weight: building $app failed:" >&2
        cat "$dir/build.log" >&2
        exit 1
    fi
    end=$(date +%s.%N)
    seconds=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}')
    bin="$dir/release/$(binary "$app")"
    # Port 0: any free port; `--check` exits once the server is up.
    if ! "$bin" --check 0 >/dev/null 2>&1; then
        echo "weight: $app was built but does not start (\`$bin --check 0\`)" >&2
        exit 1
    fi
    bytes=$(stat -c %s "$bin")
    stripped=-
    if [ -n "$STRIP" ]; then
        strip --strip-all -o "$dir/$app.stripped" "$bin"
        stripped=$(stat -c %s "$dir/$app.stripped")
    fi
    RESULTS[$app]+="$seconds $bytes $stripped"$'\n'
    echo "  run $n: $app built in ${seconds} s, $bytes bytes" >&2
    if [ "$KEEP" = false ]; then
        rm -rf "$dir"
    fi
}

echo "weight: $RUNS cold release build(s) of each app ($(nproc) CPUs, $(rustc --version))" >&2
for ((n = 1; n <= RUNS; n++)); do
    # Rotating which goes first, so none always meets a warmer machine.
    order=("${APPS[@]:$(((n - 1) % ${#APPS[@]}))}" "${APPS[@]:0:$(((n - 1) % ${#APPS[@]}))}")
    for app in "${order[@]}"; do build "$app" "$n"; done
done

column_median() { # APP FIELD
    printf '%s' "${RESULTS[$1]}" | cut -d' ' -f"$2" | median
}
declare -A TIMES BYTES STRIPPED
for app in "${APPS[@]}"; do
    TIMES[$app]=$(column_median "$app" 1)
    BYTES[$app]=$(column_median "$app" 2)
    STRIPPED[$app]=$(if [ -n "$STRIP" ]; then column_median "$app" 3; else echo -; fi)
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# LABEL KEY [target]: the three variants' figures of KEY (an associative array's name), rcip's
# ratio to rmcp-app (with whether it meets 1.25 when it is a target) and to the validating peer.
row() {
    local -n of=$2
    local rcip=${of[rcip-app]} rmcp=${of[rmcp-app]} validating=${of[rmcp-app+validate]}
    local r=- rv=- note=
    if [ "$rcip" != - ]; then
        r=$(ratio "$rcip" "$rmcp")
        rv=$(ratio "$rcip" "$validating")
    fi
    if [ "${3:-}" = target ] && [ "$r" != - ]; then
        note="  (target <= 1.25: $(awk -v r="$r" 'BEGIN {print (r <= 1.25 ? "met" : "not met")}'))"
    fi
    printf "%-34s %12s %12s %10s %14s %12s%s\n" "$1" "$rcip" "$rmcp" "$r" "$validating" "$rv" "$note"
}
echo
echo "Issue 39: an MCP application over streamable HTTP, rcip vs rmcp (medians of $RUNS run(s))"
echo "cargo's default release profile in all; each app itself counted among its packages;"
echo "rmcp+validate: rmcp-app checking each call against its schema with jsonschema"
echo
printf "%-34s %12s %12s %10s %14s %12s\n" "" rcip-app rmcp-app rcip/rmcp rmcp+validate rcip/validate
row "unique packages (names)" NAMES target
row "unique packages (name+version)" PAIRS
row "cold release build (s)" TIMES target
row "release binary (bytes)" BYTES target
row "release binary, stripped (bytes)" STRIPPED
echo
echo "stripped with: ${STRIP:-nothing (no strip on PATH)}"
echo "packages only in rcip-app ($(words "$only_rcip")): $only_rcip"
echo "packages only in rmcp-app ($(words "$only_rmcp")): $only_rmcp"
echo "packages only in rcip-app against rmcp+validate ($(words "$only_rcip_validating")): $only_rcip_validating"
