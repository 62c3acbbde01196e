#!/usr/bin/env bash
# Filters of one's own beside the tools they do as (docs/CONTRACT.md §13): examples/grep.rs
# against `grep -F PATTERN` and examples/redact.rs against `sed -E 's/PATTERN/WITH/g'`, on the man
# page sources of throughput.sh (TEXT_BYTES), each reading F as a FILE. grep with a PATTERN that no
# line holds, one that some lines hold, and the empty PATTERN, which every line holds; redact on a
# word of many lines. The examples run at their defaults (batched, a thread a core) against the
# single-threaded tools, in the C locale. No target: the figures are told. Every output is checked
# identical to the tool's first; each command's output goes through a pipe (hyperfine's --output
# pipe), as GNU grep stops at its first match when its output is /dev/null.
#
# Then the tallies (docs/CONTRACT.md §13.4) on the main job's logs (TEXT_BYTES of gen-logs's
# common log format), beside what users run today: examples/count-by.rs by the status (field 9,
# 14 keys) and by the address (field 1, about a key a line, the merge's worst case) against mawk,
# gawk, `mawk '{print $N}' | sort | uniq -c` and frawk's parallel mode on 2 workers (where `frawk` is on PATH or FRAWK names it; its build is in docs/HARNESS.md); from a
# `.gz` against `igzip -dc F.gz | mawk ...`, `zcat F.gz | mawk ...` and `igzip -dc F.gz` alone;
# examples/wc.rs against `wc`; each output checked identical first (sorted, where the tool's order
# is its hash's). They run in REPEAT shuffled rounds (harness/rounds.py), the pipelines through
# `bash -o pipefail -c` (a stage that fails stops the script), and report.py's TARGETS say met or
# not; then the peak RSS of `count-by 1` beside mawk's. `datamash -W -s -g N count N` is not among them: gen-logs writes some short lines, as
# real logs have, and datamash stops at the first ("invalid input: field 9 requested, line 2 has
# only 1 fields"), `--no-strict` or not; nor `cut -d ' ' -f N | sort | uniq -c`, which splits at
# every single blank and so counts those lines, and those with leading blanks, under other keys
# than awk does. Writes filters.md into the run's folder and prints it.
#
# Needs hyperfine, grep, sed, mawk, gawk, igzip and GNU time. Sizes follow SIZE
# (harness/lib.sh).

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

require mawk "sudo apt-get install mawk"
require gawk "sudo apt-get install gawk"
require igzip "sudo apt-get install isal"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (for peak memory) is not installed; install it with: sudo apt-get install time"
build example:grep example:redact example:count-by example:wc
for example in grep redact count-by wc; do
    [[ -x $BIN_DIR/examples/$example ]] || die "no examples/$example in $BIN_DIR"
done
grep=$(q "$BIN_DIR/examples/grep") redact=$(q "$BIN_DIR/examples/redact")
file=$(text_file man)
f=$(q "$file")
export LC_ALL=C
table=$RUN_DIR/filters.md
heading "Filters of one's own beside the tools they do as" > "$table"
echo "Medians of $REPEAT runs a command, after the output check. F: man page sources, $(wc -l < "$file") lines." >> "$table"

