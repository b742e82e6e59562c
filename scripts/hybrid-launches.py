#!/usr/bin/env python3
"""The host track of a hybrid trace, exported as Chrome JSON: each split with its launches (side,
requests, ms after the split) and each launch's end. Usage: scripts/hybrid-launches.py TRACE.json"""
import json
import sys

events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
host = sorted((e for e in events if e.get("ph") != "M" and e.get("name") in ("request_split", "kernel_launch", "kernel_end")),
              key=lambda e: e["ts"])
lane = {1: "CPU", 2: "GPU"}
split_at = None
for e in host:
    t = e["ts"] / 1000
    a = e.get("args", {})
    if e["name"] == "request_split":
        split_at = t
        print(f"{t:9.2f} ms  split: {a.get('arg')} requests to the CPU ({a.get('aux', 0) / 10:.1f}% of the items)")
    else:
        side = lane.get(a.get("aux", 0) >> 8, "-")
        after = f" (+{t - split_at:.2f} ms after the split)" if split_at is not None and e["name"] == "kernel_launch" else ""
        print(f"{t:9.2f} ms    {e['name']:13s} {side} {a.get('arg')} requests{after}")
