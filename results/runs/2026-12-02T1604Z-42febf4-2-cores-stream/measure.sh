#!/usr/bin/env bash
# The commands behind rounds.tsv and rounds-xz-gz.tsv, from the repository's root. /tmp/zcat-pipe
# is the decoder crate's `zcat` example built at 5e053b4 (`Reader` reading a stream through the
# crate's pipe), target/measure/examples/zcat the same at 42febf4 (a stream's bytes in memory),
# both with `--profile measure`. /tmp/l64.txt is the main job's logs' first 64 MiB cut at a line
# end; each format's file made by its tool (gzip -6, bgzip -@2, zstd -3, pzstd -p2, xz -T2 -6,
# bzip2 -9, lz4).
set -euo pipefail
Z=$PWD/target/measure/examples/zcat
args=()
for f in gz bgz zst pzst xz bz2 lz4; do
    args+=("$f-pipe=sh -c 'cat /tmp/l64.$f | /tmp/zcat-pipe'" "$f-memory=sh -c 'cat /tmp/l64.$f | $Z'")
done
python3 harness/rounds.py 7 rounds.tsv "${args[@]}"
args=()
for f in xz gz; do
    args+=("$f-pipe=sh -c 'cat /tmp/l64.$f | /tmp/zcat-pipe'" "$f-memory=sh -c 'cat /tmp/l64.$f | $Z'")
done
python3 harness/rounds.py 11 rounds-xz-gz.tsv "${args[@]}"
