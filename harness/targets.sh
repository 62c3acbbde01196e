#!/usr/bin/env bash
# The performance targets, measured side by side in one run, on the three texts of throughput.sh
# (TEXT_BYTES each: the Karamazov line, the big log, man page sources of short lines): `batched F`
# against the cat chain, the `dd` read floor and the perl one-liner a user would write instead;
# `std-baseline F` against perl; on short lines also batched's CPU against cat's, and batched's pipe
# against a cat chain moving as many bytes as its output; `batched`'s peak memory while streaming
# (2 GiB at full size). Writes targets.md (each target, the medians behind it, met or not, and every
# command's wall, user and system time) into the run's folder and prints it. The targets themselves
# are report.py's TARGETS.
#
# Each target is a ratio of two commands' figures, so the commands run in interleaved rounds: one
# hyperfine call a round times each command once (targets-TEXT-roundK.json), and the medians are
# taken over the rounds. hyperfine's own order, all runs of one command and then all of the next,
# would let a change in the shared machine's load between the two commands bias the ratio;
# interleaved, a drift hits both alike. The per-round files also keep every run's user and
# system time, which hyperfine's JSON otherwise gives as means only.
#
# `batched -z F.gz` against `igzip -dc F.gz` (ISA-L's own tool, which `-z` decodes gzip with),
# each alone to /dev/null, F.gz the gzip file of throughput.sh's compressed section (the first
# quarter of the logs and of the man pages, `gzip -6`): rounds.py's shuffled rounds, without a
# shell, Z_ROUNDS of them (targets-z-TEXT.tsv), for a ratio near 1.1 of runs of 20-40 ms, where a
# shell's start would be a twentieth of each and the spread between runs is a few percent.
#
# Needs perl, hyperfine, GNU time, gzip and igzip: sudo apt-get install perl hyperfine time gzip isal
# Sizes follow SIZE (harness/lib.sh); REPEAT is the number of rounds.

# shellcheck source=harness/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=harness/compressed.sh
source "$HARNESS/compressed.sh"

STREAM_MIB=$(by_size 64 512 2048)
Z_ROUNDS=$(by_size 3 10 30)
require perl "sudo apt-get install perl"
require igzip "sudo apt-get install isal"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (for peak memory) is not installed; install it with: sudo apt-get install time"

build
batched=$(command_of "$(variant_of batched)")
std_baseline=$(command_of "$(variant_of std-baseline)")

rounds=()
for text in kara logs man; do
    file=$(text_file "$text")
    f=$(q "$file")
    same_output "$text" "$batched $f" "$std_baseline $f" "$PERL_SPACES < $f"
    # A file as long as batched's output: the bytes its pipe moves, for the cat chain to move too.
    output=$WORK/targets-output.txt
    bash -c "$batched $f" > "$output"
    o=$(q "$output")
    files=()
    for ((round = 1; round <= REPEAT; round++)); do
        say "$text: round $round of $REPEAT"
        files+=("$(REPEAT=1 WARMUP=0 time_commands "targets-$text-round$round" \
            cat-chain "cat $f | cat | cat" \
            output-chain "cat $o | cat | cat" \
            batched-chain "cat $f | $batched | cat" \
            batched "$batched $f" \
            std-baseline "$std_baseline $f" \
            perl "$PERL_SPACES < $f" \
            dd "dd if=$f of=/dev/null bs=1M status=none" \
            cat "cat $f")")
    done
    rounds+=(--rounds "$text" "${files[@]}")
    rm -f "$output"
done

for text in logs man; do
    file=$(text_file "$text" "$COMPRESSED_BYTES")
    f=$(q "$file") gz=$(q "$(compressed_of "$file" gzip)")
    same_output "$text -z" "$batched -z $gz" "$batched $f"
    say "$text: $Z_ROUNDS shuffled rounds of batched -z and igzip -dc"
    python3 "$HARNESS/rounds.py" "$Z_ROUNDS" "$RUN_DIR/targets-z-$text.tsv" \
        "batched-z=$batched -z $gz" "igzip=igzip -dc $gz"
    rounds+=(--shuffled "$text" "$RUN_DIR/targets-z-$text.tsv")
done

say "peak memory: $STREAM_MIB MiB through batched"
peak_kib=$({ { yes "$KARAMAZOV" || true; } | head -c $((STREAM_MIB << 20)) |
    bash -c "/usr/bin/time -f '%M' $batched 2>&1 > /dev/null"; } | tail -n 1)

table=$RUN_DIR/targets.md
{
    heading "The performance targets"
    echo "Medians of $REPEAT interleaved rounds ($Z_ROUNDS shuffled ones for \`-z\`), F a text of $TEXT_BYTES bytes (data.md says which)."
    echo
    "$REPORT" targets --peak "$peak_kib" "$STREAM_MIB" "${rounds[@]}"
} > "$table"
cat "$table"
say "wrote $table"
