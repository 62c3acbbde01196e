# shellcheck shell=bash
# Shared by the harness scripts (throughput.sh, stress.sh, stress_one.sh, sweep.sh): the list
# of binaries, the data sets, and measuring rates of pipes with an output check. Sourced, not run.
#
# Environment (all optional):
#   BINS         space-separated binaries to measure (default: every src/bin/*.rs)
#   SMALL_LINES  lines in resources/stable_small.log.gz (default 1000000)
#   BIG_LINES    lines in resources/stable_big.log.gz (default 10000000)
#   LOG_SEED     the generator's seed (default 1)
#   RESOURCES    where the data sets live (default resources/; CI points it elsewhere so that its
#                small sets do not replace a machine's full-size ones)
#   REPEAT       timed runs per row; the median is reported (default 3)

set -euo pipefail
# A failure inside $(...) fails the assignment that uses it.
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RELEASE=$ROOT/target/release
# Scratch space for unpacked data and measurements; under target/ so `cargo clean` clears it.
WORK=$ROOT/target/harness
SMALL_LINES=${SMALL_LINES:-1000000}
BIG_LINES=${BIG_LINES:-10000000}
LOG_SEED=${LOG_SEED:-1}
RESOURCES=${RESOURCES:-$ROOT/resources}
REPEAT=${REPEAT:-3}

# A line of The Brothers Karamazov (Constance Garnett's translation, public domain): the input of
# the original experiment's `yes` pipe.
KARAMAZOV="Above all, don't lie to yourself. The man who lies to himself and listens to his own lie comes to a point that he cannot distinguish the truth within him, or around him, and so loses all respect for himself and for others."

# Progress and diagnostics go to stderr; stdout carries only results.
say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() {
    say "$*"
    exit 1
}
have() { command -v "$1" > /dev/null 2>&1; }

# require TOOL HOW-TO-INSTALL: stop with the install command when TOOL is missing.
require() {
    have "$1" || die "$1 is not installed; install it with: $2"
}

