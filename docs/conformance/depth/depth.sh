#!/bin/bash
# Issue 23 on a GPU machine, from binaries staged into .gpu/ by ../shared/tools/gpu-stage and
# .ci/gpu/stage-extras.sh: RUNS default runs of the suite (reports under $OUT/depth/runN), then the
# mutation runner over the mutants named in MUTANTS (comma list; each against the whole suite).
# Results in $OUT/depth.tgz; the summary is printed.   Usage: depth.sh RUNS REQUIRE [MUTANTS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
RUNS=${1:-1}; REQ=${2:-gpu,ipc}; MUTANTS=${3:-}
OUT=${OUT:-/tmp/depth}
D=$OUT/depth; mkdir -p "$D"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee "$D/gpus.txt"
for i in $(seq 1 "$RUNS"); do
  d=$D/run$i; mkdir -p "$d"
  s=$(date +%s)
  CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$d timeout 400 "$root/.gpu/bin/conformance" > "$d/log" 2>&1
  echo "run$i rc=$? $(( $(date +%s) - s )) s $(grep -a '^test result' "$d/log")"
done
grep -a -h "^FAILED\|^CHANGED\|^KNOWN" "$D"/run*/log | sort | uniq -c | head -60
grep -a -h -A6 "^---- " "$D"/run1/log | head -150
if [ -n "$MUTANTS" ]; then
  mkdir -p "$D/mutants"
  s=$(date +%s)
  CONFORMANCE_MUTANTS_ONLY=$MUTANTS CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so \
    CONFORMANCE_MUTANTS_REPORT=$D/mutants timeout "${MUTANTS_TIMEOUT:-400}" "$root/.gpu/bin/mutants" \
    > "$D/mutants/log" 2>&1
  echo "mutants rc=$? $(( $(date +%s) - s )) s"
  grep -a -E "SURVIVED|ERROR|^test result|declared equivalent" "$D/mutants/log" | head -40
fi
tar -C "$OUT" -czf "$OUT/depth.tgz" depth
