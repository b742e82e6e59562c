#!/usr/bin/env python3
"""Tracing overhead on the CPU backend, two builds side by side (docs/benchmarks.md, "Tracing overhead").

    scripts/trace-overhead-ab.py OLD_GPULB NEW_GPULB [REPEATS [WORKERS [ROWS]]]

For each row (every CPU policy on patterns P0; the spawning ones on UTS T1; the request ones on
nbody) it runs `gpulb run ... --backend cpu --json` with and without --no-trace, alternating
old-off, old-on, new-off, new-on REPEATS times (default 5) on WORKERS threads (default 2), and
prints a Markdown row: the medians' on/off ratio of the makespan and of the workers' CPU time
(metric worker_cpu_us, which a shared machine's load disturbs far less than the makespan; "-"
where a build does not report it). ROWS: a comma-separated subset as policy/scenario
(work-stealing/uts,hardware/patterns). One build only: pass it twice. Every run must verify.
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
UTS = ("uts", ["--param", "tree=T1", "--param", "reference=off"], "UTS T1")
NBODY = ("nbody", [], "nbody (defaults)")
rows = [(p, P0) for p in ["task-queue", "hardware", "chunked", "static-list", "blocking-queue", "work-stealing"]]
rows += [(p, UTS) for p in ["work-stealing", "static-list", "blocking-queue"]]
rows += [(p, NBODY) for p in ["combining", "hybrid"]]


def measure(gpulb, scenario, policy, trace):
    cmd = [gpulb, "run", scenario[0], *scenario[1], "--backend", "cpu", "--workers", workers, "--policy", policy, "--json"]
    if not trace:
        cmd.append("--no-trace")
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}\n{out.stderr}")
    result = json.loads(out.stdout)
    if not result["verified"] and result.get("checked", True):
        sys.exit(f"{' '.join(cmd)}: did not verify: {result['verification']}")
    cpu = result.get("metrics", {}).get("worker_cpu_us")
    return result["makespan_ns"] / 1e6, (cpu / 1e3 if cpu is not None else None)


def ratio(on, off):
    if None in on or None in off:
        return "-"
    return f"{statistics.median(on) / statistics.median(off):.3f}"


print(f"{workers} workers, medians of {repeats}.\n")
print("| policy | workload | makespan off (after) | makespan on/off, before | after | worker CPU on/off, before | after |")
print("|---|---|---|---|---|---|---|")
for policy, scenario in rows:
    if only and f"{policy}/{scenario[0]}" not in only:
        continue
    span = {key: [] for key in ("old_off", "old_on", "new_off", "new_on")}
    cpu = {key: [] for key in span}
    for _ in range(repeats):
        for key, gpulb, trace in (("old_off", old, False), ("old_on", old, True), ("new_off", new, False), ("new_on", new, True)):
            s, c = measure(gpulb, scenario, policy, trace)
            span[key].append(s)
            cpu[key].append(c)
    print(f"| {policy} | {scenario[2]} | {statistics.median(span['new_off']):.1f} ms | {ratio(span['old_on'], span['old_off'])} | "
          f"{ratio(span['new_on'], span['new_off'])} | {ratio(cpu['old_on'], cpu['old_off'])} | {ratio(cpu['new_on'], cpu['new_off'])} |",
          flush=True)
