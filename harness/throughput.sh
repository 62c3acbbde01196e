#!/usr/bin/env bash
# The main job: how fast does each binary move lines, and at what CPU cost? Every variant of
# harness/variants and the perl one-liner, three texts of TEXT_BYTES each (256 MiB at full size):
# the original experiment's input (the Karamazov line, 226 bytes), the big log (134 bytes a line)
# and this machine's man page sources (short lines, about 26 bytes). First the original's own
# measure, on the Karamazov text:
#   through pv, `pv F | X > /dev/null`, beside `yes abcdefg | pv` (the original's "theoretical
#     maximum") and `pv F > /dev/null`, printed in the original's form (`std-baseline: [ 811MiB/s]`)
#     with each one's fraction of `yes | pv`; pv counts the input bytes X takes;
# then, with hyperfine, on each text:
#   in a pipe, `cat F | X`, beside `cat F | cat`: the reference, not a ceiling, since the binaries
#     enlarge their pipes to 1 MiB and cat does not, so a binary can beat it;
#   alone, `X < F > /dev/null`: wall time and the CPU it takes, user + system seconds per GiB of
#     input, which is what a filter takes from its neighbours in `zcat | X | grep`.
# Then the compressed section of harness/compressed.sh (its header lists what it times).
# Every output is checked identical first. Into the run's folder: pv.tsv (every pv run), hyperfine's
# JSON (throughput-TEXT-{pipe,alone}.json), data.md (how each text was made) and the tables,
# throughput.md, also printed; under each table its picture (pv.svg, throughput-TEXT-FORM.svg:
# harness/plots/bars.gnuplot, from the .dat beside it; skipped without gnuplot); and last, how long
# the run took, the build apart, also printed at the end.
#
# Needs perl, pv and hyperfine, and gnuplot for the pictures:
#   sudo apt-get install perl pv hyperfine gnuplot-nox
# Sizes follow SIZE (harness/lib.sh). A smoke run of seconds: SIZE=tiny SCRATCH=target/smoke ./throughput.sh

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

require perl "sudo apt-get install perl"
require pv "sudo apt-get install pv"

# Nothing run twice: each table's output check runs its commands once just before they are timed,
# which is their warm-up; and a command whose first run takes over a second (perl and `pipeline
# --batch 1` on the man pages) gets as many runs as fill 3 s, at least 3 (MIN_REPEAT), where five
# such runs spread 1 to 4 %.
WARMUP=0
MIN_REPEAT=${MIN_REPEAT:-$((REPEAT < 3 ? REPEAT : 3))}

# How long the build took, for the run's account of its own time (SECONDS counts from the start).
prebuilt=$BIN_DIR build_started=$SECONDS
# What this job runs, and no more: the variants' binaries, `batched` (the compressed section's
# rotated files and peak RSS), gen-logs and decode.
mapfile -t needed < <({ variants | cut -d ' ' -f 1 && printf '%s\n' batched gen-logs decode; } |
    sort -u)
build "${needed[@]}"
build_seconds=$((SECONDS - build_started))
table=$RUN_DIR/throughput.md
heading "Throughput and CPU cost" > "$table"
cat >> "$table" << 'EOF'
Every output checked identical first. F is a text file, read from the page cache. MiB/s counts
input bytes; the output is larger by its headers (11 or 12 bytes a line). `cat` is the reference,
not a ceiling: the binaries ask for 1 MiB pipes, cat keeps the default 64 KiB ones. CPU is user +
system of all the command's processes, hyperfine's mean.
EOF
{
    printf 'Medians of %s runs a command, after the output check, which is their warm-up' "$REPEAT"
    if ((MIN_REPEAT < REPEAT)); then
        printf '; where its first run took long, as many as fill 3 s, at least %s' "$MIN_REPEAT"
    fi
    echo .
} >> "$table"

labels=(cat perl) commands=(cat "$PERL_SPACES")
while read -r variant; do
    labels+=("$variant") commands+=("$(command_of "$variant")")
done < <(variants)

# check FILE: every command's output on FILE is the same (cat's is its input).
check() {
    local checks=() i
    for i in "${!labels[@]}"; do
        [[ ${labels[$i]} == cat ]] || checks+=("${commands[$i]} < $(q "$1")")
    done
    same_output "$(basename "$1")" "${checks[@]}"
}

# draw_bars NAME TITLE CPU: RUN_DIR/NAME.dat (report.py's --plot) drawn into RUN_DIR/NAME.svg by
# harness/plots/bars.gnuplot, CPU 1 adding the CPU panel; prints the markdown that shows it under
# its table. Without gnuplot, a note instead: the tables are the result, and the .dat stays.
draw_bars() {
    if ! have gnuplot; then
        say "gnuplot is not installed, so no $1.svg (sudo apt-get install gnuplot-nox)"
        return
    fi
    # In gnuplot's single quotes, '' is a quote.
    gnuplot -e "data='$RUN_DIR/$1.dat'; out='$RUN_DIR/$1.svg'; title='${2//\'/\'\'}'; cpu=$3" \
        "$HARNESS/plots/bars.gnuplot" || die "gnuplot failed on $1.svg"
    printf '\n![%s](%s.svg)\n' "$2" "$1"
}