# The binaries under test: one per src/bin/*.rs, so a new strategy joins every script by
# existing. BINS narrows the list.
binaries() {
    local source name
    if [[ -n ${BINS:-} ]]; then
        local names
        read -ra names <<< "$BINS"
        printf '%s\n' "${names[@]}"
        return
    fi
    for source in "$ROOT"/src/bin/*.rs; do
        name=$(basename "$source" .rs)
        printf '%s\n' "$name"
    done
}

# is_binary NAME: whether NAME is among the binaries under test.
is_binary() {
    local names
    names=" $(binaries | tr '\n' ' ') "
    [[ $names == *" $1 "* ]]
}

# Builds the binaries under test and the generator, with the release profile they are measured in.
build_release() {
    require cargo "https://rustup.rs (curl --proto '=https' -sSf https://sh.rustup.rs | sh)"
    say "building release binaries"
    (cd "$ROOT" && cargo build --release --workspace --bins)
}

# log_gz small|big: the path of $RESOURCES/stable_<size>.log.gz, generated first if it is missing
# or was made with other parameters than asked for now (see resources/README.md).
log_gz() {
    local size=$1 lines
    case $size in
        small) lines=$SMALL_LINES ;;
        big) lines=$BIG_LINES ;;
        *) die "log_gz: no data set '$size'" ;;
    esac
    local gz=$RESOURCES/stable_$size.log.gz
    local stamp=$gz.params want="lines=$lines seed=$LOG_SEED"
    if [[ ! -f $gz || "$(cat "$stamp" 2> /dev/null)" != "$want" ]]; then
        say "generating $(basename "$gz"): $lines lines, seed $LOG_SEED"
        mkdir -p "$RESOURCES"
        "$RELEASE/gen-logs" --lines "$lines" --seed "$LOG_SEED" | gzip -1 -n > "$gz.tmp"
        mv "$gz.tmp" "$gz"
        printf '%s\n' "$want" > "$stamp"
    fi
    printf '%s\n' "$gz"
}

# log_plain small|big: the data set unpacked, so that measurements are not limited by zcat. The
# copy carries the stamp of the file it came from, so a regenerated or other set is unpacked anew.
log_plain() {
    local gz plain
    gz=$(log_gz "$1")
    plain=$WORK/stable_$1.log
    if [[ ! -f $plain ]] || ! cmp -s "$gz.params" "$plain.params" || [[ $gz -nt $plain ]]; then
        say "unpacking $(basename "$gz")"
        mkdir -p "$WORK"
        zcat "$gz" > "$plain.tmp"
        mv "$plain.tmp" "$plain"
        cp "$gz.params" "$plain.params"
    fi
    printf '%s\n' "$plain"
}

# Inputs: commands that write a data set to stdout.
# `yes` ends by SIGPIPE when head has enough, which is its normal end, not a failure.
feed_karamazov() { { yes "$KARAMAZOV" || true; } | head -n "${YES_LINES:-1000000}"; }
feed_file() { cat "$1"; }

# The transform as a user would write it without this project: a perl one-liner.
perl_spaces() {
    perl -lne 'BEGIN { @h = map "[spaces: $_]", 0 .. 6, ">6" } $n = tr/ //; print $h[$n > 6 ? 7 : $n], $_'
}

# ---- Measured rows --------------------------------------------------------------------------
#
# A measurement is a table of rows over one input. `ceiling NAME CMD...` starts it with the
# reference row (cat); `row NAME CMD...` adds a row whose output must match the other checked rows';
# `measure INPUT-NAME FEED...` runs them all: first each checked row once through cksum (a warm-up
# and the output check; any difference stops the script before timing), then REPEAT rounds that
# time every row in turn, so slow drift in the machine's load hits all rows alike. Results are
# left in ROW_NAMES, ROW_MIB_IN, ROW_MIB_OUT, ROW_RATIO (and CEILING_MIB_IN) for the caller to
# print or plot; `print_rows` writes them as markdown table rows. CMD may be a shell function.

ROW_NAMES=()
ROW_CMDS=()
ROW_CHECKED=()

ceiling() {
    ROW_NAMES=("$1") ROW_CHECKED=(no)
    shift
    ROW_CMDS=("$(printf '%q ' "$@")")
}

row() {
    ROW_NAMES+=("$1")
    ROW_CHECKED+=(yes)
    shift
    ROW_CMDS+=("$(printf '%q ' "$@")")
}

# mib_per_s FEED CMD: MiB/s of CMD's output while FEED | CMD runs; through `pv -a` as in the
# original experiment, or timed here when pv is missing.
mib_per_s() {
    local feed=$1 cmd=$2
    if have pv; then
        local report=$WORK/pv.report
        eval "$feed" | eval "$cmd" | pv -f -a 2> "$report" > /dev/null || return 1
        # pv prints e.g. "[ 811MiB/s]", rewritten in place with \r; the last one is the average.
        tr '\r' '\n' < "$report" | grep -o '[0-9.]*[KMGT]\{0,1\}i\{0,1\}B/s' | tail -n 1 |
            awk '{ match($0, /^[0-9.]+/); n = substr($0, 1, RLENGTH) + 0; u = substr($0, RLENGTH + 1)
                   s["B/s"] = 1 / 1048576; s["KiB/s"] = 1 / 1024; s["MiB/s"] = 1
                   s["GiB/s"] = 1024; s["TiB/s"] = 1048576
                   if (!(u in s)) exit 1; printf "%.1f\n", n * s[u] }' ||
            die "could not read pv's rate from: $(tr '\r' ' ' < "$report")"
    else
        local start end bytes
        start=$EPOCHREALTIME
        bytes=$(eval "$feed" | eval "$cmd" | wc -c) || return 1
        end=$EPOCHREALTIME
        awk -v b="$bytes" -v s="$start" -v e="$end" 'BEGIN { printf "%.1f\n", b / (e - s) / 1048576 }'
    fi
}

# cksum's "CRC BYTES", in words.
crc_and_size() { echo "${1#* } bytes with CRC ${1%% *}"; }

# The median of the numbers on stdin, one or more a line.
median() {
    tr ' ' '\n' | grep . | sort -g |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

measure() {
    local input=$1 feed
    shift
    feed=$(printf '%q ' "$@")
    mkdir -p "$WORK"
    have pv || say "pv is not installed: timing rates here instead (for pv: sudo apt-get install pv)"

    local i in_bytes out_bytes=() sums=() reference=
    in_bytes=$(eval "$feed" | wc -c)
    for i in "${!ROW_NAMES[@]}"; do
        if [[ ${ROW_CHECKED[$i]} == no ]]; then
            sums+=(-) out_bytes+=("$in_bytes")
            continue
        fi
        say "$input: checking ${ROW_NAMES[$i]}"
        local sum
        sum=$(eval "$feed" | eval "${ROW_CMDS[$i]}" | cksum) || die "$input: ${ROW_NAMES[$i]} failed"
        sums+=("$sum") out_bytes+=("${sum#* }")
        reference=${reference:-$i}
    done
    [[ -n $reference ]] || die "$input: no row to check"
    local mismatch=no
    for i in "${!ROW_NAMES[@]}"; do
        if [[ ${sums[$i]} != - && ${sums[$i]} != "${sums[$reference]}" ]]; then
            mismatch=yes
            say "OUTPUT MISMATCH on $input: ${ROW_NAMES[$i]} wrote $(crc_and_size "${sums[$i]}")," \
                "${ROW_NAMES[$reference]} wrote $(crc_and_size "${sums[$reference]}")"
        fi
    done
    [[ $mismatch == no ]] || die "outputs differ on $input: not timing them"

    local round rates=()
    for ((round = 1; round <= REPEAT; round++)); do
        for i in "${!ROW_NAMES[@]}"; do
            say "$input: timing ${ROW_NAMES[$i]} ($round/$REPEAT)"
            local rate
            rate=$(mib_per_s "$feed" "${ROW_CMDS[$i]}") || die "$input: ${ROW_NAMES[$i]} failed"
            rates[i]+="$rate "
        done
    done

    ROW_MIB_IN=() ROW_MIB_OUT=() ROW_RATIO=()
    for i in "${!ROW_NAMES[@]}"; do
        local out
        out=$(median <<< "${rates[$i]}")
        ROW_MIB_OUT+=("$out")
        # pv sees output bytes; the headers make output longer than input, so rates are compared
        # on input bytes per second: the work each row gets through.
        ROW_MIB_IN+=("$(awk -v r="$out" -v i="$in_bytes" -v o="${out_bytes[$i]}" 'BEGIN { printf "%.1f", r * i / o }')")
    done
    CEILING_MIB_IN=${ROW_MIB_IN[0]}
    for i in "${!ROW_NAMES[@]}"; do
        ROW_RATIO+=("$(awk -v r="${ROW_MIB_IN[$i]}" -v c="$CEILING_MIB_IN" 'BEGIN { printf "%.2f", r / c }')")
    done
}

print_header() {
    echo "| input | binary | MiB/s in | MiB/s out | ratio to ceiling |"
    echo "| --- | --- | ---: | ---: | ---: |"
}

print_rows() {
    local input=$1 i
    for i in "${!ROW_NAMES[@]}"; do
        echo "| $input | ${ROW_NAMES[$i]} | ${ROW_MIB_IN[$i]} | ${ROW_MIB_OUT[$i]} | ${ROW_RATIO[$i]} |"
    done
}

# The machine, in one paragraph, for the results.
describe_machine() {
    local cpu cores memory kernel rust
    cpu=$(lscpu 2> /dev/null | sed -n 's/^Model name: *//p' | head -n 1)
    cores=$(nproc)
    memory=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
    kernel=$(uname -sr)
    rust=$(rustc --version 2> /dev/null || echo "rustc unknown")
    echo "${cpu:-unknown CPU}, $cores cores, $memory memory, $kernel, $rust"
}

