#!/bin/bash
# Issue 36 on a GPU machine, from binaries staged into .gpu/ (../shared/tools/gpu-stage and
# .ci/gpu/stage-extras.sh): RUNS default runs for each --test-threads value in THREADS (comma list),
# then SERIAL runs with CONFORMANCE_SCHEDULE=serial, and the verdicts of every run compared with the
# first serial run's (.ci/gpu/verdicts.py). Reports under $OUT/speed/tT-N and serial-N; results in
# $OUT/speed.tgz.   Usage: .ci/gpu/speed.sh RUNS THREADS [SERIAL] [REQUIRE]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
RUNS=${1:-10}; THREADS=${2:-4}; SERIAL=${3:-1}; REQ=${4:-gpu,ipc}
OUT=${OUT:-/tmp/speed}
D=$OUT/speed; mkdir -p "$D"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader | tee "$D/gpus.txt"
one() { # DIR [ARGS...]: one run of the suite, its wall clock and its counts
  local d=$1; shift; mkdir -p "$d"
  local s; s=$(date +%s%N)
  CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$d timeout 500 "$root/.gpu/bin/conformance" "$@" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$(basename "$d")" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
}
for i in $(seq 1 "$SERIAL"); do CONFORMANCE_SCHEDULE=serial one "$D/serial-$i"; done
for t in ${THREADS//,/ }; do
  for i in $(seq 1 "$RUNS"); do one "$D/t$t-$i" --test-threads "$t"; done
done
grep -a -h "^FAILED\|^CHANGED\|^KNOWN" "$D"/*/log | sort | uniq -c | head -60
[ -d "$D/serial-1" ] && python3 "$here/verdicts.py" "$D/serial-1/report.json" "$D"/t*/report.json | tee "$D/verdicts.txt"
tar -C "$OUT" -czf "$OUT/speed.tgz" speed
