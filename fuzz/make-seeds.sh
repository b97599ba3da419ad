#!/bin/sh
# Writes seed corpora for the fuzz targets into fuzz/corpus/<target>/ from the project's
# own test vectors and examples. Needs jq. Run from anywhere; re-running overwrites.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/fuzz/corpus"
mkdir -p "$out/invoke_input" "$out/relationship_package" "$out/mcpl_digest" \
    "$out/rcp_capabilities" "$out/rule_eval" "$out/strict_schema"

# Relationship packages: the example programs as they are.
for program in "$root"/examples/programs/*.json; do
    cp "$program" "$out/relationship_package/$(basename "$program")"
done

# MCPL manifests: every digest vector's input.
vectors="$root/rcip-mcpl/tests/vectors/mcpl/manifest-digest-vectors.json"
count=$(jq '.vectors | length' "$vectors")
i=0
while [ "$i" -lt "$count" ]; do
    jq -c ".vectors[$i].input" "$vectors" >"$out/mcpl_digest/vector-$i.json"
    i=$((i + 1))
done

# Strict schemas: every type and command-input schema of the example programs, plus the
# RCP schema document itself (a large real-world schema the checker should reject cleanly).
for program in "$root"/examples/programs/*.json; do
    name=$(basename "$program" .json)
    jq -c '.types[] | .schema, (.commands // {} | .[] | .input // empty)' "$program" |
        awk -v dir="$out/strict_schema" -v name="$name" \
            '{ file = sprintf("%s/%s-%02d.json", dir, name, NR); print > file; close(file) }'
done
cp "$root/rcip-rcp/tests/vectors/rcp/rcp-1.0.schema.json" "$out/strict_schema/rcp-1.0.schema.json"

# RCP capabilities: each core key alone (parsed from the test corpus), all of them, and the
# value kinds the model distinguishes.
keys=$(grep -A40 "CORE_KEYS" "$root/rcip-rcp/tests/rcp_corpus/mod.rs" | sed -n "2,18p" | grep -o "\"[A-Za-z]*\"")
all="{"
for key in $keys; do
    printf '{%s: {}}' "$key" >"$out/rcp_capabilities/key-$(echo "$key" | tr -d '"').json"
    all="$all$key: {\"x\": 1},"
done
printf '%s"x-vendor.feature": {"a": [1]}, "_meta": {"k": "v"}}' "$all" >"$out/rcp_capabilities/all.json"
printf '{"embed": null, "rerank": false, "retrieve": 1, "graph": "yes", "unknown": {}}' \
    >"$out/rcp_capabilities/kinds.json"

# Invoke inputs: the first byte picks the capability (index modulo 5), the rest is the text.
printf '\000{"title": "Lunch?", "count": 1, "tags": ["a"]}' >"$out/invoke_input/note.bin"
printf '\001{"items": [{"k": "a", "v": 0.5}, {"k": "c", "v": 2}]}' >"$out/invoke_input/nested.bin"
printf '\002[[[[1]]], {"a": null}]' >"$out/invoke_input/any.bin"
printf '\003"abc"' >"$out/invoke_input/scalar.bin"
printf '\004[1, 2, 3]' >"$out/invoke_input/union.bin"

# rule_eval takes `arbitrary` bytes, not JSON: a few byte strings are enough for libFuzzer.
printf '\007\000path\000data.votes' >"$out/rule_eval/a.bin"
printf '\007\003\002gt\006\002' >"$out/rule_eval/b.bin"

echo "seeds written to $out"
