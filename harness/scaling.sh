#!/usr/bin/env bash
# Where do cores stop helping? `batched --threads N`, N from 1 to every core, in three places:
# file → /dev/null, file → file and pipe → pipe (`cat F | batched | cat`); beside what moves the
# same bytes doing nothing (`dd`, `cp`, the cat chain), the perl one-liner, and GNU parallel
# `--pipepart -jN -k` running that one-liner on N cores, the multi-core tool a user would pick.
# parallel's output is checked identical to batched's (cksum) at every N before timing.
# For each data set (the big log and the Karamazov line) writes, into the run's folder
# (results/runs/DATE-MACHINE/): hyperfine's JSON per series, batched's --stats per series and N
# (the reader's busy share), scaling-DATA.md (the table: speed-up over N = 1, efficiency =
# speed-up / N) and scaling-DATA.svg (the plot, harness/plots/against.gnuplot; skipped without
# gnuplot). REPORT_ONLY=1 RUN_DIR=FOLDER makes tables and plots again from a run's raw data.
#
# Needs hyperfine and GNU parallel, and gnuplot for the plot:
#   sudo apt-get install hyperfine parallel gnuplot-nox
#
# Environment (all optional; more in harness/lib.sh):
#   THREADS     the Ns (default 1, 2, 4, ... doubling, and the number of cores)
#   DATA        the data sets (default "logs kara": the big log, and the Karamazov line repeated
#               to as many bytes)
# Sizes follow SIZE (harness/lib.sh). A smoke run: SIZE=tiny SCRATCH=target/smoke harness/scaling.sh

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

cores=$(nproc)
default_threads() {
    local n
    for ((n = 1; n < cores; n *= 2)); do printf '%s ' "$n"; done
    printf '%s\n' "$cores"
}
THREADS=${THREADS:-$(default_threads)}
DATA=${DATA:-logs kara}
require parallel "sudo apt-get install parallel"

# report DATA: the table and the plot of one data set, from the raw data in the run's folder.
report() {
    local data=$1 bytes warmup repeat series=() name
    read -r bytes warmup repeat < "$RUN_DIR/scaling-$data.input"
    for name in null file pipe parallel; do
        series+=("$RUN_DIR/scaling-$data-$name.json")
    done
    local table=$RUN_DIR/scaling-$data.md
    {
        heading "Scaling on $data ($bytes bytes)"
        echo "hyperfine, $warmup warm-up and $repeat runs a command, medians;"
        echo "F is the data file, every output checked identical first. null: \`batched F > /dev/null\`;"
        echo "file: \`batched F > out\`; pipe: \`cat F | batched | cat\`; parallel: GNU parallel"
        echo "\`--pipepart --block -1 -jN -k\` running the perl one-liner. Speed-up is over the same"
        echo "series at N = 1, efficiency is speed-up / N; CPU is user + system of every process of"
        echo "the command; reader busy is batched's reader thread busy over the run (\`--stats\`)."
        echo
        "$REPORT" scaling --bytes "$bytes" --stats "$RUN_DIR/scaling-$data" \
            --references "$RUN_DIR/scaling-$data-references.json" "${series[@]}" \
            "$RUN_DIR/scaling-$data-series.dat" "$RUN_DIR/scaling-$data-refs.dat"
    } > "$table"
    cat "$table"
    plot_against "$RUN_DIR/scaling-$data-series.dat" "$RUN_DIR/scaling-$data-refs.dat" \
        "$RUN_DIR/scaling-$data.svg" \
        "Throughput against threads or jobs ($data, $(awk -F', ' '{ print $2 }' "$MACHINE_FILE"))" \
        "N: batched --threads N, parallel -jN" 2
    say "wrote $table"
}

if [[ -n ${REPORT_ONLY:-} ]]; then
    for data in $DATA; do report "$data"; done
    exit 0
fi

build
batched=$(variant_of batched)
[[ -n $batched ]] || die "no batched line in harness/variants"
batched=$(command_of "$batched")
out=$(q "$WORK/scaling.out")

# series NAME: every command of a series on the current data set ($f, quoted), one a line: N,
# its label, the shell command, tab-separated.
series() {
    local n
    for n in $THREADS; do
        case $1 in
            null) printf '%s\tbatched --threads %s F > /dev/null\t%s\n' "$n" "$n" \
                "$batched --threads $n $f > /dev/null" ;;
            file) printf '%s\tbatched --threads %s F > out\t%s\n' "$n" "$n" \
                "$batched --threads $n $f > $out" ;;
            pipe) printf '%s\tcat F | batched --threads %s | cat\t%s\n' "$n" "$n" \
                "cat $f | $batched --threads $n | cat" ;;
            parallel) printf '%s\tparallel --pipepart -j%s -k perl\t%s\n' "$n" "$n" \
                "parallel --pipepart -a $f --block -1 -j$n -k -q $PERL_SPACES" ;;
        esac
    done
}

for data in $DATA; do
    case $data in
        logs) file=$(log_plain big) ;;
        kara) file=$(text_file kara "$(stat -c %s "$(log_plain big)")") ;;
        *) die "no data set '$data' (logs or kara)" ;;
    esac
    f=$(q "$file")
    # What the report needs to know of the measurement when it is made again from the raw data.
    echo "$(stat -c %s "$file") $WARMUP $REPEAT" > "$RUN_DIR/scaling-$data.input"
    checks=("$batched $f" "$PERL_SPACES < $f")
    while IFS=$'\t' read -r n label cmd; do
        checks+=("$cmd")
    done < <(series parallel)
    same_output "$data" "${checks[@]}"

    time_commands "scaling-$data-references" \
        "dd if=F of=/dev/null bs=1M" "dd if=$f of=/dev/null bs=1M status=none" \
        "cp F out" "cp $f $out" \
        "cat F | cat | cat" "cat $f | cat | cat" \
        "perl < F" "$PERL_SPACES < $f" > /dev/null
    for name in null file pipe parallel; do
        commands=()
        while IFS=$'\t' read -r n label cmd; do
            commands+=("$label" "$cmd")
            [[ $name == parallel ]] && continue
            # One more run for the stages' clocks, apart from the timed ones: --stats costs time.
            bash -c "{ ${cmd/--threads $n/--threads $n --stats}; } 2> $(q "$RUN_DIR/scaling-$data-$name-threads$n.txt") > /dev/null"
        done < <(series "$name")
        time_commands "scaling-$data-$name" "${commands[@]}" > /dev/null
    done
    rm -f "$WORK/scaling.out"

    report "$data"
done
