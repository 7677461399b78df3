#!/bin/bash
# Issue 21's evidence on a GPU machine, from binaries staged into .gpu/ (../shared/tools/gpu-stage,
# then .ci/gpu/stage-extras.sh): the default run; branches 570 and 590 simulated with the fake NVML,
# default and CONFORMANCE_STRICT=documented, and 570 recorded as verified; Debian's 535 libcuda
# against the host's module (803); no driver library; the shim's pool-less device (with and without
# CONFORMANCE_REQUIRE=gpu); a library that crashes on any call from the coordinator; a bypassed
# library; the whole suite under compute-sanitizer memcheck with a raised trial deadline.
# Results go to $OUT/travel.tgz; one line per run is printed.   Usage: travel.sh [SANITIZER_S]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
SAN_S=${1:-400}
OUT=${OUT:-/tmp/travel}
R=$OUT/travel; mkdir -p "$R"
B=$root/.gpu/bin/conformance
G=$root/.gpu
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
cat /proc/driver/nvidia/version > "$R/module-version.txt" 2>&1
run() {
  local name=$1; shift
  local d=$R/$name; mkdir -p "$d"
  local s; s=$(date +%s)
  env "$@" CONFORMANCE_REPORT_DIR="$d" "$B" > "$d/log" 2>&1; echo $? > "$d/rc"
  echo "$name rc=$(cat "$d/rc") $(( $(date +%s) - s )) s $(grep -a '^Total:' "$d/log")"
}
NVML="CONFORMANCE_NVML=$G/libfake-nvml.so"
run default CONFORMANCE_REQUIRE=gpu,ipc
run branch570 "$NVML" CONFORMANCE_FAKE_NVML_VERSION=570.86.15
run branch590 "$NVML" CONFORMANCE_FAKE_NVML_VERSION=590.44.01
run branch570-strict "$NVML" CONFORMANCE_FAKE_NVML_VERSION=570.86.15 CONFORMANCE_STRICT=documented
run branch580-strict CONFORMANCE_STRICT=documented
printf '[[verified]]\ndeparture = "*"\nbranch = 570\nreason = "simulated: a team that checked its R570 fleet"\n' > "$R/verified-570.toml"
run branch570-verified "$NVML" CONFORMANCE_FAKE_NVML_VERSION=570.86.15 CONFORMANCE_EXPECT="$R/verified-570.toml"
mkdir -p /tmp/l535 && xz -dc "$G/libcuda.so.535.309.01.xz" > /tmp/l535/libcuda.so.535.309.01
run mismatch-535 CUDA_MEMPOOL_SYS_LIBCUDA=/tmp/l535/libcuda.so.535.309.01
run missing-library CUDA_MEMPOOL_SYS_LIBCUDA=/nonexistent/libcuda.so.1
run pool-less LD_PRELOAD="$G/libmisbehave.so" CONFORMANCE_SHIM_FAULTS=no-pools
run pool-less-require-gpu LD_PRELOAD="$G/libmisbehave.so" CONFORMANCE_SHIM_FAULTS=no-pools CONFORMANCE_REQUIRE=gpu
run crash-in-coordinator LD_PRELOAD="$G/libmisbehave.so" CONFORMANCE_SHIM_FAULTS=crash-in-coordinator
run bypassed-dlsym LD_PRELOAD="$G/libmisbehave-proc-only.so" CONFORMANCE_ENTRY=dlsym
run reached-proc-address LD_PRELOAD="$G/libmisbehave-proc-only.so"
for d in "$R"/*/; do grep -a -h "^KNOWN DEPARTURE\|^FAILED\|^conformance: precondition" "$d/log" | cut -c1-220 | sed "s|^|$(basename "$d"): |" | head -20; done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
d=$R/sanitizer; mkdir -p "$d"; s=$(date +%s)
CONFORMANCE_TRIAL_TIMEOUT=300 CONFORMANCE_REPORT_DIR="$d" timeout "$SAN_S" "$CS" --tool memcheck --target-processes all "$B" > "$d/log" 2>&1
echo $? > "$d/rc"
echo "sanitizer rc=$(cat "$d/rc") $(( $(date +%s) - s )) s $(grep -a '^Total:' "$d/log")"
grep -a "^FAILED\|^conformance: precondition\|ERROR SUMMARY" "$d/log" | cut -c1-300 | head -30
tar -C "$OUT" -czf "$OUT/travel.tgz" travel
