#!/bin/bash
# Issue 45's calibration on a GPU host: which cuMemPoolCreate maxSize values and huge allocation
# sizes the driver leaves unanswered (hangprobe.c), with every device visible and with one, and
# whether a stuck call holds the rest of its process; the host's shape (GPUs, PCI IDs, links).
# Then, where staged binaries exist, the suite as it stands: a default run and an all-device run.
#   docs/conformance/hang/calibrate.sh          results in $OUT/calib.tgz
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
OUT=${OUT:-/tmp/calib}; C=$OUT/calib; mkdir -p "$C"
export NCCL_NVLS_ENABLE=0
{
  nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,pci.sub_device_id,driver_version,memory.total,mig.mode.current --format=csv
  nvidia-smi topo -m
  ls /proc/driver/nvidia/gpus/
  for d in /proc/driver/nvidia/gpus/*; do b=$(basename "$d"); b=${b,,}; echo "$b: vendor $(cat /sys/bus/pci/devices/$b/vendor 2>/dev/null) device $(cat /sys/bus/pci/devices/$b/device 2>/dev/null) subsystem $(cat /sys/bus/pci/devices/$b/subsystem_vendor 2>/dev/null):$(cat /sys/bus/pci/devices/$b/subsystem_device 2>/dev/null)"; done
} > "$C/host.txt" 2>&1; cat "$C/host.txt"
gcc -O2 -I/usr/local/cuda/include "$here/hangprobe.c" -o /tmp/hangprobe -lcuda -lpthread || exit 1
echo "== every device visible"; HANG_S=4 /tmp/hangprobe | tee "$C/all-visible.txt"
echo "== CUDA_VISIBLE_DEVICES=0, maxSize"; CUDA_VISIBLE_DEVICES=0 ONLY=0 HANG_S=4 /tmp/hangprobe | tee "$C/visible0.txt"
if [ "$(nvidia-smi -L | wc -l)" -gt 1 ]; then
  echo "== CUDA_VISIBLE_DEVICES=1, maxSize"; CUDA_VISIBLE_DEVICES=1 ONLY=0 HANG_S=4 /tmp/hangprobe | tee "$C/visible1.txt"
fi
echo "== SIZE_MAX given ${LONG_S:-40} s"; DEV=0 ONLY=0 LABEL=SIZE_MAX HANG_S=${LONG_S:-40} /tmp/hangprobe | tee "$C/long.txt"
B=$root/.gpu/bin/conformance; [ -n "${NO_SUITE:-}" ] && B=/nonexistent
if [ -x "$B" ]; then
  for mode in default all; do
    mkdir -p "$C/$mode"; s=$(date +%s.%N)
    if [ $mode = all ]; then export CONFORMANCE_DEVICES=all; fi
    CONFORMANCE_REPORT_DIR=$C/$mode timeout 300 "$B" > "$C/$mode/log" 2>&1; rc=$?
    echo "$mode rc=$rc $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s}") s $(grep -a '^test result' "$C/$mode/log")"
    grep -a "^FAILED\|^CHANGED\|    FAILED\|^failures:" -A0 "$C/$mode/log" | head -20
  done
fi
tar -C "$OUT" -czf "$OUT/calib.tgz" calib
