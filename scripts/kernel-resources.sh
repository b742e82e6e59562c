#!/usr/bin/env bash
# Registers, stack and spills (ptxas, sm_90) of the scheduling kernels as the UTS, nqueens and
# patterns bodies instantiate them: a check that a kernel change costs no resident blocks, with no
# GPU needed. Compiles one translation unit of run_workload for those three scenarios (about two
# minutes on two cores) and prints a line per kernel whose name matches PATTERN.
#
#   scripts/kernel-resources.sh [SOURCE_ROOT] [PATTERN]   (defaults: this tree,
#                                                          work_stealing|task_queue|static_list|blocking)
# Compare two trees: run it on each (git worktree or git archive) and diff the outputs.
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
pattern=${2:-'work_stealing|task_queue|static_list|blocking'}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/tu.cu" <<'EOT'
#include "gpulb/kernels/run_workload.cuh"
#include "nqueens/nqueens.hpp"
#include "patterns/patterns.hpp"
#include "uts/uts.hpp"
namespace gpulb::builtin {
template <class I>
ExecOutput run_on_cuda(I& instance, const ExecPlan& plan) { return kernels::run_workload(instance, plan); }
template ExecOutput run_on_cuda(scenarios::uts::UtsInstance&, const ExecPlan&);
template ExecOutput run_on_cuda(scenarios::nqueens::NQueensInstance&, const ExecPlan&);
template ExecOutput run_on_cuda(scenarios::patterns::PatternsInstance&, const ExecPlan&);
}
EOT
includes=()
for d in builtin/include core/include core/cpu/include tracing/include scenarios kernels/include core/cuda/include; do
  includes+=("-I$src/$d")
done
"$nvcc" -DGPULB_HAVE_CUDA_BACKEND=1 -DGPULB_HAVE_LIBCUDACXX=1 "${includes[@]}" -O3 -DNDEBUG \
  --generate-code=arch=compute_90,code=[compute_90,sm_90] --expt-relaxed-constexpr -std=c++20 \
  -x cu -c "$work/tu.cu" -o "$work/tu.o" --resource-usage 2> "$work/ptxas.txt" || {
  grep -m 20 -E "error" "$work/ptxas.txt" >&2
  exit 1
}
python3 - "$work/ptxas.txt" "$pattern" <<'PY'
import re, subprocess, sys
current, frame = None, ""
for line in open(sys.argv[1]):
    m = re.search(r"Function properties for (\S+)", line)
    if m:
        current, frame = m.group(1), ""
        continue
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m:
        frame = "stack %s, spill stores %s, loads %s" % m.groups()
        continue
    m = re.search(r"Used (\d+) registers", line)
    if m and current and re.search(sys.argv[2], current):
        name = subprocess.run(["c++filt", current], capture_output=True, text=True).stdout.strip()
        name = re.sub(r"gpulb::(kernels::|scenarios::)?", "", name.replace("void ", ""))
        print("%3s registers, %s | %s" % (m.group(1), frame, re.sub(r">\(.*", ">", name)))
        current = None
PY
