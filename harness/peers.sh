#!/usr/bin/env bash
# The decoder beside its peers (issue 60): `decompressed::Reader` against the crates a Rust
# program would reach for instead, each on the files its format's real tool makes of the same
# text (the man page sources of throughput.sh, TEXT_BYTES): `gzip -6`, `bgzip -@2`, `pzstd -p2`,
# `xz -6 -T2` (blocks of a quarter of the text, four a file as a bigger file has, as
# compressed.sh cuts them), `bzip2 -9`, `lbzip2` and `lz4`. The readers are harness/peers's
# binary, `peers READER FILE [--pipe]` (its README says what each is and what each does not do):
# decompressed (2 threads; decompressed-1 on one, no thread of its own), niffler, flate2-multigz,
# noodles-bgzf and gzp (BGZF only, 2 workers),
# bzip2, zstd, liblzma and liblzma-mt (2 threads), lz4_flex; each on the formats it takes.
#
# First every reader on every file it takes, from the FILE and from a pipe (`--pipe`: a thread
# of the bench copies FILE into a pipe, so no shell is timed), its byte count against `wc -c` of
# the text and its bytes' digest against the text's: a reader that reads less or other bytes is
# reported, and not timed. Then every right (reader, format, FILE or pipe) in REPEAT shuffled
# rounds (harness/rounds.py), decoded MB/s and `decompressed` / the fastest peer on each format
# and source against the issue's bounds. Then each file damaged six ways (harness/damage.py: cut
# at a member, frame or block boundary, cut 3 bytes after it inside the header, cut mid-block, a
# bit flipped, 100 random bytes or 100 zeros appended), every reader of the format on each from
# the FILE and from a pipe, under `timeout`: error, success with less, success with all (the
# damage unseen), panic or hung.
# Writes peers.md into the run's folder, with the machine's load before and after, and prints it.
#
# Needs cargo, gzip, bgzip (tabix), zstd (pzstd), xz, bzip2, lbzip2, lz4, coreutils' timeout.
# Sizes follow SIZE (harness/lib.sh): TEXT_BYTES of text, REPEAT rounds.

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"

require cargo "https://rustup.rs (curl --proto '=https' -sSf https://sh.rustup.rs | sh)"
require gzip "sudo apt-get install gzip"
require bgzip "sudo apt-get install tabix"
require pzstd "sudo apt-get install zstd"
require xz "sudo apt-get install xz-utils"
require bzip2 "sudo apt-get install bzip2"
require lbzip2 "sudo apt-get install lbzip2"
require lz4 "sudo apt-get install lz4"
require timeout "sudo apt-get install coreutils"

# The peers are the bench's own crate, never the workspace's: built from its own manifest and lock.
say "building harness/peers (release)"
PEERS_TARGET=${CARGO_TARGET_DIR:-$ROOT/target/peers}
cargo build --quiet --profile release --locked --manifest-path "$HARNESS/peers/Cargo.toml" \
    --target-dir "$PEERS_TARGET"
peers=$PEERS_TARGET/release/peers
mkdir -p "$WORK"
RUN_DIR=${RUN_DIR:-$(new_run_dir)}
MACHINE_FILE=$RUN_DIR/$(basename "$0" .sh).machine.txt
describe_machine > "$MACHINE_FILE"
say "SIZE=$SIZE, $REPEAT rounds; this run's folder: ${RUN_DIR#"$ROOT"/}"
load_before=$(uptime)

text=$(text_file man)
bytes=$(wc -c < "$text")
# Each format: its file's extension, the command that makes it (xz's blocks rounded up, so that a
# last byte is not a fifth block), damage.py's name for its framing, and the readers that take it.
FORMATS=(gzip bgzf pzstd xz bzip2 lbzip2 lz4)
declare -A EXTENSION=([gzip]=gz [bgzf]=bgz.gz [pzstd]=zst [xz]=xz [bzip2]=bz2 [lbzip2]=lbz2.bz2
    [lz4]=lz4)
declare -A COMPRESSOR=([gzip]="gzip -6 -n -c" [bgzf]="bgzip -@2 -c" [pzstd]="pzstd -3 -p 2 -q -c"
    [xz]="xz -6 -T2 --block-size=$(((bytes + 3) / 4)) -c" [bzip2]="bzip2 -9 -c" [lbzip2]="lbzip2 -9 -n 2 -c"
    [lz4]="lz4 -q -c")
declare -A FRAMING=([gzip]=gzip [bgzf]=bgzf [pzstd]=pzstd [xz]=xz [bzip2]=bzip2 [lbzip2]=bzip2 [lz4]=lz4)
declare -A READERS=([gzip]="decompressed decompressed-1 niffler flate2-multigz"
    [bgzf]="decompressed decompressed-1 niffler flate2-multigz noodles-bgzf gzp"
    [pzstd]="decompressed decompressed-1 niffler zstd"
    [xz]="decompressed decompressed-1 niffler liblzma liblzma-mt"
    [bzip2]="decompressed decompressed-1 niffler bzip2"
    [lbzip2]="decompressed decompressed-1 niffler bzip2" [lz4]="decompressed decompressed-1 lz4_flex")
# A damaged file that takes longer than this is a hang: the slowest reader (bzip2 on one thread,
# 20-40 MB/s here, loaded or not) reads the whole text in under a tenth of it.
HANG_SECONDS=$(by_size 10 60 120)

