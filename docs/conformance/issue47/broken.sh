#!/bin/bash
# Issue 47 item 4 on one GPU: "broken for good, said once". A default run (its report must not open
# with a break), then the suite under the mutation library's 823-broken-after-crash (a NULL
# out-pointer to cuMemPoolCreate crashes the process, and every later call of the 14 APIs answers
# DEVICE_UNAVAILABLE (46)): its report.json's causes, report.md and the terminal must open with one
# line naming the crash and the first trial after it. Then travel::broken_for_good_said_once, the
# same as a test, and no mark file left behind.
# Needs .gpu/bin/conformance, .gpu/bin/travel and .gpu/libmisbehave.so built from this tree.
# Everything in $OUT/NAME.tgz, a summary in $OUT/NAME.txt.   Usage: broken.sh NAME
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}
OUT=${OUT:-/tmp/issue47}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
SO=$root/.gpu/libmisbehave.so
nvidia-smi --query-gpu=index,name,driver_version --format=csv | tee "$D/gpus.txt"
LD_PRELOAD=$SO CONFORMANCE_MUTANT=list "$root/.gpu/bin/conformance" | grep -q '^823-broken-after-crash' ||
  { echo "$SO has no 823-broken-after-crash: build it from this tree"; exit 1; }
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
PY
  grep -a -m1 "Broken for good" "$d/log" | cut -c1-400 | sed 's/^/  terminal: /'
}
one "$D/default"
one "$D/broken" LD_PRELOAD="$SO" CONFORMANCE_MUTANT=823-broken-after-crash
CONFORMANCE_SHIM_SO=$SO CONFORMANCE_TRAVEL_KEEP=$D/travel timeout 600 "$root/.gpu/bin/travel" \
  travel::broken_for_good_said_once 2>&1 | grep -a "^test \|failures\|Broken" | cut -c1-400
echo "mark files left: $(ls "$TMPDIR" | grep -c libmisbehave-broken)"
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME" && rm -rf "$D"
