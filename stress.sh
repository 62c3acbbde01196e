#!/usr/bin/env bash
# Where does the time go? For each binary: `perf stat --repeat=5` of the original experiment's
# stress pipe, `zcat resources/stable_big.log.gz | BIN > /dev/null`, then a `perf record` of the
# binary in the same pipe drawn as a flamegraph, target/perf/BIN.svg (with BIN.perf.data beside it
# for `perf report -i`). The perf stat reports go to stdout and to target/perf/BIN.stat.txt.
#
# Environment (all optional; more in scripts/common.sh):
#   STRESS_REPEAT  perf stat runs per binary (default 5)
#   PERF_FREQ      perf record samples per second (default 999)
#   BIG_LINES      lines of resources/stable_big.log.gz, made when missing (default 10000000)
#   BINS           the binaries to measure (default: every src/bin/*.rs)

source "$(dirname "$0")/scripts/common.sh"

STRESS_REPEAT=${STRESS_REPEAT:-5}
PERF_FREQ=${PERF_FREQ:-999}
require_perf
require inferno-flamegraph "cargo install inferno"
require inferno-collapse-perf "cargo install inferno"

build_release
gz=$(log_gz big)

for bin in $(binaries); do
    perf_stat "$STRESS_REPEAT" "$gz" "$bin"

    say "perf record: zcat $(basename "$gz") | $bin"
    data=$PERF_DIR/$bin.perf.data
    # Only the binary is recorded: zcat's time is not the binary's.
    zcat "$gz" | perf record -q -e cpu-clock -F "$PERF_FREQ" --call-graph dwarf -o "$data" -- \
        "$RELEASE/$bin" > /dev/null
    # --no-inline: resolving inlined frames through addr2line takes minutes on debug-info builds.
    perf script -i "$data" --no-inline 2> /dev/null | inferno-collapse-perf > "$PERF_DIR/$bin.folded"
    inferno-flamegraph --title "$bin: zcat $(basename "$gz") | $bin" \
        < "$PERF_DIR/$bin.folded" > "$PERF_DIR/$bin.svg"
    say "flamegraph: $PERF_DIR/$bin.svg"
done
