#!/bin/bash
# Issue 45's evidence on one GPU kind, from binaries staged by ../shared/tools/gpu-stage and
# .ci/gpu/stage-extras.sh: the host's shape, the hang calibration (cuMemPoolCreate maxSize rows,
# docs/conformance/hang/hangprobe.c), RUNS consecutive default runs, then on a host of several GPUs
# ALL consecutive CONFORMANCE_DEVICES=all runs and the peer mutants through the runner; on one GPU
# the hang mutant (823-max-size-huge-hangs) alone (not with NO_HANG_MUTANT=1). Everything in $OUT/NAME.tgz, a summary in
# $OUT/NAME.txt.   Usage: evidence.sh NAME [RUNS] [ALL]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
NAME=${1:?name}; RUNS=${2:-10}; ALL=${3:-3}
OUT=${OUT:-/tmp/evidence}; D=$OUT/$NAME; mkdir -p "$D"
export NCCL_NVLS_ENABLE=0
B=$root/.gpu/bin/conformance
exec > >(tee "$OUT/$NAME.txt") 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,pci.sub_device_id,driver_version,memory.total,mig.mode.current --format=csv | tee "$D/gpus.txt"
nvidia-smi topo -m > "$D/topo.txt" 2>&1
ngpu=$(nvidia-smi -L | wc -l)
gcc -O2 -I/usr/local/cuda/include "$root/docs/conformance/hang/hangprobe.c" -o /tmp/hangprobe -lcuda -lpthread &&
  ONLY=0 HANG_S=3 /tmp/hangprobe > "$D/hangprobe.txt" 2>&1
echo "hangprobe: $(grep -c HANG "$D/hangprobe.txt") of $(grep -c '^dev' "$D/hangprobe.txt") maxSize calls unanswered in 3 s"
one() { # DIR [VAR=VALUE...]: one run of the suite, its exit code, wall clock and counts
  local d=$1; shift; mkdir -p "$d"
  local s; s=$(date +%s%N)
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout 500 "$B" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$(basename "$d")" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
}
for i in $(seq -w 1 "$RUNS"); do one "$D/default-$i"; done
if [ "$ngpu" -gt 1 ]; then
  for i in $(seq 1 "$ALL"); do one "$D/all-$i" CONFORMANCE_DEVICES=all CONFORMANCE_REQUIRE=gpu,ipc,peer; done
  mkdir -p "$D/peer-mutants"
  CONFORMANCE_MUTANTS_HINT=$root/docs/conformance/mutants.json CONFORMANCE_MUTANTS_NEEDS=peer CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so \
    CONFORMANCE_MUTANTS_REPORT=$D/peer-mutants timeout 300 "$root/.gpu/bin/mutants" > "$D/peer-mutants/log" 2>&1
  echo "peer mutants rc=$? $(grep -a '^test result' "$D/peer-mutants/log")"
  grep -a -o "[0-9]* judged, [0-9]* killed[^|]*" "$D/peer-mutants/mutants.md" | head -2
elif [ -z "${NO_HANG_MUTANT:-}" ]; then
  one "$D/hang-mutant" LD_PRELOAD="$root/.gpu/libmisbehave.so" CONFORMANCE_MUTANT=823-max-size-huge-hangs
  grep -a -A6 "^---- 823_cuMemPoolCreate::edges_max_size\|edges_max_size.*FAILED\|FAILED.*edges_max_size" "$D/hang-mutant/log" | head -20
fi
grep -a -h "^FAILED\|^CHANGED\|^KNOWN" "$D"/*/log | sort | uniq -c | head -30
python3 - "$D" <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]
for kind in ("default", "all"):
    walls = []
    for f in sorted(glob.glob(os.path.join(d, kind + "-*", "report.json"))):
        j = json.load(open(f))
        walls.append(j.get("wall_s") or 0)
    if walls:
        print(f"{kind}: {len(walls)} runs, report wall median {statistics.median(walls):.2f} s")
PY
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME"
