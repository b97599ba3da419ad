#!/usr/bin/env bash
# Compile-time cost of binding capabilities, measured as an application is built (not part
# of CI; bounded: about RUNS x 8 crates x 30 s, plus one build of the dependencies).
#
# Generates eight *binary* crates with the same 200 functions, each taking its own
# three-field input struct (`Deserialize` + `JsonSchema` in every crate, so the difference
# measured is the tool layer, not the derives):
#   ops_rcip:   `#[capability]` on each function, one `catalog!`; `main` builds the
#               catalog's runtime (`Ops::runtime`), which binds all 200;
#   ops_plain:  `main` calls the 200 functions directly (no tool layer at all);
#   ops_json:   a hand-written `dispatch(name, Value) -> Result<Value, _>`: match on the
#               name, `serde_json` into the input type, call, back to a `Value` -- the least
#               any JSON-driven tool layer compiles (the floor of the target);
#   ops_rmcp:   rmcp (the workspace's version; features `server`, `macros`): the functions
#               as `#[tool]` methods of one `#[tool_router]` impl, `#[tool_handler] impl
#               ServerHandler`; `main` builds the router (the peer);
#   ops_bare:   ops_json without the `JsonSchema` derive (reported for transparency: what
#               the schema derive itself costs the floor);
#   ops_listed: ops_json that also builds every input's schema (`schema_for!`), as a tool
#               layer that describes its tools must (ops_json derives `JsonSchema` but never
#               calls it, so it never compiles the schema code): a second floor, reported
#               beside the first;
#   ops_checked: ops_listed that also validates an input against its schema with the
#               validator rcip uses (the workspace's `jsonschema`, default features off):
#               the least a tool layer that describes and validates its tools compiles and
#               links, a third floor, reported beside the others;
#   ops_expanded: ops_rcip with each capability's `CapabilitySpec` and `Capability` impls
#               written out with the types known (no `#[capability]`, no extractor
#               detection, no helper constants; the same `catalog!`): what rcip would
#               compile if the macro's expansion were as small as it could be, the bound of
#               any redesign of it (reported for that, not a target).
# Then, RUNS times, in an order that rotates each run, it measures per crate
#   clean:       `cargo build` of the crate alone (dependencies already built),
#   incremental: `cargo build` after editing one function body,
#   check:       `cargo check` after editing one function body (the check state warm),
# and prints medians and the ratios rcip / JSON floor (for reference) and rcip / rmcp
# (target < 1).
#
# Usage:
#   scripts/compile-time.sh [RUNS]     (default 5) the alternating runs above
#   scripts/compile-time.sh deps       unique dependency packages, cold builds (with all
#                                      dependencies, a fresh target dir) and release binary
#                                      sizes of ops_rcip, ops_rmcp, ops_json and the polls
#                                      example (several minutes per cold build)
#   DEPS_DEBUG=false scripts/compile-time.sh [RUNS]
#                                      the same runs with `[profile.dev.package."*"]
#                                      debug = false` in every generated crate (as this
#                                      workspace's dev profile does for its dependencies;
#                                      here rcip's own crates are dependencies too): no
#                                      dependency keeps debug information, the measured
#                                      crates keep theirs. Its own work area,
#                                      target/compile-time-deps-nodebug.
# Work area: target/compile-time (its own target dir; crates.io is the only network use:
# the generated crates start from the workspace's Cargo.lock, rmcp's macros crate may need a
# download the first time).
set -euo pipefail
MODE=${1:-5}
N=200
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEPS_DEBUG=${DEPS_DEBUG:-}
case $DEPS_DEBUG in
    "") WORK="$ROOT/target/compile-time" ;;
    false) WORK="$ROOT/target/compile-time-deps-nodebug" ;;
    *) echo "DEPS_DEBUG: only 'false' (or unset)" >&2; exit 2 ;;
esac
export CARGO_TARGET_DIR="$WORK/target"
mkdir -p "$WORK"
KINDS="rcip plain json rmcp bare listed checked expanded"

rmcp_version() { # the workspace's rmcp requirement
    sed -n -E 's/^rmcp = \{ version = "([^"]+)".*/\1/p' "$ROOT/Cargo.toml"
}

jsonschema_version() { # the workspace's jsonschema requirement
    sed -n -E 's/^jsonschema = \{ version = "([^"]+)".*/\1/p' "$ROOT/Cargo.toml"
}

manifest() { # $1: kind
    local dependencies
    case $1 in
        rcip | expanded) dependencies="rcip-runtime = { path = \"$ROOT/rcip-runtime\" }" ;;
        rmcp) dependencies="rmcp = { version = \"$(rmcp_version)\", default-features = false, features = [\"server\", \"macros\"] }" ;;
        checked) dependencies="serde_json = \"1\"
