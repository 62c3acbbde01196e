# shellcheck shell=bash
# Shared by the harness scripts: where things are, building, the variants, the data sets, timing
# with hyperfine, and the output check. Sourced, not run. Functions return results on stdout.
#
# Environment (all optional):
#   BINS         space-separated binaries to measure (default: every one in harness/variants)
#   BIN_DIR      binaries already built (e.g. carried to another machine): nothing is built
#                (default target/measure, built here with `cargo build --profile measure`)
#   SMALL_LINES  lines in resources/stable_small.log.gz (default 1000000)
#   BIG_LINES    lines in resources/stable_big.log.gz (default 10000000)
#   LOG_SEED     the generator's seed (default 1)
#   RESOURCES    where the data sets live (default resources/; CI points it elsewhere so that its
#                small sets do not replace a machine's full-size ones)
#   WORK         scratch space for unpacked data and outputs (default target/harness; a tmpfs
#                makes reads come from memory)
#   RUNS         where each run's raw data goes (default results/runs), in a folder
#                DATE-MACHINE, MACHINE defaulting to "N-cores"; RUN_DIR names the folder itself
#   REPEAT       timed runs per command after WARMUP untimed ones (defaults 5 and 1)
#   COMMIT       the commit the binaries were built from, when BIN_DIR holds binaries built
#                elsewhere (default: this checkout's HEAD)

set -euo pipefail
# A failure inside $(...) fails the assignment that uses it.
shopt -s inherit_errexit

HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HARNESS")
BIN_DIR=${BIN_DIR:-}
SMALL_LINES=${SMALL_LINES:-1000000}
BIG_LINES=${BIG_LINES:-10000000}
LOG_SEED=${LOG_SEED:-1}
RESOURCES=${RESOURCES:-$ROOT/resources}
WORK=${WORK:-$ROOT/target/harness}
MACHINE=${MACHINE:-$(nproc)-cores}
RUN_DIR=${RUN_DIR:-${RUNS:-$ROOT/results/runs}/$(date -u +%F)-$MACHINE}
REPEAT=${REPEAT:-5}
WARMUP=${WARMUP:-1}
# shellcheck disable=SC2034 # REPORT and PERL_SPACES are for the scripts that source this
REPORT=$HARNESS/report.py
# The machine, compiler and commit each script measured with, apart per script: scripts of one
# run's folder may run at different commits.
MACHINE_FILE=$RUN_DIR/$(basename "$0" .sh).machine.txt

# A line of The Brothers Karamazov (Constance Garnett's translation, public domain): the input of
# the original experiment's `yes` pipe.
KARAMAZOV="Above all, don't lie to yourself. The man who lies to himself and listens to his own lie comes to a point that he cannot distinguish the truth within him, or around him, and so loses all respect for himself and for others."

# The transform as a user would write it without this project, as a shell command.
# shellcheck disable=SC2034
PERL_SPACES="perl -ne 'my \$n = tr/ //; print \"[spaces: \", (\$n > 6 ? \">6\" : \$n), \"]\", \$_'"

# Progress and diagnostics go to stderr; stdout carries only results.
say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() {
    say "$*"
    exit 1
}
have() { command -v "$1" > /dev/null 2>&1; }

# require TOOL HOW-TO-INSTALL: a missing TOOL is installed when HOW-TO-INSTALL is an apt-get
# command and this machine has apt-get (as root, or through sudo), so that on a fresh Debian
# machine the harness needs no step of its own; otherwise, or if that fails, stop with the command.
require() {
    have "$1" && return
    if [[ $2 == "sudo apt-get install "* ]] && have apt-get; then
        local packages sudo=()
        read -ra packages <<< "${2#sudo apt-get install }"
        [[ $(id -u) == 0 ]] || sudo=(sudo)
        say "$1 is not installed: installing ${packages[*]} with apt-get"
        { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq "${packages[@]}"; } >&2 ||
            true
    fi
    have "$1" || die "$1 is not installed; install it with: $2"
}

# q WORD: WORD quoted for a shell command line (the commands hyperfine runs are strings).
q() { printf '%q' "$1"; }

# Builds the binaries and the harness's tools with the measuring profile (release plus symbols),
# unless BIN_DIR names binaries built elsewhere; then sets BIN_DIR and makes the run's folder.
build() {
    if [[ -n $BIN_DIR ]]; then
        [[ -x $BIN_DIR/gen-logs ]] || die "BIN_DIR=$BIN_DIR holds no gen-logs"
    else
        require cargo "https://rustup.rs (curl --proto '=https' -sSf https://sh.rustup.rs | sh)"
        say "building with the measure profile"
        (cd "$ROOT" && cargo build --profile measure --workspace --bins)
        BIN_DIR=$ROOT/target/measure
    fi
    mkdir -p "$RUN_DIR" "$WORK"
    describe_machine > "$MACHINE_FILE"
}

# The variants to measure, one a line as in harness/variants ("binary knobs..."), narrowed to
# BINS when it is set.
variants() {
    local line bin
    while read -r line; do
        [[ -z $line || $line == '#'* ]] && continue
        bin=${line%% *}
        [[ -z ${BINS:-} || " $BINS " == *" $bin "* ]] && printf '%s\n' "$line"
    done < "$HARNESS/variants"
}

# variant_of BIN: BIN's first line in harness/variants (its defaults), or nothing.
variant_of() {
    variants | awk -v bin="$1" '$1 == bin { print; exit }'
}

