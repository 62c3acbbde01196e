# shellcheck shell=bash
# Shared by the harness scripts: where things are, building, the variants, the data sets, timing
# with hyperfine, and the output check. Sourced, not run. Functions return results on stdout.
#
# Environment (all optional):
#   SIZE      tiny, small or full (default full): every data size, and the default REPEAT, follows
#             from it (by_size below; each script's header lists what it sizes). tiny is a smoke
#             run of seconds, small a quick look, full the published figures.
#   SCRATCH   one folder for everything a run writes: data sets, unpacked copies and the run's
#             folder (SCRATCH/resources, SCRATCH/work, SCRATCH/runs). Unset, a full-size run keeps
#             its data sets in resources/, its scratch in target/harness/ and its run in
#             results/runs/; a tiny or small one keeps all three under target/harness/SIZE/, so
#             that no size replaces another's data.
#   RUNS      where the run's folder goes, over SCRATCH's choice
#   REPEAT    timed runs per command (default 5 at full size, 3 small, 1 tiny)
#   MIN_REPEAT the fewest timed runs a command gets with hyperfine (default REPEAT): below REPEAT,
#             a command whose first run takes over a second gets fewer, as many as fill 3 s
#             (hyperfine's own rule), for runs that long spread little
#   BINS      space-separated binaries to measure (default: every one in harness/variants)
#   BIN_DIR   binaries already built (e.g. carried to another machine): nothing is built, and
#             COMMIT names the commit they were built from (default target/measure, built here
#             with `cargo build --profile measure`)
#   MACHINE   the machine's name in run folders (default "N-cores")
#   CG_CACHES the caches cachegrind simulates, as valgrind's options (default below)
#
# Each run writes a folder of its own, RUNS/DATE-TIME-COMMIT-MACHINE (RUN_DIR names another, e.g.
# to make a run's tables again from its raw data): a run never writes into a committed one.

set -euo pipefail
# A failure inside $(...) fails the assignment that uses it.
shopt -s inherit_errexit

HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HARNESS")
BIN_DIR=${BIN_DIR:-}
SIZE=${SIZE:-full}
case $SIZE in
    tiny | small | full) ;;
    *)
        echo "SIZE=$SIZE: tiny, small or full" >&2
        exit 2
        ;;
esac

# by_size TINY SMALL FULL: the value for this run's SIZE.
by_size() {
    case $SIZE in
        tiny) printf '%s\n' "$1" ;;
        small) printf '%s\n' "$2" ;;
        full) printf '%s\n' "$3" ;;
    esac
}

if [[ -n ${SCRATCH:-} ]]; then
    SCRATCH=$(mkdir -p "$SCRATCH" && cd "$SCRATCH" && pwd)
    RESOURCES=$SCRATCH/resources WORK=$SCRATCH/work RUNS=${RUNS:-$SCRATCH/runs}
elif [[ $SIZE == full ]]; then
    RESOURCES=$ROOT/resources WORK=$ROOT/target/harness RUNS=${RUNS:-$ROOT/results/runs}
else
    RESOURCES=$ROOT/target/harness/$SIZE/resources WORK=$ROOT/target/harness/$SIZE/work
    RUNS=${RUNS:-$ROOT/target/harness/$SIZE/runs}
fi
# The sizes every script shares: the two logs of the original experiment, and the size of each
# text a throughput figure is taken on. Scripts size the rest with by_size.
SMALL_LINES=$(by_size 20000 100000 1000000)
BIG_LINES=$(by_size 20000 1000000 10000000)
TEXT_BYTES=$(($(by_size 2 32 256) << 20))
LOG_SEED=1
REPEAT=${REPEAT:-$(by_size 1 3 5)}
WARMUP=$(by_size 0 1 1)
MACHINE=${MACHINE:-$(nproc)-cores}
# shellcheck disable=SC2034 # REPORT and PERL_SPACES are for the scripts that source this
REPORT=$HARNESS/report.py
# A run's folder given (scaling.sh's REPORT_ONLY=1 remakes its tables): its machine file.
[[ -z ${RUN_DIR:-} ]] || MACHINE_FILE=$RUN_DIR/$(basename "$0" .sh).machine.txt