# pv_rate CMD: runs the shell command CMD, in which `pv -a -f` is the pv, and prints pv's average
# rate as pv writes it ("811MiB/s").
pv_rate() {
    local rate
    rate=$(bash -c "$1" 2>&1 > /dev/null | tr '\r' '\n' | sed -n 's/^\[ *\(.*\)\]$/\1/p' | tail -n 1)
    [[ -n $rate ]] || die "no rate from pv in: $1"
    printf '%s\n' "$rate"
}

# The original's measure, in rounds (each command once a round) so that a change in the machine's
# load hits every command alike.
kara=$(text_file kara)
k=$(q "$kara")
check "$kara"
# yes moves four times the text's bytes, so that pv's start counts for little in its rate.
pv_labels=("yes abcdefg | pv" "pv F > /dev/null") pv_commands=(
    "{ yes abcdefg || true; } | pv -a -f -S -s $((4 * $(stat -c %s "$kara"))) > /dev/null"
    "pv -a -f $k > /dev/null"
)
for i in "${!labels[@]}"; do
    [[ ${labels[$i]} == perl ]] && continue
    pv_labels+=("${labels[$i]}") pv_commands+=("pv -a -f $k | ${commands[$i]} > /dev/null")
done
pv_runs=$RUN_DIR/pv.tsv
printf 'command\tround\trate\n' > "$pv_runs"
for ((round = 1; round <= REPEAT; round++)); do
    say "pv: round $round of $REPEAT, ${#pv_labels[@]} commands"
    for i in "${!pv_labels[@]}"; do
        printf '%s\t%s\t%s\n' "${pv_labels[$i]}" "$round" "$(pv_rate "${pv_commands[$i]}")" >> "$pv_runs"
    done
done
{
    echo
    echo "## The original's measure: \`pv F | X > /dev/null\`, F the Karamazov line ×$(wc -l < "$kara")"
    echo
    echo "pv writes F into X's pipe: its rate counts the input bytes X takes. Medians of $REPEAT rounds."
    echo
    "$REPORT" pv --reference "yes abcdefg | pv" --plot "$RUN_DIR/pv.dat" "$pv_runs"
    draw_bars pv "pv F | X > /dev/null, F the Karamazov line" 0
} >> "$table"
# First on the screen too, in the original's form.
"$REPORT" pv --original "$pv_runs"

for text in kara logs man; do
    file=$(text_file "$text")
    f=$(q "$file")
    [[ $text == kara ]] || check "$file"
    case $text in
        kara) what="the Karamazov line ×$(wc -l < "$file")" ;;
        logs) what="the big log's first $(wc -l < "$file") lines" ;;
        man) what="man page sources, $(wc -l < "$file") lines" ;;
    esac
    pipe=() alone=()
    for i in "${!labels[@]}"; do
        pipe+=("${labels[$i]}" "cat $f | ${commands[$i]}")
        alone+=("${labels[$i]}" "${commands[$i]} < $f")
    done
    for form in pipe alone; do
        case $form in
            pipe) json=$(time_commands "throughput-$text-$form" "${pipe[@]}") ;;
            alone) json=$(time_commands "throughput-$text-$form" "${alone[@]}") ;;
        esac
        {
            echo
            case $form in
                pipe) echo "## $what, in a pipe: \`cat F | X > /dev/null\`" ;;
                alone) echo "## $what, alone: \`X < F > /dev/null\`" ;;
            esac
            echo
            "$REPORT" table --bytes "$(stat -c %s "$file")" --reference cat \
                --plot "$RUN_DIR/throughput-$text-$form.dat" "$json"
            case $form in
                pipe) draw_bars "throughput-$text-$form" "$what, in a pipe: cat F | X > /dev/null" 1 ;;
                alone) draw_bars "throughput-$text-$form" "$what, alone: X < F > /dev/null" 1 ;;
            esac
        } >> "$table"
    done
done
# The compressed section (harness/compressed.sh): `zcat F.gz | X` beside `X -z F.gz`.
# shellcheck source=harness/compressed.sh
source "$HARNESS/compressed.sh"
compressed_section "$table"
{
    echo
    echo "## The texts"
    echo
    cat "$RUN_DIR/data.md"
} >> "$table"

# How long the run took, the build apart: the figure a claim of the main job's time quotes.
minutes() { if (($1 < 60)); then printf '%d s' "$1"; else printf '%d min %d s' $(($1 / 60)) $(($1 % 60)); fi; }
if [[ -n $prebuilt ]]; then
    took="$(minutes "$SECONDS") in all, with no build (BIN_DIR=$prebuilt)"
else
    took="$(minutes "$SECONDS") in all, of which $(minutes "$build_seconds") building (cargo build --profile measure)"
fi
{
    echo
    echo "## How long it took"
    echo
    echo "$took, installs and data sets included, SIZE=$SIZE, from $(date -u -d "@$((EPOCHSECONDS - SECONDS))" '+%F %H:%M UTC');"
    echo "load average at the end: $(cut -d ' ' -f 1-3 /proc/loadavg)."
} >> "$table"
cat "$table"
say "took $took"
say "wrote $table"
