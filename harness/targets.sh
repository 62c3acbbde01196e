#!/usr/bin/env bash
# The performance targets (issue 6), measured side by side in one run: `batched` against the cat
# chain, the `dd` read floor and the perl one-liner a user would write instead; `std-baseline`
# against perl; `batched`'s peak memory while streaming 2 GiB. Writes targets.md (each target, the
# medians behind it, met or not, and every command's user and system time) into the run's folder
# and prints it.
#
# Each target is a ratio of two commands' times, so the commands run in interleaved rounds: one
# hyperfine call a round times each command once (targets-DATA-roundK.json), and the medians are
# taken over the rounds. hyperfine's own order, all runs of one command and then all of the next,
# would let a change in the shared machine's load between the two commands bias the ratio;
# interleaved, a drift hits both alike. The per-round files also keep every run's user and
# system time, which hyperfine's JSON otherwise gives as means only.
#
# Needs perl, hyperfine and GNU time: sudo apt-get install perl hyperfine time
#
# Environment (all optional; more in harness/lib.sh):
#   DATA_MIB    size of each data set, in MiB (default 256)
#   STREAM_GIB  how much to stream for the peak-memory row (default 2)
#   REPEAT      rounds; the median is reported (default 5)
# Example, a quick smoke run: DATA_MIB=2 STREAM_GIB=0 REPEAT=1 BIG_LINES=20000 ./harness/targets.sh

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

DATA_MIB=${DATA_MIB:-256}
STREAM_GIB=${STREAM_GIB:-2}
require perl "sudo apt-get install perl"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (for peak memory) is not installed; install it with: sudo apt-get install time"

build
batched=$(command_of "$(variant_of batched)")
std_baseline=$(command_of "$(variant_of std-baseline)")

# sized NAME FEED...: a file of FEED's first whole lines, up to DATA_MIB MiB, made once. Whole
# lines, since the perl one-liner, unlike the binaries, adds no newline to a cut last line.
sized() {
    local file=$WORK/targets-$1-${DATA_MIB}MiB.txt
    shift
    if [[ ! -f $file ]]; then
        say "making $(basename "$file")"
        { "$@" || true; } | LC_ALL=C awk -v max=$((DATA_MIB << 20)) \
            '{ n += length($0) + 1; if (n > max) exit; print }' > "$file.tmp"
        mv "$file.tmp" "$file"
    fi
    printf '%s\n' "$file"
}
endless_karamazov() { yes "$KARAMAZOV"; }
# The big log, unpacked; repeated if it is smaller than DATA_MIB.
endless_logs() {
    local log
    log=$(log_plain big)
    while cat "$log"; do :; done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
at_most() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "not met" }'; }

# row MEASURE TARGET FIGURE A B MET: a row of the table for the current data set, with the
# medians of commands A and B.
declare -A wall
row() {
    echo "| $data | $1 | $2 | $3 | ${wall[$4]} s / ${wall[$5]} s | $6 |"
}

table=$RUN_DIR/targets.md
cpu_rows=$WORK/targets-cpu.md
: > "$cpu_rows"
{
    echo "# The performance targets"
    echo
    echo "Machine: $(cat "$MACHINE_FILE")."
    echo "Made by \`harness/targets.sh\`: medians of $REPEAT interleaved rounds, $DATA_MIB MiB a data set."
    echo
    echo "| data | measure | target | figure | medians (wall) | |"
    echo "| --- | --- | --- | ---: | --- | --- |"
} > "$table"
for data in karamazov logs; do
    file=$(sized "$data" "endless_$data")
    f=$(q "$file")
    same_output "$data" "$batched < $f" "$std_baseline < $f" "$PERL_SPACES < $f"
    rounds=()
    for ((round = 1; round <= REPEAT; round++)); do
        rounds+=("$(REPEAT=1 WARMUP=0 time_commands "targets-$data-round$round" \
            cat-chain "cat $f | cat | cat" \
            batched-chain "cat $f | $batched | cat" \
            batched "$batched < $f" \
            std-baseline "$std_baseline < $f" \
            perl "$PERL_SPACES < $f" \
            dd "dd if=$f of=/dev/null bs=1M status=none" \
            cat "cat $f")")
    done
    wall=()
    while IFS=$'\t' read -r name seconds user system; do
        wall[$name]=$seconds
        echo "| $data | $name | $seconds | $user | $system |" >> "$cpu_rows"
    done < <("$REPORT" medians "${rounds[@]}")

    {
        r=$(ratio "${wall[batched-chain]}" "${wall[cat-chain]}")
        row "\`cat \| batched \| cat\` / \`cat \| cat \| cat\` time" "≤ 1.15" "$r" batched-chain cat-chain "$(at_most "$r" 1.15)"
        r=$(ratio "${wall[perl]}" "${wall[batched]}")
        row "perl / \`batched\` time" "≥ 10" "$r" perl batched "$(at_most 10 "$r")"
        r=$(ratio "${wall[batched]}" "${wall[dd]}")
        row "\`batched\` / \`dd bs=1M\` time" "≤ 1.5" "$r" batched dd "$(at_most "$r" 1.5)"
        r=$(ratio "${wall[perl]}" "${wall[std-baseline]}")
        row "perl / \`std-baseline\` time" "≥ 4" "$r" perl std-baseline "$(at_most 4 "$r")"
    } >> "$table"
done

if ((STREAM_GIB > 0)); then
    say "peak memory: ${STREAM_GIB} GiB through batched"
    peak_kib=$({ { yes "$KARAMAZOV" || true; } | head -c $((STREAM_GIB << 30)) |
        bash -c "/usr/bin/time -f '%M' $batched 2>&1 > /dev/null"; } | tail -n 1)
    peak_mib=$(awk -v k="$peak_kib" 'BEGIN { printf "%.1f", k / 1024 }')
    echo "| karamazov | \`batched\` peak RSS streaming $STREAM_GIB GiB, defaults | ≤ 32 MiB | $peak_mib MiB | | $(at_most "$peak_mib" 32) |" >> "$table"
fi
{
    echo
    echo "| data | command | wall s | user s | system s |"
    echo "| --- | --- | ---: | ---: | ---: |"
    cat "$cpu_rows"
} >> "$table"
cat "$table"
say "wrote $table"
