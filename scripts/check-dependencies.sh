#!/usr/bin/env bash
# The layout's dependency rules, checked on the resolved trees (run by .ci/run):
# - rcip-runtime without default features but with `macros` has no SQLite, no uuid, no
#   humantime and none of the protocol crates it does not use (jsonschema's own `uuid-simd`,
#   a different crate, is allowed);
# - what `cargo run --example polls` builds compiles no C code (no `cc`, no bundled SQLite);
# - rcip-build, and rcip-cli without its `serve` feature (default: `rcip serve` runs the
#   platform), use rcip-relationship's model only, never its engine;
# - the data layers point one way: rcip-relationship (model) <- rcip-records (engine) <-
#   rcip-platform <- rcip-database, and no SQL driver below rcip-database;
# - an MCP application on rcip (tests/weight/rcip-app) has no more packages than it had when
#   issue 39's measurement was written (scripts/weight.sh), and rcip-mcp brings no URL
#   parser (rmcp's `elicitation` feature would bring url, idna and ICU4X; rcip-mcp sends
#   elicitation requests without it).
set -euo pipefail
cd "$(dirname "$0")/.."

crates() { cargo tree --prefix none "$@" | sed -E 's/ v[0-9].*//' | sort -u; }
fail=0
refuse() { # refuse LABEL PATTERN TREE...
  local label=$1 pattern=$2; shift 2
  local found
  found=$(crates "$@" | grep -E "^(${pattern})$" || true)
  if [ -n "$found" ]; then
    echo "check-dependencies: $label has: $(echo $found)"; fail=1
  else
    echo "check-dependencies: $label: ok"
  fi
}

refuse "rcip-runtime (macros only)" 'rusqlite|libsqlite3-sys|uuid|humantime|rcip-relationship|rcip-assist|rcip-mcpl' \
  -p rcip-runtime --no-default-features -F macros -e normal
refuse "the polls example's build" 'cc|libsqlite3-sys|rusqlite' \
  -p rcip-examples -e normal,build,dev
refuse "rcip-build" 'rcip-runtime|tokio|rusqlite' -p rcip-build -e normal
refuse "rcip-cli (without serve)" 'rcip-runtime|tokio|rusqlite' -p rcip-cli --no-default-features -e normal
refuse "rcip-relationship (the model)" 'rcip-runtime|rcip-records|rcip-platform|rcip-database|tokio' \
  -p rcip-relationship -e normal
refuse "rcip-records" 'rcip-platform|rcip-database|rusqlite|tokio-postgres' -p rcip-records -e normal
refuse "rcip-platform" 'rcip-database|rusqlite|tokio-postgres' -p rcip-platform -e normal
refuse "rcip-mcp" 'url|idna|idna_adapter|icu_.*' -p rcip-mcp -e normal
# Issue 39's target is at most 1.25 times the packages of the same application on rmcp alone
# (tests/weight/rmcp-app: 94, so at most 117); not met yet (165 on 2026-12-07, 138 without
# rmcp's `elicitation` feature). Until it is, the ceiling is today's count, so the tree
# cannot grow; lower it as packages go.
bash scripts/weight.sh --check-count 138 || fail=1
exit $fail
