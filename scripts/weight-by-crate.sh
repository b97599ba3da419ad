#!/usr/bin/env bash
# Where a release binary's machine code comes from, by crate: the sizes of its code symbols
# (`nm -S`, demangled), each counted to the first crate its name mentions that is not the
# standard library (so `core::ptr::drop_in_place<jsonschema::...>` counts to jsonschema; a
# symbol of std alone counts to "std"). Reads the symbol table, so run it on a binary that
# was not stripped (scripts/weight.sh --keep leaves both apps' builds under target/weight/).
#
# Usage:
#   scripts/weight-by-crate.sh BINARY [BINARY2]   the top crates of BINARY; with BINARY2,
#                                                 both side by side, sorted by the difference
# The first line, (all), is every code symbol's bytes.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 BINARY [BINARY2]" >&2; exit 2; }
command -v nm > /dev/null || { echo "weight-by-crate: nm (binutils) is needed" >&2; exit 2; }

by_crate() { # $1: binary -> "crate bytes" lines
    nm -S -C --defined-only "$1" | awk '
        # Hexadecimal by hand: strtonum is gawk only.
        function hex(text,    i, n) {
            n = 0
            for (i = 1; i <= length(text); i++)
                n = n * 16 + index("0123456789abcdef", tolower(substr(text, i, 1))) - 1
            return n
        }
        $3 ~ /^[tTwW]$/ {
            size = hex($2)
            name = $0
            sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", name)
            crate = "std"
            # Path segments followed by ::, left to right; the standard library and its
            # module names are skipped.
            while (match(name, /[A-Za-z_][A-Za-z0-9_]*::/)) {
                word = substr(name, RSTART, RLENGTH - 2)
                name = substr(name, RSTART + RLENGTH)
                if (word !~ /^(core|alloc|std|ptr|drop_in_place|collections|vec|slice|sync|option|iter|future|boxed|raw_vec|str|ops|cell|fmt|result|hash|mem|task|pin|string|any|btree|map|de|ser|rt|sort|adapters|node|function|spec_from_iter|poll_fn|panicking|thread|io|num|char|array|convert|cmp|marker|intrinsics|hint|time|ffi|os|sys|net|process|error|borrow|rc|fs|path|env|shared|stable|unstable|traits|smallsort|quicksort|merge|pivot|heapsort|select)$/) {
                    crate = word
                    break
                }
            }
            total[crate] += size
            all += size
        }
        END { for (c in total) print c, total[c]; print "(all)", all }'
}

if [ $# -eq 1 ]; then
    by_crate "$1" | sort -k2 -n -r | head -30 \
        | awk '{ printf "%-24s %10d\n", $1, $2 }'
else
    join -a1 -a2 -e 0 -o 0,1.2,2.2 <(by_crate "$1" | sort) <(by_crate "$2" | sort) \
        | awk '{ printf "%-24s %10d %10d %10d\n", $1, $2, $3, $2 - $3 }' \
        | sort -k4 -n -r | head -30
fi
