#!/usr/bin/env bash
# The commands behind rounds.tsv and rounds-pipe.tsv, from the repository's root. /tmp/zcat-base is
# the decoder crate's `zcat` example built at 5099001, target/measure/examples/zcat the same at
# 533a3a2 (ISA-L's reader asks for what it holds after a full buffer), both `--profile measure`.
# /tmp/m64.gz is `gzip -6` of /tmp/m64.txt (64 MiB of man page sources, as in the xz-pipe run).
set -euo pipefail
Z=$PWD/target/measure/examples/zcat
python3 harness/rounds.py 11 rounds.tsv "base-file=/tmp/zcat-base /tmp/m64.gz" "new-file=$Z /tmp/m64.gz" \
    "base=sh -c 'cat /tmp/m64.gz | /tmp/zcat-base'" "new=sh -c 'cat /tmp/m64.gz | $Z'"
python3 harness/rounds.py 31 rounds-pipe.tsv "base=sh -c 'cat /tmp/m64.gz | /tmp/zcat-base'" \
    "new=sh -c 'cat /tmp/m64.gz | $Z'"
