#!/bin/bash
# After ../shared/tools/gpu-stage: copy into .gpu/ what the GPU scripts need besides the suite — the
# suite's own test binaries (feature `selftest`), the mutation library shim/ as build.rs built it (libmisbehave.so, the
# cuGetProcAddress-only variant and the variant without cuGetProcAddress) and the example built with
# `dynamic-loading`.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
# The suite's own test targets (shim, mutants, entry, travel, reports, …) and its unit tests need
# the feature `selftest` (issue 59), which gpu-stage does not pass: built here and staged beside the
# suite under the names gpu-stage gives (`conformance-unit` for the unit tests); the suite binary
# gpu-stage staged stays (the one `cargo test -p conformance` runs).
mkdir -p .gpu/bin
cargo test -p conformance --features selftest --lib --tests --bench allocator --no-run --message-format=json 2>/dev/null |
  python3 -c '
import json, shutil, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    t = m.get("target") or {}
    if m.get("reason") != "compiler-artifact" or not m.get("executable") or t.get("name") == "conformance" and t["kind"][0] != "lib":
        continue
    name = t["name"] + ("-unit" if t["kind"][0] == "lib" else "")
    shutil.copy2(m["executable"], ".gpu/bin/" + name)
    print("staged", name)
'
for so in libmisbehave.so libmisbehave-proc-only.so libmisbehave-no-proc-address.so; do
  f=$(ls -t target/debug/build/conformance-*/out/$so | head -1)
  cp "$f" .gpu/
done
cargo build -q -p cuda-mempool-sys --example pool_roundtrip --features dynamic-loading
cp target/debug/examples/pool_roundtrip .gpu/pool_roundtrip_dynamic
objcopy --strip-debug .gpu/pool_roundtrip_dynamic
ls -l .gpu/*.so .gpu/pool_roundtrip_dynamic
# The checkpoint leg's outside engine and mutant engines (shim/engine/, issue 57).
cp "$(ls -t target/debug/build/conformance-*/out/cump-checkpoint-engine | head -1)" .gpu/
# The fake NVML (branch simulation) and Debian's 535 libcuda, compressed (the mismatched driver).
cp "$(ls -t target/debug/build/conformance-*/out/libfake-nvml.so | head -1)" .gpu/
lib=$(readlink -f /usr/lib/x86_64-linux-gnu/libcuda.so.1 2>/dev/null || true)
if [ -n "$lib" ] && [ -f "$lib" ]; then xz -T2 -6 -c "$lib" > ".gpu/$(basename "$lib").xz"; fi
# The linked-symbol FFI bench (ffi-bench, issue 24), built on its own so that cuda-mempool-sys stays
# linked (a build beside the suite would unify in `dynamic-loading`).
exe=$(cargo bench -q -p ffi-bench --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys; print([j["executable"] for j in map(json.loads, sys.stdin) if j.get("executable")][-1])')
cp "$exe" .gpu/ffi-linked
strip --strip-debug .gpu/ffi-linked
