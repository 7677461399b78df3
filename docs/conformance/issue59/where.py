#!/usr/bin/env python3
"""Where a default run's time went, label against label, from proof.sh's reports.

Usage: where.py PROOF_DIR BASE LABEL [N]
For each label: the median wall, and the median end of each worker's row (the lanes, the general
workers). Then the N trials whose median span grew most, and the N that shrank most, LABEL against
BASE (the spans as report.json's `span`, so a trial's wait for its turn is not in them)."""
import json, statistics, sys
from pathlib import Path

def runs(d, label):
    return sorted(p for p in Path(d).glob(f"{label}-*") if (p / "report.json").is_file())

def summary(d, label):
    walls, ends, spans = [], {}, {}
    for run in runs(d, label):
        r = json.loads((run / "report.json").read_text())
        walls.append(r["wall_s"])
        row_end = {}
        for t in r["trials"]:
            span, worker = t.get("span"), (t.get("timing") or {}).get("worker")
            if not span or not worker:
                continue
            row = "general" if worker.startswith("general") else worker
            row_end[row] = max(row_end.get(row, 0.0), span[1])
            spans.setdefault(f"{row:8} {t['trial']}", []).append(span[1] - span[0])
        for row, end in row_end.items():
            ends.setdefault(row, []).append(end)
    med = statistics.median
    return med(walls), {k: med(v) for k, v in ends.items()}, {k: med(v) for k, v in spans.items()}, len(walls)

def main():
    d, base, label = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    b, l = summary(d, base), summary(d, label)
    for name, (wall, ends, _, count) in ((base, b), (label, l)):
        rows = ", ".join(f"{k} {v:.2f}" for k, v in sorted(ends.items()))
        print(f"{name}: {count} runs, median wall {wall:.2f} s; median end of each row: {rows}")
    keys = set(b[2]) & set(l[2])
    diff = sorted(((l[2][k] - b[2][k], k) for k in keys), reverse=True)
    print(f"the {n} trials that grew most, {label} against {base} (median span, s):")
    for dt, k in diff[:n]:
        print(f"  {dt:+.2f}  {k}  {b[2][k]:.2f} -> {l[2][k]:.2f}")
    print(f"the {n} that shrank most:")
    for dt, k in diff[::-1][:n]:
        print(f"  {dt:+.2f}  {k}  {b[2][k]:.2f} -> {l[2][k]:.2f}")

main()
