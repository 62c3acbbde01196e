#!/usr/bin/env bash
# hyperfine rounds of the -z targets (bash for every command, so pipes and plain commands pay the same shell)
# NEW: target/measure of a0cc207 (the -z code of this commit); OLD: target/measure of 93225b4 (main before);
# DATA: logs.txt (gen-logs --seed 1, 256 MiB) and man.txt (zcat of /usr/share/man/man*/*.gz in C order,
# repeated to 256 MiB), each with .gz (gzip -6) and .zst (zstd -3).
set -u
N=$NEW; O=$OLD; D=$DATA; OUT=${OUT:-.}
for r in 1 2 3; do
 for f in logs man; do
  F=$D/$f.txt
  hyperfine -S bash -w 1 -r 5 --output=null --export-json $OUT/hf-$f-$r.json \
   -n new_batched_z_gz "$N/batched -z $F.gz" -n zcat_batched "zcat $F.gz | $N/batched" \
   -n pigz_batched "pigz -dc $F.gz | $N/batched" -n decode_gz "$N/decode $F.gz" \
   -n new_std_z_gz "$N/std-baseline -z $F.gz" -n new_batched_z_zst "$N/batched -z $F.zst" \
   -n zstd_batched "zstd -dc $F.zst | $N/batched" -n decode_zst "$N/decode $F.zst" \
   -n old_batched_z_gz "$O/batched -z $F.gz" -n old_batched_z_zst "$O/batched -z $F.zst" \
   -n old_std_z_gz "$O/std-baseline -z $F.gz" > /dev/null
 done
done
