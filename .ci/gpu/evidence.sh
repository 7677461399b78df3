#!/bin/bash
# The suite's reliability evidence on a GPU machine, from binaries staged into .gpu/ by
# ../shared/tools/gpu-stage (the GPU machines have no Rust): N consecutive default runs, the planted
# leaks, a crash switched on in one trial, an in-process run, the shim faults, the bench smoke run.
# Results go to $OUT/runs.tgz; the summary is printed.   Usage: .ci/gpu/evidence.sh N REQUIRE [ARGS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${1:-20}; REQ=${2:-gpu,ipc}; shift 2 || true
OUT=${OUT:-/tmp/evidence}
B=$root/.gpu/bin/conformance
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
mkdir -p "$OUT/runs"
for i in $(seq -w 1 "$N"); do
  d=$OUT/runs/run$i; mkdir -p "$d"
  CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$d "$B" "$@" > "$d/log" 2>&1; echo $? > "$d/rc"
done
python3 "$here/summarize.py" "$OUT"/runs/run* | tee "$OUT/runs/summary.md"
grep -a -h "^FAILED\|^CHANGED" "$OUT"/runs/*/log | sort | uniq -c | head -20
echo "== planted leaks"
d=$OUT/runs/plant; mkdir -p "$d"
CONFORMANCE_REQUIRE=$REQ CONFORMANCE_PLANT_LEAK=alloc,pool,fd CONFORMANCE_REPORT_DIR=$d "$B" "$@" > "$d/log" 2>&1; echo "rc=$?"
grep -a -A8 "^---- suite::no_leaks" "$d/log" | head -10
echo "== a crash switched on in one trial"
d=$OUT/runs/crash; mkdir -p "$d"
CONFORMANCE_REQUIRE=$REQ CONFORMANCE_CRASH_TRIAL=823_cuMemPoolCreate::new_pool_defaults CONFORMANCE_REPORT_DIR=$d "$B" "$@" > "$d/log" 2>&1; echo "rc=$?"
grep -a "^test result\|^Total" "$d/log"; grep -a -A3 "^---- " "$d/log" | head -8
echo "== in-process (CONFORMANCE_WORKERS=0)"
d=$OUT/runs/inproc; mkdir -p "$d"
CONFORMANCE_REQUIRE=$REQ CONFORMANCE_WORKERS=0 CONFORMANCE_REPORT_DIR=$d "$B" "$@" > "$d/log" 2>&1; echo "rc=$?"
grep -a "^test result\|^Total" "$d/log"; grep -a -A4 "^---- " "$d/log" | head -20
echo "== shim faults"
s=$(date +%s)
CONFORMANCE_SHIM_KEEP=$OUT/runs/shim CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so \
  CONFORMANCE_SHIM_SO_PROC_ONLY=$root/.gpu/libmisbehave-proc-only.so timeout 500 "$root/.gpu/bin/shim" > "$OUT/runs/shim.log" 2>&1
echo "shim rc=$? $(( $(date +%s) - s )) s"
grep -a -E "^shim |^test result|under " "$OUT/runs/shim.log"
echo "== diffs: the plain driver against each shim fault"
mkdir -p "$OUT/runs/diffs"
for d in "$OUT"/runs/shim/*/; do
  f=$(basename "$d")
  "$B" --diff "$OUT/runs/run01/report.json" "$d/report.json" > "$OUT/runs/diffs/$f.txt" 2>&1
  echo "$f: diff exit $? — $(grep -a 'regressed,' "$OUT/runs/diffs/$f.txt")"
done
echo "== reports test (schema, diff, expectation files, JUnit)"
CONFORMANCE_REPORTS_KEEP=$OUT/runs/reports CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so timeout 300 \
  "$root/.gpu/bin/reports" > "$OUT/runs/reports.log" 2>&1; echo "reports rc=$?"
grep -a -E "^reports|^test result" "$OUT/runs/reports.log"
echo "== entry modes"
CONFORMANCE_ENTRY_KEEP=$OUT/runs/entry CONFORMANCE_REQUIRE=$REQ timeout 300 "$root/.gpu/bin/entry" > "$OUT/runs/entry.log" 2>&1; echo "entry rc=$?"
grep -a -E "^entry|^test result" "$OUT/runs/entry.log"
echo "== sys table test on this driver"
timeout 120 "$root/.gpu/bin/table" > "$OUT/runs/table.log" 2>&1; echo "table rc=$?"; grep -a "test result" "$OUT/runs/table.log"
if [[ -x $root/.gpu/pool_roundtrip_dynamic ]]; then
  echo "== example built with dynamic-loading"
  ldd "$root/.gpu/pool_roundtrip_dynamic" | tee "$OUT/runs/example-ldd.txt"
  echo "libcuda in ldd output: $(grep -c libcuda "$OUT/runs/example-ldd.txt")"
  timeout 60 "$root/.gpu/pool_roundtrip_dynamic" 2>&1 | tee "$OUT/runs/example.log"; echo "example rc=${PIPESTATUS[0]}"
fi
if [[ -x $root/.gpu/bin/allocator-bench ]]; then
  echo "== FFI bench (full counts)"
  BENCH_GROUPS=ffi BENCH_REPORT_DIR=$OUT/runs/bench-ffi timeout 300 "$root/.gpu/bin/allocator-bench" --bench > "$OUT/runs/bench-ffi.log" 2>&1; echo "bench rc=$?"
  grep -a "^|" "$OUT/runs/bench-ffi.log"
fi
echo "== bench smoke"
timeout 120 "$root/.gpu/bin/allocator" > "$OUT/runs/bench.log" 2>&1; echo "bench rc=$?"; tail -3 "$OUT/runs/bench.log"
cd "$OUT" && tar czf runs.tgz runs && rm -rf runs
