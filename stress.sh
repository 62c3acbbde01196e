#!/usr/bin/env bash
# The original experiment's stress.sh: `perf stat --repeat=5` of `zcat resources/stable_big.log.gz
# | BINARY > /dev/null` per variant, and a flamegraph each. The work is harness/stress.sh's; this
# entry point keeps the original's name and settings. STRESS_REPEAT changes the number of runs.
set -euo pipefail
exec "$(dirname "$0")/harness/stress.sh" --data big --repeat "${STRESS_REPEAT:-5}" --flamegraph "$@"
