#!/usr/bin/env python3
"""Tracing overhead on the CPU backend, two builds side by side (docs/benchmarks.md, "Tracing overhead").

    scripts/trace-overhead-ab.py OLD_GPULB NEW_GPULB [REPEATS [WORKERS [ROWS]]]

For each row (every CPU policy on patterns P0; the spawning ones on UTS T1; the request ones on
nbody) it runs `gpulb run ... --backend cpu --json` with and without --no-trace, alternating
old-off, old-on, new-off, new-on REPEATS times (default 5) on WORKERS threads (default 2), and
prints a Markdown row of medians of the makespan. ROWS: a comma-separated subset as
policy/scenario (work-stealing/uts,hardware/patterns). One build only: pass it twice.
Every run must verify.
"""
import json
import statistics
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
old, new = sys.argv[1], sys.argv[2]
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 5
workers = sys.argv[4] if len(sys.argv) > 4 else "2"
only = sys.argv[5].split(",") if len(sys.argv) > 5 else None

P0 = ("patterns", ["--param", "pattern=P0", "--param", "blocks=20000", "--param", "work=200"], "P0 20000 x 200")
UTS = ("uts", ["--param", "tree=T1"], "UTS T1")
NBODY = ("nbody", [], "nbody (defaults)")
rows = [(p, P0) for p in ["task-queue", "hardware", "chunked", "static-list", "blocking-queue", "work-stealing"]]
rows += [(p, UTS) for p in ["work-stealing", "static-list", "blocking-queue"]]
rows += [(p, NBODY) for p in ["combining", "hybrid"]]


def makespan_ms(gpulb, scenario, policy, trace):
    cmd = [gpulb, "run", scenario[0], *scenario[1], "--backend", "cpu", "--workers", workers, "--policy", policy, "--json"]
    if not trace:
        cmd.append("--no-trace")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}\n{out.stderr}")
    result = json.loads(out.stdout)
    if not result["verified"]:
        sys.exit(f"{' '.join(cmd)}: did not verify: {result['verification']}")
    return result["makespan_ns"] / 1e6


print("| policy | workload | before off | before on | before on/off | after off | after on | after on/off |")
print("|---|---|---|---|---|---|---|---|")
for policy, scenario in rows:
    if only and f"{policy}/{scenario[0]}" not in only:
        continue
    runs = {key: [] for key in ("old_off", "old_on", "new_off", "new_on")}
    for _ in range(repeats):
        runs["old_off"].append(makespan_ms(old, scenario, policy, False))
        runs["old_on"].append(makespan_ms(old, scenario, policy, True))
        runs["new_off"].append(makespan_ms(new, scenario, policy, False))
        runs["new_on"].append(makespan_ms(new, scenario, policy, True))
    m = {key: statistics.median(v) for key, v in runs.items()}
    print(f"| {policy} | {scenario[2]} | {m['old_off']:.1f} ms | {m['old_on']:.1f} ms | {m['old_on'] / m['old_off']:.3f} | "
          f"{m['new_off']:.1f} ms | {m['new_on']:.1f} ms | {m['new_on'] / m['new_off']:.3f} |", flush=True)
