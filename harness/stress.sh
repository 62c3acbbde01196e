#!/usr/bin/env bash
# Where does the time go? For each variant of harness/variants: `perf stat` of the original
# experiment's stress pipe, `zcat resources/stable_SIZE.log.gz | BINARY > /dev/null` and beside it
# the binary decoding in process, `BINARY -z resources/stable_SIZE.log.gz > /dev/null`, after
# `zcat resources/stable_SIZE.log.gz > /dev/null` alone (the pipe's floor: zcat may be its limit,
# and then the binaries' times come out alike), and with
# --flamegraph a `perf record` of the binary in the same pipe drawn as a flamegraph (the measure
# profile keeps the symbols). Reports go to stdout and to stress-LABEL.txt in the run's folder,
# flamegraphs to flamegraph-LABEL.svg there; perf's recordings stay in the scratch folder (perf/) for
# `perf report -i`. The root's stress.sh and stress_one.sh call this.
#
# Needs perf, and inferno for flamegraphs:
#   sudo apt-get install linux-perf (Debian) or linux-tools-$(uname -r) (Ubuntu); cargo install inferno
#
# Usage: harness/stress.sh [--data small|big] [--repeat N] [--flamegraph]
#   --data        the data set (default small)
#   --repeat      perf stat runs per variant (default 1)
#   --flamegraph  also record and draw a flamegraph per variant
# Environment: PERF_FREQ, perf record samples per second (default 999); more in harness/lib.sh.

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

data=small repeat=1 flamegraph=no
while (($#)); do
    case $1 in
        --data) data=$2 && shift 2 ;;
        --repeat) repeat=$2 && shift 2 ;;
        --flamegraph) flamegraph=yes && shift ;;
        *) die "usage: $0 [--data small|big] [--repeat N] [--flamegraph]" ;;
    esac
done
PERF_FREQ=${PERF_FREQ:-999}

require perf "sudo apt-get install linux-perf (Debian) or linux-tools-\$(uname -r) (Ubuntu)"
perf stat -e task-clock true > /dev/null 2>&1 ||
    die "perf may not count events here; allow it with: sudo sysctl kernel.perf_event_paranoid=1"
if [[ $flamegraph == yes ]]; then
    require inferno-flamegraph "cargo install inferno"
    require inferno-collapse-perf "cargo install inferno"
fi
# perf stat's default events (cycles, instructions, branches...) where the machine has hardware
# counters; in a VM without them, the software events alone, so that the report is not a column
# of "<not supported>".
events=()
if [[ $(perf stat -x, -e cycles,instructions true 2>&1 > /dev/null) == *'<not'* ]]; then
    say "no hardware counters here (a virtual machine?): counting software events only"
    events=(-e "task-clock,context-switches,cpu-migrations,page-faults")
fi

build
PERF_DIR=$WORK/perf
mkdir -p "$PERF_DIR"
gz=$(log_gz "$data")
ticks=$WORK/stress.ticks
# perf_stat LABEL PIPE: `perf stat` of the shell command PIPE, REPEAT times, into stress-LABEL.txt.
perf_stat() {
    say "perf stat: $2 (runs: $repeat)"
    start_ticker "$ticks" 0 "perf stat, $repeat runs" "$1"
    perf stat --repeat="$repeat" "${events[@]}" -o "$RUN_DIR/stress-$1.txt" -- bash -c "$2"
    stop_ticker
    cat "$RUN_DIR/stress-$1.txt"
}
# zcat alone first: the original's pipe can go no faster than zcat, which may be its limit.
perf_stat zcat "zcat $(q "$gz") > /dev/null"
while read -r variant; do
    label=${variant// /_}
    cmd=$(command_of "$variant")
    perf_stat "$label" "zcat $(q "$gz") | $cmd > /dev/null"
    perf_stat "$label-z" "$cmd -z $(q "$gz") > /dev/null"
    [[ $flamegraph == yes ]] || continue

    say "perf record: zcat $(basename "$gz") | $variant"
    recording=$PERF_DIR/$label.perf.data
    # Only the binary is recorded: zcat's time is not the binary's.
    zcat "$gz" | bash -c "exec perf record -q -e cpu-clock -F $PERF_FREQ --call-graph dwarf \
        -o $(q "$recording") -- $cmd > /dev/null"
    # --no-inline: resolving inlined frames through addr2line takes minutes on debug-info builds.
    perf script -i "$recording" --no-inline 2> /dev/null | inferno-collapse-perf |
        inferno-flamegraph --title "$variant: zcat $(basename "$gz") | $variant" \
            > "$RUN_DIR/flamegraph-$label.svg"
    say "flamegraph: $RUN_DIR/flamegraph-$label.svg"
done < <(variants)
