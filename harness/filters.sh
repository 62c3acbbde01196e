#!/usr/bin/env bash
# Filters of one's own beside the tools they do as (docs/CONTRACT.md §13): examples/grep.rs
# against `grep -F PATTERN` and examples/redact.rs against `sed -E 's/PATTERN/WITH/g'`, on the man
# page sources of throughput.sh (TEXT_BYTES), each reading F as a FILE. grep with a PATTERN that no
# line holds, one that some lines hold, and the empty PATTERN, which every line holds; redact on a
# word of many lines. The examples run at their defaults (batched, a thread a core) against the
# single-threaded tools, in the C locale. No target: the figures are told. Every output is checked
# identical to the tool's first; each command's output goes through a pipe (hyperfine's --output
# pipe), as GNU grep stops at its first match when its output is /dev/null. Writes filters.md into
# the run's folder and prints it.
#
# Needs hyperfine, grep and sed. Sizes follow SIZE (harness/lib.sh).

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

build example:grep example:redact
for example in grep redact; do
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
cat "$table"
say "wrote $table"