# The commit measured: the binaries' own when built elsewhere, else this checkout's, -dirty when
# it has changes not committed (as the binaries' --version says).
commit() {
    printf '%s\n' "${COMMIT:-$(git -C "$ROOT" describe --always --dirty 2> /dev/null || echo unknown)}"
}

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

# on_exit CMD: runs the shell command CMD when this shell ends, however it ends: at the script's
# end, by exit or die, by a failure under set -e, or by SIGINT or SIGTERM (which end it through
# exit, so that the hooks run; a signal waits for the command in the foreground to end, as bash
# does). The one EXIT trap of the harness: scripts register cleanup here instead of setting their
# own. Hooks run last registered first. A ( … ) or $( … ) subshell inherits the list but not the
# traps, so each hook is kept with its shell's BASHPID and a shell runs only its own.
EXIT_HOOKS=()
on_exit() {
    EXIT_HOOKS+=("$BASHPID $1")
    trap run_exit_hooks EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}
run_exit_hooks() {
    local i
    for ((i = ${#EXIT_HOOKS[@]} - 1; i >= 0; i--)); do
        if [[ ${EXIT_HOOKS[i]%% *} == "$BASHPID" ]]; then eval "${EXIT_HOOKS[i]#* }" || true; fi
    done
}
# drop_exit_hook CMD: this shell's hook CMD, no longer needed, forgotten.
drop_exit_hook() {
    local i
    for i in "${!EXIT_HOOKS[@]}"; do
        [[ ${EXIT_HOOKS[i]} != "$BASHPID $1" ]] || unset 'EXIT_HOOKS[i]'
    done
    EXIT_HOOKS=("${EXIT_HOOKS[@]}")
}

# background CMD...: CMD (a command or a function of these scripts) in the background, its pid in
# $!, in a process group of its own, so that stop_background ends it with every process it
# started (a ticker's sleep, the valgrind under a bash -c); stopped at this shell's end at the
# latest. A job that ends by itself is reaped with wait and then forgotten with finished_background.
background() {
    set -m
    "$@" &
    set +m
    on_exit "stop_background $!"
}
stop_background() {
    kill -TERM -- "-$1" 2> /dev/null || true
    wait "$1" 2> /dev/null || true
    finished_background "$1"
}
finished_background() { drop_exit_hook "stop_background $1"; }

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

# build [BIN...]: builds the binaries BIN (default: every binary and tool of the workspace; an
# example as example:NAME, into BIN_DIR/examples) with the measuring profile (release plus symbols),
# unless BIN_DIR names binaries built elsewhere; then sets BIN_DIR and makes the run's folder. Each
# binary is linked with link-time optimisation, one code unit, on one core: a script that names
# what it runs builds no more.
build() {
    local bins=() bin
    for bin; do
        case $bin in
            example:*) bins+=(--example "${bin#example:}") ;;
            *) bins+=(--bin "$bin") ;;
        esac
    done
    ((${#bins[@]})) || bins=(--bins)
    mkdir -p "$WORK"
    if [[ -n $BIN_DIR ]]; then
        [[ -x $BIN_DIR/gen-logs ]] || die "BIN_DIR=$BIN_DIR holds no gen-logs"
    else
        require cargo "https://rustup.rs (curl --proto '=https' -sSf https://sh.rustup.rs | sh)"
        say "building with the measure profile"
        # cargo shows its progress in a terminal only; the ticker's lines cover its long silent
        # link-time optimisation in a log.
        start_ticker "$WORK/build.ticks" 0 "building" "cargo build --profile measure"
        (cd "$ROOT" && cargo build --profile measure --workspace "${bins[@]}")
        stop_ticker
        BIN_DIR=$ROOT/target/measure
    fi
    RUN_DIR=${RUN_DIR:-$(new_run_dir)}
    MACHINE_FILE=$RUN_DIR/$(basename "$0" .sh).machine.txt
    describe_machine > "$MACHINE_FILE"
    say "SIZE=$SIZE, $REPEAT runs a command; this run's folder: ${RUN_DIR#"$ROOT"/}"
}

# A folder of its own for this run, RUNS/DATE-TIME-COMMIT-MACHINE[-SIZE][-K]: made here, so that
# two runs in the same minute get two folders and no run writes into another's.
new_run_dir() {
    local base dir k=1
    base=$RUNS/$(date -u +%FT%H%MZ)-$(commit)-$MACHINE
    [[ $SIZE == full ]] || base+=-$SIZE
    mkdir -p "$RUNS"
    dir=$base
    until mkdir "$dir" 2> /dev/null; do
        ((++k < 100)) || die "cannot make a run folder beside $base"
        dir=$base-$k
    done
    printf '%s\n' "$dir"
}

# A report's markdown header: its title, the machine, and the command that made it.
heading() {
    # shellcheck disable=SC2016 # the backquotes are markdown
    printf '# %s\n\nMachine: %s.\nMade by `SIZE=%s REPEAT=%s harness/%s` on %s.\n' "$1" \
        "$(cat "$MACHINE_FILE")" "$SIZE" "$REPEAT" "$(basename "$0")" "$(date -u '+%F %H:%M UTC')"
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
        # About 134 bytes a line, for the progress shown.
        "$BIN_DIR/gen-logs" --lines "$lines" --seed "$LOG_SEED" | flow "$(basename "$gz")" $((lines * 134)) |
            gzip -1 -n > "$gz.tmp"
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
        zcat "$gz" | flow "$(basename "$plain")" $(($(sed 's/lines=\([0-9]*\).*/\1/' "$gz.params") * 134)) \
            > "$plain.tmp"
        mv "$plain.tmp" "$plain"
        cp "$gz.params" "$plain.params"
    fi
    printf '%s\n' "$plain"
}

# text_file kara|logs|man [BYTES]: the first whole lines, up to BYTES (default TEXT_BYTES), of
# the endless Karamazov line, the generated log, or this machine's man pages repeated; a file
# under WORK, made once. Whole lines, since the perl one-liner, unlike the binaries, adds no newline
# to a cut last line. How it was made goes into the run's data.md.
text_file() {
    local name=$1 bytes=${2:-$TEXT_BYTES} source recipe
    case $name in
        kara) recipe="\`yes\` of the Karamazov line" ;;
        logs)
            # gen-logs's first lines for a seed are the same whatever --lines is, so the text is
            # made straight from it: the big log's first lines, without making the 1.3 GB big log,
            # gzipping it and unpacking it first.
            recipe="the first lines of \`gen-logs --seed $LOG_SEED\` (those of stable_big.log)"
            ;;
        man)
            source=$(man_pages)
            recipe="$(cat "$source.recipe"), repeated"
            ;;
        *) die "text_file: no text '$name'" ;;
    esac
    local file=$WORK/$name-$bytes.txt
    if [[ ! -f $file ]]; then
        say "making $(basename "$file")"
        {
            # The feed ends by SIGPIPE when awk has enough, which is its normal end.
            case $name in
                kara) yes "$KARAMAZOV" ;;
                # A line is at least a byte, so BYTES lines are enough.
                logs) "$BIN_DIR/gen-logs" --lines "$bytes" --seed "$LOG_SEED" ;;
                man) while cat "$source"; do :; done ;;
            esac || true
        } | LC_ALL=C awk -v max="$bytes" '{ n += length($0) + 1; if (n > max) exit; print }' |
            flow "$(basename "$file")" "$bytes" > "$file.tmp"
        mv "$file.tmp" "$file"
    fi
    note_data "$file" "$recipe, cut at a line end"
    printf '%s\n' "$file"
}

