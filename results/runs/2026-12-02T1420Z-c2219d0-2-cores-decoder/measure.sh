#!/usr/bin/env bash
# The commands behind this folder's files, from the repository's root, with target/measure
# built at 70d64c4 and 57d6d3f's binaries in /work/target-old/measure.
set -euo pipefail
B=target/measure/batched L=target/harness/logs-268435456.txt G=$L.gz
head -c 67108864 "$L" | head -n -1 > /tmp/l64.txt
gzip -6 -n -c /tmp/l64.txt > /tmp/l64.gz
bgzip -@2 -c /tmp/l64.txt > /tmp/l64.bgz
bgzip -@2 -c "$L" > /tmp/l256.bgz
python3 harness/rounds.py 11 bgzip-64MiB.tsv "one-member=$B -z /tmp/l64.gz" "bgzip=$B -z /tmp/l64.bgz" \
    "bgzip-1-decoder=$B -z --decoders 1 /tmp/l64.bgz" "igzip=igzip -dc /tmp/l64.gz" \
    "bgzip-tool=bgzip -@2 -dc /tmp/l64.bgz"
python3 harness/rounds.py 9 bgzip-256MiB.tsv "one-member=$B -z $G" "bgzip=$B -z /tmp/l256.bgz" \
    "bgzip-1-decoder=$B -z --decoders 1 /tmp/l256.bgz" "igzip=igzip -dc $G" \
    "bgzip-tool=bgzip -@2 -dc /tmp/l256.bgz"
head -200000 target/harness/man-268435456.txt > /tmp/man200k.txt
for dir in /work/target-old/measure target/measure; do
    for bin in std-baseline baseline streamer pipeline batched; do
        valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
            "$dir/$bin" /tmp/man200k.txt > /tmp/out.txt
    done
done