# ---- perf -----------------------------------------------------------------------------------

PERF_DIR=$ROOT/target/perf

# Stops with the install command when perf is missing or may not count here. Then picks the
# events for `perf stat`: its default set (cycles, instructions, branches...) where the machine has
# hardware counters; in a VM without them, the software events alone, so that the report is not a
# column of "<not supported>".
require_perf() {
    require perf "sudo apt-get install linux-perf (Debian) or linux-tools-\$(uname -r) (Ubuntu)"
    perf stat -e task-clock true > /dev/null 2>&1 ||
        die "perf may not count events here; allow it with: sudo sysctl kernel.perf_event_paranoid=1"
    mkdir -p "$PERF_DIR"
    local counted
    counted=$(perf stat -x, -e cycles,instructions true 2>&1 > /dev/null)
    PERF_STAT_EVENTS=()
    if [[ $counted == *'<not'* ]]; then
        say "no hardware counters here (a virtual machine?): counting software events only"
        PERF_STAT_EVENTS=(-e "task-clock,context-switches,cpu-migrations,page-faults")
    fi
}

# perf_stat REPEAT GZ BIN: `perf stat` of the original's stress pipe, `zcat GZ | BIN > /dev/null`,
# REPEAT times; the report goes to stdout and to target/perf/BIN.stat.txt.
perf_stat() {
    local repeat=$1 gz=$2 bin=$3
    say "perf stat: zcat $(basename "$gz") | $bin (runs: $repeat)"
    perf stat --repeat="$repeat" "${PERF_STAT_EVENTS[@]}" -o "$PERF_DIR/$bin.stat.txt" -- \
        bash -c "zcat $(printf '%q' "$gz") | $(printf '%q' "$RELEASE/$bin") > /dev/null"
    cat "$PERF_DIR/$bin.stat.txt"
}
