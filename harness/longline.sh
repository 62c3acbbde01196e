#!/usr/bin/env bash
# Lines of any length, in time too (docs/CONTRACT.md §2.1): one line of SIZE zero bytes and no
# `\n` through every variant of harness/variants, beside cat. Through a pipe,
# `head -c N /dev/zero | X > /dev/null`, where the line arrives a pipe's worth a read and a
# framer that moved the whole line on every read would cost N² (streamer and pipeline did, taking
# 2.8 s at 160 MB and over a minute at 1 GB); and read from a file, `X < F > /dev/null`. Timed with
# hyperfine through bash (a pipe needs a shell, so not -N: bash's start is noise at these sizes);
# medians of REPEAT runs, and CPU seconds. Writes longline.md (the table) and longline-N.json (hyperfine's) into the
# run's folder, and prints the table on stdout.
#
# Sizes follow SIZE (harness/lib.sh): the line lengths (160M and 1G at full size; each binary holds
# about twice the line, so a full run needs 2 GiB free).

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

LENGTHS=$(by_size "1M 16M" "16M 160M" "160M 1G")

build
mapfile -t rows < <(variants)
table=$RUN_DIR/longline.md
{
    heading "One long line: time against its length"
    echo "One line of N zero bytes, no \`\\n\`: in a pipe from \`head -c N /dev/zero\`, and read"
    echo "from a file of it. Each cell: median wall seconds of $REPEAT runs (hyperfine through bash),"
    echo "then the mean CPU seconds (user + system, every process of the pipe), which a loaded"
    echo "machine moves less."
    echo
    printf '| command |'
    for length in $LENGTHS; do printf ' pipe %s | file %s |' "$length" "$length"; done
    printf '\n| --- |'
    for _ in $LENGTHS; do printf ' ---: | ---: |'; done
    echo
} > "$table"

declare -A cells
for length in $LENGTHS; do
    line=$WORK/longline-$length.bin
    [[ -f $line ]] || head -c "$length" /dev/zero > "$line"
    commands=()
    for variant in cat "${rows[@]}"; do
        if [[ $variant == cat ]]; then command=cat; else command=$(command_of "$variant"); fi
        commands+=("pipe $length $variant" "head -c $length /dev/zero | $command > /dev/null"
            "file $length $variant" "$command < $(q "$line") > /dev/null")
    done
    json=$(time_commands "longline-$length" "${commands[@]}")
    while IFS=$'\t' read -r name median cpu; do
        cells[$name]=$(printf '%.2f / %.2f' "$median" "$cpu")
    done < <(jq -r '.results[] | [.command, .median, .user + .system] | @tsv' "$json")
    rm -f "$line"
done

for variant in cat "${rows[@]}"; do
    printf '| `%s` |' "$variant"
    for length in $LENGTHS; do
        printf ' %s | %s |' "${cells["pipe $length $variant"]}" "${cells["file $length $variant"]}"
    done
    echo
done >> "$table"
cat "$table"
say "wrote longline.md in $RUN_DIR"
