#!/bin/bash
# Issues 46-48 on one GPU, from binaries staged into .gpu/ (the suite, its base build
# conformance-base for verdicts, the mutation runner, the shim): RUNS consecutive default runs;
# whole runs under the counting cap that lets graphs escape (820-counting-cap-misses-graphs) and
# under the faithful counting cap (the fault counting-cap): the graph-budget trials must fail under
# the first and pass under the second, the suite's footprint in each header; a run under
# 823-broken-after-crash (the report must open with the break); a whole run under
# lookup-initialises (which trials it fails, and why); then the whole mutation library.
# Everything in $OUT/NAME.tgz and $OUT/NAME-lib.tgz, a summary in $OUT/NAME.txt.
#   Usage: h100.sh NAME [RUNS]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}; RUNS=${2:-10}
OUT=${OUT:-/tmp/issue47}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,driver_version,memory.total --format=csv | tee "$D/gpus.txt"
SHIM=$root/.gpu/libmisbehave.so
one() { # DIR [VAR=VALUE...]: one run of the suite, its exit code, wall clock and counts
  local d=$1; shift; mkdir -p "$d"
  local s; s=$(date +%s%N)
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout 300 "$root/.gpu/bin/conformance" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$(basename "$d")" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
}
for i in $(seq -w 1 "$RUNS"); do one "$D/default-$i"; done
for m in ${CAPS:-820-counting-cap-misses-graphs counting-cap}; do
  one "$D/$m" LD_PRELOAD="$SHIM" CONFORMANCE_MUTANT=$m
  grep -a "caps::captured_graphs_within\|caps::graph_alloc_nodes_within" "$D/$m/log" | grep -a "^test\|^FAILED" | cut -c1-300
  grep -a -i "footprint" "$D/$m/report.md" | head -3 | cut -c1-300
done
for e in dlsym link; do # the escaping cap in the other entry modes too
  one "$D/820-counting-cap-misses-graphs-$e" LD_PRELOAD="$SHIM" CONFORMANCE_MUTANT=820-counting-cap-misses-graphs CONFORMANCE_ENTRY=$e
  grep -a "^FAILED.*graph" "$D/820-counting-cap-misses-graphs-$e/log" | cut -c1-200
done
for m in ${BROKEN:-823-broken-after-crash} lookup-initialises; do
  one "$D/$m" LD_PRELOAD="$SHIM" CONFORMANCE_MUTANT=$m
  head -c 1500 "$D/$m/report.md" | grep -a -v "^$" | head -8
  grep -a "^FAILED" "$D/$m/log" | head -6 | cut -c1-400
done
grep -a -h "^FAILED\|^CHANGED" "$D"/default-*/log | sort | uniq -c | head -20
python3 - "$D" <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]
walls = [json.load(open(f)).get("wall_s") or 0 for f in sorted(glob.glob(os.path.join(d, "default-*", "report.json")))]
if walls:
    print(f"default: {len(walls)} runs, report wall median {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f})")
PY
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME"
L=$OUT/$NAME-lib; mkdir -p "$L"
s=$(date +%s)
CONFORMANCE_MUTANTS_HINT=$root/docs/conformance/mutants.json CONFORMANCE_SHIM_SO=$SHIM \
  CONFORMANCE_MUTANTS_REPORT=$L timeout 330 "$root/.gpu/bin/mutants" > "$L/log" 2>&1
echo "library rc=$? $(( $(date +%s) - s )) s $(grep -a '^test result' "$L/log")"
grep -a -o "Mutants in the library: [^.]*\.[^.]*\." "$L/mutants.md" | head -1
grep -a "SURVIVED\|panicked" "$L/log" | cut -c1-300 | head -20
tar -C "$OUT" -czf "$OUT/$NAME-lib.tgz" "$NAME-lib"
