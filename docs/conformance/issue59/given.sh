#!/bin/bash
# Issue 59, settings as values on the driver floor (the entry mode, the Deadline, the departure
# Policy handed down instead of installed in a process-wide store): on one GPU, the new suite binary
# (.gpu/proof/conformance-new) against the reference (.gpu/proof/conformance-ref), each run of a
# pair under the same settings, and the verdicts compared (.ci/gpu/verdicts.py):
#   1. RUNS default runs of each, interleaved (proof.sh, which also gives the median wall);
#   2. the settings the driver floor takes, one run of each binary under each: CONFORMANCE_STRICT=
#      documented (the Policy's strictness reaches every departure, crash and hang check),
#      CONFORMANCE_ENTRY=dlsym and =link (the entry mode reaches cu::load), CONFORMANCE_TRIAL_TIMEOUT=
#      120 (the Deadline);
#   3. a bad CONFORMANCE_TRIAL_TIMEOUT: refused with exit code 2, naming the variable;
#   4. the new binary under glibc's perturb and heap checks (libc_malloc_debug preloaded);
#   5. the travel test of issue 58's planned wait (a worker started before the probe learns the wait
#      with the machine; every child is handed it): .gpu/bin/travel under .gpu/libmisbehave.so;
#   6. the travel test that the expectation file's [[verified]] entries reach every process that
#      judges a departure (.gpu/libfake-nvml.so reporting branch 570);
#   7. the travel test of a plain run on that branch (it exits 0: what was declared for 580 is known).
# Each run's report.json in $OUT/given-reports.txz, the summary in $OUT/given.txt.   Usage: given.sh RUNS
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
RUNS=${1:?runs}
D=$OUT/given; mkdir -p "$D"
OUT=$OUT bash "$root/docs/conformance/issue59/proof.sh" "$RUNS" ref ref new > /dev/null 2>&1
exec > >(tee "$OUT/given.txt") 2>&1
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
echo "== 1. default runs (proof.sh, $OUT/proof.txt)"
grep -a "median\|verdicts differ\|^ *[0-9]* *[0-9]*_" "$OUT/proof.txt" | grep -v "^reference" | sed 's|'"$OUT"'|$OUT|g'
one() { # NAME LABEL [VAR=VALUE...]
  local d=$D/$1-$2; mkdir -p "$d"
  env CONFORMANCE_REPORT_DIR="$d" "${@:3}" timeout 300 "$root/.gpu/proof/conformance-$2" > "$d/log" 2>&1
  echo "$1-$2 rc=$? $(grep -a '^test result' "$d/log")"
}
echo "== 2. the driver floor's settings, reference and new under each"
for s in strict:CONFORMANCE_STRICT=documented dlsym:CONFORMANCE_ENTRY=dlsym link:CONFORMANCE_ENTRY=link \
         timeout120:CONFORMANCE_TRIAL_TIMEOUT=120; do
  n=${s%%:*}; v=${s#*:}
  one "$n" ref "$v"; one "$n" new "$v"
  python3 "$root/.ci/gpu/verdicts.py" "$D/$n-ref/report.json" "$D/$n-new/report.json" | sed 's|'"$OUT"'|$OUT|g'
  grep -a -m1 "^entry\|Total:" "$D/$n-new/log" | cut -c1-200
done
echo "== 3. a bad CONFORMANCE_TRIAL_TIMEOUT"
CONFORMANCE_TRIAL_TIMEOUT=soon "$root/.gpu/proof/conformance-new" > "$D/bad.log" 2>&1
echo "rc=$? $(head -c 300 "$D/bad.log")"
echo "== 4. new under glibc's perturb and heap checks"
DEBUG=$(ls /lib/x86_64-linux-gnu/libc_malloc_debug.so.0 /usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null | head -1)
one perturb new GLIBC_TUNABLES=glibc.malloc.perturb=165:glibc.malloc.check=3 ${DEBUG:+LD_PRELOAD=$DEBUG}
python3 "$root/.ci/gpu/verdicts.py" "$OUT/proof/ref-01/report.json" "$D/perturb-new/report.json" | sed 's|'"$OUT"'|$OUT|g'
echo "== 5. issue 58's planned wait (travel, mutation library first-call-wait)"
CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so CONFORMANCE_TRAVEL_KEEP=$D/travel timeout 400 "$root/.gpu/bin/travel" \
  travel::first_call_wait_is_the_librarys_and_planned_with 2>&1 | grep -a "^test \|failures\|panicked\|need" | cut -c1-400
python3 - "$D/travel" <<'PY'
import json, pathlib, sys
for r in sorted(pathlib.Path(sys.argv[1]).glob("*/report.json")):
    j = json.load(open(r))
    print(f"  {r.parent.name}: first_wait {json.dumps(j.get('first_wait'))[:300]}; totals {json.dumps(j.get('totals'))[:200]}")
PY
echo "== 6. the expectation file's [[verified]] entries in every process (travel, fake NVML on branch 570)"
CONFORMANCE_FAKE_NVML_SO=$root/.gpu/libfake-nvml.so CONFORMANCE_TRAVEL_KEEP=$D/travel timeout 300 "$root/.gpu/bin/travel" \
  travel::verified_branch_reaches_every_process 2>&1 | grep -a "^test \|failures\|panicked\|need\|verified" | cut -c1-600
python3 - "$D/travel" <<'PY'
import json, sys
for tag in ("verified-570-plain", "verified-570"):
    j = json.load(open(f"{sys.argv[1]}/{tag}/report.json"))
    known = [t["trial"] for t in j["trials"] if t["outcome"] == "known-departure"]
    print(f"  {tag}: branch {j.get('driver_branch')}, totals {json.dumps(j.get('totals'))[:200]}; known: {known[:6]}")
    for t in j["trials"]:
        if t["outcome"] in ("failed", "changed"):
            print(f"    {t['outcome']}: {t['trial']}: {t['message'][:400]}")
PY
echo "== 7. a plain run on branch 570 (travel, fake NVML): the declared crashes and departures are known there"
CONFORMANCE_FAKE_NVML_SO=$root/.gpu/libfake-nvml.so CONFORMANCE_TRAVEL_KEEP=$D/travel timeout 300 "$root/.gpu/bin/travel" \
  travel::another_branch_from_nvml 2>&1 | grep -a "^test \|failures\|panicked\|exit" | cut -c1-600
(cd "$OUT" && tar -cJf given-reports.txz $(find given -maxdepth 3 -name report.json | sort)) && rm -rf "$D" "$OUT/proof"
