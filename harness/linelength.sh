#!/usr/bin/env bash
# Along line length: where does per-line overhead stop dominating? Text of each mean line length
# in LENGTHS (tools' gen-text: words, blank, short and long lines, indentation, runs of spaces)
# goes through every variant of harness/variants, beside cat and the perl one-liner, two ways:
#   counted, under `valgrind --tool=cachegrind` with the cache simulation on, as
#     harness/cachegrind.sh does: instructions and D1 misses a line, instructions a byte, each
#     command's counts on empty input taken off (starting and stopping are paid once, not a line);
#   timed, in interleaved rounds (one hyperfine call a round runs every command once, as
#     harness/targets.sh does, so that a change in the shared machine's load hits all alike):
#     alone, `X F` into /dev/null, against `dd if=F bs=1M of=/dev/null` reading the same bytes,
#       with the CPU it takes (user + system s/GiB of input) against cat's;
#     in a pipe, `cat F | X | cat`, against a cat chain over a file of the OUTPUT's size: the
#       output is larger than the input by 11 or 12 header bytes a line (44 % on 25-byte lines),
#       and the last cat and the pipe carry those bytes whatever X does, so a chain over the input
#       would charge the headers' bytes to X.
# Every output is checked identical to the perl one-liner's, under cachegrind and before timing.
# Raw data goes into the run's folder: cachegrind's output files (linelength-cg-*.out.gz), one
# hyperfine JSON a length and round (linelength-LEN-roundK.json), the inputs' sizes
# (linelength.inputs); made from them by report.py: linelength.md (the tables, and each
# command's fit of instructions a line = fixed + per byte × bytes) and linelength.svg
# (instructions a byte against mean line length, harness/plots/linelength.gnuplot; skipped
# without gnuplot). REPORT_ONLY=1 RUN_DIR=FOLDER makes them again from a run's raw data.
#
# Needs perl, valgrind and hyperfine, and gnuplot for the plot:
#   sudo apt-get install perl valgrind hyperfine gnuplot-nox
#
# Environment (all optional; more in harness/lib.sh):
#   SIZE       tiny (CI: seconds, one length), small (a few minutes on 2 cores) or full (default:
#              256 MiB a length for the time columns)
#   LENGTHS    mean line lengths in bytes, newline included (default 8 16 25 50 100 134 300)
#   REPEAT     timed rounds, medians reported (default 3)
#   TEXT_SEED  gen-text's seed (default 1)
#   CG_CACHES  valgrind's cache options (default as harness/cachegrind.sh)
# Example: SIZE=small ./harness/linelength.sh

# Fewer rounds than lib.sh's default REPEAT, unless REPEAT is given.
repeat_asked=${REPEAT:-}
# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

REPEAT=${repeat_asked:-$(by_size 1 3 3)}
# time_mib: bytes of each length's timed file; cg_lines: lines of each length's cachegrind sample.
time_mib=$(by_size 1 32 256)
cg_lines=$(by_size 1000 50000 200000)
default_lengths=$(by_size 25 "8 16 25 50 100 134 300" "8 16 25 50 100 134 300")
LENGTHS=${LENGTHS:-$default_lengths}
TEXT_SEED=${TEXT_SEED:-1}
CG_CACHES=${CG_CACHES:---I1=32768,8,64 --D1=49152,12,64 --LL=33554432,16,64}

report() {
    local table=$RUN_DIR/linelength.md
    "$REPORT" linelength "$RUN_DIR" > "$table"
    cat "$table"
    if have gnuplot; then
        gnuplot -e "data='$RUN_DIR/linelength-instructions.dat'; out='$RUN_DIR/linelength.svg'" \
            "$HARNESS/plots/linelength.gnuplot" || die "gnuplot failed on linelength.svg"
    else
        say "gnuplot is not installed, so no linelength.svg (sudo apt-get install gnuplot-nox)"
    fi
    say "wrote $table"
}

if [[ -n ${REPORT_ONLY:-} ]]; then
    report
    exit 0
fi

require perl "sudo apt-get install perl"
require valgrind "sudo apt-get install valgrind"
require hyperfine "sudo apt-get install hyperfine"
build
[[ -x $BIN_DIR/gen-text ]] || die "no gen-text in $BIN_DIR"
inputs=$RUN_DIR/linelength.inputs
rm -f "$RUN_DIR"/linelength-*

labels=(cat perl) commands=(cat "$PERL_SPACES")
while read -r variant; do
    labels+=("$variant") commands+=("$(command_of "$variant")")
done < <(variants)

