#!/usr/bin/env bash
# What does batching buy? Throughput of `pipeline` against `--batch` (lines per message) and of
# `batched` against `--chunk-size`, each in the pipe `cat stable_big.log | BINARY`, beside
# `cat | cat` (the reference) and `cat | std-baseline` (one loop, no batching). The binary's other
# knobs are its line in harness/variants. Every output is checked identical first. For each sweep
# writes hyperfine's JSON (sweep-NAME.json, sweep-NAME-references.json), sweep-NAME.md (the table)
# and sweep-NAME.svg (harness/plots/against.gnuplot) into the run's folder. `batched --threads` is
# scaling.sh's subject.
#
# Needs hyperfine, and gnuplot for the plots: sudo apt-get install hyperfine gnuplot-nox
#
# Environment (all optional; more in harness/lib.sh):
#   SWEEPS       which sweeps to run (default "pipeline-batch batched-chunk-size")
# Sizes follow SIZE (harness/lib.sh): at full size the big log, --batch 1 to 10000 and
# --chunk-size 4 KiB to 4 MiB; smaller sizes sweep fewer values.

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

SWEEPS=${SWEEPS:-pipeline-batch batched-chunk-size}
BATCHES=$(by_size "1 100" "1 10 100 1000 10000" "1 2 5 10 20 50 100 200 500 1000 2000 5000 10000")
CHUNK_SIZES=$(by_size "4096 65536" "4096 65536 262144 4194304" \
    "$(for ((s = 4096; s <= 4194304; s *= 2)); do printf '%s ' "$s"; done)")
SWEEP_LOG=big

build
log=$(log_plain "$SWEEP_LOG")
l=$(q "$log")
bytes=$(stat -c %s "$log")

# sweep NAME BIN OPTION DIVISOR XLABEL LOGBASE VALUES...: BIN's line in harness/variants with
# OPTION set to each value (replacing the line's own), timed beside the references; then the
# table and the plot, whose x is the value / DIVISOR (1024 shows bytes as KiB).
sweep() {
    local name=$1 bin=$2 option=$3 divisor=$4 xlabel=$5 logbase=$6 value variant
    shift 6
    [[ " $SWEEPS " == *" $name "* ]] || return 0
    variant=$(variant_of "$bin")
    [[ -n $variant ]] || die "no $bin line in harness/variants for the $name sweep"
    # The variant's other knobs stay; its own value of OPTION, if it has one, gives way.
    variant=$(sed -E "s/ $option [^ ]+//" <<< "$variant")
    local commands=() checks=("$(command_of "$(variant_of std-baseline)") < $l")
    for value; do
        commands+=("$variant $option $value" "cat $l | $(command_of "$variant") $option $value")
        checks+=("$(command_of "$variant") $option $value < $l")
    done
    same_output "sweep-$name" "${checks[@]}"
    local refs json
    refs=$(time_commands "sweep-$name-references" \
        "cat F | cat" "cat $l | cat" \
        "cat F | std-baseline" "cat $l | $(command_of "$(variant_of std-baseline)")")
    json=$(time_commands "sweep-$name" "${commands[@]}")
    {
        heading "$bin: throughput against $option"
        echo "Each row is \`cat F | $variant $option VALUE\` over"
        echo "stable_$SWEEP_LOG.log ($bytes bytes), hyperfine, $WARMUP warm-up and $REPEAT runs, medians;"
        echo "every output checked identical. MiB/s counts input bytes; CPU is all the pipe's processes."
        echo
        "$REPORT" sweep --bytes "$bytes" --knob="$option" --divisor "$divisor" --references "$refs" \
            "$json" "$WORK/sweep-$name-series.dat" "$WORK/sweep-$name-refs.dat"
    } > "$RUN_DIR/sweep-$name.md"
    plot_against "$WORK/sweep-$name-series.dat" "$WORK/sweep-$name-refs.dat" "$RUN_DIR/sweep-$name.svg" \
        "$bin: throughput against $option (stable\\_$SWEEP_LOG.log)" "$xlabel" "$logbase"
    cat "$RUN_DIR/sweep-$name.md"
    say "wrote sweep-$name.md and sweep-$name.svg in $RUN_DIR"
}

# shellcheck disable=SC2086 # the value lists are words by design
sweep pipeline-batch pipeline --batch 1 "--batch (lines per message)" 10 $BATCHES
# shellcheck disable=SC2086
sweep batched-chunk-size batched --chunk-size 1024 "--chunk-size (KiB)" 2 $CHUNK_SIZES
