#!/usr/bin/env bash
# The performance targets (issue 6), measured side by side in one run: `batched` against the pipe
# ceiling, the read floor and the perl one-liner a user would write instead; `std-baseline`
# against perl; `batched`'s peak memory while streaming 2 GiB. Prints a markdown table of each
# target, the medians behind it and whether it is met; progress goes to stderr.
#
# Every command of a round runs once before the next round starts, so drift in the machine's load
# hits all of them alike; the figures are medians over REPEAT rounds. Times are wall-clock; user
# and system CPU times are printed beside them, since on 2 cores the processes of a pipe compete
# for the CPU.
#
# Environment (all optional; more in scripts/common.sh):
#   DATA_MIB    size of each data set, in MiB (default 256)
#   STREAM_GIB  how much to stream for the peak-memory row (default 2)
#   REPEAT      rounds; the median is reported (default 5)

# Before common.sh, whose own default is 3 rounds.
REPEAT=${REPEAT:-5}
source "$(dirname "$0")/scripts/common.sh"

DATA_MIB=${DATA_MIB:-256}
STREAM_GIB=${STREAM_GIB:-2}
require perl "sudo apt-get install perl"
require dd "sudo apt-get install coreutils"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (for peak memory) is not installed; install it with: sudo apt-get install time"

build_release
batched=$RELEASE/batched
std_baseline=$RELEASE/std-baseline

# sized FILE FEED...: FILE holding the first DATA_MIB MiB of FEED's output, made once.
sized() {
    local file=$1
    shift
    if [[ ! -f $file || $(stat -c %s "$file") -ne $((DATA_MIB << 20)) ]]; then
        say "making $(basename "$file"): $DATA_MIB MiB"
        { "$@" || true; } | head -c $((DATA_MIB << 20)) > "$file"
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

# seconds CMD: "wall user system" seconds of one run of the shell command CMD.
seconds() {
    local TIMEFORMAT='%R %U %S' timing
    timing=$({ time bash -c "$1" > /dev/null 2>&1; } 2>&1) || die "failed: $1"
    echo "$timing"
}

# time_all NAME=CMD...: REPEAT interleaved rounds; leaves the medians in WALL[NAME], CPU[NAME].
declare -A WALL CPU
time_all() {
    local round pair name
    declare -A walls users systems
    for ((round = 1; round <= REPEAT; round++)); do
        for pair in "$@"; do
            name=${pair%%=*}
            say "timing $name ($round/$REPEAT)"
            read -r wall user system <<< "$(seconds "${pair#*=}")"
            walls[$name]+="$wall " users[$name]+="$user " systems[$name]+="$system "
        done
    done
    for pair in "$@"; do
        name=${pair%%=*}
        WALL[$name]=$(median <<< "${walls[$name]}")
        CPU[$name]="user $(median <<< "${users[$name]}") s, sys $(median <<< "${systems[$name]}") s"
    done
}

# target MEASURE GOAL FIGURE MET: one row of the table.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
at_most() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "not met" }'; }

# The timed commands run in a fresh bash, which needs the one-liner passed down.
export -f perl_spaces

echo "Machine: $(describe_machine). Medians of $REPEAT rounds, $DATA_MIB MiB a data set."
echo
echo "| data | measure | target | figure | medians (wall) | |"
echo "| --- | --- | --- | ---: | --- | --- |"
for data in karamazov logs; do
    file=$(sized "$WORK/bench-$data.txt" "endless_$data")
    q=$(printf '%q' "$file")
    time_all \
        "cat-chain=cat $q | cat | cat" \
        "batched-chain=cat $q | $batched | cat" \
        "batched=$batched < $q" \
        "std-baseline=$std_baseline < $q" \
        "perl=perl_spaces < $q" \
        "dd=dd if=$q of=/dev/null bs=1M status=none" \
        "cat=cat $q"
    r=$(ratio "${WALL[batched-chain]}" "${WALL[cat-chain]}")
    echo "| $data | \`cat \| batched \| cat\` / \`cat \| cat \| cat\` time | ≤ 1.15 | $r | ${WALL[batched-chain]} s / ${WALL[cat-chain]} s | $(at_most "$r" 1.15) |"
    r=$(ratio "${WALL[perl]}" "${WALL[batched]}")
    echo "| $data | perl / \`batched\` time | ≥ 10 | $r | ${WALL[perl]} s / ${WALL[batched]} s | $(at_most 10 "$r") |"
    r=$(ratio "${WALL[batched]}" "${WALL[dd]}")
    echo "| $data | \`batched\` / \`dd bs=1M\` time | ≤ 1.5 | $r | ${WALL[batched]} s / ${WALL[dd]} s | $(at_most "$r" 1.5) |"
    r=$(ratio "${WALL[perl]}" "${WALL[std-baseline]}")
    echo "| $data | perl / \`std-baseline\` time | ≥ 4 | $r | ${WALL[perl]} s / ${WALL[std-baseline]} s | $(at_most 4 "$r") |"
    for name in cat-chain batched-chain batched std-baseline perl dd cat; do
        say "$data $name: wall ${WALL[$name]} s, ${CPU[$name]}"
        CPU_LINES+="| $data | $name | ${WALL[$name]} | ${CPU[$name]} |"$'\n'
    done
done

say "peak memory: ${STREAM_GIB} GiB through batched"
peak_kib=$({ { yes "$KARAMAZOV" || true; } | head -c $((STREAM_GIB << 30)) |
    /usr/bin/time -f '%M' "$batched" 2>&1 > /dev/null; } | tail -n 1)
peak_mib=$(awk -v k="$peak_kib" 'BEGIN { printf "%.1f", k / 1024 }')
echo "| karamazov | \`batched\` peak RSS streaming $STREAM_GIB GiB, defaults | ≤ 32 MiB | $peak_mib MiB | | $(at_most "$peak_mib" 32) |"
echo
echo "| data | command | wall (s) | CPU |"
echo "| --- | --- | ---: | --- |"
printf '%s' "$CPU_LINES"
