#!/bin/bash
# Staged builds side by side (issue 36 calibration): RUNS default runs of each variant, alternating.
# A variant is NAME=BINARY[:VAR=VALUE...] (BINARY under .gpu/bin); the default pair is
# a=conformance and b=conformance-b. Verdicts of every run compared with the first variant's first
# run (.ci/gpu/verdicts.py). Results in $OUT/ab.tgz.   Usage: ab.sh RUNS [VARIANT...]
set -u
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-/tmp/ab}; D=$OUT/ab; mkdir -p "$D"
runs=${1:-3}; shift
[ $# -gt 0 ] || set -- a=conformance b=conformance-b
for i in $(seq 1 "$runs"); do
  for v in "$@"; do
    name=${v%%=*}; spec=${v#*=}; IFS=: read -r bin envs <<< "$spec"
    d=$D/$name-$i; mkdir -p "$d"; s=$(date +%s%N)
    env ${envs//:/ } CONFORMANCE_REQUIRE=gpu,ipc CONFORMANCE_REPORT_DIR=$d timeout 300 \
      "$root/.gpu/bin/$bin" --test-threads 4 > "$d/log" 2>&1
    rc=$?; cs=$(( ($(date +%s%N) - s) / 10000000 ))
    printf '%s rc=%s wall=%d.%02d s %s\n' "$name-$i" $rc $((cs/100)) $((cs%100)) "$(grep -a '^test result' "$d/log" | cut -c1-60)" | tee -a "$D/walls.txt"
  done
done
grep -a -h "^FAILED" "$D"/*/log | sort | uniq -c | head
first=${1%%=*}
python3 "$root/.ci/gpu/verdicts.py" "$D/$first-1/report.json" "$D"/*/report.json > "$D/verdicts.txt" 2>&1; tail -n +2 "$D/verdicts.txt" | grep -v " 0 verdicts differ" | head -20
tar -C "$OUT" -czf "$OUT/ab.tgz" ab
