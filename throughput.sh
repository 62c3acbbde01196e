#!/usr/bin/env bash
# The main job: how fast does each binary move lines? Builds release, then runs every binary in the
# original experiment's pipe, `yes "<a Karamazov line>" | head -n 1000000 | BIN | pv -a`, and the
# same over the big log, beside `cat` in the binary's place (the ceiling) and a perl one-liner doing
# the same transform (what a user would reach for instead). Checks that every output is identical
# and stops if not, then prints a markdown table on stdout; progress goes to stderr.
#
# Environment (all optional; more in scripts/common.sh):
#   YES_LINES  lines of the Karamazov pipe (default 1000000)
#   BIG_LINES  lines of resources/stable_big.log.gz, made when missing (default 10000000)
#   REPEAT     timed runs per row, median reported (default 3)
#   BINS       the binaries to measure (default: every src/bin/*.rs)
# Example, a quick smoke run: YES_LINES=20000 BIG_LINES=20000 REPEAT=1 ./throughput.sh

source "$(dirname "$0")/scripts/common.sh"

YES_LINES=${YES_LINES:-1000000}
require perl "sudo apt-get install perl"

# The rows of each table: add a row here and it is checked and timed like the others.
rows() {
    ceiling "cat (ceiling)" cat
    row perl perl_spaces
    local bin
    for bin in $(binaries); do
        row "$bin" "$RELEASE/$bin"
    done
}

build_release
big=$(log_plain big)

echo "Machine: $(describe_machine). Median of $REPEAT runs; rates through $(have pv && echo pv || echo "the script's own clock (no pv)")."
echo
print_header
rows
measure karamazov feed_karamazov
print_rows "Karamazov line ×$YES_LINES"
rows
measure stable_big feed_file "$big"
print_rows "stable_big.log ($BIG_LINES lines)"
