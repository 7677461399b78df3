#!/bin/bash
# Issue 50's evidence on a host of four GPUs, from binaries staged into .gpu/ (the suite, the
# mutation runner, the shim): the host's shape, a bounded hang calibration (hangprobe.c, call 0 on
# every device, HANG_S s a call), one default run, ALL consecutive CONFORMANCE_DEVICES=all runs, the
# two shards of one more all-device run (CONFORMANCE_PARTITION=1/2, 2/2), then the peer mutants
# through the runner (CONFORMANCE_MUTANTS_NEEDS=peer). Everything in $OUT/NAME.tgz, a summary in
# $OUT/NAME.txt.   Usage: four.sh NAME [ALL]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
NAME=${1:?name}; ALL=${2:-3}
OUT=${OUT:-/tmp/evidence}; D=$OUT/$NAME; mkdir -p "$D"
export NCCL_NVLS_ENABLE=0
B=$root/.gpu/bin/conformance
exec > >(tee "$OUT/$NAME.txt") 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,pci.sub_device_id,driver_version,memory.total,mig.mode.current --format=csv | tee "$D/gpus.txt"
nvidia-smi topo -m > "$D/topo.txt" 2>&1; cat "$D/topo.txt"
gcc -O2 -I/usr/local/cuda/include "$root/docs/conformance/hang/hangprobe.c" -o /tmp/hangprobe -lcuda -lpthread &&
  ONLY=0 HANG_S=${HANG_S:-2} timeout 120 /tmp/hangprobe > "$D/hangprobe.txt" 2>&1
echo "hangprobe: $(grep -c HANG "$D/hangprobe.txt") of $(grep -c '^dev' "$D/hangprobe.txt") maxSize calls unanswered in ${HANG_S:-2} s"
one() { # DIR [VAR=VALUE...]: one run of the suite, its exit code, wall clock and counts
  local d=$1; shift; mkdir -p "$d"
  local s; s=$(date +%s%N)
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout 400 "$B" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$(basename "$d")" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
}
REQ=(CONFORMANCE_DEVICES=all CONFORMANCE_REQUIRE=gpu,ipc,peer)
one "$D/default-1"
for i in $(seq 1 "$ALL"); do one "$D/all-$i" "${REQ[@]}"; done
one "$D/shard-1" "${REQ[@]}" CONFORMANCE_PARTITION=1/2
one "$D/shard-2" "${REQ[@]}" CONFORMANCE_PARTITION=2/2
mkdir -p "$D/peer-mutants"
CONFORMANCE_MUTANTS_HINT=$root/docs/conformance/mutants.json CONFORMANCE_MUTANTS_NEEDS=peer CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so \
  CONFORMANCE_MUTANTS_REPORT=$D/peer-mutants timeout 300 "$root/.gpu/bin/mutants" > "$D/peer-mutants/log" 2>&1
echo "peer mutants rc=$? $(grep -a '^test result' "$D/peer-mutants/log")"
grep -a -o "[0-9]* judged, [0-9]* killed[^|]*" "$D/peer-mutants/mutants.md" | head -2
grep -a -h "^FAILED\|^CHANGED\|^KNOWN" "$D"/*/log | sort | uniq -c | head -30
for r in "$D"/all-1 "$D"/shard-*; do grep -a -c "^test .* ignored" "$r/log" | sed "s|^|$(basename "$r") ignored: |"; done
grep -a "^test .* ignored" "$D/all-1/log" | head -20
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME"
