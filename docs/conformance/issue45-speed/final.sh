#!/bin/bash
# Issue 45, the lighter heavy trials (one process for both graph pairs, one request beyond the
# device per path, no 16 GiB import) on one GPU, from binaries staged into .gpu/: RUNS consecutive
# default runs of the suite (.gpu/bin/conformance), BASE runs of the suite before the change
# (.gpu/bin/conformance-base) interleaved for the day's baseline, then one whole run under each
# mutant the changed trials kill (each must fail in the trial named) and under the faithful
# counting cap (the fault counting-cap: must pass). Everything in $OUT/NAME.tgz, the summary in
# $OUT/NAME.txt (MUTANTS="a b" runs those only).   Usage: final.sh NAME [RUNS] [BASE]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}; RUNS=${2:-10}; BASE=${3:-4}
OUT=${OUT:-/tmp/issue45}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,driver_version,memory.total --format=csv | tee "$D/gpus.txt"
SHIM=$root/.gpu/libmisbehave.so
one() { # DIR BINARY [VAR=VALUE...]: one run, its exit code, wall clock and counts
  local d=$1 b=$2; shift 2; mkdir -p "$d"
  local s; s=$(date +%s%N)
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout 300 "$b" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$(basename "$d")" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
}
for i in $(seq -w 1 "$RUNS"); do
  one "$D/default-$i" "$root/.gpu/bin/conformance"
  [ "$((10#$i))" -le "$BASE" ] && one "$D/base-$i" "$root/.gpu/bin/conformance-base"
done
for m in ${MUTANTS:-820-cap-misses-graphs 822-cap-counts-reserved 820-cap-bypass 820-counting-cap-misses-graphs \
         counting-cap 820-size-round-up-wraps 821-size-round-up-wraps 830-large-import-truncated}; do
  one "$D/$m" "$root/.gpu/bin/conformance" LD_PRELOAD="$SHIM" CONFORMANCE_MUTANT=$m
  grep -a "^FAILED\|caps::graphs_within\|edges_bytesize \|large_import_4096\|beyond_reported_total\|caps::reserve" "$D/$m/log" \
    | grep -a "^test\|^FAILED" | sort -u | cut -c1-220 | head -8
done
grep -a -h "^FAILED\|^CHANGED" "$D"/default-*/log | sort | uniq -c | head -20
python3 - "$D" <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]
for kind in ("default", "base"):
    walls = [json.load(open(f)).get("wall_s") or 0 for f in sorted(glob.glob(os.path.join(d, kind + "-*", "report.json")))]
    if walls:
        print(f"{kind}: {len(walls)} runs, report wall median {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f})")
PY
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME"
