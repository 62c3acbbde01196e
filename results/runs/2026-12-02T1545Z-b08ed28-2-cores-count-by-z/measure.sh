#!/usr/bin/env bash
# The command behind rounds.tsv, from the repository's root, target/measure built at b08ed28
# (`cargo build --profile measure --workspace --bins --examples`), the logs and their gzip -6 as
# harness/filters.sh leaves them in target/harness/.
set -euo pipefail
F=target/harness/logs-268435456.txt.gz M=target/measure
python3 harness/rounds.py 11 rounds.tsv "count-by-z-9=$M/examples/count-by -z 9 $F" "igzip=igzip -dc $F" \
    "zcat=$M/examples/zcat $F" "batched-z=$M/batched -z $F"
