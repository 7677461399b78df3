#!/usr/bin/env python3
"""Compare the verdicts of reports with a reference report (issue 36: a scheduler that changes a
verdict is wrong): for each report, the trials whose outcome differs from the reference's, and the
wall time.   Usage: verdicts.py REFERENCE.json REPORT.json..."""
import json
import sys


def outcomes(path):
    r = json.load(open(path))
    return {t["trial"]: t["outcome"] for t in r["trials"]}, r.get("wall_s")


ref, ref_wall = outcomes(sys.argv[1])
print(f"reference {sys.argv[1]}: {len(ref)} trials, wall {ref_wall:.2f} s")
bad = 0
for p in sys.argv[2:]:
    got, wall = outcomes(p)
    diff = sorted(
        (t, ref.get(t), got.get(t)) for t in set(ref) | set(got) if ref.get(t) != got.get(t)
    )
    print(f"{p}: {len(got)} trials, wall {wall:.2f} s, {len(diff)} verdicts differ")
    for t, a, b in diff:
        print(f"    {t}: reference {a}, this run {b}")
    bad += bool(diff)
sys.exit(1 if bad else 0)
