#!/usr/bin/env bash
# The command behind rounds.tsv, from the repository's root. /tmp/zcat-base is the decoder crate's
# `zcat` example built at 5099001 (a stream's xz blocks on one decoder), target/measure/examples/zcat
# the same at 5b1e6ba (on liblzma's threads), both with `--profile measure`. /tmp/m64.txt is 64 MiB
# of the man pages' sources (zcat /usr/share/man/man*/*.gz, repeated, cut at a line end);
# /tmp/m64.xz is `xz -6 -T2 --block-size=16777216` of it (four blocks, their sizes recorded).
set -euo pipefail
Z=$PWD/target/measure/examples/zcat
python3 harness/rounds.py 9 rounds.tsv "base=sh -c 'cat /tmp/m64.xz | /tmp/zcat-base'" \
    "new=sh -c 'cat /tmp/m64.xz | $Z'" "xzT2=sh -c 'cat /tmp/m64.xz | xz -dc -T2'" \
    "base-file=/tmp/zcat-base /tmp/m64.xz" "new-file=$Z /tmp/m64.xz"