# man_pages: every manual page source of this machine, unpacked into one file under WORK, made
# once (Debian's man-db pages: about 114 MB of short roff lines); without man pages, perl's
# modules, which a Debian machine has since perl is in its base. FILE.recipe says which.
man_pages() {
    local file=$WORK/man-pages.txt sources
    if [[ ! -f $file ]]; then
        sources=$(compgen -G '/usr/share/man/man*/*.gz' | LC_ALL=C sort) || true
        if [[ -n $sources ]]; then
            say "unpacking this machine's man pages into $(basename "$file")"
            xargs -d '\n' zcat -f <<< "$sources" > "$file.tmp"
            printf 'zcat /usr/share/man/man*/*.gz (%s pages, in C order)\n' "$(wc -l <<< "$sources")" \
                > "$file.recipe"
        else
            say "no man pages here: using perl's modules for short lines"
            sources=$(perl -e 'print join("\n", grep { -d } @INC), "\n"' |
                xargs -d '\n' -I{} find {} -name '*.pm' | LC_ALL=C sort -u)
            xargs -d '\n' cat <<< "$sources" > "$file.tmp"
            printf "cat of perl's modules, %s .pm files of @INC, in C order (no man pages here)\n" \
                "$(wc -l <<< "$sources")" > "$file.recipe"
        fi
        mv "$file.tmp" "$file"
    fi
    printf '%s\n' "$file"
}

