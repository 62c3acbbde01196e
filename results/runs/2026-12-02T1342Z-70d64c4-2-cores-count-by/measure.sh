#!/usr/bin/env bash
# The commands of rounds.tsv: L the full-size logs the harness makes (256 MiB, 2,006,544 lines).
set -euo pipefail
L=target/harness/logs-268435456.txt P="'{c[\$9]++} END {for (k in c) print c[k], k;}'"
export LC_ALL=C
python3 harness/rounds.py 11 rounds.tsv "count-by-9=target/measure/examples/count-by 9 $L" \
    "count-by-9-main=/tmp/count-by-old 9 $L" "mawk-9=mawk $P $L" \
    "frawk-9=/tmp/frawk-root/bin/frawk -pr -j2 $P $L"
