#!/bin/bash
# Issue 59: what `cargo test -p conformance` runs on a GPU machine and what each part costs. Runs
# every target binary that `cargo test -p conformance` built (staged by ../shared/tools/gpu-stage -p
# conformance into .gpu/bin, their build script's out/ into .gpu/out) the way cargo runs it: from the
# package's folder, one after another, each bounded by CAP seconds (a target cut off is marked so).
# The binaries hold the build machine's paths (CARGO_MANIFEST_DIR, OUT_DIR): where that prefix can be
# made here it is linked to this checkout, so they find their files as under cargo. Staging writes
# .gpu/OUT_DIR: the out/ folder's path under the project root. The shim's and the fake NVML's
# libraries are named by their variables too (what a machine without the build tree sets).
#   Usage: targets.sh CAP [TARGET...]   (default: every staged binary); writes $OUT/targets.txt
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
CAP=${1:?cap seconds}; shift
# .gpu/MANIFEST (gpu-stage) names where each binary was built: the build machine's prefix.
prefix=$(head -1 "$root/.gpu/MANIFEST" | cut -f2); prefix=${prefix%/target/*}
outrel=$(cat "$root/.gpu/OUT_DIR")   # target/debug/build/conformance-HASH/out, written when staging
if [ -n "$prefix" ] && [ "$prefix" != "$root" ] && [ ! -e "$prefix" ]; then
  mkdir -p "$(dirname "$prefix")" 2>/dev/null && ln -s "$root" "$prefix" 2>/dev/null
fi
mkdir -p "$root/$(dirname "$outrel")" && ln -sfn "$root/.gpu/out" "$root/$outrel"
if [ -e "$prefix/$outrel/libmisbehave.so" ]; then echo "build paths: reachable"; else echo "build paths: NOT reachable; targets that read them may fail"; fi
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
targets=("$@"); ((${#targets[@]})) || targets=($(ls "$root/.gpu/bin"))
mkdir -p "$OUT/targets"
cd "$root/cuda-mempool-conformance"
for t in "${targets[@]}"; do
  s=$(date +%s.%N)
  CARGO_MANIFEST_DIR=$prefix/cuda-mempool-conformance CARGO_PKG_NAME=conformance \
    CONFORMANCE_SHIM_SO=$root/.gpu/out/libmisbehave.so CONFORMANCE_SHIM_SO_PROC_ONLY=$root/.gpu/out/libmisbehave-proc-only.so \
    CONFORMANCE_SHIM_SO_NO_PROC_ADDRESS=$root/.gpu/out/libmisbehave-no-proc-address.so \
    CONFORMANCE_FAKE_NVML_SO=$root/.gpu/out/libfake-nvml.so \
    timeout -k 5 "$CAP" "$root/.gpu/bin/$t" > "$OUT/targets/$t.log" 2>&1
  rc=$?
  e=$(date +%s.%N)
  printf '%-16s rc=%-3s %7.1f s  %s\n' "$t" "$rc" "$(awk "BEGIN{print $e - $s}")" \
    "$( ( [ $rc = 124 ] || [ $rc = 137 ] ) && echo "CUT at $CAP s" || grep -a '^test result' "$OUT/targets/$t.log" | tail -1)" | tee -a "$OUT/targets.txt"
done
