#!/bin/bash
# Everything the H100 still owes after the session that ran out of device time (2026-11-22), in one
# device call (about 6 minutes), from binaries staged by ../shared/tools/gpu-stage --strip --benches
# -p conformance and .ci/gpu/stage-extras.sh. Results in $OUT/pending.tgz.
#   - issue 15: 20 consecutive default runs with the capture and load trials, a 60 s stress run,
#     the bench's threads and capture groups (../capture-load.sh 20 60);
#   - issue 11: the example built with dynamic-loading: its ldd output and its run;
#   - issue 10: the shim test, to see whether the dlsym-mode stall is gone (cores now off).
# The mutation run (issue 14) takes two more calls: see .ci/gpu/mutants.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
OUT=${OUT:-/tmp/pending}
export OUT
mkdir -p "$OUT/pending"
exec > >(tee "$OUT/pending/log") 2>&1
bash "$here/../capture-load.sh" 20 60
echo "== example built with dynamic-loading"
ldd "$root/.gpu/pool_roundtrip_dynamic" | tee "$OUT/pending/example-ldd.txt"
echo "libcuda in ldd output: $(grep -c libcuda "$OUT/pending/example-ldd.txt")"
timeout 60 "$root/.gpu/pool_roundtrip_dynamic" 2>&1 | tee "$OUT/pending/example.log"; echo "example rc=${PIPESTATUS[0]}"
echo "== shim faults"
s=$(date +%s)
CONFORMANCE_SHIM_KEEP=$OUT/pending/shim CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so \
  CONFORMANCE_SHIM_SO_PROC_ONLY=$root/.gpu/libmisbehave-proc-only.so timeout 300 "$root/.gpu/bin/shim" \
  > "$OUT/pending/shim.log" 2>&1
echo "shim rc=$? $(( $(date +%s) - s )) s"
grep -a -E "^shim |^test result|under " "$OUT/pending/shim.log"
cd "$OUT" && tar czf pending.tgz pending capture-load && rm -rf pending capture-load
