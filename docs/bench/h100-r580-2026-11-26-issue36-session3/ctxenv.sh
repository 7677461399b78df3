#!/bin/bash
# Issue 36 calibration: context creation (cuInit, primary context) under environment settings that
# may change what a context costs, each for 1, 4 and 8 processes at once (ctxbench.py in
# ../h100-r580-2026-11-25-issue36-session2/calibration/).
# Results in $OUT/ctxenv.txt.   Usage: ctxenv.sh
set -u
here=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/ctxenv}; mkdir -p "$OUT"
f=$OUT/ctxenv.txt
nvidia-smi -q | grep -i -E "persistence|compute mode|MIG Mode" -A0 | head -5 >> "$f"
for e in "" CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_DEVICE_MAX_CONNECTIONS=2 CUDA_DEVICE_MAX_CONNECTIONS=4 \
         CUDA_MODULE_LOADING=EAGER CUDA_CACHE_DISABLE=1 "CUDA_DEVICE_MAX_CONNECTIONS=1 CUDA_MODULE_LOADING=LAZY" ""; do
  for r in 1 2; do echo "env [$e] round $r" >> "$f"; env $e python3 "$here/../h100-r580-2026-11-25-issue36-session2/calibration/ctxbench.py" 1 4 8 >> "$f" 2>&1; done
done
cat "$f"
