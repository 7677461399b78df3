#!/bin/bash
# Issue 58 on one GPU: a verdict that does not depend on the heap. A plain default run, then RUNS
# default runs under glibc's perturb and heap checks (glibc.malloc.check needs libc_malloc_debug
# preloaded on glibc 2.34+) and RUNS under jemalloc preloaded: each run's verdicts against the plain
# run's, trial by trial (.ci/gpu/verdicts.py). Needs .gpu/bin/conformance and .gpu/libjemalloc.so.2.
# Everything in $OUT/NAME.tgz, a summary in $OUT/NAME.txt.   Usage: heap.sh NAME [RUNS]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name} RUNS=${2:-3}
OUT=${OUT:-/tmp/issue58}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
BIN=$root/.gpu/bin/conformance
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$D/gpus.txt"
DEBUG=$(ls /lib/x86_64-linux-gnu/libc_malloc_debug.so.0 /usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null | head -1)
ldd --version | head -1
echo "libc_malloc_debug: ${DEBUG:-absent}"
export TMPDIR=$D/tmp; mkdir -p "$TMPDIR"
one() { # DIR [VAR=VALUE...]
  local d=$1; shift; mkdir -p "$d"
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout ${RUN_LIMIT:-200} "$BIN" > "$d/log" 2>&1
  echo "$(basename "$d") rc=$? $(grep -a '^test result' "$d/log")"
  [ "$(basename "$d")" = plain ] || python3 "$root/.ci/gpu/verdicts.py" "$D/plain/report.json" "$d/report.json" | sed 's/^/  /'
}
one "$D/plain"
for i in $(seq "$RUNS"); do
  one "$D/perturb-$i" GLIBC_TUNABLES=glibc.malloc.perturb=165:glibc.malloc.check=3 ${DEBUG:+LD_PRELOAD=$DEBUG}
done
for i in $(seq "$RUNS"); do one "$D/jemalloc-$i" LD_PRELOAD="$root/.gpu/libjemalloc.so.2"; done
rm -rf "$TMPDIR"
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME" && rm -rf "$D"
