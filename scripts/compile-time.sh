#!/usr/bin/env bash
# Compile-time cost of rcip's macros (not part of CI; takes several minutes).
#
# Generates two crates of 200 functions, each with its own three-field input struct
# (serde + schemars derives in both): one with `#[capability]` on every function and a
# `catalog!` listing them, one with the same functions and no rcip macro. Then, alternating
# the two crates RUNS times, it measures
#   clean:       `cargo build` of the crate alone (dependencies already built),
#   incremental: `cargo build` after editing one function body,
#   check:       `cargo check` after editing one function body,
# and prints the medians and the ratios macros / plain (target: at most 1.5 on all three).
#
# Usage: scripts/compile-time.sh [RUNS]   (default 7; work area: target/compile-time)
set -euo pipefail
RUNS=${1:-7}
N=200
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK="$ROOT/target/compile-time"
export CARGO_TARGET_DIR="$WORK/target"
mkdir -p "$WORK"

generate() { # $1: crate name, $2: "macros" or "plain"
    local dir="$WORK/$1"
    mkdir -p "$dir/src"
    cat > "$dir/Cargo.toml" <<TOML
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
rcip-runtime = { path = "$ROOT/rcip-runtime" }
serde = { version = "1", features = ["derive"] }
schemars = { version = "1.2", features = ["derive"] }
TOML
    {
        echo "#![allow(dead_code, unused_imports)]"
        echo "use rcip_runtime::*;"
        echo "use schemars::JsonSchema;"
        echo "use serde::Deserialize;"
        for i in $(seq 1 $N); do
            cat <<RS

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input$i {
    /// A name.
    pub name: String,
    /// A count.
    pub count: u32,
    /// A flag.
    pub flag: bool,
}

/// Operation $i.
///
/// Does operation number $i.
RS
            if [ "$2" = macros ]; then
                echo "#[capability(effect = \"read\", scope = \"ops\")]"
            fi
            cat <<RS
pub fn operation_$i(input: Input$i) -> String {
    format!("{} {} {} {}", $i, input.name, input.count, input.flag)
}
RS
        done
        if [ "$2" = macros ]; then
            echo
            echo "catalog! {"
            echo "    pub struct Ops {"
            echo "        id = \"ops\", name = \"Ops\", description = \"Operations.\","
            echo "        scopes = [(\"ops\", \"Ops\", \"All operations.\")],"
            printf "        capabilities = ["
            for i in $(seq 1 $N); do printf "operation_%s, " "$i"; done
            echo "],"
            echo "    }"
            echo "}"
        fi
    } > "$dir/src/lib.rs"
}

edit() { # change the body of one function, so each edit is a real change
    sed -i -E "s/format!\(\"\{\} \{\} \{\} \{\}\", 100(_[0-9]+)?,/format!(\"{} {} {} {}\", 100_$2,/" "$WORK/$1/src/lib.rs"
}

seconds() { # run a command, print its wall time in seconds; a failing build stops the script
    local start end
    start=$(date +%s.%N)
    if ! "$@" >"$WORK/last.log" 2>&1; then
        echo "failed: $*" >&2
        cat "$WORK/last.log" >&2
        exit 1
    fi
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}'
}

measure() { # $1 crate, $2 run number -> "clean incremental check"
    local dir="$WORK/$1"
    cargo clean -p "$1" --manifest-path "$dir/Cargo.toml" >/dev/null 2>&1
    local clean incremental check
    clean=$(seconds cargo build --manifest-path "$dir/Cargo.toml")
    edit "$1" "${2}1"
    incremental=$(seconds cargo build --manifest-path "$dir/Cargo.toml")
    edit "$1" "${2}2"
    check=$(seconds cargo check --manifest-path "$dir/Cargo.toml")
    echo "$clean $incremental $check"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

generate ops_macros macros
generate ops_plain plain
echo "building dependencies once..."
cargo build --manifest-path "$WORK/ops_macros/Cargo.toml" >/dev/null 2>&1
cargo check --manifest-path "$WORK/ops_macros/Cargo.toml" >/dev/null 2>&1
cargo build --manifest-path "$WORK/ops_plain/Cargo.toml" >/dev/null 2>&1
cargo check --manifest-path "$WORK/ops_plain/Cargo.toml" >/dev/null 2>&1

: > "$WORK/macros.txt"
: > "$WORK/plain.txt"
for run in $(seq 1 "$RUNS"); do
    if [ $((run % 2)) = 1 ]; then order="macros plain"; else order="plain macros"; fi
    for kind in $order; do
        line=$(measure "ops_$kind" "$run")
        echo "$line" >> "$WORK/$kind.txt"
        echo "run $run $kind: clean/incremental/check = $line s"
    done
done

printf "\n%-12s %10s %10s %8s\n" "measure" "macros s" "plain s" "ratio"
for column in 1 2 3; do
    name=$(echo "clean incremental check" | cut -d' ' -f$column)
    m=$(cut -d' ' -f$column "$WORK/macros.txt" | median)
    p=$(cut -d' ' -f$column "$WORK/plain.txt" | median)
    printf "%-12s %10.2f %10.2f %8.2f\n" "$name" "$m" "$p" "$(awk -v m="$m" -v p="$p" 'BEGIN {print m / p}')"
done
