"""Summarise repeated conformance runs (one report directory each, holding report.json and rc):
exit code, wall time, totals, and whether every run had the same outcome for every trial."""
import hashlib
import json
import os
import statistics
import sys

rows = []
for d in sys.argv[1:]:
    j = json.load(open(os.path.join(d, "report.json")))
    rc = open(os.path.join(d, "rc")).read().strip()
    outcomes = sorted((t["trial"], t["outcome"]) for t in j["trials"])
    digest = hashlib.sha256(json.dumps(outcomes).encode()).hexdigest()[:12]
    t = j["totals"]
    rows.append((os.path.basename(d), rc, j["wall_s"], t["passed"], t["failed"], t["ignored"], t["changed"], digest))
print("| run | exit | wall (s) | passed | failed | ignored | changed | outcomes (sha256) |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %s | %.2f | %d | %d | %d | %d | %s |" % r)
w = [r[2] for r in rows]
print(
    "\nwall: median %.2f, mean %.2f, min %.2f, max %.2f s; distinct outcome sets: %d; exit codes: %s"
    % (statistics.median(w), statistics.mean(w), min(w), max(w), len({r[7] for r in rows}), sorted({r[1] for r in rows}))
)
