#!/usr/bin/env bash
# The original experiment's main job: every binary's throughput, in a pipe beside cat and alone
# with its CPU cost, outputs checked identical. The work is harness/throughput.sh's (its header
# lists the settings); this entry point keeps the original's name.
set -euo pipefail
exec "$(dirname "$0")/harness/throughput.sh" "$@"
