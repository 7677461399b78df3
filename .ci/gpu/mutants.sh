#!/bin/bash
# The mutation run on a GPU machine, from binaries staged into .gpu/ by ../shared/tools/gpu-stage
# and .ci/gpu/stage-extras.sh: tests/mutants.rs with the carried library, writing mutants.md and
# mutants.json under $OUT/mutants.   Usage: .ci/gpu/mutants.sh [FILTER...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp/mutants}
mkdir -p "$OUT/mutants"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/mutants/gpus.txt"
s=$(date +%s)
CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so CONFORMANCE_MUTANTS_REPORT=$OUT/mutants \
  timeout "${MUTANTS_TIMEOUT:-560}" "$root/.gpu/bin/mutants" "$@" > "$OUT/mutants/log" 2>&1
echo "mutants rc=$? $(( $(date +%s) - s )) s"
grep -a -E "SURVIVED|ERROR|^test result|^---- |declared equivalent" "$OUT/mutants/log" | head -80
