#!/bin/bash
# Issue 45 speed A/B on one GPU: the suite before (.gpu/bin/conformance-base) and after
# (.gpu/bin/conformance), RUNS default runs each, interleaved; then, on the new binary, the cap
# mutants that the changed trials must still kill (822-cap-counts-reserved, 820-cap-misses-graphs).
# EXP="VAR=VALUE" adds a third variant: the new binary with that setting (a throwaway build's knob).
# Everything in $OUT/NAME.tgz, the walls in $OUT/NAME.txt.   Usage: ab.sh NAME [RUNS] [MUTANTS=1]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}; RUNS=${2:-5}; MUTANTS=${3:-1}; EXP=${EXP:-}
OUT=${OUT:-/tmp/ab}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv | tee "$D/gpus.txt"
one() { # DIR BINARY [VAR=VALUE...]
  local d=$1 b=$2; shift 2; mkdir -p "$d"
  local s; s=$(date +%s%N)
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout 300 "$b" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$(basename "$d")" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
}
for i in $(seq -w 1 "$RUNS"); do
  one "$D/old-$i" "$root/.gpu/bin/conformance-base"
  one "$D/new-$i" "$root/.gpu/bin/conformance"
  [ -n "$EXP" ] && one "$D/exp-$i" "$root/.gpu/bin/conformance" "$EXP"
done
[ "$MUTANTS" = 1 ] && for m in 822-cap-counts-reserved 820-cap-misses-graphs; do
  one "$D/mutant-$m" "$root/.gpu/bin/conformance" LD_PRELOAD="$root/.gpu/libmisbehave.so" CONFORMANCE_MUTANT=$m
  grep -a "FAILED\|^test .*caps::.*\(reserve\|graph\)" "$D/mutant-$m/log" | head -12
done
grep -a -h "^FAILED\|^CHANGED" "$D"/old-*/log "$D"/new-*/log "$D"/exp-*/log | sort | uniq -c | head -20
python3 - "$D" <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]
for kind in ("old", "new", "exp"):
    walls = [json.load(open(f)).get("wall_s") or 0 for f in sorted(glob.glob(os.path.join(d, kind + "-*", "report.json")))]
    if walls:
        print(f"{kind}: {len(walls)} runs, report wall median {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f})")
PY
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME"
