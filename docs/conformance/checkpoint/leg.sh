#!/bin/bash
# Issue 57 on one GPU: the checkpoint leg. A default run (the leg off: its trials ignored with the
# reason), three whole runs with the driver's engine (CONFORMANCE_CHECKPOINT=driver), the leg's
# trials with the outside engine (`command:`, shim/engine/checkpoint_engine.c) and their verdicts
# against the driver's, then each mutant engine on the leg's trials: the engine's own (left locked,
# left checkpointed) and the damage mutants of the mutation library (checkpoint-*). After every run:
# the suite's processes still alive and the GPU's compute processes (none may be left, frozen or not).
# Needs .gpu/bin/conformance, .gpu/libmisbehave.so and .gpu/cump-checkpoint-engine from this tree.
# Everything in $OUT/NAME.tgz, a summary in $OUT/NAME.txt.   Usage: leg.sh NAME
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
NAME=${1:?name}
OUT=${OUT:-/tmp/checkpoint}; D=$OUT/$NAME; mkdir -p "$D"
exec > >(tee "$OUT/$NAME.txt") 2>&1
BIN=$root/.gpu/bin/conformance SO=$root/.gpu/libmisbehave.so ENGINE=$root/.gpu/cump-checkpoint-engine
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$D/gpus.txt"
export TMPDIR=$D/tmp; mkdir -p "$TMPDIR"
left() { # what a run left behind: the suite's processes, the GPU's compute processes
  pgrep -f "$root/.gpu/bin/" | grep -v "^$$\$" | while read -r p; do echo "  process $p: $(tr '\0' ' ' < /proc/$p/cmdline | cut -c1-120)"; done
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader | sed 's/^/  gpu process: /'
}
one() { # DIR [VAR=VALUE...]
  local d=$1; shift; mkdir -p "$d"
  local t0; t0=$(date +%s.%N)
  env CONFORMANCE_REPORT_DIR="$d" "$@" timeout ${RUN_LIMIT:-240} "$BIN" > "$d/log" 2>&1; local rc=$?
  local t1; t1=$(date +%s.%N)
  echo "$(basename "$d") rc=$rc wall=$(python3 -c "print(round($t1-$t0,2))") $(grep -a '^test result' "$d/log")"
  python3 - "$d" <<'PY'
import json, sys
r = json.load(open(f"{sys.argv[1]}/report.json"))
leg = [t for t in r["trials"] if "::checkpoint::" in t["trial"]]
by = {}
for t in leg:
    by.setdefault(t["outcome"], []).append(t)
print("  leg:", ", ".join(f"{k} {len(v)}" for k, v in sorted(by.items())), "| run wall", r.get("wall_s"))
for t in leg:
    if t["outcome"] not in ("passed",):
        print(f"   {t['outcome']:>16} {t['trial']}: {t['message'][:260]}")
other = [t for t in r["trials"] if "::checkpoint::" not in t["trial"] and t["outcome"] == "failed"]
for t in other:
    print(f"   failed (not the leg) {t['trial']}: {t['message'][:200]}")
PY
  echo "  left behind: $(left | wc -l)"; left
}
one "$D/default"
for i in 1 2 3; do one "$D/driver-$i" CONFORMANCE_CHECKPOINT=driver; done
python3 - "$D/driver-1/report.json" > "$D/leg-trials.txt" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["trials"]:
    if "::checkpoint::" in t["trial"]:
        print(t["trial"])
PY
one "$D/command" CONFORMANCE_CHECKPOINT="command:$ENGINE {pid} {step}" CONFORMANCE_TRIALS_FILE="$D/leg-trials.txt"
python3 - "$D/driver-1/report.json" "$D/command/report.json" <<'PY'
import json, sys
a, b = ({t["trial"]: t["outcome"] for t in json.load(open(p))["trials"] if "::checkpoint::" in t["trial"]} for p in sys.argv[1:])
diff = {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
print("command engine vs driver engine, leg verdicts differing:", diff or "none")
PY
for m in left-locked still-checkpointed; do
  one "$D/mutant-$m" CONFORMANCE_CHECKPOINT="command:$ENGINE --mutant $m {pid} {step}" CONFORMANCE_TRIALS_FILE="$D/leg-trials.txt"
done
for m in attributes-reset contents-lost reserve-released allocation-moved threshold-forgotten; do
  one "$D/mutant-$m" LD_PRELOAD="$SO" CONFORMANCE_MUTANT="checkpoint-$m" \
    CONFORMANCE_CHECKPOINT="command:$ENGINE --mutant damage {pid} {step}" CONFORMANCE_TRIALS_FILE="$D/leg-trials.txt"
done
rm -rf "$TMPDIR"
tar -C "$OUT" -czf "$OUT/$NAME.tgz" "$NAME" && rm -rf "$D"
