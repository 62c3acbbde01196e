#!/usr/bin/env bash
# Along line length: where does per-line overhead stop dominating? Text of each mean line length
# in LENGTHS (tools' gen-text: words, blank, short and long lines, indentation, runs of spaces)
# goes through every variant of harness/variants, beside cat and the perl one-liner, two ways:
#   counted, under `valgrind --tool=cachegrind` with the cache and branch simulations on (lib.sh's
#     cachegrind_row, as harness/cachegrind.sh counts): instructions, mispredicted branches and
#     D1 misses a line,
#     instructions a byte, each command's counts on empty input taken off (starting and stopping
#     are paid once, not a line);
#   timed, in interleaved rounds (one hyperfine call a round runs every command once, as
#     harness/targets.sh does, so that a change in the shared machine's load hits all alike):
#     alone, `X F` into /dev/null, against `dd if=F bs=1M of=/dev/null` reading the same bytes,
#       with the CPU it takes (user + system s/GiB of input) against cat's;
#     in a pipe, `cat F | X | cat`, against a cat chain over a file of the OUTPUT's size: the
#       output is larger than the input by 11 or 12 header bytes a line (44 % on 25-byte lines),
#       and the last cat and the pipe carry those bytes whatever X does, so a chain over the input
#       would charge the headers' bytes to X.
# Every output is checked identical to the perl one-liner's, under cachegrind and before timing.
# Raw data goes into the run's folder: every cachegrind run's totals (linelength.cachegrind.tsv;
# cachegrind's full output files stay in the scratch folder, WORK/linelength-cg/*.out), one
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
still_at() { while sleep 10; do say "still at $(cat "$progress")"; done; }
background still_at
progress_ticker=$!

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
# A job: the command's index, the input, its name in the totals and in words, the job's name.
jobs=()
for i in "${!labels[@]}"; do
    jobs+=("$i|/dev/null|empty|empty input|empty-$(stem "${labels[$i]}")")
    for length in "${lengths[@]}"; do
        for part in full quarter; do
            jobs+=("$i|$WORK/linelength-cg/$length-$part.txt|$length-$part|$length-byte lines, $part sample|$length-$part-$(stem "${labels[$i]}")")
        done
    done
done
# Jobs running, by pid: what they run.
declare -A running=()
finish_one() {
    local pid
    wait -n -p pid "${!running[@]}" || die "cachegrind failed: ${running[$pid]} (see above)"
    finished_background "$pid"
    unset "running[$pid]"
}
for job in "${jobs[@]}"; do
    IFS='|' read -r i input input_name what name <<< "$job"
    ((${#running[@]} < $(nproc))) || finish_one
    next_step "cachegrind, ${labels[$i]} on $what"
    background cachegrind_row "${labels[$i]}" "$input_name" "${commands[$i]}" "$input" \
        "$WORK/linelength-cg/$name" > "$WORK/linelength-cg/$name.totals"
    running[$!]="${labels[$i]} on $what"
done
while ((${#running[@]})); do finish_one; done
# The totals in the jobs' order, whichever ended first.
{
    cachegrind_header
    for job in "${jobs[@]}"; do cat "$WORK/linelength-cg/${job##*|}.totals"; done
} > "$RUN_DIR/linelength.cachegrind.tsv"

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

stop_background "$progress_ticker"
printf '%s\n' "${labels[@]}" > "$RUN_DIR/linelength.labels"
{
    echo "Machine: $(cat "$MACHINE_FILE")."
    echo "SIZE=$SIZE: $cg_lines lines a length under cachegrind (and their first quarter), $time_mib MiB a length timed in $REPEAT interleaved rounds; gen-text seed $TEXT_SEED; valgrind $CG_CACHES."
} > "$RUN_DIR/linelength.about"
report
