#!/bin/bash
# One calibration call (issue 36): RUNS default runs (.ci/gpu/speed.sh, no serial run), then the
# mutants FILTER with each run's report kept. Results in $OUT/exp.tgz.   Usage: exp.sh RUNS [FILTER]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
OUT=${OUT:-/tmp/exp}; mkdir -p "$OUT/exp"
OUT=$OUT/exp bash "$root/.ci/gpu/speed.sh" "${1:-5}" 4 0 > "$OUT/exp/speed.out" 2>&1
cat "$OUT/exp/speed/walls.txt"
grep -a "^time:" "$OUT"/exp/speed/t4-1/log | cut -c1-400
if [ -n "${2:-}" ]; then
  s=$(date +%s)
  CONFORMANCE_MUTANTS_KEEP=1 MUTANTS_OUT=$OUT/exp MUTANTS_TIMEOUT=300 bash "$root/.ci/gpu/mutants.sh" "$2" > "$OUT/exp/mutants.out" 2>&1
  echo "mutants $(( $(date +%s) - s )) s"; tail -4 "$OUT/exp/mutants.out"
fi
rm -f "$OUT"/exp/speed/speed.tgz
tar -C "$OUT" -czf "$OUT/exp.tgz" exp
