#!/bin/bash
# Two staged builds side by side (issue 36 calibration): RUNS default runs of .gpu/bin/conformance
# and of .gpu/bin/conformance-b, alternating. Results in $OUT/ab.tgz.   Usage: ab.sh RUNS
set -u
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp/ab}; D=$OUT/ab; mkdir -p "$D"
for i in $(seq 1 "${1:-3}"); do
  for v in a b; do
    bin=$root/.gpu/bin/conformance; [ $v = b ] && bin=$bin-b
    d=$D/$v-$i; mkdir -p "$d"; s=$(date +%s%N)
    CONFORMANCE_REQUIRE=gpu,ipc CONFORMANCE_REPORT_DIR=$d timeout 300 "$bin" --test-threads 4 > "$d/log" 2>&1
    rc=$?; cs=$(( ($(date +%s%N) - s) / 10000000 ))
    printf '%s rc=%s wall=%d.%02d s %s\n' "$v-$i" $rc $((cs/100)) $((cs%100)) "$(grep -a '^test result' "$d/log" | cut -c1-60)" | tee -a "$D/walls.txt"
  done
done
grep -a -h "^FAILED" "$D"/*/log | sort | uniq -c | head
tar -C "$OUT" -czf "$OUT/ab.tgz" ab