jsonschema = { version = \"$(jsonschema_version)\", default-features = false }" ;;
        *) dependencies="serde_json = \"1\"" ;;
    esac
    local schemars='schemars = { version = "1.2", features = ["derive"] }'
    [ "$1" = bare ] && schemars=""
    cat <<TOML
[package]
name = "ops_$1"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
$dependencies
serde = { version = "1", features = ["derive"] }
$schemars
TOML
    if [ "$DEPS_DEBUG" = false ]; then
        printf '\n[profile.dev.package."*"]\ndebug = false\n'
    fi
}

input_struct() { # $1: kind, $2: index
    if [ "$1" = bare ]; then
        echo "#[derive(Deserialize)]"
    else
        echo "#[derive(Deserialize, JsonSchema)]"
    fi
    cat <<RS
#[serde(deny_unknown_fields)]
pub struct Input$2 {
    /// A name.
    pub name: String,
    /// A count.
    pub count: u32,
    /// A flag.
    pub flag: bool,
}
RS
}

body() { # $1: index (the edit below changes the literal of function 100)
    local literal=$1
    # Function 100's literal starts as long as every edit leaves it (`100_` and three
    # digits), so no edit moves the spans after it: a length change makes rustc check the
    # whole crate again, which would make the first run's incremental build twice as slow.
    [ "$1" = 100 ] && literal=100_000
    echo "    format!(\"{} {} {} {}\", $literal, input.name, input.count, input.flag)"
}

expanded_impls() { # $1: index; the two impls `#[capability]` stands for, types written in
    cat <<RS
#[allow(non_camel_case_types)]
pub struct operation_$1 {}

impl CapabilitySpec for operation_$1 {
    type Input = Input$1;
    type Output = String;
    const ID: &'static str = "ops.operation$1";
    const EFFECT: Effect = Effect::Read;
    const SCOPES: &'static [&'static str] = &["ops"];
    const TITLE: &'static str = "Operation $1";
    const DESCRIPTION: &'static str = "Does operation number $1.";
}

impl Capability for operation_$1 {
    type State = ();

    fn call(
        _state: (),
        input: Input$1,
        _context: InvocationContext,
    ) -> __private::BoxFuture<Result<__private::Value, HandlerError>> {
        __private::ready(__private::output_value(Ok(operation_$1(input))))
    }
}

RS
}

