#!/usr/bin/env bash
# The command behind instructions.tsv, from the repository's root: target/measure built at
# 02f15d6 (`cargo build --profile measure --workspace --bins --examples`), 57d6d3f's binaries
# built with the same profile in /work/target-old/measure.
set -euo pipefail
head -200000 target/harness/man-268435456.txt > /tmp/man200k.txt
: > /tmp/empty.txt
printf 'commit\tbinary\tinput\tinstructions\n'
for input in man200k empty; do
    for bin in std-baseline baseline streamer pipeline batched; do
        for dir in 57d6d3f:/work/target-old/measure 02f15d6:target/measure; do
            instructions=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
                "${dir#*:}/$bin" "/tmp/$input.txt" 2>&1 > "/tmp/out-${dir%%:*}.txt" |
                awk '/I *refs/ { gsub(",", "", $NF); print $NF }')
            printf '%s\t%s\t%s\t%s\n' "${dir%%:*}" "$bin" "$input" "$instructions"
        done
        cmp /tmp/out-57d6d3f.txt /tmp/out-02f15d6.txt
    done
done
