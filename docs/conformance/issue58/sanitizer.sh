#!/bin/bash
# Issue 58: whole runs of the suite under compute-sanitizer memcheck (.ci/gpu/sanitizer.sh, as the
# README says to run it), RUNS of them one after another, each under $OUT/sN/; then each run's
# verdicts against REFERENCE (the first run's report.json, or one given).   Usage: sanitizer.sh FIRST LAST [REFERENCE]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
FIRST=${1:?first} LAST=${2:?last} REF=${3:-}
for i in $(seq "$FIRST" "$LAST"); do
  mkdir -p "$OUT/s$i"
  OUT=$OUT/s$i bash "$root/.ci/gpu/sanitizer.sh" > "$OUT/s$i/summary.txt" 2>&1
  cat "$OUT/s$i/summary.txt"
  [ -n "$REF" ] || { REF=$OUT/s$i/ref.json; tar -xzOf "$OUT/s$i/sanitizer.tgz" sanitizer/report.json > "$REF"; continue; }
  tar -xzOf "$OUT/s$i/sanitizer.tgz" sanitizer/report.json > "$OUT/s$i/report.json"
  python3 "$root/.ci/gpu/verdicts.py" "$REF" "$OUT/s$i/report.json" | tee "$OUT/s$i/verdicts.txt"
  rm -f "$OUT/s$i/report.json"
done