source() { # $1: kind
    local kind=$1 i
    echo "#![allow(dead_code, unused_imports)]"
    echo "use serde::Deserialize;"
    [ "$kind" = bare ] || echo "use schemars::JsonSchema;"
    case $kind in
        rcip | expanded) echo "use rcip_runtime::*;" ;;
        rmcp)
            echo "use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};"
            echo "use rmcp::{ServerHandler, tool, tool_handler, tool_router};"
            ;;
    esac
    for i in $(seq 1 $N); do
        echo
        input_struct "$kind" "$i"
        [ "$kind" = rmcp ] && continue
        echo
        # Before the function's doc comment, so that it documents the function, as in
        # every other kind.
        [ "$kind" = expanded ] && expanded_impls "$i"
        echo "/// Operation $i."
        echo "///"
        echo "/// Does operation number $i."
        [ "$kind" = rcip ] && echo "#[capability(effect = \"read\", scope = \"ops\")]"
        echo "pub fn operation_$i(input: Input$i) -> String {"
        body "$i"
        echo "}"
    done
    echo
    case $kind in
        rcip | expanded)
            echo "catalog! {"
            echo "    pub struct Ops {"
            echo "        id = \"ops\", name = \"Ops\", description = \"Operations.\","
            echo "        scopes = [(\"ops\", \"Ops\", \"All operations.\")],"
            printf "        capabilities = ["
            for i in $(seq 1 $N); do printf "operation_%s, " "$i"; done
            echo "],"
            echo "    }"
            echo "}"
            echo
            echo "fn main() {"
            echo "    let runtime = Ops::runtime(RuntimeOptions::default(), ()).expect(\"the catalog binds\");"
            echo "    println!(\"{:?}\", runtime.check_bound().is_ok());"
            echo "}"
            ;;
        plain)
            echo "fn main() {"
            echo "    let count = std::env::args().count() as u32;"
            for i in $(seq 1 $N); do
                echo "    println!(\"{}\", operation_$i(Input$i { name: String::new(), count, flag: false }));"
            done
            echo "}"
            ;;
        json | bare | listed | checked)
            if [ "$kind" = listed ] || [ "$kind" = checked ]; then
                echo "/// Every input's schema, as a tool listing needs them."
                echo "pub fn schemas() -> Vec<serde_json::Value> {"
                echo "    vec!["
                for i in $(seq 1 $N); do
                    echo "        serde_json::to_value(schemars::schema_for!(Input$i)).unwrap(),"
                done
                echo "    ]"
                echo "}"
                echo
            fi
            if [ "$kind" = checked ]; then
                echo "/// Whether \`input\` is valid against the schema of operation \`index\`."
                echo "pub fn validate(index: usize, input: &serde_json::Value) -> bool {"
                echo "    let schema = schemas().swap_remove(index);"
                echo "    jsonschema::validator_for(&schema).is_ok_and(|validator| validator.is_valid(input))"
                echo "}"
                echo
            fi
            echo "/// Runs the operation \`name\` on a JSON input."
            echo "pub fn dispatch(name: &str, input: serde_json::Value) -> Result<serde_json::Value, serde_json::Error> {"
            echo "    match name {"
            for i in $(seq 1 $N); do
                echo "        \"ops.operation$i\" => serde_json::to_value(operation_$i(serde_json::from_value(input)?)),"
            done
            echo "        _ => Err(serde::de::Error::custom(\"unknown operation\")),"
            echo "    }"
            echo "}"
            echo
            echo "fn main() {"
            [ "$kind" = listed ] && echo "    println!(\"{}\", schemas().len());"
            echo "    let name = std::env::args().nth(1).unwrap_or_default();"
            echo "    let input = serde_json::json!({\"name\": \"a\", \"count\": 1, \"flag\": true});"
            [ "$kind" = checked ] && echo "    println!(\"{}\", validate(0, &input));"
            echo "    println!(\"{:?}\", dispatch(&name, input).map(|output| output.to_string()));"
            echo "}"
            ;;
        rmcp)
            echo "#[derive(Clone)]"
            echo "pub struct Ops {"
            echo "    tool_router: ToolRouter<Ops>,"
            echo "}"
            echo
            echo "#[tool_router]"
            echo "impl Ops {"
            echo "    pub fn new() -> Self {"
            echo "        Ops { tool_router: Self::tool_router() }"
            echo "    }"
            for i in $(seq 1 $N); do
                echo
                echo "    /// Operation $i."
                echo "    ///"
                echo "    /// Does operation number $i."
                echo "    #[tool(name = \"ops.operation$i\")]"
                echo "    fn operation_$i(&self, Parameters(input): Parameters<Input$i>) -> String {"
                body "$i"
                echo "    }"
            done
            echo "}"
            echo
            echo "#[tool_handler]"
            echo "impl ServerHandler for Ops {}"
            echo
            echo "fn main() {"
            echo "    let ops = Ops::new();"
            echo "    println!(\"{}\", ops.tool_router.list_all().len());"
            echo "}"
            ;;
    esac
}

generate() { # $1: kind
    local dir="$WORK/ops_$1"
    mkdir -p "$dir/src"
    manifest "$1" > "$dir/Cargo.toml"
    source "$1" > "$dir/src/main.rs"
    # The workspace's versions (cargo drops what the crate does not use, adds what it lacks).
    [ -f "$dir/Cargo.lock" ] || cp "$ROOT/Cargo.lock" "$dir/Cargo.lock"
}