# compressed FORMAT: the text compressed as FORMAT, made once for each command (FILE.params
# keeps the one that made it, so that a changed COMPRESSOR makes it anew); its path.
compressed() {
    local file=$text.${EXTENSION[$1]}
    if [[ ! -f $file || "$(cat "$file.params" 2> /dev/null)" != "${COMPRESSOR[$1]}" ]]; then
        say "compressing $(basename "$text") with ${COMPRESSOR[$1]}"
        ${COMPRESSOR[$1]} "$text" > "$file.tmp"
        mv "$file.tmp" "$file"
        printf '%s\n' "${COMPRESSOR[$1]}" > "$file.params"
    fi
    printf '%s\n' "$file"
}

# outcome READER FILE [--pipe]: READER's run on FILE under timeout, a TSV's last fields: its exit
# status, its stdout (count and digest), its stderr's first line.
outcome() {
    local out status=0 err=$WORK/peers.stderr
    out=$(timeout "$HANG_SECONDS" "$peers" "$1" "$2" --digest "${@:3}" 2> "$err") || status=$?
    printf '%s\t%s\t%s\n' "$status" "$out" "$(head -n 1 "$err" | tr '\t' ' ')"
}

# The text's own digest: decompressed passes a plain file through as it is.
plain=$("$peers" decompressed "$text" --digest)
[[ ${plain%% *} == "$bytes" ]] || die "peers decompressed read $plain of the plain text, not $bytes bytes"

check=$RUN_DIR/peers-check.tsv rounds=$RUN_DIR/peers-rounds.tsv damaged=$RUN_DIR/peers-damaged.tsv
printf 'format\treader\tmode\texit\tout\tmessage\n' > "$check"
timed=()
for format in "${FORMATS[@]}"; do
    file=$(compressed "$format")
    note_data "$file" "\`${COMPRESSOR[$format]}\` of $(basename "$text")"
    for reader in ${READERS[$format]}; do
        right=1
        for mode in file pipe; do
            pipe=()
            [[ $mode == file ]] || pipe=(--pipe)
            result=$(outcome "$reader" "$file" "${pipe[@]}")
            printf '%s\t%s\t%s\t%s\n' "$format" "$reader" "$mode" "$result" >> "$check"
            if [[ $result != "0"$'\t'"$plain"$'\t'* ]]; then
                right=0
                say "FINDING: $reader on $(basename "$file") ($mode): $result"
            fi
        done
        ((right)) || continue
        timed+=("$format/$reader/file=$(q "$peers") $reader $(q "$file")"
            "$format/$reader/pipe=$(q "$peers") $reader $(q "$file") --pipe")
    done
done

say "timing: ${#timed[@]} commands, $REPEAT shuffled rounds"
load_rounds=$(uptime)
python3 "$HARNESS/rounds.py" "$REPEAT" "$rounds" "${timed[@]}"
load_after_rounds=$(uptime)

say "damaged files: every reader on each, from the FILE and a pipe"
printf 'format\tdamage\treader\tmode\texit\tout\tmessage\n' > "$damaged"
damages=$RUN_DIR/peers-damages.md
{
    echo "| format | damage | what was done |"
    echo "| --- | --- | --- |"
} > "$damages"
for format in "${FORMATS[@]}"; do
    file=$(compressed "$format")
    while IFS=$'\t' read -r damage path what; do
        echo "| $format | $damage | $what |" >> "$damages"
        [[ $path != - ]] || continue
        for reader in ${READERS[$format]}; do
            for mode in file pipe; do
                pipe=()
                [[ $mode == file ]] || pipe=(--pipe)
                printf '%s\t%s\t%s\t%s\t%s\n' "$format" "$damage" "$reader" "$mode" \
                    "$(outcome "$reader" "$path" "${pipe[@]}")" >> "$damaged"
            done
        done
    done < <(python3 "$HARNESS/damage.py" "${FRAMING[$format]}" "$file" "$WORK/peers-damaged")
done
load_after=$(uptime)

table=$RUN_DIR/peers.md
{
    heading "The decoder beside its peers"
    echo
    echo "The text: $(basename "$text"), $bytes bytes (data.md says how it was made), compressed by each" \
        "format's tool (data.md: the files' sizes). Readers: harness/peers/README.md. The machine's load" \
        "(\`uptime\`): before the checks \`${load_before#*load average: }\`, before the rounds" \
        "\`${load_rounds#*load average: }\`, after them \`${load_after_rounds#*load average: }\`," \
        "after the damaged files \`${load_after#*load average: }\`."
    echo
    "$REPORT" peers --bytes "$bytes" --plain "$plain" "$check" "$rounds" "$damaged"
    echo
    echo "## How each file was damaged"
    echo
    echo "harness/damage.py; a unit is a BGZF member, a pzstd frame (with its skippable frame), an xz" \
        "block, a bzip2 block (which begins at a bit: the cut keeps the byte its magic begins in) or" \
        "an LZ4 block. 100 zero bytes after an xz stream are stream padding, which the format allows" \
        "(a multiple of four bytes): reading them as success is right there."
    echo
    cat "$damages"
} > "$table"
cat "$table"
say "wrote $table"
