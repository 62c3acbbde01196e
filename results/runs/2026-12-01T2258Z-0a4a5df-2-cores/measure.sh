#!/usr/bin/env bash
# What removing the short slices and a lone decoder's core cost: `batched -z F.gz` before (main at
# 7786112) and after (this run's commit) against `igzip -dc F.gz`, all three in the same shuffled
# rounds (harness/rounds.py), F.gz the harness's full-size compressed texts (the first 64 MiB of
# the logs and of the man pages, `gzip -6`, as harness/targets.sh makes them). RUNS runs of
# ROUNDS rounds on each text, numbered from FIRST; z-TEXT-RUN.tsv a line a run; with BUSY=1, beside a busy loop of
# another process (`python3 -c "while True: pass"`, unpinned), z-TEXT-busy-RUN.tsv. With
# FORMAT=pzstd, F.pzst (`pzstd -3 -p 2`, its frames on the pool's two decoders, where the short
# slices were asked for) against `zstd -dc F.pzst`, z-TEXT-pzstd-RUN.tsv. medians.tsv each run's
# medians and ratios to the tool, which this script prints too.
#
# From the repository's root, after `cargo build --profile measure --workspace --bins` (after,
# and gen-logs) and with BEFORE naming `batched` built the same way from `git archive 7786112`:
#   BEFORE=/tmp/batched-7786112 OUT=results/runs/THIS-RUN nice -n 10 bash OUT/measure.sh
set -euo pipefail
: "${BEFORE:?the batched of 7786112}" "${OUT:?the folder of the run}"
RUNS=${RUNS:-3} ROUNDS=${ROUNDS:-20} FIRST=${FIRST:-1}
BIN_DIR=$PWD/target/measure RUN_DIR=$OUT
# shellcheck source=harness/lib.sh
source harness/lib.sh
# shellcheck source=harness/compressed.sh
source "$HARNESS/compressed.sh"
mkdir -p "$WORK"
describe_machine > "$OUT/measure.machine.txt"
format=${FORMAT:-gzip}
declare -A TOOL=([gzip]="igzip -dc" [pzstd]="zstd -dc -q")
kind=${format/#gzip/}
beside=${kind:+-$kind}
if [[ ${BUSY:-} == 1 ]]; then
    beside+=-busy
    python3 -c "while True: pass" &
    busy=$!
    trap 'kill "$busy"' EXIT
fi
for text in logs man; do
    file=$(text_file "$text" "$COMPRESSED_BYTES")
    gz=$(compressed_of "$file" "$format")
    cmp <("$BEFORE" -z "$gz") <("$BIN_DIR/batched" -z "$gz")
    for ((run = FIRST; run < FIRST + RUNS; run++)); do
        say "$text$beside: run $run, load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
        python3 "$HARNESS/rounds.py" "$ROUNDS" "$OUT/z-$text$beside-$run.tsv" \
            "before=$BEFORE -z $gz" "after=$BIN_DIR/batched -z $gz" "${TOOL[$format]%% *}=${TOOL[$format]} $gz"
    done
done
python3 - "$OUT" <<'PY' | tee "$OUT/medians.tsv"
import csv, glob, os, statistics, sys
print("text\trun\tbefore_ms\tafter_ms\ttool_ms\tbefore/tool\tafter/tool\tafter/before")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "z-*.tsv"))):
    text, run = os.path.basename(path)[2:-4].rsplit("-", 1)
    walls = {}
    for row in csv.DictReader(open(path), delimiter="\t"):
        walls.setdefault(row["name"], []).append(float(row["wall_s"]))
    m = {name: statistics.median(times) * 1000 for name, times in walls.items()}
    (m["tool"],) = (m[name] for name in m if name not in ("before", "after"))
    print(f"{text}\t{run}\t{m['before']:.1f}\t{m['after']:.1f}\t{m['tool']:.1f}\t"
          f"{m['before'] / m['tool']:.3f}\t{m['after'] / m['tool']:.3f}\t{m['after'] / m['before']:.3f}")
PY
