#!/usr/bin/env bash
# `batched F > /dev/null` at 81bab67 (the cut-ahead merge; NEW) beside 983a58e (OLD) and
# `dd bs=1M`, both `cargo build --profile measure`: three hyperfine rounds a text, the commands'
# order turned each round; the same with `--threads 1`; context switches (perf stat, software
# events); cachegrind counts a line on 200,000 lines. DATA: man.txt and logs.txt (256 MiB each),
# man200k.txt, yes200k.txt, logs200k.txt and empty.txt.
set -euo pipefail
for round in 1 2 3; do
    for text in man logs; do
        F=$DATA/$text.txt
        commands=("dd if=$F of=/dev/null bs=1M status=none" "$OLD $F" "$NEW $F")
        ((round % 2)) || commands=("$NEW $F" "$OLD $F" "dd if=$F of=/dev/null bs=1M status=none")
        hyperfine -N --warmup 3 --runs 15 --output=null --export-json "$text-$round.json" \
            "${commands[@]}" > /dev/null 2>&1
    done
    hyperfine -N --warmup 3 --runs 15 --output=null --export-json "man-threads1-$round.json" \
        "$OLD --threads 1 $DATA/man.txt" "$NEW --threads 1 $DATA/man.txt" > /dev/null 2>&1
done
for name in OLD NEW; do
    perf stat -r 10 -e task-clock,context-switches,page-faults -x, -o "perf-$name.csv" \
        "${!name}" "$DATA/man.txt" > /dev/null
done
echo -e "binary\tinput\tIr\tBr\tBm" > cachegrind.tsv
for name in OLD NEW; do
    for input in empty man200k yes200k logs200k; do
        valgrind --tool=cachegrind --cache-sim=no --branch-sim=yes --cachegrind-out-file=cg.tmp \
            "${!name}" < "$DATA/$input.txt" > /dev/null 2>&1
        echo -e "$name\t$input\t$(grep '^summary' cg.tmp | awk '{print $2 "\t" $3 + $5 "\t" $4 + $6}')" >> cachegrind.tsv
        rm -f cg.tmp
    done
done
