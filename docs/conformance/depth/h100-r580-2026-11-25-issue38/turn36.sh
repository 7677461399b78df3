#!/bin/bash
# Issues 36-38 on a GPU machine, one call: the default run per --test-threads value and a serial run
# (.ci/gpu/speed.sh), the new trials' notes (notes.py), the sys crate's examples linked and loaded,
# and the mutants named in MUTANTS (../depth.sh).   Usage: turn36.sh RUNS THREADS SERIAL [MUTANTS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
OUT=${OUT:-/tmp/turn36}; mkdir -p "$OUT"
bash "$root/.ci/gpu/speed.sh" "$1" "$2" "$3" > "$OUT/speed.log" 2>&1
cat "$OUT/speed/walls.txt"; tail -25 "$OUT/speed.log"
first=$(ls -d "$OUT"/speed/t*-1 | head -1)
python3 "$here/notes.py" "$first/report.json" vaspace concurrent_import managed printed supported_handle_types \
  reuse_flags_any trim_below export_pointer_of_a_pending usage_hw_decompress round_trip_size \
  > "$OUT/notes.txt" 2>&1
grep -a -A3 "^== .*: failed" "$OUT/notes.txt" | head -80
mkdir -p "$OUT/examples"
for e in "$root"/.gpu/examples/*; do
  [ -x "$e" ] || continue
  timeout 120 "$e" > "$OUT/examples/$(basename "$e").log" 2>&1
  echo "example $(basename "$e") rc=$? $(tail -1 "$OUT/examples/$(basename "$e").log")"
done
if [ -n "${4:-}" ]; then MUTANTS_TIMEOUT=300 OUT=$OUT bash "$here/../depth.sh" 0 gpu,ipc "$4" > "$OUT/mutants.log" 2>&1; tail -30 "$OUT/mutants.log"; fi
tar -C "$OUT" -czf "$OUT/turn36.tgz" --exclude='*.tgz' .
