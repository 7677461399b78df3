#!/bin/bash
# Issue 35 on a GPU machine, from binaries staged by ../shared/tools/gpu-stage and
# .ci/gpu/stage-extras.sh: the reports a fleet merges (a whole run, two shards, one under the
# mutation library with no mutant and one with a mutant, one cut by SIGTERM, one cut by the run
# budget, one budgeted under compute-sanitizer memcheck, one with --rerun-failed), then
# tests/interrupt.rs. Results in $OUT/fleet.tgz.   Usage: fleet.sh [REQUIRE]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
REQ=${1:-gpu,ipc}
OUT=${OUT:-/tmp/fleet}
F=$OUT/fleet; mkdir -p "$F"
B=$root/.gpu/bin/conformance
S=$root/.gpu/libmisbehave.so
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version --format=csv,noheader | tee "$F/gpus.txt"
run() { # NAME [VAR=VALUE...] [-- ARGS]: one run, its report under $F/NAME, its exit code and wall
  local name=$1; shift; local envs=() args=()
  while (($#)); do [ "$1" = -- ] && { shift; args=("$@"); break; }; envs+=("$1"); shift; done
  local s; s=$(date +%s.%N); mkdir -p "$F/$name"
  env CONFORMANCE_REQUIRE="$REQ" CONFORMANCE_REPORT_DIR="$F/$name" "${envs[@]}" timeout 400 "$B" "${args[@]}" > "$F/$name/log" 2>&1
  echo "$name rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s $(grep -a '^test result' "$F/$name/log")"
}
run plain
run shard1 CONFORMANCE_PARTITION=1/2
run shard2 CONFORMANCE_PARTITION=2/2
run shim LD_PRELOAD="$S"
run mutant-820-synchronous LD_PRELOAD="$S" CONFORMANCE_MUTANT=820-synchronous
run rerun LD_PRELOAD="$S" CONFORMANCE_MUTANT=noop-833 -- --rerun-failed 1
run budget CONFORMANCE_RUN_BUDGET=3
# SIGTERM 4 s after the start; then no process of the run may be left on the GPU.
mkdir -p "$F/sigterm"; s=$(date +%s.%N)
CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$F/sigterm "$B" > "$F/sigterm/log" 2>&1 & pid=$!
sleep 4; kill -TERM $pid; wait $pid; rc=$?
echo "sigterm rc=$rc $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s; left on the GPU: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
# compute-sanitizer, budgeted below its full time (about 350 s on the H100).
mkdir -p "$F/sanitizer"; s=$(date +%s.%N)
CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$F/sanitizer CONFORMANCE_TRIAL_TIMEOUT=300 \
  CONFORMANCE_RUN_BUDGET=${SANITIZER_BUDGET:-150} timeout 400 compute-sanitizer --tool memcheck \
  --target-processes all --log-file "$F/sanitizer/memcheck.%p.log" "$B" > "$F/sanitizer/log" 2>&1
echo "sanitizer rc=$? $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s $(grep -a '^test result' "$F/sanitizer/log")"
grep -a -h "ERROR SUMMARY" "$F"/sanitizer/memcheck.*.log | sort | uniq -c
echo "== tests/interrupt.rs"
CONFORMANCE_SHIM_SO=$S timeout 200 "$root/.gpu/bin/interrupt" > "$F/interrupt.log" 2>&1; echo "interrupt rc=$?"
grep -a "^test \|^test result" "$F/interrupt.log"
for d in "$F"/*/; do [ -f "$d/report.json" ] && python3 -c "
import json,sys; j=json.load(open('$d/report.json')); print('$(basename $d)', j.get('totals'), (j.get('partition') or ''), j.get('provenance',{}).get('devices', '')[:1] if isinstance(j.get('provenance',{}).get('devices'), list) else '')"; done
tar -C "$OUT" -czf "$OUT/fleet.tgz" fleet
