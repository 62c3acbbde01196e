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
# Environment (all optional; more in harness/lib.sh):
#   RATES          offered rates, lines per second (default "1k 10k 100k max")
#   PING_RATES     rates of the ping-pong measure (default "1k 10k"; empty: none)
#   CELL_SECONDS   seconds each binary is offered each rate (default 2)
#   REPEAT         rounds over every cell, median of each figure reported (default 3)
# Example, a quick smoke run: RATES="1k max" CELL_SECONDS=0.5 REPEAT=1 ./harness/latency.sh

# Before lib.sh, whose own default is 5 runs.
REPEAT=${REPEAT:-3}
# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

RATES=${RATES:-1k 10k 100k max}
PING_RATES=${PING_RATES-1k 10k}
CELL_SECONDS=${CELL_SECONDS:-2}

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

# medians TSV: medians over the rounds of every figure, per row and rate, in the order measured.
medians() {
    awk -F '\t' -v OFS='\t' '
        function median(list,    v, n, i, j, t) {
            n = split(list, v, " ")
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
            return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        NR == 1 { next }
        {
            key = $1 OFS $2
            if (!(key in seen)) { seen[key] = 1; order[++keys] = key }
            for (c = 3; c <= NF; c++) figures[key, c] = figures[key, c] " " $c
            columns = NF
        }
        END {
            for (k = 1; k <= keys; k++) {
                line = order[k]
                for (c = 3; c <= columns; c++) line = line OFS median(figures[order[k], c])
                print line
            }
        }' "$1"
}

raw=$RUN_DIR/latency.tsv
measure "$raw" "$RATES"
ping_raw=$RUN_DIR/latency-ping-pong.tsv
[[ -z $PING_RATES ]] || measure "$ping_raw" "$PING_RATES" --ping-pong

rounds="median of $REPEAT rounds"
((REPEAT > 1)) || rounds="one round"

medians=$WORK/latency-medians.tsv
medians "$raw" > "$medians"

{
    echo "# Latency against offered rate"
    echo
    echo "Machine: $(cat "$MACHINE_FILE")."
    echo "Made by \`RATES=\"$RATES\" CELL_SECONDS=$CELL_SECONDS REPEAT=$REPEAT harness/latency.sh\`; each cell is"
    echo "\`latency-probe --rate RATE --duration $CELL_SECONDS -- BINARY SETTINGS\`,"
    echo "$rounds. Latency is per line, from the probe's write to its read of the output,"
    echo "in microseconds; every line was checked to come back once, in order, with its header."
    echo "At \`max\` the probe sends as fast as the binary takes lines: latency there is queueing in the"
    echo "pipes and buffers (bytes in flight / rate), not responsiveness. The probe formats and checks every"
    echo "line on two threads of its own, so at \`max\` it can be slower than a fast binary: the achieved"
    echo "rate there is a floor of the binary's, and throughput.sh has the binaries' real rates."
    echo
    echo "| binary | offered lines/s | lines | achieved lines/s | min µs | p50 µs | p99 µs | p99.9 µs | max µs |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    awk -F '\t' '{ printf "| %s | %s | %.0f | %.0f | %s | %s | %s | %s | %s |\n", $1, $2, $3, $5, $6, $7, $8, $9, $10 }' "$medians"
    if [[ -n $PING_RATES ]]; then
        echo
        echo "## Ping-pong: one line in flight"
        echo
        echo "Each cell is \`latency-probe --ping-pong --rate RATE --duration $CELL_SECONDS -- BINARY SETTINGS\`,"
        echo "$rounds, interleaved with the other rows: a line is sent, its rendering awaited, and the"
        echo "next sent when due (the probe sleeping meanwhile), so each line meets an idle binary. The"
        echo "last column is the row's p50 over std-baseline's at the same rate, both medians of the same"
        echo "rounds: the cost of the binary's threads and hand-offs to a line arriving alone."
        echo
        echo "| binary | rate lines/s | lines | min µs | p50 µs | p99 µs | max µs | p50 / std-baseline |"
        echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        medians "$ping_raw" | awk -F '\t' '
            { row[NR] = $0; if ($1 == "std-baseline") base[$2] = $7 }
            END {
                for (i = 1; i <= NR; i++) {
                    split(row[i], f, "\t")
                    ratio = (f[2] in base && base[f[2]] > 0) ? sprintf("%.2f", f[7] / base[f[2]]) : "-"
                    printf "| %s | %s | %.0f | %s | %s | %s | %s | %s |\n", f[1], f[2], f[3], f[6], f[7], f[8], f[10], ratio
                }
            }'
    fi
} | tee "$RUN_DIR/latency.md"
say "wrote latency.md and latency.tsv in $RUN_DIR"

# The plot's data: a block per row, its label first, then "position rate p50 p99" a rate, the
# rates evenly spaced in the order given.
plot_data=$WORK/latency-plot.dat
for variant in "${rows[@]}"; do
    printf '"%s"\n' "$variant"
    awk -F '\t' -v v="$variant" -v rates="$RATES" '
        # The probe reports 1k as 1000 and 0 as max.
        function number(rate) {
            if (rate == "max" || rate + 0 == 0) return "max"
            return (rate + 0) * (rate ~ /[kK]$/ ? 1000 : rate ~ /M$/ ? 1000000 : 1)
        }
        BEGIN {
            n = split(rates, r, " ")
            for (i = 1; i <= n; i++) { x[number(r[i])] = i - 1; label[i - 1] = r[i] }
        }
        $1 == v { printf "%d %s %s %s\n", x[$2], label[x[$2]], $7, $8 }' "$medians"
    printf '\n\n'
done > "$plot_data"
if ! have gnuplot; then
    say "gnuplot is not installed, so no latency.svg (sudo apt-get install gnuplot-nox)"
    exit 0
fi
gnuplot -e "data='$plot_data'; out='$RUN_DIR/latency.svg'; rounds='$rounds'" "$HARNESS/plots/latency.gnuplot" ||
    die "gnuplot failed on latency.svg"
say "wrote latency.svg in $RUN_DIR"
