#!/bin/bash
# Issue 48 on one GPU: RUNS consecutive default runs of the suite (.gpu/bin/conformance), then each
# new mutant under the suite before the change (.gpu/bin/conformance-base) and after it: the
# trial it is made for must fail after and pass before (the check that could not fire); MUTANTS
# names others.
# Everything in $OUT/NAME.tgz, a summary in $OUT/NAME.txt.   Usage: check.sh NAME [RUNS]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}; RUNS=${2:-10}
OUT=${OUT:-/tmp/issue48}; D=$OUT/$NAME; mkdir -p "$D"
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
for i in $(seq -w 1 "$RUNS"); do one "$D/default-$i" "$root/.gpu/bin/conformance"; done
for m in ${MUTANTS:-830-threads-refused-imports 823-small-pool-keeps-address-space 828-mem-info-frozen}; do
  for v in base new; do
    b=$root/.gpu/bin/conformance; [ $v = base ] && b=$root/.gpu/bin/conformance-base
    one "$D/$m-$v" "$b" LD_PRELOAD="$root/.gpu/libmisbehave.so" CONFORMANCE_MUTANT=$m
    grep -a "^FAILED" "$D/$m-$v/log" | cut -c1-220 | sed 's/^/    /'
  done
done
grep -a -h "^FAILED\|^CHANGED" "$D"/default-*/log | sort | uniq -c | head -20
python3 - "$D" <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]
walls = [json.load(open(f)).get("wall_s") or 0 for f in sorted(glob.glob(os.path.join(d, "default-*", "report.json")))]
if walls:
    print(f"default: {len(walls)} runs, report wall median {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f})")
PY
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME" && rm -rf "$D"
