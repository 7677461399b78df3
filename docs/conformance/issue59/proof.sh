#!/bin/bash
# Issue 59's proof on one GPU: RUNS default runs of each staged suite binary (.gpu/proof/conformance-LABEL,
# the labels in order), interleaved run by run so that a drift of the machine reaches each alike;
# each run's wall clock and counts; the median wall per label; and every run's verdicts against the
# first run of the label REF (.ci/gpu/verdicts.py: trials whose outcome differs, trials only in one).
# Reports under $OUT/proof/LABEL-NN, the summary in $OUT/proof.txt.   Usage: proof.sh RUNS REF LABEL...
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
RUNS=${1:?runs}; REF=${2:?reference label}; shift 2
D=$OUT/proof; mkdir -p "$D"
exec > >(tee "$OUT/proof.txt") 2>&1
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
one() { # LABEL N
  local d=$D/$1-$2; mkdir -p "$d"
  local s; s=$(date +%s%N)
  CONFORMANCE_REPORT_DIR=$d timeout 300 "$root/.gpu/proof/conformance-$1" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$1-$2" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
}
for i in $(seq 1 "$RUNS"); do
  for l in "$@"; do one "$l" "$(printf %02d "$i")"; done
done
for l in "$@"; do
  grep "^$l-" "$D/walls.txt" | sed 's/.*wall=\([0-9.]*\) s.*/\1/' | sort -n |
    awk -v l="$l" '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%s: median %.2f s of %d (%.2f-%.2f s)\n", l, m, NR, a[1], a[NR]}'
done
for l in "$@"; do
  echo "== $l against $REF-01"
  python3 "$root/.ci/gpu/verdicts.py" "$D/$REF-01/report.json" "$D/$l"-*/report.json | grep -v "^    " 
  python3 "$root/.ci/gpu/verdicts.py" "$D/$REF-01/report.json" "$D/$l"-*/report.json | grep "^    " | sort | uniq -c | head -40
done
