#!/usr/bin/env bash
# What does batching buy? Throughput of `pipeline` against `--batch` (lines per message), and of
# `batched` against `--threads` and `--chunk-size`, over the big log, each beside `cat` (the
# ceiling) and std-baseline (one loop, no batching). Every output is checked identical first. For
# each sweep writes results/sweep-NAME.md (a markdown table, medians of REPEAT runs) and
# results/sweep-NAME.svg (a gnuplot plot); progress goes to stderr. A sweep whose binary does not
# exist yet is skipped with a note.
#
# Environment (all optional; more in scripts/common.sh):
#   SWEEPS       which sweeps to run (default "pipeline-batch batched-threads batched-chunk-size")
#   BATCHES      pipeline --batch values (default "1 2 5 10 20 50 100 200 500 1000 2000 5000 10000")
#   THREADS      batched --threads values (default 1 to the number of cores)
#   CHUNK_SIZES  batched --chunk-size values in bytes (default 4 KiB to 4 MiB, powers of 2)
#   SWEEP_LOG    the data set, small or big (default big: at 1 to 2 GiB/s the small one takes
#                well under a second a run, too short to time steadily)
#   BIG_LINES    lines of resources/stable_big.log.gz, made when missing (default 10000000)
#   REPEAT       timed runs per point, median reported (default 3)
# Example, a quick smoke run: SWEEP_LOG=small SMALL_LINES=20000 REPEAT=1 BATCHES="1 100" \
#   THREADS=1 CHUNK_SIZES=65536 ./sweep.sh

source "$(dirname "$0")/scripts/common.sh"

SWEEPS=${SWEEPS:-pipeline-batch batched-threads batched-chunk-size}
BATCHES=${BATCHES:-1 2 5 10 20 50 100 200 500 1000 2000 5000 10000}
THREADS=${THREADS:-$(seq -s ' ' 1 "$(nproc)")}
CHUNK_SIZES=${CHUNK_SIZES:-$(for ((s = 4096; s <= 4194304; s *= 2)); do printf '%s ' "$s"; done)}
RESULTS=$ROOT/results
require gnuplot "sudo apt-get install gnuplot-nox"

build_release
SWEEP_LOG=${SWEEP_LOG:-big}
log=$(log_plain "$SWEEP_LOG")
lines=$(wc -l < "$log")
mkdir -p "$RESULTS"
rounds="median of $REPEAT runs"
((REPEAT > 1)) || rounds="one run"

# sweep NAME BIN OPTION UNIT-DIVISOR XLABEL XSCALE VALUES...: measures BIN OPTION VALUE for each
# value beside cat and std-baseline, then writes the table and the plot. Values are plotted
# divided by UNIT-DIVISOR (1024 shows bytes as KiB); XSCALE is a gnuplot `set` line for the x axis.
sweep() {
    local name=$1 bin=$2 option=$3 divisor=$4 xlabel=$5 xscale=$6 value
    shift 6
    [[ " $SWEEPS " == *" ${name#sweep-} "* ]] || return 0
    if ! is_binary "$bin"; then
        say "no $bin among the binaries yet: skipping the $name sweep"
        return
    fi
    ceiling "cat (ceiling)" cat
    row std-baseline "$RELEASE/std-baseline"
    for value; do
        row "$bin $option $value" "$RELEASE/$bin" "$option" "$value"
    done
    measure "$name" feed_file "$log"

    {
        echo "# $bin: throughput against $option"
        echo
        echo "Machine: $(describe_machine)."
        echo "Made by \`./sweep.sh\`: each row is \`cat stable_$SWEEP_LOG.log | BINARY SETTINGS | pv -a > /dev/null\`"
        echo "over $lines generated log lines ($(($(wc -c < "$log") / 1048576)) MiB), $rounds;"
        echo "every output was checked identical. MiB/s counts input bytes; ratio is to \`cat\` in the"
        echo "binary's place."
        echo
        print_header
        print_rows "stable_$SWEEP_LOG"
    } > "$RESULTS/$name.md"

    local plot=$WORK/$name.gnuplot i
    {
        echo "set terminal svg size 800,450 dynamic font 'sans,11'"
        echo "set output '$RESULTS/$name.svg'"
        echo "set title '$bin: throughput against $option (stable\\_$SWEEP_LOG.log, $rounds)'"
        echo "set xlabel '$xlabel'; set ylabel 'MiB/s of input'"
        echo "$xscale"
        echo "set yrange [0:*]; set grid; set key outside right top"
        echo "\$points << EOD"
        for ((i = 2; i < ${#ROW_NAMES[@]}; i++)); do
            awk -v v="${ROW_NAMES[$i]##* }" -v d="$divisor" -v r="${ROW_MIB_IN[$i]}" 'BEGIN { print v / d, r }'
        done
        echo "EOD"
        echo "plot \$points using 1:2 with linespoints linewidth 2 pointtype 7 title '$bin', \\"
        echo "  ${ROW_MIB_IN[0]} with lines dashtype 2 title 'cat (ceiling)', \\"
        echo "  ${ROW_MIB_IN[1]} with lines dashtype 3 title 'std-baseline'"
    } > "$plot"
    gnuplot "$plot" || die "gnuplot failed on $plot"
    say "wrote results/$name.md and results/$name.svg"
}

# shellcheck disable=SC2086 # the value lists are words by design
sweep sweep-pipeline-batch pipeline --batch 1 "--batch (lines per message, log scale)" \
    "set logscale x 10" $BATCHES
# shellcheck disable=SC2086
sweep sweep-batched-threads batched --threads 1 "--threads (worker threads)" \
    "set xtics 1; set offsets 0.25, 0.25, 0, 0" $THREADS
# shellcheck disable=SC2086
sweep sweep-batched-chunk-size batched --chunk-size 1024 "--chunk-size (KiB, log scale)" \
    "set logscale x 2" $CHUNK_SIZES
