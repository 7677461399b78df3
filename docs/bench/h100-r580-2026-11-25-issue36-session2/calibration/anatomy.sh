#!/bin/bash
# Where a run's time goes on a GPU machine (issue 36 calibration): context creation with N
# processes at once, one default run, and a subset of mutants with each run's report kept.
# Usage: anatomy.sh [MUTANT_FILTER...]   Results in $OUT/anatomy.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
OUT=${OUT:-/tmp/anatomy}; D=$OUT/anatomy; mkdir -p "$D"
python3 "$here/ctxbench.py" 1 1 2 4 8 2>&1 | tee "$D/ctx.txt"
CONFORMANCE_REQUIRE=gpu,ipc CONFORMANCE_REPORT_DIR=$D/default timeout 300 "$root/.gpu/bin/conformance" --test-threads 4 > "$D/default.log" 2>&1
echo "default rc=$?"; tail -3 "$D/default.log"
s=$(date +%s)
CONFORMANCE_MUTANTS_KEEP=1 MUTANTS_OUT=$D MUTANTS_TIMEOUT=200 bash "$root/.ci/gpu/mutants.sh" "$@" > "$D/mutants.out" 2>&1
echo "mutants $(( $(date +%s) - s )) s"; tail -5 "$D/mutants.out"
tar -C "$OUT" -czf "$OUT/anatomy.tgz" anatomy
