#!/usr/bin/env bash
# A quick look: one `perf stat` run per binary of `zcat resources/stable_small.log.gz | BIN >
# /dev/null`. One run is not stable; stress.sh repeats and draws flamegraphs.
#
# Environment (all optional; more in scripts/common.sh):
#   SMALL_LINES  lines of resources/stable_small.log.gz, made when missing (default 1000000)
#   BINS         the binaries to measure (default: every src/bin/*.rs)

source "$(dirname "$0")/scripts/common.sh"

require_perf
build_release
gz=$(log_gz small)
for bin in $(binaries); do
    perf_stat 1 "$gz" "$bin"
done
