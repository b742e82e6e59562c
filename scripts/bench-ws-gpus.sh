#!/usr/bin/env bash
# Work stealing across GPUs: UTS nodes/s on 1, 2, ... GPUs, untraced, with the
# per-GPU balance of each run. Usage:
#   scripts/bench-ws-gpus.sh [GPULB] [TREES] [GPU_COUNTS] [REMOTES] [REPEATS]
#   scripts/bench-ws-gpus.sh build/tools/gpulb "T1L T3L" "1 2 4" "steal request" 3
# Prints one line a run and, per (tree, remote, gpus), the median rate and its ratio to 1 GPU.
# Extra --param settings go in WS_PARAMS, e.g. WS_PARAMS="--param remote_chunk=4", or
# WS_PARAMS="--param peer=off" for the run through host memory on a host with peer access.
set -euo pipefail
GPULB=${1:-build/tools/gpulb}
TREES=${2:-T1L T3L}
COUNTS=${3:-1 2}
REMOTES=${4:-steal request}
REPEATS=${5:-3}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Rounds outermost, so that each GPU count's runs alternate with the others' (a drift of the host
# over the call then touches every count alike).
for ((i = 0; i < REPEATS; i++)); do
  for tree in $TREES; do
    for remote in $REMOTES; do
      for g in $COUNTS; do
        # shellcheck disable=SC2086
        "$GPULB" run uts --backend cuda --policy work-stealing --gpus "$g" --param tree="$tree" --param remote="$remote" \
          --param watchdog_ms=60000 ${WS_PARAMS:-} --no-trace --json |
          python3 -c '
import json, sys
tree, remote, g = sys.argv[1:4]
j = json.load(sys.stdin)
m = j.get("metrics", {})
rate = j["tasks"] / j["makespan_ns"] * 1e3
per = [m.get("gpu%d_tasks" % k, 0) for k in range(int(g))] if int(g) > 1 else [j["tasks"]]
share = " ".join("%.1f%%" % (100.0 * p / j["tasks"]) for p in per)
print("%s %s %s %.1f  # M nodes/s; tasks per GPU %s; steals %s remote %s" %
      (tree, remote, g, rate, share, m.get("steals"), m.get("remote_steals", 0)))
' "$tree" "$remote" "$g" | tee -a "$out"
      done
    done
  done
done
echo "--- medians (M nodes/s) and speedup over 1 GPU"
python3 - "$out" <<'EOF'
import statistics, sys
rates = {}
for line in open(sys.argv[1]):
    tree, remote, g, rate = line.split()[:4]
    rates.setdefault((tree, remote), {}).setdefault(int(g), []).append(float(rate))
for (tree, remote), by in sorted(rates.items()):
    base = statistics.median(by[1]) if 1 in by else None
    cells = []
    for g in sorted(by):
        med = statistics.median(by[g])
        cells.append("%d GPU %.1f%s" % (g, med, " (%.2fx)" % (med / base) if base and g > 1 else ""))
    print("%s remote=%s: %s" % (tree, remote, ", ".join(cells)))
EOF