edit() { # $1 kind, $2 a fresh suffix: change the body of function 100, a real change each time
    sed -i -E "s/format!\(\"\{\} \{\} \{\} \{\}\", 100(_[0-9]+)?,/format!(\"{} {} {} {}\", 100_$2,/" "$WORK/ops_$1/src/main.rs"
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

measure() { # $1 kind, $2 run number -> "clean incremental check"
    local manifest="$WORK/ops_$1/Cargo.toml" clean incremental check
    cargo clean -p "ops_$1" --manifest-path "$manifest" >/dev/null 2>&1
    clean=$(seconds cargo build --manifest-path "$manifest")
    local run
    run=$(printf %02d "$2")
    edit "$1" "${run}1"
    incremental=$(seconds cargo build --manifest-path "$manifest")
    # Not timed: brings the check's own incremental state up to date, so the timed check
    # below is incremental as the build was.
    seconds cargo check --manifest-path "$manifest" >/dev/null
    edit "$1" "${run}2"
    check=$(seconds cargo check --manifest-path "$manifest")
    echo "$clean $incremental $check"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# Unique packages in the normal dependency tree of a manifest (the root excluded).
dependency_count() { # $1 manifest, $2... extra cargo tree arguments
    cargo tree --manifest-path "$1" "${@:2}" -e normal --prefix none 2>/dev/null \
        | sed 's/ (\*)$//' | sort -u | tail -n +1 | wc -l | awk '{print $1 - 1}'
}

cold_build() { # $1 label, then the cargo arguments: a debug build from a fresh target dir
    local label=$1 fresh="$WORK/cold"
    shift
    rm -rf "$fresh"
    local time
    time=$(CARGO_TARGET_DIR="$fresh" seconds cargo build "$@")
    rm -rf "$fresh"
    printf "%-26s %8.1f s\n" "$label" "$time"
}

for kind in $KINDS; do generate "$kind"; done

if [ "$MODE" = deps ]; then
    printf "%-26s %10s\n" "unique dependencies" "packages"
    for kind in rcip rmcp json; do
        printf "%-26s %10s\n" "ops_$kind" "$(dependency_count "$WORK/ops_$kind/Cargo.toml")"
    done
    printf "%-26s %10s\n" "polls example (normal)" \
        "$(dependency_count "$ROOT/Cargo.toml" -p rcip-examples)"
    echo
    echo "release binary size"
    for kind in rcip rmcp json; do
        cargo build --release --manifest-path "$WORK/ops_$kind/Cargo.toml" >/dev/null 2>&1
        printf "%-26s %10s bytes\n" "ops_$kind" "$(stat -c %s "$CARGO_TARGET_DIR/release/ops_$kind")"
    done
    (cd "$ROOT" && cargo build --release -p rcip-examples --example polls >/dev/null 2>&1)
    printf "%-26s %10s bytes\n" "polls example" "$(stat -c %s "$CARGO_TARGET_DIR/release/examples/polls")"
    echo
    echo "cold build (debug, with every dependency, fresh target dir)"
    for kind in rcip rmcp json; do
        cold_build "ops_$kind" --manifest-path "$WORK/ops_$kind/Cargo.toml"
    done
    cold_build "polls example" --manifest-path "$ROOT/Cargo.toml" -p rcip-examples --example polls
    exit 0
fi

RUNS=$MODE
# Each edit writes the run number in two digits (see `body`): more runs would change the
# literal's length, and with it what an incremental build has to redo.
if [ "$RUNS" -gt 99 ]; then
    echo "RUNS: at most 99" >&2
    exit 2
fi
echo "building dependencies once..."
for kind in $KINDS; do
    seconds cargo build --manifest-path "$WORK/ops_$kind/Cargo.toml" >/dev/null
    seconds cargo check --manifest-path "$WORK/ops_$kind/Cargo.toml" >/dev/null
    : > "$WORK/$kind.txt"
done

set -- $KINDS
count=$#
for run in $(seq 1 "$RUNS"); do
    # Rotate: each crate takes each position in turn, so a slow spell of the machine does
    # not always fall on the same one.
    order=""
    for position in $(seq 0 $((count - 1))); do
        index=$(( (position + run - 1) % count + 1 ))
        order="$order ${!index}"
    done
    for kind in $order; do
        line=$(measure "$kind" "$run")
        echo "$line" >> "$WORK/$kind.txt"
        echo "run $run $kind: clean/incremental/check = $line s"
    done
done

med() { cut -d' ' -f"$2" "$WORK/$1.txt" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
printf "\nmedians of %s runs (s)\n" "$RUNS"
printf "%-12s %7s %7s %7s %7s %7s %7s %7s %8s %10s %10s %12s %13s %14s\n" measure rcip json \
    rmcp plain "bare" "listed" "checked" "expanded" "rcip/json" "rcip/rmcp" "rcip/listed" \
    "rcip/checked" "expanded/json"
column=0
for name in clean incremental check; do
    column=$((column + 1))
    r=$(med rcip $column); j=$(med json $column); m=$(med rmcp $column)
    p=$(med plain $column); b=$(med bare $column); l=$(med listed $column)
    c=$(med checked $column); e=$(med expanded $column)
    printf "%-12s %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %8.2f %10s %10s %12s %13s %14s\n" \
        "$name" "$r" "$j" "$m" "$p" "$b" "$l" "$c" "$e" "$(ratio "$r" "$j")" "$(ratio "$r" "$m")" \
        "$(ratio "$r" "$l")" "$(ratio "$r" "$c")" "$(ratio "$e" "$j")"
done
echo "(target: rcip/rmcp < 1 on each; rcip/json is for reference; bare is the JSON floor without the"
echo " JsonSchema derive; listed is the floor that also builds its inputs' schemas; checked is"
echo " listed that also validates with jsonschema, as rcip must; expanded is rcip with the"
echo " macro's expansion written by hand as small as it could be, the bound of a redesign)"
