#!/usr/bin/env bash
# The answer along per-line work (issue 32): every strategy, plus `batched --threads 1`, with the
# space count and a set CPU time a line on top, at 0 to 10,000 ns a line, on log lines and manual
# pages, read from a file and through a pipe. The strategies are the library's own code, run by
# the harness's program `work` (tools/src/bin/work.rs, a transform of its own through the same
# generic strategies), so the binaries keep their CLI and their code; `work`'s per-line work is
# calibrated here before each point, in steps a microsecond of CPU, and written beside the data.
#
# Writes into the run's folder: work-*.json (hyperfine's, each command's wall times and mean user
# and system time), work.tsv (the raw data: one row a command, its lines/s, CPU a line and
# overhead, the CPU a line beyond the work's own as a share of its CPU a line), work.calibration
# (the steps a microsecond each point ran at) and work.svg (the overhead against the work, one
# panel a text and source; without gnuplot, a note). Through a pipe, `cat`'s CPU counts in the
# command's.
#
# Sizes follow SIZE (harness/lib.sh): the lines of each text (200,000 at full size).

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

WORK_LINES=$(by_size 2000 20000 200000)
NS_LIST="0 30 100 300 1000 3000 10000"
# Each at its binary's defaults; pipeline at --batch 1000, its fast setting (harness/sweep.sh).
STRATEGIES=("std-baseline" "baseline" "streamer" "pipeline --batch 1000" "batched" "batched --threads 1")

build
[[ -x $BIN_DIR/work ]] || die "no work program in $BIN_DIR (tools/src/bin/work.rs)"
# Calibrated anew before each point (text, source, work a line), seconds before its runs: this
# machine's speed drifted by up to ±10 % within minutes, and a run calibrated once put every
# strategy's overhead at 10,000 ns 3 to 14 % off (results/runs/2026-11-26T1652Z-273764b-2-cores/).
calibrations=$RUN_DIR/work.calibration
printf 'text\tsource\tns\tsteps_a_microsecond\n' > "$calibrations"
# calibrate TEXT SOURCE NS: sets steps (work --calibrate's steps a microsecond of CPU) and notes it.
calibrate() {
    steps=$("$BIN_DIR/work" --calibrate)
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$steps" >> "$calibrations"
}

# The texts, WORK_LINES lines each: generated log lines, and this machine's man pages.
logs=$WORK/work-logs-$WORK_LINES.txt
"$BIN_DIR/gen-logs" --lines "$WORK_LINES" --seed "$LOG_SEED" > "$logs"
man=$WORK/work-man-$WORK_LINES.txt
head -n "$WORK_LINES" "$(man_pages)" > "$man"
note_data "$logs" "gen-logs, $WORK_LINES lines, seed $LOG_SEED"
note_data "$man" "the first $WORK_LINES lines of $(cat "$(man_pages).recipe")"

# work_command STRATEGY NS FILE SOURCE: the shell command for STRATEGY with NS a line on FILE,
# from the file itself or through a pipe.
work_command() {
    local cmd
    cmd="$(q "$BIN_DIR/work") $1 --ns $2 --steps-per-us $steps"
    case $4 in
        file) printf '%s %s\n' "$cmd" "$(q "$3")" ;;
        pipe) printf 'cat %s | %s\n' "$(q "$3")" "$cmd" ;;
    esac
}

tsv=$RUN_DIR/work.tsv
printf 'text\tsource\tns\tstrategy\tlines\twall_s\tcpu_s\tlines_per_s\tcpu_ns_a_line\toverhead\n' > "$tsv"
for text in logs man; do
    file=${!text}
    # Every strategy writes the space count's bytes, work or not: each against the binary's.
    calibrate "$text" check 30
    checks=("$(q "$BIN_DIR/std-baseline") $(q "$file")")
    for strategy in "${STRATEGIES[@]}"; do
        checks+=("$(work_command "$strategy" 30 "$file" file)")
    done
    same_output "work on $text" "${checks[@]}"
    for source in file pipe; do
        for ns in $NS_LIST; do
            calibrate "$text" "$source" "$ns"
            commands=()
            for strategy in "${STRATEGIES[@]}"; do
                commands+=("$strategy" "$(work_command "$strategy" "$ns" "$file" "$source") > /dev/null")
            done
            json=$(time_commands "work-$text-$source-$ns" "${commands[@]}")
            # hyperfine takes the shell's start off each time, so a run too short to time (tiny
            # sizes) can come out as 0 s: its rate and overhead are left empty.
            jq -r --arg text "$text" --arg source "$source" --arg ns "$ns" --arg lines "$WORK_LINES" '
                def per(a; b): if b > 0 then a / b else null end;
                .results[] | (.user + .system) as $cpu | (.times | add / length) as $wall |
                ($cpu * 1e9 / ($lines | tonumber)) as $cpu_line |
                [$text, $source, $ns, .command, $lines, $wall, $cpu, per($lines | tonumber; $wall),
                 $cpu_line, per($cpu_line - ($ns | tonumber); $cpu_line)] | @tsv' "$json" >> "$tsv"
        done
    done
done
say "wrote $tsv"

if have gnuplot; then
    gnuplot -e "data='$tsv'; out='$RUN_DIR/work.svg'" "$HARNESS/plots/work.gnuplot" ||
        die "gnuplot failed on work.svg"
    say "wrote $RUN_DIR/work.svg"
else
    say "gnuplot is not installed, so no work.svg (sudo apt-get install gnuplot-nox)"
fi
