#!/bin/bash
# Issue 24: is the mutation run the same when several suites run side by side? The runner over the
# mutants a filter selects, one suite at a time (the default with a GPU), then THREADS suites at once
# (each with at most SUITE_THREADS trials at once, if given); the verdicts compared mutant by
# mutant. Results in $OUT/compare.tgz.   Usage: mutants-compare.sh FILTER THREADS [SUITE_THREADS]
# Both runs take the runner's selection (CONFORMANCE_MUTANTS_SELECT, default calls); set it to all
# for whole suites. Whole suites against selected ones: .ci/gpu/mutants-select.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
FILTER=$1 THREADS=$2 SUITE_THREADS=${3:-}
OUT=${OUT:-/tmp/compare}
R=$OUT/compare; mkdir -p "$R"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
run() {
  local name=$1 threads=$2 limit=$3; shift 3
  mkdir -p "$R/$name"
  local s; s=$(date +%s)
  env CONFORMANCE_SHIM_SO="$root/.gpu/libmisbehave.so" CONFORMANCE_MUTANTS_REPORT="$R/$name" "$@" \
    timeout "$limit" "$root/.gpu/bin/mutants" --test-threads="$threads" "$FILTER" > "$R/$name/log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s $(grep -a '^test result' "$R/$name/log")"
}
run serial 1 340
if [ -n "$SUITE_THREADS" ]; then
  run parallel "$THREADS" 230 CONFORMANCE_MUTANTS_SUITE_THREADS="$SUITE_THREADS"
else
  run parallel "$THREADS" 230
fi
python3 - "$R" <<'PY'
import json, sys
r = sys.argv[1]
a, b = (json.load(open(f"{r}/{n}/mutants.json")) for n in ("serial", "parallel"))
ma = {m["name"]: m for m in a["mutants"]}
mb = {m["name"]: m for m in b["mutants"]}
same_status = same_killers = judged = 0
diff = []
for n, m in ma.items():
    if m["status"].startswith(("not run", "not judged")):
        continue
    judged += 1
    o = mb.get(n, {})
    if o.get("status") == m["status"]:
        same_status += 1
    else:
        diff.append(f"{n}: serial {m['status']!r}, parallel {o.get('status')!r}")
    if sorted(o.get("killed_by", [])) == sorted(m["killed_by"]):
        same_killers += 1
print(f"judged {judged}; same verdict {same_status}; same killing trials {same_killers}; "
      f"wall serial {a['wall_s']:.0f} s, parallel {b['wall_s']:.0f} s")
for d in diff:
    print("DIFFERS", d)
PY
tar -C "$OUT" -czf "$OUT/compare.tgz" compare
