#!/usr/bin/env bash
# The main job: how fast does each binary move lines, and at what CPU cost? Every variant of
# harness/variants and the perl one-liner, on the original experiment's input (the Karamazov line,
# YES_LINES times) and on the big log, two ways:
#   in a pipe, `cat F | X`, beside `cat F | cat`: the reference, not a ceiling, since the binaries
#     enlarge their pipes to 1 MiB and cat does not, so a binary can beat it;
#   alone, `X < F > /dev/null`: wall time and the CPU it takes, user + system seconds per GiB of
#     input, which is what a filter takes from its neighbours in `zcat | X | grep`.
# Every output is checked identical first. hyperfine's JSON goes to the run's folder
# (results/runs/DATE-MACHINE/throughput-INPUT-{pipe,alone}.json), the tables to throughput.md
# there and to stdout.
#
# Needs perl and hyperfine: sudo apt-get install perl hyperfine
#
# Environment (all optional; more in harness/lib.sh):
#   YES_LINES  lines of the Karamazov input (default 1000000)
#   BIG_LINES  lines of resources/stable_big.log.gz, made when missing (default 10000000)
# Example, a quick smoke run: YES_LINES=20000 BIG_LINES=20000 REPEAT=1 ./throughput.sh

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

YES_LINES=${YES_LINES:-1000000}
require perl "sudo apt-get install perl"

build
table=$RUN_DIR/throughput.md
{
    echo "# Throughput and CPU cost"
    echo
    echo "Machine: $(cat "$MACHINE_FILE")."
    echo "Made by \`throughput.sh\`: hyperfine, $WARMUP warm-up and $REPEAT runs a command; every output"
    echo "checked identical first. MiB/s counts input bytes. \`cat\` is the reference, not a ceiling:"
    echo "the binaries ask for 1 MiB pipes, cat keeps the default 64 KiB ones. CPU is user + system"
    echo "of all the command's processes, hyperfine's mean."
} > "$table"

for input in kara logs; do
    case $input in
        kara) file=$(karamazov_file "$YES_LINES") what="Karamazov line ×$YES_LINES" ;;
        logs) file=$(log_plain big) what="stable_big.log ($BIG_LINES lines)" ;;
    esac
    f=$(q "$file")
    bytes=$(stat -c %s "$file")
    labels=(cat perl) commands=(cat "$PERL_SPACES")
    while read -r variant; do
        labels+=("$variant") commands+=("$(command_of "$variant")")
    done < <(variants)

    checks=() pipe=() alone=()
    for i in "${!labels[@]}"; do
        [[ ${labels[$i]} == cat ]] || checks+=("${commands[$i]} < $f")
        pipe+=("${labels[$i]}" "cat $f | ${commands[$i]}")
        alone+=("${labels[$i]}" "${commands[$i]} < $f")
    done
    same_output "$input" "${checks[@]}"
    for form in pipe alone; do
        case $form in
            pipe) set -- "${pipe[@]}" ;;
            alone) set -- "${alone[@]}" ;;
        esac
        json=$(time_commands "throughput-$input-$form" "$@")
        {
            echo
            case $form in
                pipe) echo "## $what, in a pipe: \`cat F | X > /dev/null\`" ;;
                alone) echo "## $what, alone: \`X < F > /dev/null\`" ;;
            esac
            echo
            "$REPORT" table --bytes "$bytes" --reference cat "$json"
        } >> "$table"
    done
done
cat "$table"
say "wrote $table"
