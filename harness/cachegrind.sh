#!/usr/bin/env bash
# What does a line cost? Every variant of harness/variants, and cat and the perl one-liner as
# references, run under `valgrind --tool=cachegrind` with the cache and branch simulations on, over
# the same generated log lines: instructions, mispredicted branches, D1 misses and last-level
# misses a line. Counted, not timed,
# so they do not move with the machine's load; the caches simulated are fixed (lib.sh's CG_CACHES,
# not read from the host), so the figures are the same on any x86-64 machine for the same binaries.
# Cachegrind runs a program's threads one at a time on one simulated cache: it cannot see what
# threads cost each other on real cores (cache lines moving between cores, false sharing, waiting
# on locks), nor the kernel's work in read and write. Those show in wall and CPU time, not here.
# Writes cachegrind.tsv, every run's totals (the table's raw data), and cachegrind.md, the table,
# into the run's folder; cachegrind's full output files, for cg_annotate, stay in the scratch
# folder (WORK/cachegrind/LABEL.{empty,log}.out, a few hundred KB each).
#
# Needs valgrind: sudo apt-get install valgrind
#
# Sizes follow SIZE (harness/lib.sh): 200,000 log lines through each binary at full size.

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

CG_LINES=$(by_size 2000 20000 200000)
require valgrind "sudo apt-get install valgrind"

build
data=$WORK/cachegrind-$CG_LINES.log
"$BIN_DIR/gen-logs" --lines "$CG_LINES" --seed "$LOG_SEED" > "$data"

commands=("cat" "cat" "perl" "$PERL_SPACES")
while read -r variant; do
    commands+=("$variant" "$(command_of "$variant")")
done < <(variants)

expected=
totals=$RUN_DIR/cachegrind.tsv
cachegrind_header > "$totals"
# Progress while a run under valgrind takes long: two runs a command.
ticks=$WORK/cachegrind.ticks labels=()
for ((i = 0; i < ${#commands[@]}; i += 2)); do labels+=("${commands[$i]}"); done
start_ticker "$ticks" 2 cachegrind "${labels[@]}"
set -- "${commands[@]}"
while (($#)); do
    label=$1 cmd=$2
    shift 2
    stem=$WORK/cachegrind/${label// /_}
    # Empty input too: what starting and stopping costs, taken off the per-line figures.
    for input in empty log; do
        say "cachegrind: $label < $input"
        echo >> "$ticks"
        file=$data
        [[ $input == log ]] || file=/dev/null
        cachegrind_row "$label" "$input" "$cmd" "$file" "$stem.$input" >> "$totals"
    done
    # The output check: every command but cat (whose output is its input) writes the same bytes.
    if [[ $label != cat ]]; then
        sum=$(cksum < "$stem.log.output")
        expected=${expected:-$sum}
        [[ $sum == "$expected" ]] || die "OUTPUT MISMATCH under cachegrind: $label"
    fi
done
stop_ticker

table=$RUN_DIR/cachegrind.md
{
    heading "Per-line cost under cachegrind"
    echo "\`valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes $CG_CACHES\`,"
    echo "each command reading $CG_LINES generated log lines ($(stat -c %s "$data") bytes) from a file"
    echo "into /dev/null, less the same command's counts on empty input. Mispredicts are conditional and"
    echo "indirect branches that cachegrind's simulated predictor (not the CPU's) got wrong, a pointer to"
    echo "a line's cost that does not show in its instructions. D1 misses are level-1 data misses (reads and writes); LL misses are misses"
    echo "of the last level (instructions and data), the ones that go to memory. Threads run one at a"
    echo "time under cachegrind: no misses between cores are counted."
    echo
    "$REPORT" cachegrind --lines "$CG_LINES" "$totals"
} > "$table"
cat "$table"
say "wrote $table"
