#!/usr/bin/env bash
# Round four's measurements (docs/KERNEL.md): the window walk (git tag experiment/window-walk, 983a58e
# with the walk applied, built with `cargo build --profile measure`) beside 983a58e's block walk,
# both `batched`:
#  - cachegrind counts a line (AVX2 path; whole process less an empty run; 200,000 lines);
#  - CPU time of `batched --threads 1 F` on 256 MiB of man pages, logs and `yes abcdefg`, three
#    hyperfine rounds alternating the order;
#  - interleave (the window step alone over 1, 2 and 4 parts of each chunk at once, beside the
#    block walk; AVX-512): git tag experiment/window-interleave, experiments/interleave.
# OLD, NEW: the two binaries; DATA: a folder with man.txt, logs.txt, yes.txt and their 200k-line
# heads man200k.txt, logs200k.txt, yes200k.txt, and empty.txt; INTERLEAVE: interleave built.
set -euo pipefail
cg() {
    valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=cg.tmp \
        "$1" < "$2" > /dev/null 2>/dev/null
    grep '^summary' cg.tmp | awk '{print $2, $3 + $5, $4 + $6}'
    rm -f cg.tmp
}
echo -e "binary\tinput\tIr\tBr\tBm" > cachegrind.tsv
for name in OLD NEW; do
    bin=${!name}
    for input in empty man200k yes200k logs200k; do
        echo -e "$name\t$input\t$(cg "$bin" "$DATA/$input.txt" | tr ' ' '\t')" >> cachegrind.tsv
    done
done
for round in 1 2 3; do
    for input in man logs yes; do
        if ((round % 2)); then a=$OLD b=$NEW; else a=$NEW b=$OLD; fi
        hyperfine -N --warmup 2 --runs 10 --output=null --export-json "t1-$input-$round.json" \
            "$a --threads 1 $DATA/$input.txt" "$b --threads 1 $DATA/$input.txt" > /dev/null
    done
done
for input in man logs yes; do
    echo "# $input" >> interleave.tsv
    "$INTERLEAVE" "$DATA/$input.txt" >> interleave.tsv
done
