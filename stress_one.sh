#!/usr/bin/env bash
# The original experiment's stress_one.sh: one `perf stat` run per variant of `zcat
# resources/stable_small.log.gz | BINARY > /dev/null`. The work is harness/stress.sh's.
set -euo pipefail
exec "$(dirname "$0")/harness/stress.sh" --data small --repeat 1 "$@"
