#!/bin/bash
# Issue 47 on one GPU (items 1-3): RUNS default runs of the suite (.gpu/bin/conformance: exit 0, the
# footprint line in report.md's header), then whole runs under the mutation library's counting caps,
# each entry mode: the fault counting-cap (a layer that counts every process on the GPU, graph
# memory included: the two graph-budget trials must pass) and the mutant 820-counting-cap-misses-graphs
# (the same, graph memory unchecked: both must fail), and the older cap mutants (still killed).
# Everything in $OUT/NAME.tgz, a summary in $OUT/NAME.txt.   Usage: check.sh NAME [RUNS]
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}; RUNS=${2:-5}
OUT=${OUT:-/tmp/issue47}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total --format=csv | tee "$D/gpus.txt"
one() { # DIR [VAR=VALUE...]
  local d=$1; shift; mkdir -p "$d"
  local s; s=$(date +%s%N)
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout 300 "$root/.gpu/bin/conformance" > "$d/log" 2>&1
  local rc=$?
  local cs=$(( ($(date +%s%N) - s) / 10000000 ))
  printf '%s rc=%s wall=%d.%02d s %s\n' "$(basename "$d")" "$rc" $((cs / 100)) $((cs % 100)) \
    "$(grep -a '^test result' "$d/log")" | tee -a "$D/walls.txt"
  grep -a -h "^conformance: the device reports" "$d/log" | sed 's/^/    /'
  grep -a -h "^The suite's footprint" "$d/report.md" 2>/dev/null | cut -c1-400 | sed 's/^/    /'
  python3 - "$d/report.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"    no report ({e})"); sys.exit()
for t in r.get("trials", []):
    if "graphs_within_reported_total" in t["trial"] or "graph_alloc_nodes_within" in t["trial"]:
        print(f"    {t['outcome']:8} {t['trial']}: {t.get('message', '')[:300]}")
PY
}
for i in $(seq -w 1 "$RUNS"); do one "$D/default-$i"; done
so=$root/.gpu/libmisbehave.so
for entry in proc-address dlsym link; do
  one "$D/counting-cap-$entry" LD_PRELOAD="$so" CONFORMANCE_SHIM_FAULTS=counting-cap CONFORMANCE_ENTRY=$entry
  one "$D/820-counting-cap-misses-graphs-$entry" LD_PRELOAD="$so" CONFORMANCE_MUTANT=820-counting-cap-misses-graphs \
    CONFORMANCE_ENTRY=$entry
done
for m in 820-cap-misses-graphs 822-cap-counts-reserved 820-cap-bypass; do
  one "$D/$m" LD_PRELOAD="$so" CONFORMANCE_MUTANT=$m
done
grep -a -h "^FAILED\|^CHANGED" "$D"/counting-cap-*/log | sort | uniq -c | cut -c1-250 | head -30
python3 - "$D" <<'PY'
import json, statistics, sys, glob, os
d = sys.argv[1]
walls = [json.load(open(f)).get("wall_s") or 0 for f in sorted(glob.glob(os.path.join(d, "default-*", "report.json")))]
if walls:
    print(f"default: {len(walls)} runs, report wall median {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f})")
PY
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME" && rm -rf "$D"
