#!/bin/bash
# Issues 22 and 24 on a GPU machine, from binaries staged into .gpu/ (gpu-stage --release --benches,
# .ci/gpu/stage-extras.sh, and the examples/table test named below): the default suite run; the bindings'
# own table tests against the real driver; the wrapper example (free functions, CUDA 13 selector
# into CUDA 12 functions) and pool_roundtrip, linked and with dynamic-loading, with their ldd; the
# allocator bench's ffi and api groups on the plain driver, under the mutation library with no
# mutant on (its pass-through cost), and plain again. Results in $OUT/sys-bench.tgz.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
G=$root/.gpu
OUT=${OUT:-/tmp/sys-bench}
R=$OUT/sys-bench; mkdir -p "$R"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
date -u +%FT%TZ > "$R/date.txt"
step() {
  local name=$1; shift
  local s; s=$(date +%s)
  "$@" > "$R/$name.log" 2>&1; local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - s )) s"
}
step suite env CONFORMANCE_REQUIRE=gpu,ipc CONFORMANCE_REPORT_DIR="$R/suite" "$G/bin/conformance"
grep -a '^Total:' "$R/suite.log"
step sys-table env CUDA_MEMPOOL_SYS_REQUIRE_LIBCUDA=1 "$G/sys-table" --test-threads=1
grep -a 'test result' "$R/sys-table.log"
for b in wrapper_linked wrapper_dynamic pool_roundtrip_linked pool_roundtrip_dynamic; do
  ldd "$G/$b" > "$R/$b.ldd" 2>&1
  step "$b" "$G/$b"
done
bench() {
  local name=$1; shift
  step "bench-$name" env "$@" BENCH_GROUPS=ffi,api BENCH_REPORT_DIR="$R/bench-$name" "$G/bin/allocator-bench" --bench
}
bench plain
bench shim LD_PRELOAD="$G/libmisbehave.so"
bench plain2
grep -a 'ratio' "$R"/bench-*.log
tar -C "$OUT" -czf "$OUT/sys-bench.tgz" sys-bench
