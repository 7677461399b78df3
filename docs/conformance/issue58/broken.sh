#!/bin/bash
# Issue 58 items 3 and 5 on one GPU. A default run (its report must not open with a break), then the
# suite under the mutation library's fault broken-without-crash (from the run's 40th cuMemPoolCreate
# on, every call of the 14 APIs in every process answers DEVICE_UNAVAILABLE (46); nothing crashes):
# its report.json's causes, report.md and the terminal must open with one line naming the first
# trial of the break and no crash. Then the suite under lookup-initialises (one failure,
# suite::lookup_does_not_initialise; what its look-ups leave open listed there, not as a leak), the
# travel scenarios of both, and no mark file left behind.
# Needs .gpu/bin/conformance, .gpu/bin/travel and .gpu/libmisbehave.so built from this tree.
# Everything in $OUT/NAME.tgz, a summary in $OUT/NAME.txt.   Usage: broken.sh NAME
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}
OUT=${OUT:-/tmp/issue58}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
SO=$root/.gpu/libmisbehave.so
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$D/gpus.txt"
LD_PRELOAD=$SO CONFORMANCE_MUTANT=list "$root/.gpu/bin/conformance" | grep -q '^broken-without-crash' ||
  { echo "$SO has no broken-without-crash: build it from this tree"; exit 1; }
export TMPDIR=$D/tmp; mkdir -p "$TMPDIR"
one() { # DIR [VAR=VALUE...]
  local d=$1; shift; mkdir -p "$d"
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout 300 "$root/.gpu/bin/conformance" > "$d/log" 2>&1
  echo "$(basename "$d") rc=$? $(grep -a '^test result' "$d/log")"
  python3 - "$d" <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(f"{d}/report.json"))
c = (r.get("causes") or [{}])[0]
print("  causes[0].broken:", json.dumps(c.get("broken")))
print("  report.md line 5:", open(f"{d}/report.md").read().splitlines()[4][:400])
for t in r["trials"]:
    if t["trial"] in ("suite::lookup_does_not_initialise", "suite::no_leaks"):
        print(f"  {t['trial']}: {t['outcome']}: {t['message'][-300:]!r} notes {t['notes']}")
PY
  grep -a -m1 "Broken for good" "$d/log" | cut -c1-400 | sed 's/^/  terminal: /'
}
one "$D/default"
one "$D/broken-without-crash" LD_PRELOAD="$SO" CONFORMANCE_SHIM_FAULTS=broken-without-crash
one "$D/lookup-initialises" LD_PRELOAD="$SO" CONFORMANCE_MUTANT=lookup-initialises
for t in broken_without_crash_said_once lookup_initialising_said_once broken_for_good_said_once; do
  CONFORMANCE_SHIM_SO=$SO CONFORMANCE_TRAVEL_KEEP=$D/travel timeout 600 "$root/.gpu/bin/travel" \
    "travel::$t" 2>&1 | grep -a "^test \|failures\|Broken" | cut -c1-400
done
echo "mark files left: $(ls "$TMPDIR" | grep -c libmisbehave-broken)"
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME" && rm -rf "$D"
