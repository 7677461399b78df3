#!/bin/bash
# Issue 48, second step, on one GPU: check.sh (RUNS default runs, each new mutant under the suite
# before and after), then the 14 no-device trials under lookup-initialises (why it fails 820-822
# there), then the whole mutation library through the runner. -> $OUT/NAME.tgz, $OUT/NAME-lib.tgz
#   Usage: check2.sh NAME [RUNS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
NAME=${1:?name}; RUNS=${2:-5}
OUT=${OUT:-/tmp/issue48}; export OUT
MUTANTS="820-graph-node-reserves-anew 832-reuse-flag-kept-as-set" bash "$here/check.sh" "$NAME" "$RUNS"
L=$OUT/$NAME-lib; mkdir -p "$L/lookup"
env CONFORMANCE_REPORT_DIR="$L/lookup" LD_PRELOAD="$root/.gpu/libmisbehave.so" CONFORMANCE_MUTANT=lookup-initialises \
  timeout 120 "$root/.gpu/bin/conformance" after_cuInit_no_device --nocapture > "$L/lookup/log" 2>&1
echo "lookup-initialises, no-device trials: rc=$? $(grep -a '^test result' "$L/lookup/log")"
grep -a "^FAILED" "$L/lookup/log" | cut -c1-400
mkdir -p "$L/library"
s=$(date +%s)
CONFORMANCE_MUTANTS_HINT=$root/docs/conformance/mutants.json CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so \
  CONFORMANCE_MUTANTS_REPORT=$L/library timeout 400 "$root/.gpu/bin/mutants" > "$L/library/log" 2>&1
echo "library rc=$? $(( $(date +%s) - s )) s $(grep -a '^test result' "$L/library/log")"
grep -a -o "Mutants in the library[^|]*judged here[^.]*\.[^.]*\.[^.]*\.[^.]*\." "$L/library/mutants.md" | head -1
grep -a "SURVIVED\|FAILED\|panicked" "$L/library/log" | cut -c1-300 | head -20
tar -C "$OUT" -czf "$OUT/$NAME-lib.tgz" "$NAME-lib"
