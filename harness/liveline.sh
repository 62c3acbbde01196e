#!/usr/bin/env bash
# Does a live line always come out promptly? The probe loop behind tests/contract.rs's
# `live_lines_come_out_while_stdin_stays_open`, run many times: harness/liveline.py starts each
# variant of harness/variants (and cat, the control), writes a line with its stdin held open,
# waits for the rendering, then the next, LINES lines a start, until PROBES probes a command, and
# times each from write to read. Twice: on the machine as it is ("quiet"), and beside BUSY busy
# loops (`yes > /dev/null`, "loaded"). Beside every probe the prober times its own wake-up from a
# 1 ms sleep, so a late line can be put down to the binary or to a machine that ran nobody on time:
# cat, a line at a time with no runtime or threads, is late only when the machine is.
# Any probe lost (no rendering within 5 s) or wrong stops the script; a late one is counted
# against LIMIT_MS (250 ms, the bound the flake was seen against), not failed.
# Writes liveline.tsv (every probe) and liveline.md (the table) into the run's folder, and prints
# the table on stdout.
#
# Environment, beside lib.sh's: PROBES (probes a command and condition: 1000 at full size, 200
# small, 10 tiny: two starts, a smoke run), LINES (lines a start, 5), LIMIT_MS (250), BUSY (busy
# loops when loaded, 3).
# BIN_DIR=target/debug probes the debug builds the tests run.

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

PROBES=${PROBES:-$(by_size 10 200 1000)}
LINES=${LINES:-5}
LIMIT_MS=${LIMIT_MS:-250}
BUSY=${BUSY:-3}
require python3 "sudo apt-get install python3"

build
mapfile -t rows < <(variants)
raw=$RUN_DIR/liveline.tsv
: > "$raw"

# probe_all CONDITION: PROBES probes of cat, then of each variant in turn.
probe_all() {
    local condition=$1 variant bin args
    for variant in cat "${rows[@]}"; do
        say "$condition: $PROBES probes of $variant"
        if [[ $variant == cat ]]; then
            "$HARNESS/liveline.py" probe "$raw" "$condition" "$PROBES" "$LINES" cat cat ||
                die "cat lost a probe"
            continue
        fi
        read -r bin args <<< "$variant"
        # shellcheck disable=SC2086 # the settings are words by design
        "$HARNESS/liveline.py" probe "$raw" "$condition" "$PROBES" "$LINES" "$variant" \
            "$BIN_DIR/$bin" $args || die "$variant lost a probe, or rendered one wrong"
    done
}

busy() { exec yes > /dev/null; }

probe_all quiet
busy_pids=()
for ((i = 0; i < BUSY; i++)); do
    background busy
    busy_pids+=("$!")
done
probe_all "loaded ($BUSY busy loops)"
for pid in "${busy_pids[@]}"; do stop_background "$pid"; done

{
    heading "Live lines: each line's rendering awaited with stdin held open"
    echo "Each command started afresh every $LINES lines and sent one line at a time, the next once"
    echo "the rendering of the last was read: $PROBES probes a command and condition, in"
    echo "milliseconds from write to read. The first line after a start includes the start-up."
    echo "The last column is the prober's own lateness waking from a 1 ms sleep beside each probe."
    echo
    "$HARNESS/liveline.py" report "$raw" "$LIMIT_MS"
} | tee "$RUN_DIR/liveline.md"
say "wrote liveline.md and liveline.tsv in $RUN_DIR"
