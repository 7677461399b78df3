#!/bin/bash
# Multi-GPU evidence (issues 10 and 12), from binaries staged into .gpu/ by ../shared/tools/gpu-stage.
#   devices.sh a [N]   one default run and one CONFORMANCE_DEVICES=all run first (stops there if
#                      either fails), then N-1 more default runs and the planted leaks -> $OUT/a.tgz
#   devices.sh b [N]   N consecutive CONFORMANCE_DEVICES=all runs                      -> $OUT/b.tgz
# N defaults to 20.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-/tmp/devices}
B=$root/.gpu/bin/conformance
REQ=gpu,ipc,peer
N=${2:-20}
export NCCL_NVLS_ENABLE=0
run() { # dir, then env assignments; args after --
  local d=$1; shift; mkdir -p "$d"
  env CONFORMANCE_REQUIRE=$REQ CONFORMANCE_REPORT_DIR=$d "$@" > "$d/log" 2>&1; echo $? > "$d/rc"
  echo "$(basename "$d") rc=$(cat "$d/rc") $(grep -a -o 'Wall time: [0-9.]* s' "$d/report.md" 2>/dev/null) $(grep -a '^Total:' "$d/log")"
}
failures() { grep -a -h "^FAILED\|^CHANGED" "$@" | sort | uniq -c | head -40; }
case ${1:-a} in
a)
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  nvidia-smi topo -m > "$OUT/topo.txt" 2>&1; cat "$OUT/topo.txt"
  mkdir -p "$OUT/a/default" "$OUT/a/all"
  run "$OUT/a/default/run01" "$B"
  run "$OUT/a/all/run01" CONFORMANCE_DEVICES=all "$B" --test-threads=8
  if [[ $(cat "$OUT/a/default/run01/rc") != 0 || $(cat "$OUT/a/all/run01/rc") != 0 ]]; then
    echo "== stopping: the first runs failed"; failures "$OUT"/a/*/run01/log
    cd "$OUT" && tar czf a.tgz a topo.txt && rm -rf a; exit 1
  fi
  for i in $(seq -w 2 "$N"); do run "$OUT/a/default/run$i" "$B" > /dev/null; done
  python3 "$here/summarize.py" "$OUT"/a/default/run* | tee "$OUT/a/default/summary.md"
  failures "$OUT"/a/default/*/log
  echo "== planted leaks"
  run "$OUT/a/plant" CONFORMANCE_PLANT_LEAK=alloc,pool,fd "$B"
  grep -a -A10 "^---- suite::no_leaks" "$OUT/a/plant/log" | head -12
  cd "$OUT" && tar czf a.tgz a topo.txt && rm -rf a
  ;;
b)
  mkdir -p "$OUT/b"
  for i in $(seq -w 1 "$N"); do run "$OUT/b/run$i" CONFORMANCE_DEVICES=all "$B" --test-threads=8 > /dev/null; done
  python3 "$here/summarize.py" "$OUT"/b/run* | tee "$OUT/b/summary.md"
  failures "$OUT"/b/*/log
  cd "$OUT" && tar czf b.tgz b && rm -rf b
  ;;
esac