read -ra lengths <<< "$LENGTHS"
# Progress: a line at every step, and a ticker that repeats the current one every 10 s, since
# one step (perl under cachegrind, a round on 8-byte lines) can take longer than that.
steps=$((${#labels[@]} * (1 + 2 * ${#lengths[@]}) + ${#lengths[@]} * (1 + REPEAT))) step=0
progress=$WORK/linelength.progress
next_step() {
    step=$((step + 1))
    printf '%s of %s: %s\n' "$step" "$steps" "$*" > "$progress"
    say "$(cat "$progress")"
}
echo "0 of $steps: starting" > "$progress"
(while sleep 10; do say "still at $(cat "$progress")"; done) &
ticker=$!
# Runs under cachegrind in the background, by pid: what they run. On the way out, the ticker and
# any run still going are stopped.
declare -A running=()
trap 'kill "$ticker" "${!running[@]}" 2> /dev/null || true' EXIT

# cachegrind CMD INPUT NAME: CMD < INPUT under cachegrind, its counts gzipped into the run's folder
# as linelength-cg-NAME.out.gz, its output into WORK/linelength-cg/NAME.output.
cachegrind() {
    local out=$RUN_DIR/linelength-cg-$3.out work=$WORK/linelength-cg/$3
    # shellcheck disable=SC2086 # CG_CACHES is a list of options by design
    bash -c "valgrind --tool=cachegrind --cache-sim=yes $CG_CACHES --cachegrind-out-file=$(q "$out") \
        $1 < $(q "$2") > $(q "$work.output") 2> $(q "$work.valgrind")" ||
        die "cachegrind failed on $1: $(tail -n 5 "$work.valgrind")"
    gzip -9 -n -f "$out"
}

# stem LABEL: the label as a file name's part.
stem() { printf '%s\n' "${1// /_}"; }

# Each length's sample, and its first quarter: the difference between the two runs is what a line
# costs once running, without what starting to read costs once (buffers allocated and first
# touched on the first input, not on empty input).
mkdir -p "$WORK/linelength-cg"
for length in "${lengths[@]}"; do
    for part in full quarter; do
        lines=$cg_lines
        [[ $part == full ]] || lines=$((cg_lines / 4))
        "$BIN_DIR/gen-text" --mean-line-length "$length" --bytes $((lines * length)) \
            --seed "$TEXT_SEED" > "$WORK/linelength-cg/$length-$part.txt"
    done
done

# Every run under cachegrind, as many at once as there are cores: the counts are the same however
# busy the machine is, and cachegrind runs a program on one core.
jobs=()
for i in "${!labels[@]}"; do
    jobs+=("$i|/dev/null|empty-$(stem "${labels[$i]}")|empty input")
    for length in "${lengths[@]}"; do
        for part in full quarter; do
            jobs+=("$i|$WORK/linelength-cg/$length-$part.txt|$length-$part-$(stem "${labels[$i]}")|$length-byte lines, $part sample")
        done
    done
done
finish_one() {
    local pid
    wait -n -p pid "${!running[@]}" || die "cachegrind failed: ${running[$pid]} (see above)"
    unset "running[$pid]"
}
for job in "${jobs[@]}"; do
    IFS='|' read -r i input name what <<< "$job"
    ((${#running[@]} < $(nproc))) || finish_one
    next_step "cachegrind, ${labels[$i]} on $what"
    cachegrind "${commands[$i]}" "$input" "$name" &
    running[$!]="${labels[$i]} on $what"
done
while ((${#running[@]})); do finish_one; done

# The output check: every command but cat (whose output is its input) writes the same bytes.
for length in "${lengths[@]}"; do
    for part in full quarter; do
        expected=
        for label in "${labels[@]}"; do
            [[ $label != cat ]] || continue
            sum=$(cksum < "$WORK/linelength-cg/$length-$part-$(stem "$label").output")
            expected=${expected:-$sum}
            [[ $sum == "$expected" ]] ||
                die "OUTPUT MISMATCH under cachegrind on $length-byte lines ($part sample): $label"
        done
    done
done

: > "$inputs"
for length in "${lengths[@]}"; do
    next_step "making and checking $time_mib MiB of $length-byte lines"
    file=$WORK/linelength-$length-${time_mib}MiB.txt
    output=$WORK/linelength-$length-${time_mib}MiB.out
    "$BIN_DIR/gen-text" --mean-line-length "$length" --bytes $((time_mib << 20)) \
        --seed "$TEXT_SEED" > "$file"
    f=$(q "$file") o=$(q "$output")
    # The perl one-liner's output, the oracle every variant must match and the file the cat
    # chain of the output's size reads.
    bash -c "$PERL_SPACES $f > $o"
    checks=()
    for i in "${!labels[@]}"; do
        [[ ${labels[$i]} == cat ]] || checks+=("${commands[$i]} $f")
    done
    same_output "$length-byte lines" "cat $o" "${checks[@]}"
    # Bytes and lines of each input, and the output's bytes, for the report.
    sizes=()
    for sized in "$WORK/linelength-cg/$length-full.txt" "$WORK/linelength-cg/$length-quarter.txt" "$file"; do
        sizes+=("$(stat -c %s "$sized")" "$(tr -cd '\n' < "$sized" | wc -c)")
    done
    printf '%s\t' "$length" "${sizes[@]}" >> "$inputs"
    stat -c %s "$output" >> "$inputs"

    timed=(dd "dd if=$f of=/dev/null bs=1M status=none"
        "cat chain over the output" "cat $o | cat | cat")
    for i in "${!labels[@]}"; do
        timed+=("alone: ${labels[$i]}" "${commands[$i]} $f" "pipe: ${labels[$i]}" "cat $f | ${commands[$i]} | cat")
    done
    for ((round = 1; round <= REPEAT; round++)); do
        next_step "timing $length-byte lines, round $round of $REPEAT"
        # hyperfine's report of every command goes to a log: the tables say it shorter.
        (REPEAT=1 WARMUP=0 time_commands "linelength-$length-round$round" "${timed[@]}") \
            > /dev/null 2> "$WORK/linelength.hyperfine" ||
            die "timing failed on $length-byte lines: $(tail -n 5 "$WORK/linelength.hyperfine")"
    done
done

# lib.sh's own ticker (start_ticker, as the outputs are checked) replaces the EXIT trap above:
# this ticker is stopped here, or it would outlive the script.
kill "$ticker" 2> /dev/null || true
printf '%s\n' "${labels[@]}" > "$RUN_DIR/linelength.labels"
{
    echo "Machine: $(cat "$MACHINE_FILE")."
    echo "SIZE=$SIZE: $cg_lines lines a length under cachegrind (and their first quarter), $time_mib MiB a length timed in $REPEAT interleaved rounds; gen-text seed $TEXT_SEED; valgrind $CG_CACHES."
} > "$RUN_DIR/linelength.about"
report
