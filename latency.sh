#!/usr/bin/env bash
# The other half of the trade-off: how long does one line take to come through each binary? Builds
# release, then runs tools' latency-probe over every binary (pipeline at --batch 1 and 1000,
# batched at its defaults and with 4 MiB chunks) at each offered rate: the probe writes numbered
# lines on a fixed schedule, reads the output back, checks every line came back once, in order,
# with its header (any fault stops the script), and times each line from write to read.
# Writes results/latency.md (a markdown table of medians over REPEAT rounds), results/latency.tsv
# (every run) and results/latency.svg (p50 and p99 against offered rate, with gnuplot; the table is
# written without it), and prints the table on stdout. Progress goes to stderr.
#
# At `max` the probe offers lines as fast as a binary takes them: latency there is time queued in
# the pipes and the binary's buffers (bytes in flight / throughput), not responsiveness, and the
# probe, formatting and checking every line, shares the CPU with the binary and can be the slower of
# the two. Read the achieved rate there, as a floor.
#
# Environment (all optional; more in scripts/common.sh):
#   RATES          offered rates, lines per second (default "1k 10k 100k max")
#   CELL_SECONDS   seconds each binary is offered each rate (default 2)
#   REPEAT         rounds over every cell, median of each figure reported (default 3)
#   BINS           the binaries to measure (default: every src/bin/*.rs)
# Example, a quick smoke run: RATES="1k max" CELL_SECONDS=0.5 REPEAT=1 ./latency.sh

source "$(dirname "$0")/scripts/common.sh"

RATES=${RATES:-1k 10k 100k max}
CELL_SECONDS=${CELL_SECONDS:-2}
RESULTS=$ROOT/results
PROBE=$RELEASE/latency-probe
# The five binaries of the project: one not there yet is named as skipped instead of vanishing.
EXPECTED="std-baseline baseline streamer pipeline batched"

# The rows: one binary and its settings each, as a label the probe reports them under; the five
# in the order of the README, then any other binary.
variants() {
    local bin present
    present=" $(binaries | tr '\n' ' ') "
    for bin in $EXPECTED $(binaries); do
        [[ $present == *" $bin "* ]] || continue
        present=${present/ $bin / }
        case $bin in
            pipeline) printf '%s\n' "pipeline --batch 1" "pipeline --batch 1000" ;;
            batched) printf '%s\n' "batched" "batched --chunk-size 4194304" ;;
            *) printf '%s\n' "$bin" ;;
        esac
    done
}

build_release
mkdir -p "$RESULTS"
skipped=()
for bin in $EXPECTED; do
    [[ -x $RELEASE/$bin ]] || skipped+=("$bin")
done
mapfile -t rows < <(variants)

raw=$RESULTS/latency.tsv
rm -f "$raw"
for ((round = 1; round <= REPEAT; round++)); do
    for rate in $RATES; do
        for variant in "${rows[@]}"; do
            say "$variant at $rate lines/s ($round/$REPEAT)"
            read -r bin args <<< "$variant"
            # shellcheck disable=SC2086 # the settings are words by design
            "$PROBE" --rate "$rate" --duration "$CELL_SECONDS" --label "$variant" --tsv "$raw" \
                -- "$RELEASE/$bin" $args > /dev/null ||
                die "$variant at $rate lines/s failed the probe (see above)"
        done
    done
done

rounds="median of $REPEAT rounds"
((REPEAT > 1)) || rounds="one round"

# Medians over the rounds of every figure, per row and rate, in the order measured.
medians=$WORK/latency-medians.tsv
mkdir -p "$WORK"
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
    }' "$raw" > "$medians"

{
    echo "# Latency against offered rate"
    echo
    echo "Machine: $(describe_machine)."
    echo "Made by \`RATES=\"$RATES\" CELL_SECONDS=$CELL_SECONDS REPEAT=$REPEAT ./latency.sh\`; each cell is"
    echo "\`target/release/latency-probe --rate RATE --duration $CELL_SECONDS -- target/release/BINARY SETTINGS\`,"
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
    if ((${#skipped[@]})); then
        echo
        echo "Not built yet, so not measured: ${skipped[*]}."
    fi
} | tee "$RESULTS/latency.md"
say "wrote results/latency.md and results/latency.tsv"

# The plot: p50 and p99 against offered rate, a line per row, rates evenly spaced in the order given.
if ! have gnuplot; then
    say "gnuplot is not installed, so no results/latency.svg (sudo apt-get install gnuplot-nox)"
    exit 0
fi
plot=$WORK/latency.gnuplot
{
    echo "set terminal svg size 1100,480 dynamic font 'sans,11'"
    echo "set output '$RESULTS/latency.svg'"
    echo "set multiplot layout 1,2 title 'Per-line latency against offered rate ($rounds)'"
    echo "set logscale y; set grid; set key top left font 'sans,9'"
    echo "set xlabel 'offered lines/s'; set ylabel 'latency, µs (log)'; set offsets 0.2, 0.2, 0, 0"
    i=0
    for variant in "${rows[@]}"; do
        echo "\$row$i << EOD"
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
        echo "EOD"
        i=$((i + 1))
    done
    for panel in "3 p50" "4 p99"; do
        read -r column name <<< "$panel"
        echo "set title '$name'"
        clauses=()
        for i in "${!rows[@]}"; do
            clauses+=("\$row$i using 1:$column:xtic(2) with linespoints title '${rows[$i]}'")
        done
        (
            IFS=,
            echo "plot ${clauses[*]}"
        )
    done
    echo "unset multiplot"
} > "$plot"
gnuplot "$plot" || die "gnuplot failed on $plot"
say "wrote results/latency.svg"
