#!/usr/bin/env bash
# The README's quick start as a new user makes it: a new crate (target/interop/quickstart/todo)
# whose Cargo.toml has exactly the README's `[dependencies]` lines and whose src/main.rs is the
# README's code, the two rcip crates taken from this checkout through `[patch.crates-io]` (so
# the README's `"0.1"` lines are what is built), with this workspace's Cargo.lock for the
# other versions. Then the Python `mcp` SDK drives the binary over stdio in both MCP revisions
# (quickstart_client.py: list, a read, a write the policy allows, a destructive call declined
# and then approved through elicitation), and the MCP Inspector 2.x CLI's `--strict` reports
# no tool-schema portability problem on it or on the polls example.
#
#   bash tests/interop/quickstart.sh
#
# Without python3 or a usable venv it prints one "skipped" line and exits 0, unless CI is set,
# when that is an error; without npm the Inspector check alone is skipped (an error under CI).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/target/interop/venv"

# shellcheck source=tests/interop/common.sh
. "$here/common.sh"
mcp_venv "quick start interop" || exit 0

target_dir="$(workspace_target_dir)"
crate="$target_dir/interop/quickstart/todo"
rm -rf "$crate"
mkdir -p "$crate/src"
"$venv/bin/python" - "$root/README.md" "$crate" "$root" <<'PY'
import re, sys
readme, crate, root = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
quick = readme[readme.index("## Quick start"):]
toml = re.search(r"```toml\n(.*?)```", quick, re.S).group(1)
code = re.search(r"`src/main.rs`:\n\n```rust,no_run\n(.*?)```\n", quick, re.S).group(1)
assert toml.startswith("[dependencies]\n"), toml
with open(f"{crate}/Cargo.toml", "w") as f:
    f.write('[package]\nname = "todo"\nversion = "0.1.0"\nedition = "2024"\n\n[workspace]\n\n')
    f.write(toml)
    f.write(f'\n[patch.crates-io]\n')
    for name in ("rcip-core", "rcip-rcp", "rcip-macros", "rcip-runtime", "rcip-export", "rcip-mcp"):
        f.write(f'{name} = {{ path = "{root}/{name}" }}\n')
with open(f"{crate}/src/main.rs", "w") as f:
    f.write(code)
PY
cp "$root/Cargo.lock" "$crate/Cargo.lock"
# A target of its own (the crate is outside the workspace, so nothing is shared), built without
# debug info as the workspace's own profile does: with cargo's default (full debug info) this
# one build took gigabytes and once filled a CI machine's disk.
(cd "$crate" && CARGO_PROFILE_DEV_DEBUG=false \
    CARGO_TARGET_DIR="$target_dir/interop/quickstart/target" cargo build -q)
cargo build -q -p rcip-examples --example polls
todo="$target_dir/interop/quickstart/target/debug/todo"

log="$target_dir/interop/inspector-strict-setup.log"
: >"$log"
cli="$(inspector_strict_cli "$log")"
if [ -n "$cli" ]; then
    "$venv/bin/python" "$here/quickstart_client.py" "$todo" "$target_dir/debug/examples/polls" \
        "$(command -v node)" "$cli"
else
    unavailable "npm ci of the Inspector 2.x CLI failed or npm missing" "MCP Inspector --strict" "$log"
    "$venv/bin/python" "$here/quickstart_client.py" "$todo" "$target_dir/debug/examples/polls"
fi
