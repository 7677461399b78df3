#!/bin/bash
# One run of the suite under compute-sanitizer memcheck (--target-processes all), as the README says
# to run it: CONFORMANCE_TRIAL_TIMEOUT=300, --test-threads 1 (SANITIZER_ARGS replaces it), a run
# budget (SANITIZER_BUDGET, default 500 s) so that a slow run still reports. Its wall, counts and the
# memcheck error summaries of every process; the verdicts against REFERENCE (a default run's
# report.json) when given; SANITIZER_OPTS adds sanitizer options (e.g. --report-api-errors no).
# Results under $OUT/sanitizer.
#   Usage: .ci/gpu/sanitizer.sh [REFERENCE.json] [REQUIRE]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
REF=${1:-}; REQ=${2:-gpu,ipc}
OUT=${OUT:-/tmp/sanitizer}
D=$OUT/sanitizer; mkdir -p "$D"
s=$(date +%s%N)
CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$D CONFORMANCE_TRIAL_TIMEOUT=300 \
  CONFORMANCE_RUN_BUDGET=${SANITIZER_BUDGET:-500} timeout 560 compute-sanitizer --tool memcheck \
  --target-processes all --print-limit 100000 ${SANITIZER_OPTS:-} --log-file "$D/memcheck.%p.log" "$root/.gpu/bin/conformance" ${SANITIZER_ARGS---test-threads 1} > "$D/log" 2>&1
rc=$?; cs=$(( ($(date +%s%N) - s) / 10000000 ))
printf 'sanitizer rc=%s wall=%d.%02d s %s\n' "$rc" $((cs / 100)) $((cs % 100)) "$(grep -a '^test result' "$D/log")" | tee "$D/wall.txt"
grep -a -h "ERROR SUMMARY" "$D"/memcheck.*.log | sort | uniq -c | tee "$D/errors.txt"
# Every error printed (--print-limit): the API errors the suite's invalid calls cause on purpose,
# and any other (a memory access, a leak), which would be a finding.
printf 'API errors (Program hit ...): %s\nother errors: %s\n' \
  "$(cat "$D"/memcheck.*.log | grep -a -c '^========= Program hit')" \
  "$(cat "$D"/memcheck.*.log | grep -a '^========= [A-Z]' | grep -a -v -c -E 'Program hit|ERROR SUMMARY|COMPUTE-SANITIZER|Target application returned|LEAK SUMMARY: 0 bytes')" \
  | tee -a "$D/errors.txt"
grep -a "^time:" "$D/log"
[ -n "$REF" ] && python3 "$here/verdicts.py" "$REF" "$D/report.json" | tee "$D/verdicts.txt"
tar -C "$OUT" -czf "$OUT/sanitizer.tgz" sanitizer
