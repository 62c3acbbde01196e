#!/usr/bin/env bash
# The command behind rounds.tsv, from the repository's root. /work/target-base/measure/batched is
# `batched` built at 5099001 with `--profile measure` (the pool's code is the same at 1280f26).
# /tmp/m64.txt: 64 MiB of man page sources (as in the xz-pipe run); /tmp/m64.zst is
# `pzstd -3 -p 2` of it, /tmp/m64.bgz `bgzip -@2`. Outputs checked identical to `batched` on the
# text first.
set -euo pipefail
B=/work/target-base/measure/batched
python3 harness/rounds.py 15 rounds.tsv "zst-1=$B -z --decoders 1 /tmp/m64.zst" \
    "zst-2=$B -z --decoders 2 /tmp/m64.zst" "bgz-1=$B -z --decoders 1 /tmp/m64.bgz" \
    "bgz-2=$B -z --decoders 2 /tmp/m64.bgz" "igzip-bgz=igzip -dc /tmp/m64.bgz" \
    "zstd-1=zstd -dc /tmp/m64.zst"
