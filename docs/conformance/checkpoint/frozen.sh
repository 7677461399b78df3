#!/bin/bash
# Issue 57 item 4 on one GPU: no process of the run is left locked or checkpointed on the paths a
# plain leg run does not take. (1) An engine that checkpoints and then hangs (a `command:` engine
# that sleeps after its checkpoint step), under a short trial timeout: the step is bounded, the
# process restored or killed. (2) A leg run with the driver's engine ended by SIGTERM a few seconds
# in, while processes are being checkpointed. After each: the suite's processes still alive and the
# GPU's compute processes (none may be left).   Usage: frozen.sh   (summary in $OUT/frozen.txt)
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${OUT:-/tmp/frozen}; D=$OUT/frozen; mkdir -p "$D"
exec > >(tee "$OUT/frozen.txt") 2>&1
BIN=$root/.gpu/bin/conformance ENGINE=$root/.gpu/cump-checkpoint-engine
nvidia-smi --query-gpu=index,name,driver_version --format=csv
left() {
  pgrep -f "$root/.gpu/bin/" | while read -r p; do echo "  process $p: $(tr '\0' ' ' < /proc/$p/cmdline | cut -c1-120)"; done
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader | sed 's/^/  gpu process: /'
}
printf '%s\n' 828_cuMemPoolGetAttribute::checkpoint::every_attribute_kept 833_cuMemPoolTrimTo::checkpoint::trim_after_restore \
  826_cuMemPoolExportToShareableHandle::checkpoint::export_after_restore > "$D/trials.txt"
CONFORMANCE_TRIAL_TIMEOUT=10 CONFORMANCE_TRIALS_FILE="$D/trials.txt" CONFORMANCE_REPORT_DIR="$D/hang" \
  CONFORMANCE_CHECKPOINT="command:[ {step} = checkpoint ] && $ENGINE {pid} checkpoint && sleep 300; true" \
  timeout 200 "$BIN" > "$D/hang.log" 2>&1
echo "hanging engine: rc=$? $(grep -a '^test result' "$D/hang.log")"
python3 - "$D/hang/report.json" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["trials"]:
    if "::checkpoint::" in t["trial"]:
        print(f"  {t['outcome']} {t['trial']} ({t['secs']:.1f} s): {t['message'][:300]}")
PY
sleep 2; echo "  left behind: $(left | wc -l)"; left
pkill -f 'sleep 300' || true
CONFORMANCE_CHECKPOINT=driver CONFORMANCE_REPORT_DIR="$D/term" "$BIN" > "$D/term.log" 2>&1 &
pid=$!; sleep 8; echo "SIGTERM at 8 s; the GPU's processes then: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)"
kill -TERM "$pid"; wait "$pid"; echo "SIGTERM run: rc=$? $(grep -a '^test result' "$D/term.log")"
python3 - "$D/term/report.json" <<'PY'
import json, sys, collections
r = json.load(open(sys.argv[1]))
c = collections.Counter(t["outcome"] for t in r["trials"] if "::checkpoint::" in t["trial"])
print("  leg trials:", dict(c))
PY
sleep 3; echo "  left behind: $(left | wc -l)"; left
tar -C "$OUT" -czf "$OUT/frozen.tgz" frozen && rm -rf "$D"
