#!/usr/bin/env bash
# The command behind instructions.tsv: each commit's five binaries built with
# `cargo build --profile measure --bins`, 57d6d3f's (a worktree) into /tmp/target-old57 and
# dae47b5's into /tmp/target-now; man32.txt is the first 32 MiB of the harness's man page text
# (SIZE=small's man-33554432.txt).
set -euo pipefail
head -200000 man32.txt > /tmp/man200k.txt
: > /tmp/empty.txt
printf 'commit\tbinary\tinput\tinstructions\n'
for input in man200k empty; do
    for bin in std-baseline baseline streamer pipeline batched; do
        for dir in 57d6d3f:/tmp/target-old57/measure dae47b5:/tmp/target-now/measure; do
            instructions=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
                "${dir#*:}/$bin" "/tmp/$input.txt" 2>&1 > "/tmp/out-${dir%%:*}.txt" |
                awk '/I *refs/ { gsub(",", "", $NF); print $NF }')
            printf '%s\t%s\t%s\t%s\n' "${dir%%:*}" "$bin" "$input" "$instructions"
        done
        cmp /tmp/out-57d6d3f.txt /tmp/out-dae47b5.txt
    done
done
