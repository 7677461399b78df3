#!/bin/bash
# Capture and load evidence on a GPU machine, from binaries staged into .gpu/ by
# ../shared/tools/gpu-stage (--benches): N consecutive default runs (the capture and load trials
# among them), one long stress run, and the bench's threads and capture groups. Results under
# $OUT/capture-load.   Usage: capture-load.sh N STRESS_SECS [REQUIRE]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
N=${1:-20}; SECS=${2:-60}; REQ=${3:-gpu,ipc}
OUT=${OUT:-/tmp/capture-load}
B=$root/.gpu/bin/conformance
d0=$OUT/capture-load
mkdir -p "$d0"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
for i in $(seq -w 1 "$N"); do
  d=$d0/run$i; mkdir -p "$d"
  CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$d "$B" > "$d/log" 2>&1; echo $? > "$d/rc"
done
python3 "$root/.ci/gpu/summarize.py" "$d0"/run* | tee "$d0/summary.md"
grep -a -h "^FAILED\|^CHANGED" "$d0"/run*/log | sort | uniq -c | head -20
python3 - "$d0"/run*/report.json <<'PY' | tee "$d0/capture-load-trials.md"
import json, sys
rows = {}
for f in sys.argv[1:]:
    for t in json.load(open(f))["trials"]:
        if "::capture::" in t["trial"] or "::load::" in t["trial"]:
            rows.setdefault(t["trial"], []).append((t["outcome"], t["secs"], t.get("notes", [])))
print("| trial | outcomes | secs (min–max) | notes (run 1) |\n|---|---|---|---|")
for k, v in sorted(rows.items()):
    outs = {o for o, _, _ in v}
    secs = [s for _, s, _ in v]
    print(f"| `{k}` | {', '.join(sorted(outs))} × {len(v)} | {min(secs):.3f}–{max(secs):.3f} | {'; '.join(v[0][2])} |")
PY
echo "== stress: load trials for $SECS s"
d=$d0/stress; mkdir -p "$d"
s=$(date +%s)
CONFORMANCE_STRESS_SECS=$SECS CONFORMANCE_TRIAL_TIMEOUT=$((SECS + 30)) CONFORMANCE_REPORT_DIR=$d \
  "$B" load:: > "$d/log" 2>&1; echo "stress rc=$? $(( $(date +%s) - s )) s"
grep -a -E "load::|^test result" "$d/log" | head; grep -a -o '"[0-9]* allocations and frees[^"]*"' "$d/report.json"
if [[ -x $root/.gpu/bin/allocator-bench ]]; then
  echo "== bench: threads and capture groups (full counts)"
  BENCH_GROUPS=threads,capture BENCH_REPORT_DIR=$d0/bench timeout 300 "$root/.gpu/bin/allocator-bench" --bench \
    > "$d0/bench.log" 2>&1; echo "bench rc=$?"
  grep -a "^|" "$d0/bench.log"
fi
