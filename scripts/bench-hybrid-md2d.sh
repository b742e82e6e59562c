#!/usr/bin/env bash
# The hybrid policy's target on md2d: rounds of GPU only (static, cpu_share=0), GPU only under the
# combining policy (adaptive: the GPU's own scheduler), adaptive hybrid and CPU only (static,
# cpu_share=1), alternating, untraced; then the medians and adaptive's rate over the sum of the
# CPU-only rate and the faster GPU-only rate (the target: 0.9), as `gpulb bench hybrid`. Usage:
#   scripts/bench-hybrid-md2d.sh [GPULB] [ROUNDS]
#   scripts/bench-hybrid-md2d.sh build/tools/gpulb 3
# The workload: MD2D_PARAMS (default: 100,000 particles, 7 x 7 patches, 5 steps, 8 producers).
# TRACE=1 also writes one traced adaptive run to md2d-hybrid-adaptive.gpulb and prints its
# launches per decision (scripts/hybrid-launches.py).
set -euo pipefail
GPULB=${1:-build/tools/gpulb}
ROUNDS=${2:-3}
PARAMS=${MD2D_PARAMS:---param particles=100000 --param patches=7 --param steps=5 --param producers=8}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((i = 1; i <= ROUNDS; i++)); do
  for run in gpu combining adaptive cpu; do
    policy=hybrid
    case $run in
      gpu) extra="--param strategy=static --param cpu_share=0" ;;
      combining) policy=combining extra="--param strategy=adaptive" ;;
      adaptive) extra="--param strategy=adaptive" ;;
      cpu) extra="--param strategy=static --param cpu_share=1" ;;
    esac
    # shellcheck disable=SC2086
    "$GPULB" run md2d --policy $policy --backend cuda --no-trace --json $PARAMS $extra |
      python3 -c '
import json, sys
run, i = sys.argv[1:3]
j = json.load(sys.stdin)
m = j["metrics"]
print(run, i, j["makespan_ns"], j["tasks"], m.get("cpu_requests", 0), m.get("gpu_launches", 0), m.get("gpu_kernel_ns", 0),
      m.get("assemble_ns", 0), "verified" if j["verified"] else "NOT-VERIFIED")
' "$run" "$i" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    run, _, ns, tasks, cpu_req, gpu_launches, kernel_ns, assemble_ns, ok = line.split()
    runs.setdefault(run, []).append((int(ns), int(tasks), int(cpu_req), int(gpu_launches), int(kernel_ns), int(assemble_ns), ok))
rate = {}
for run, rs in runs.items():
    ms = statistics.median(r[0] for r in rs) / 1e6
    rate[run] = statistics.median(r[1] / (r[0] / 1e9) for r in rs)
    print(f"{run:9s} median {ms:8.1f} ms  {rate[run]:8.1f} requests/s  CPU requests {[r[2] for r in rs]}  "
          f"GPU launches {[r[3] for r in rs]}  kernel {[round(r[4] / 1e6) for r in rs]} ms  assembly {[round(r[5] / 1e6, 1) for r in rs]} ms  {set(r[6] for r in rs)}")
if {"gpu", "combining", "cpu", "adaptive"} <= rate.keys():
    gpu = max(rate["gpu"], rate["combining"])
    s = gpu + rate["cpu"]
    print(f"adaptive / (CPU only + faster GPU only) = {rate['adaptive'] / s:.3f} (target 0.9: {0.9 * s:.1f} requests/s); adaptive / faster GPU only = {rate['adaptive'] / gpu:.3f}")
PY
if [[ "${TRACE:-0}" == 1 ]]; then
  # shellcheck disable=SC2086
  "$GPULB" run md2d --policy hybrid --backend cuda $PARAMS --param strategy=adaptive -o md2d-hybrid-adaptive.gpulb > /dev/null
  "$GPULB" export md2d-hybrid-adaptive.gpulb --format chrome -o md2d-hybrid-adaptive.json > /dev/null
  python3 "$(dirname "$0")/hybrid-launches.py" md2d-hybrid-adaptive.json
fi