# note_data FILE RECIPE: FILE's size and recipe in the run's data.md, once.
note_data() {
    local list=$RUN_DIR/data.md lines
    grep -qsF "\`$(basename "$1")\`" "$list" && return
    lines=$(wc -l < "$1")
    # shellcheck disable=SC2016 # the backquotes are markdown
    printf -- '- `%s`: %s bytes, %s lines (%s bytes a line): %s\n' "$(basename "$1")" \
        "$(stat -c %s "$1")" "$lines" "$(awk -v b="$(stat -c %s "$1")" -v l="$lines" 'BEGIN { printf "%.1f", l ? b / l : 0 }')" \
        "$2" >> "$list"
}

# The caches cachegrind simulates, fixed here rather than read from the host, so that counts are the
# same on any x86-64 machine for the same binaries: 32 KiB I1, 48 KiB D1, 32 MiB LL, 64-byte lines.
CG_CACHES=${CG_CACHES:---I1=32768,8,64 --D1=49152,12,64 --LL=33554432,16,64}
# What cachegrind counts with the cache and branch simulations on, in the order of its output
# file (Bcm, Bim: mispredicted conditional and indirect branches).
CG_EVENTS="Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim"

# cachegrind_header: the header of a run's totals TSV, whose rows cachegrind_row prints.
cachegrind_header() { printf 'command\tinput\t%s\n' "${CG_EVENTS// /$'\t'}"; }

