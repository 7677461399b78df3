#!/usr/bin/env python3
"""How long cuInit and a primary context take when N processes start at once (issue 36: the
driver creates contexts one at a time machine-wide). Usage: ctxbench.py N [N ...]"""
import json, subprocess, sys, time

CHILD = r'''
import time, json
t0 = time.time()
try:
    from cuda.bindings import driver as d
except ImportError:
    from cuda import cuda as d
t1 = time.time()
d.cuInit(0)
t2 = time.time()
err, ctx = d.cuDevicePrimaryCtxRetain(0)
d.cuCtxSetCurrent(ctx)
err, free, total = d.cuMemGetInfo()
t3 = time.time()
print(json.dumps({"import": t1 - t0, "init": t2 - t1, "ctx": t3 - t2, "start": t1, "end": t3}))
'''

for n in [int(a) for a in sys.argv[1:]]:
    s = time.time()
    ps = [subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True) for _ in range(n)]
    rs = [json.loads(p.communicate()[0]) for p in ps]
    wall = time.time() - s
    init = sorted(r["init"] for r in rs)
    ctx = sorted(r["ctx"] for r in rs)
    span = max(r["end"] for r in rs) - min(r["start"] for r in rs)
    print(f"{n} at once: wall {wall:.2f} s, init+ctx span {span:.2f} s, "
          f"cuInit min/med/max {init[0]:.3f}/{init[n//2]:.3f}/{init[-1]:.3f} s, "
          f"context min/med/max {ctx[0]:.3f}/{ctx[n//2]:.3f}/{ctx[-1]:.3f} s")
