#!/usr/bin/env bash
# The other half of the trade-off: how long does one line take to come through each binary? Runs
# tools' latency-probe over every variant of harness/variants at each offered rate: the probe
# writes numbered lines on a fixed schedule, reads the output back, checks every line came back
# once, in order, with its header (any fault stops the script), and times each line from write to
# read. Not hyperfine: the figure is each line's time, not the command's.
# Writes latency.tsv (every run, the raw data), latency.md (a markdown table of medians over REPEAT
# rounds) and latency.svg (p50 and p99 against offered rate, harness/plots/latency.gnuplot; the
# table is written without gnuplot) into the run's folder, and prints the table on stdout.
#
# At `max` the probe offers lines as fast as a binary takes them: latency there is time queued in
# the pipes and the binary's buffers (bytes in flight / throughput), not responsiveness, and the
# probe, formatting and checking every line, shares the CPU with the binary and can be the slower of
# the two. Read the achieved rate there, as a floor.
#
# Then the ping-pong measure: the probe sends a line, waits for its rendering, sleeps until the
# next line is due, and sends the next (`latency-probe --ping-pong`), so every line meets an idle
# binary with nothing else in flight. Its p50 beside std-baseline's in the same rounds, as a
# ratio, is the price of a binary's threads and hand-offs at a low rate. Written into
# latency-ping-pong.tsv and as a second table in latency.md.
#
# Sizes follow SIZE (harness/lib.sh): the offered rates (1k 10k 100k max at full size), the seconds
# each binary is offered each rate (2 at full size) and the rounds over every cell, whose medians
# are reported (REPEAT, default 3 at full size).

# Fewer rounds than lib.sh's default REPEAT, unless REPEAT is given.
repeat_asked=${REPEAT:-}
# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

REPEAT=${repeat_asked:-$(by_size 1 2 3)}
RATES=$(by_size "1k max" "1k 100k max" "1k 10k 100k max")
CELL_SECONDS=$(by_size 0.3 1 2)
PING_RATES=$(by_size 1k "1k 10k" "1k 10k")

build
PROBE=$BIN_DIR/latency-probe
mapfile -t rows < <(variants)

# measure TSV RATES [PROBE FLAGS...]: REPEAT rounds of every variant at every rate, interleaved,
# each run a row of TSV.
measure() {
    local tsv=$1 rates=$2 round rate variant bin args
    shift 2
    rm -f "$tsv"
    for ((round = 1; round <= REPEAT; round++)); do
        for rate in $rates; do
            for variant in "${rows[@]}"; do
                say "$variant at $rate lines/s $* ($round/$REPEAT)"
                read -r bin args <<< "$variant"
                # shellcheck disable=SC2086 # the settings are words by design
                "$PROBE" --rate "$rate" --duration "$CELL_SECONDS" --label "$variant" --tsv "$tsv" \
                    "$@" -- "$BIN_DIR/$bin" $args > /dev/null ||
                    die "$variant at $rate lines/s $* failed the probe (see above)"
            done
        done
    done
}

raw=$RUN_DIR/latency.tsv
measure "$raw" "$RATES"
ping_raw=$RUN_DIR/latency-ping-pong.tsv
measure "$ping_raw" "$PING_RATES" --ping-pong

rounds="median of $REPEAT rounds"
((REPEAT > 1)) || rounds="one round"

plot_data=$WORK/latency-plot.dat
{
    heading "Latency against offered rate"
    echo "Each cell is \`latency-probe --rate RATE --duration $CELL_SECONDS -- BINARY SETTINGS\`,"
    echo "$rounds. Latency is per line, from the probe's write to its read of the output,"
    echo "in microseconds; every line was checked to come back once, in order, with its header."
    echo "At \`max\` the probe sends as fast as the binary takes lines: latency there is queueing in the"
    echo "pipes and buffers (bytes in flight / rate), not responsiveness. The probe formats and checks every"
    echo "line on two threads of its own, so at \`max\` it can be slower than a fast binary: the achieved"
    echo "rate there is a floor of the binary's, and throughput.sh has the binaries' real rates."
    echo
    "$REPORT" latency --rates "$RATES" "$raw" "$plot_data"
    echo
    echo "## Ping-pong: one line in flight"
    echo
    echo "Each cell is \`latency-probe --ping-pong --rate RATE --duration $CELL_SECONDS -- BINARY SETTINGS\`,"
    echo "$rounds, interleaved with the other rows: a line is sent, its rendering awaited, and the"
    echo "next sent when due (the probe sleeping meanwhile), so each line meets an idle binary. The"
    echo "last column is the row's p50 over std-baseline's at the same rate, both medians of the same"
    echo "rounds: the cost of the binary's threads and hand-offs to a line arriving alone."
    echo
    "$REPORT" ping-pong "$ping_raw"
} | tee "$RUN_DIR/latency.md"
say "wrote latency.md, latency.tsv and latency-ping-pong.tsv in $RUN_DIR"

if ! have gnuplot; then
    say "gnuplot is not installed, so no latency.svg (sudo apt-get install gnuplot-nox)"
    exit 0
fi
gnuplot -e "data='$plot_data'; out='$RUN_DIR/latency.svg'; rounds='$rounds'" "$HARNESS/plots/latency.gnuplot" ||
    die "gnuplot failed on latency.svg"
say "wrote latency.svg in $RUN_DIR"
