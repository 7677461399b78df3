#!/usr/bin/env python3
"""Print the outcome, message, notes and observations of the trials of a report whose names contain
one of the given words (calibrating new trials on a GPU machine).
Usage: notes.py REPORT.json WORD..."""
import json
import sys

r = json.load(open(sys.argv[1]))
words = sys.argv[2:]
for t in r["trials"]:
    if any(w in t["trial"] for w in words):
        print(f"== {t['trial']}: {t['outcome']} ({t.get('kind')}) {t.get('secs', 0):.2f} s")
        if t.get("message"):
            print("   message:", t["message"][:1500])
        for n in t.get("notes", []):
            print("   note:", n[:600])
        for o in t.get("observations", []):
            print(f"   obs: {o.get('call')}: observed {o.get('observed')}, expected {o.get('expected')}, ok {o.get('ok')}")