# command_of VARIANT: the variant's command line, its binary's full path first.
command_of() {
    local bin=${1%% *} args=
    [[ $1 == *' '* ]] && args=" ${1#* }"
    [[ -x $BIN_DIR/$bin ]] || die "no binary $bin in $BIN_DIR"
    printf '%s%s\n' "$(q "$BIN_DIR/$bin")" "$args"
}

# log_gz small|big: the path of $RESOURCES/stable_<size>.log.gz, generated first if it is missing
# or was made with other parameters than asked for now (see resources/README.md).
log_gz() {
    local lines
    case $1 in
        small) lines=$SMALL_LINES ;;
        big) lines=$BIG_LINES ;;
        *) die "log_gz: no data set '$1'" ;;
    esac
    local gz=$RESOURCES/stable_$1.log.gz
    local stamp=$gz.params want="lines=$lines seed=$LOG_SEED"
    if [[ ! -f $gz || "$(cat "$stamp" 2> /dev/null)" != "$want" ]]; then
        say "generating $(basename "$gz"): $lines lines, seed $LOG_SEED"
        mkdir -p "$RESOURCES"
        "$BIN_DIR/gen-logs" --lines "$lines" --seed "$LOG_SEED" | gzip -1 -n > "$gz.tmp"
        mv "$gz.tmp" "$gz"
        printf '%s\n' "$want" > "$stamp"
    fi
    printf '%s\n' "$gz"
}

# log_plain small|big: the data set unpacked under WORK, so that measurements are not limited by
# zcat. The copy carries the stamp of the file it came from, so another set is unpacked anew.
log_plain() {
    local gz plain=$WORK/stable_$1.log
    gz=$(log_gz "$1")
    if [[ ! -f $plain ]] || ! cmp -s "$gz.params" "$plain.params" || [[ $gz -nt $plain ]]; then
        say "unpacking $(basename "$gz")"
        zcat "$gz" > "$plain.tmp"
        mv "$plain.tmp" "$plain"
        cp "$gz.params" "$plain.params"
    fi
    printf '%s\n' "$plain"
}

# karamazov_file LINES: a file of LINES copies of the Karamazov line under WORK, made once.
karamazov_file() {
    local file=$WORK/karamazov-$1.txt
    if [[ ! -f $file ]]; then
        # `yes` ends by SIGPIPE when head has enough, which is its normal end, not a failure.
        { yes "$KARAMAZOV" || true; } | head -n "$1" > "$file.tmp"
        mv "$file.tmp" "$file"
    fi
    printf '%s\n' "$file"
}

# same_output WHAT CMD...: runs each shell command once, its output through cksum, and stops the
# script when any differs from the first's. Also the warm-up that reads the input into the cache.
same_output() {
    local what=$1 first="" cmd sum
    shift
    for cmd; do
        say "$what: checking $cmd"
        sum=$(bash -c "$cmd" | cksum) || die "$what: failed: $cmd"
        first=${first:-$sum}
        [[ $sum == "$first" ]] ||
            die "OUTPUT MISMATCH on $what: '$cmd' wrote ${sum#* } bytes with CRC ${sum%% *}," \
                "'$1' wrote ${first#* } bytes with CRC ${first%% *}"
    done
}

# time_commands NAME LABEL CMD [LABEL CMD]...: times each shell command CMD with hyperfine (WARMUP,
# then REPEAT runs, one command after another), naming it LABEL, and keeps hyperfine's JSON as
# RUN_DIR/NAME.json: every run's wall time and each command's mean user and system time (of all
# its processes). Prints the JSON's path.
time_commands() {
    local json=$RUN_DIR/$1.json args=()
    shift
    require hyperfine "sudo apt-get install hyperfine"
    while (($#)); do
        args+=(--command-name "$1" "$2")
        shift 2
    done
    say "timing $(basename "$json" .json): $((${#args[@]} / 3)) commands, $REPEAT runs each"
    hyperfine --shell bash --style basic --warmup "$WARMUP" --runs "$REPEAT" \
        --export-json "$json" "${args[@]}" >&2 || die "hyperfine failed on $json"
    printf '%s\n' "$json"
}

# plot_against SERIES REFS OUT TITLE XLABEL LOGBASE: harness/plots/against.gnuplot drawn into OUT
# from the data files report.py writes; without gnuplot, a note instead (plots are optional: the
# tables are the result, and the plot can be drawn later from the same files).
plot_against() {
    if ! have gnuplot; then
        say "gnuplot is not installed, so no $(basename "$3") (sudo apt-get install gnuplot-nox)"
        return
    fi
    gnuplot -e "series='$1'; refs='$2'; out='$3'; title='$4'; xlabel='$5'; logbase=$6" \
        "$HARNESS/plots/against.gnuplot" || die "gnuplot failed on $3"
}

# The machine, in one paragraph, for the results.
describe_machine() {
    local cpu memory rust
    cpu=$(lscpu 2> /dev/null | sed -n 's/^Model name: *//p' | head -n 1)
    memory=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
    rust=$(rustc --version 2> /dev/null || echo "rustc not here: binaries built elsewhere")
    printf '%s, %s cores, %s memory, %s, pipe-max-size %s, %s; commit %s\n' \
        "${cpu:-unknown CPU}" "$(nproc)" "$memory" "$(uname -sr)" \
        "$(cat /proc/sys/fs/pipe-max-size)" "$rust" \
        "${COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null || echo unknown)}"
}