# cachegrind_row LABEL INPUT-NAME CMD INPUT STEM: the shell command CMD < INPUT under cachegrind,
# the cache and branch simulations on; prints its totals, a TSV row "LABEL INPUT-NAME count...", the counts in
# CG_EVENTS's order. The totals are what a run keeps: cachegrind's full output file (per function
# and line, for cg_annotate) is scratch, STEM.out, beside CMD's output (STEM.output) and valgrind's
# messages (STEM.valgrind); STEM is a path under WORK.
cachegrind_row() {
    local label=$1 input_name=$2 cmd=$3 input=$4 stem=$5 totals
    mkdir -p "$(dirname "$stem")"
    # shellcheck disable=SC2086 # CG_CACHES is a list of options by design
    bash -c "valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes $CG_CACHES --cachegrind-out-file=$(q "$stem.out") \
        $cmd < $(q "$input") > $(q "$stem.output") 2> $(q "$stem.valgrind")" ||
        die "cachegrind failed on $label: $(tail -n 5 "$stem.valgrind")"
    totals=$(awk -v want="$CG_EVENTS" '
        /^events:/ { $1 = ""; events = substr($0, 2); sub(/ +$/, "", events) }
        /^summary:/ { $1 = ""; summary = substr($0, 2) }
        END { if (events != want) exit 1; gsub(/ +/, "\t", summary); print summary }' "$stem.out") ||
        die "cachegrind counted other events than $CG_EVENTS in $stem.out"
    printf '%s\t%s\t%s\n' "$label" "$input_name" "$totals"
}

# same_output WHAT CMD...: runs each shell command once, its output through cksum, and stops the
# script when any differs from the first's. Also the warm-up that reads the input into the cache.
same_output() {
    local what=$1 first="" cmd sum ticks=$WORK/same-output.ticks checked=0
    shift
    start_ticker "$ticks" 1 "$what: checking" "$@"
    for cmd; do
        say "$what: checking $cmd"
        echo $((checked++)) >> "$ticks"
        sum=$(bash -c "$cmd" | cksum) || die "$what: failed: $cmd"
        first=${first:-$sum}
        [[ $sum == "$first" ]] ||
            die "OUTPUT MISMATCH on $what: '$cmd' wrote ${sum#* } bytes with CRC ${sum%% *}," \
                "'$1' wrote ${first#* } bytes with CRC ${first%% *}"
    done
    stop_ticker
}

# flow WHAT BYTES: a stage of a pipe that passes its input on, showing progress towards about
# BYTES: pv's bar in a terminal, otherwise (a log) a line every 10 seconds; without pv, nothing.
flow() {
    if ! have pv; then
        cat
    elif [[ -t 2 ]]; then
        pv -f -N "$1" -s "$2"
    else
        pv -f -n -i 10 -s "$2" 2> >(while read -r percent; do say "$1: $percent %"; done)
    fi
}

# time_commands NAME LABEL CMD [LABEL CMD]...: times each shell command CMD with hyperfine (WARMUP,
# then MIN_REPEAT to REPEAT runs, one command after another; its output to /dev/null, or where
# TIMED_OUTPUT says, as hyperfine 1.13's --output takes it), naming it LABEL, and keeps
# hyperfine's JSON as RUN_DIR/NAME.json: every run's wall time and each command's mean user and
# system time (of all its processes). Prints the JSON's path. hyperfine itself is silent (its
# warnings go to the run's hyperfine.log; the tables mark runs too short to time closely): ticker
# shows the progress.
time_commands() {
    local name=$1 json=$RUN_DIR/$1.json args=() labels=() prepares=() ticks=$WORK/$1.ticks
    local fewest=${MIN_REPEAT:-$REPEAT}
    shift
    require hyperfine "sudo apt-get install hyperfine"
    while (($#)); do
        # A --prepare a command, run before each of its runs, warm-ups included: a line in $ticks
        # is a run started, and says whose.
        prepares+=(--prepare "echo ${#labels[@]} >> $(q "$ticks")")
        args+=(--command-name "$1" "$2")
        labels+=("$1")
        shift 2
    done
    ((fewest <= REPEAT)) || fewest=$REPEAT
    say "timing $name: ${#labels[@]} commands, $WARMUP warm-up and $fewest to $REPEAT runs each"
    start_ticker "$ticks" $((WARMUP + REPEAT)) "$name" "${labels[@]}"
    hyperfine --style none --shell bash --warmup "$WARMUP" --min-runs "$fewest" --max-runs "$REPEAT" \
        ${TIMED_OUTPUT:+--output "$TIMED_OUTPUT"} "${prepares[@]}" --export-json "$json" "${args[@]}" \
        >> "$RUN_DIR/hyperfine.log" 2>&1 ||
        die "hyperfine failed on $name: $(tail -n 3 "$RUN_DIR/hyperfine.log")"
    stop_ticker
    printf '%s\n' "$json"
}

# start_ticker TICKS RUNS-EACH WHAT LABEL...: ticker in the background, emptying TICKS first, until
# stop_ticker or the script's end.
start_ticker() {
    : > "$1"
    background ticker "$@" > /dev/null
    TICKER=$!
}
stop_ticker() {
    [[ -n ${TICKER:-} ]] || return 0
    stop_background "$TICKER"
    TICKER=
    if [[ -t 2 ]]; then printf '\r\033[K' >&2; fi
}

# ticker TICKS RUNS-EACH WHAT LABEL...: until killed, which run of which command has started (a
# line in TICKS per run, the LABEL's index or empty, at most RUNS-EACH runs a LABEL; RUNS-EACH 0:
# one LABEL, its time only): in a terminal a line redrawn every second, otherwise (a log) a line
# every 10 seconds.
ticker() {
    local ticks=$1 each=$2 what=$3 seconds said=0 started index label line
    shift 3
    local total=$((each * $#))
    # Seconds by the clock, not by sleeps, which a loaded machine stretches.
    SECONDS=0
    while sleep 1; do
        seconds=$SECONDS
        if ((each == 0)); then
            line="$what ($1), $seconds s"
        else
            started=$(wc -l < "$ticks")
            ((started > 0)) || continue
            # A tick without an index: RUNS-EACH runs a LABEL, in order.
            index=$(tail -n 1 "$ticks")
            [[ -n $index ]] || index=$(((started - 1) / each))
            label=${*:$((index + 1)):1}
            line="$what: run $started of at most $total ($label), $seconds s"
        fi
        if [[ -t 2 ]]; then
            printf '\r\033[K%s: %s' "$(basename "$0")" "$line" >&2
        elif ((seconds - said >= 9)); then
            said=$seconds
            say "$line"
        fi
    done
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
        "$(commit)"
}
