#!/bin/bash
# The mutation run on a GPU machine, from binaries staged into .gpu/ by ../shared/tools/gpu-stage
# and .ci/gpu/stage-extras.sh: tests/mutants.rs with the carried library, writing mutants.md and
# mutants.json under $OUT/mutants (rewritten after each mutant).   Usage: .ci/gpu/mutants.sh [FILTER...]
#
# With a GPU the runner goes one suite at a time. By default each mutant runs only the trials that
# reached its API in the baseline (CONFORMANCE_MUTANTS_SELECT=calls) and stops at its first kill
# (CONFORMANCE_MUTANTS_STOP=first), trying first the trials that killed it in the committed
# docs/conformance/mutants.json (CONFORMANCE_MUTANTS_HINT, set here when unset): the whole library
# fits one 10-minute device call. CONFORMANCE_MUTANTS_STOP=never (the whole trial-to-mutant matrix)
# or CONFORMANCE_MUTANTS_SELECT=all take several times longer, more than one call. Either run them
# in parts with libtest filters (`mutant::82` then `--skip mutant::82`), or start it detached in
# one call and collect it in the next, made at once so that the machine stays held:
#   call 1: MUTANTS_OUT=/tmp/m setsid bash .ci/gpu/mutants.sh > /tmp/m.log 2>&1 < /dev/null & sleep 570
#   call 2: while pgrep -f bin/mutants >/dev/null; do sleep 5; done; cp -r /tmp/m/mutants $OUT/
# Call 2 must not carry .gpu again: a call re-sends the paths it carries, which replaces the binaries
# under the running suite (seen on the H100, 2026-11-24: 38 mutants then failed "No such file").
# Several collecting calls of at most 10 minutes each are fine as long as none names `carry`.
# Or in parts on separate machines: CONFORMANCE_MUTANTS_RESUME=part1/mutants.json[:part2/...] judges only
# what the earlier parts did not, and writes one report for the whole (a part cut off keeps what it judged).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${MUTANTS_OUT:-${OUT:-/tmp/mutants}}
mkdir -p "$OUT/mutants"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/mutants/gpus.txt"
s=$(date +%s)
[ -f "$root/docs/conformance/mutants.json" ] && : "${CONFORMANCE_MUTANTS_HINT:=$root/docs/conformance/mutants.json}"
export CONFORMANCE_MUTANTS_HINT=${CONFORMANCE_MUTANTS_HINT:-}
CONFORMANCE_SHIM_SO=$root/.gpu/libmisbehave.so CONFORMANCE_MUTANTS_REPORT=$OUT/mutants \
  timeout "${MUTANTS_TIMEOUT:-560}" "$root/.gpu/bin/mutants" "$@" > "$OUT/mutants/log" 2>&1
echo "mutants rc=$? $(( $(date +%s) - s )) s"
grep -a -E "SURVIVED|ERROR|^test result|^---- |declared equivalent" "$OUT/mutants/log" | head -80
