#!/bin/bash
# Issue 24: does the quick mutation run judge as the whole one does? The runner over the mutants a
# file names (one a line: CONFORMANCE_MUTANTS_ONLY), once as the one-at-a-time whole run (every
# trial of the suite for every mutant: SELECT=all, STOP=never), then as the default run (SELECT=calls,
# STOP=${B_STOP:-first}, the committed mutants.json as hint), THREADS suites at once (default 1; each
# with at most SUITE_THREADS trials at once, if given); the verdicts compared mutant by mutant.
# Results in $OUT/select.tgz.
#   Usage: .ci/gpu/mutants-select.sh MUTANTS_FILE [THREADS [SUITE_THREADS]]
# ALL_LIMIT and CALLS_LIMIT (seconds, default 380 and 200) bound each run: with `all` a mutant costs
# about a whole suite (7.7 s on an H100), so keep the file to some 45 mutants per 10-minute call.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FILE=$1 THREADS=${2:-1} SUITE_THREADS=${3:-}
ONLY=$(grep -v -e '^#' -e '^[[:space:]]*$' "$FILE" | tr -d ' ' | paste -sd, -)
[ -n "$ONLY" ] || { echo "mutants-select: $FILE names no mutant (one a line)" >&2; exit 2; }
OUT=${OUT:-/tmp/select}
R=$OUT/select; mkdir -p "$R"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
run() {
  local name=$1 threads=$2 limit=$3; shift 3
  mkdir -p "$R/$name"
  local s; s=$(date +%s)
  env CONFORMANCE_SHIM_SO="$root/.gpu/libmisbehave.so" CONFORMANCE_MUTANTS_REPORT="$R/$name" \
    CONFORMANCE_MUTANTS_ONLY="$ONLY" "$@" \
    timeout "$limit" "$root/.gpu/bin/mutants" --test-threads="$threads" > "$R/$name/log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s $(grep -a '^test result' "$R/$name/log")"
}
HINT=${CONFORMANCE_MUTANTS_HINT:-$root/docs/conformance/mutants.json}
[ -f "$HINT" ] || HINT=
run all 1 "${ALL_LIMIT:-380}" CONFORMANCE_MUTANTS_SELECT=all CONFORMANCE_MUTANTS_STOP=never CONFORMANCE_MUTANTS_HINT=
fast=(CONFORMANCE_MUTANTS_SELECT=calls CONFORMANCE_MUTANTS_STOP="${B_STOP:-first}" CONFORMANCE_MUTANTS_HINT="$HINT")
if [ -n "$SUITE_THREADS" ]; then
  run calls "$THREADS" "${CALLS_LIMIT:-200}" "${fast[@]}" CONFORMANCE_MUTANTS_SUITE_THREADS="$SUITE_THREADS"
else
  run calls "$THREADS" "${CALLS_LIMIT:-200}" "${fast[@]}"
fi
python3 - "$R" <<'PY'
import json, sys
r = sys.argv[1]
a, b = (json.load(open(f"{r}/{n}/mutants.json")) for n in ("all", "calls"))
mb = {m["name"]: m for m in b["mutants"]}
# A survivor's status may carry why (no trial reached its API): the verdict is the first word.
verdict = lambda s: (s or "").split(":")[0]
rows, same, judged, within = [], 0, 0, 0
for m in a["mutants"]:
    if m["status"].startswith(("not run", "not judged")):
        continue
    judged += 1
    o = mb.get(m["name"], {})
    ok = verdict(o.get("status")) == verdict(m["status"])
    same += ok
    within += set(o.get("killed_by", [])) <= set(m["killed_by"])
    rows.append((m["name"], m["status"], o.get("status", "?"), m.get("trials_run"), o.get("trials_run"),
                 m["wall_s"], o.get("wall_s", 0.0), len(m["killed_by"]), len(o.get("killed_by", [])), ok))
print(f"{'mutant':44} {'all':10} {'calls':10} {'trials':>11} {'wall s':>11} {'killers':>9}")
for n, sa, sb, ta, tb, wa, wb, ka, kb, ok in rows:
    print(f"{n:44} {verdict(sa):10} {verdict(sb):10} {ta!s:>5}/{tb!s:<5} {wa:5.1f}/{wb:<5.1f} {ka:>4}/{kb:<4}"
          f"{'' if ok else '  DIFFERS'}")
print(f"identical: {same} of {judged}; second run's killers among the first run's: {within} of {judged}; wall all {a['wall_s']:.0f} s, calls {b['wall_s']:.0f} s "
      f"(baseline {a['baseline_wall_s']:.1f} s / {b['baseline_wall_s']:.1f} s)")
PY
tar -C "$OUT" -czf "$OUT/select.tgz" select
