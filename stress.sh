#!/usr/bin/env bash
# The original experiment's stress.sh: `perf stat --repeat=5` of `zcat resources/stable_big.log.gz
# | BINARY > /dev/null` per variant, beside `zcat ... > /dev/null` alone, and a flamegraph each. The
# work is harness/stress.sh's; this entry point keeps the original's name and settings. REPEAT
# changes the number of runs; SIZE (harness/lib.sh) the log's.
set -euo pipefail
exec "$(dirname "$0")/harness/stress.sh" --data big --repeat "${REPEAT:-5}" --flamegraph "$@"