# label CMD: CMD as a table names it: F for the text, the example by its name, no exit status test.
label() {
    local label=${1//"$f"/F}
    label=${label//"$(q "$BIN_DIR/examples")"\//examples/}
    printf '%s\n' "${label% || *}"
}

# compare NAME WHAT TOOL EXAMPLE: the shell commands TOOL and EXAMPLE checked identical, then timed,
# into a table headed WHAT, TOOL the reference.
compare() {
    local json tool example
    tool=$(label "$3") example=$(label "$4")
    same_output "$1" "$3" "$4"
    json=$(TIMED_OUTPUT=pipe time_commands "filters-$1" "$tool" "$3" "$example" "$4")
    {
        echo
        echo "## $2"
        echo
        "$REPORT" table --bytes "$(stat -c %s "$file")" --reference "$tool" "$json"
    } >> "$table"
}
# grep's status where nothing matched is 1, as the example's, and no failure here.
none='|| [ $? = 1 ]'
compare grep-none "A PATTERN no line holds" "grep -F zqxjkvw $f $none" "$grep zqxjkvw $f $none"
compare grep-some "A PATTERN some lines hold (\`printf\`)" "grep -F printf $f" "$grep printf $f"
compare grep-every "The empty PATTERN, which every line holds" "grep -F '' $f" "$grep '' $f"
compare redact "A word of many lines replaced (\`the\`)" "sed -E 's/the/[redacted]/g' $f" \
    "$redact the $f"

# The tallies. TALLY KEY: a shell command's output with its lines in one order, for the check.
logs=$(text_file logs)
l=$(q "$logs") gz=$(q "$WORK/logs-$TEXT_BYTES.txt.gz")
[[ -f $WORK/logs-$TEXT_BYTES.txt.gz ]] || gzip -6 -n -c "$logs" > "$WORK/logs-$TEXT_BYTES.txt.gz"
count_by=$(q "$BIN_DIR/examples/count-by") wc_example=$(q "$BIN_DIR/examples/wc")
frawk=${FRAWK:-$(command -v frawk || true)}
sorted='| sort'
tallies=()
for field in 9 1; do
    awk_program="'{c[\$$field]++} END {for (k in c) print c[k], k;}'"
    same_output "count-by $field" "$count_by $field $l $sorted" "mawk $awk_program $l $sorted" \
        "gawk $awk_program $l $sorted" \
        "mawk '{print \$$field}' $l | sort | uniq -c | sed 's/^ *//' $sorted" \
        ${frawk:+"$(q "$frawk") -pr -j2 $awk_program $l $sorted"}
    tallies+=("count-by-$field=$count_by $field $l" "mawk-$field=mawk $awk_program $l"
        "gawk-$field=gawk $awk_program $l"
        "sort-uniq-$field=bash -o pipefail -c \"mawk '{print \$$field}' $l | sort | uniq -c\"")
    [[ -z $frawk ]] || tallies+=("frawk-$field=$(q "$frawk") -pr -j2 $awk_program $l")
done
[[ -n $frawk ]] || say "frawk is not on PATH (nor FRAWK set): its row is not measured (docs/HARNESS.md builds it)"
awk_program="'{c[\$9]++} END {for (k in c) print c[k], k;}'"
same_output "count-by -z 9" "$count_by -z 9 $gz $sorted" "igzip -dc $gz | mawk $awk_program $sorted"
same_output "wc" "$wc_example $l" "wc < $l | awk '{printf \"%7d %7d %7d\\n\", \$1, \$2, \$3}'"
tallies+=("count-by-z-9=$count_by -z 9 $gz" "igzip-mawk-9=bash -o pipefail -c \"igzip -dc $gz | mawk $awk_program\""
    "zcat-mawk-9=bash -o pipefail -c \"zcat $gz | mawk $awk_program\"" "igzip=igzip -dc $gz"
    "wc-example=$wc_example $l" "wc=wc $l")
say "tallies: $REPEAT shuffled rounds"
python3 "$HARNESS/rounds.py" "$REPEAT" "$RUN_DIR/filters-tallies.tsv" "${tallies[@]}"
peak() { bash -c "/usr/bin/time -f %M $1 2>&1 > /dev/null" | tail -n 1; }
mawk_kib=$(peak "mawk '{c[\$1]++} END {for (k in c) print c[k], k}' $l")
count_by_kib=$(peak "$count_by 1 $l")
{
    echo
    echo "## Tallies on the logs"
    echo
    echo "F: $(wc -l < "$logs") lines of \`gen-logs\`'s common log format; F.gz its \`gzip -6\`. Medians of $REPEAT shuffled rounds."
    [[ -n $frawk ]] || echo "frawk is not on PATH: not measured."
    echo
    "$REPORT" targets --shuffled tallies "$RUN_DIR/filters-tallies.tsv"
    echo
    echo "Peak RSS of \`count-by 1 F\`: $((count_by_kib / 1024)) MiB; of mawk's: $((mawk_kib / 1024)) MiB;" \
        "ratio $(python3 -c "print(f'{$count_by_kib / $mawk_kib:.2f}')") (target ≤ 1.5)."
} >> "$table"
cat "$table"
say "wrote $table"
