#!/bin/bash
# Issue 36 calibration: process starts under compute-sanitizer memcheck (--target-processes all):
# 1, 4 and 8 processes at once each making a context (ctxbench.py in
# ../../h100-r580-2026-11-25-issue36-session2/calibration/), with the driver's
# default hardware connections and with CUDA_DEVICE_MAX_CONNECTIONS=1. Whether starts there go one
# at a time machine-wide, and whether fewer connections make them cheaper. Results in
# $OUT/ctxsan.txt.   Usage: ctxsan.sh [SECONDS_PER_SETTING]
set -u
here=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/ctxsan}; mkdir -p "$OUT"
f=$OUT/ctxsan.txt
for e in "" CUDA_DEVICE_MAX_CONNECTIONS=1; do
  echo "env [$e]" >> "$f"
  s=$(date +%s%N)
  env $e timeout "${1:-270}" compute-sanitizer --tool memcheck --target-processes all \
    python3 "$here/../../h100-r580-2026-11-25-issue36-session2/calibration/ctxbench.py" 1 4 8 >> "$f" 2>&1
  echo "rc=$? wall $(( ($(date +%s%N) - s) / 1000000 )) ms" >> "$f"
done
grep -v "^=========" "$f"
