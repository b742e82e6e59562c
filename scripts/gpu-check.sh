#!/usr/bin/env bash
# The checks a GPU change needs, on a machine with a CUDA GPU (no viewer, no display needed):
#   scripts/gpu-check.sh OUTDIR [STAGE...]
# Stages (default: build test sanitize bench):
#   build      configure (viewer off, Release) and build the CLI and the GPU tests into build-gpu/
#   test       ctest -L gpu
#   sanitize   compute-sanitizer memcheck and racecheck over the spawning-policy GPU tests
#   bench      gpulb bench uts, nqueens and combining (Markdown + JSON)
#   traces     small real traces of uts, nqueens, connect4 and nbody into OUTDIR
# Each stage writes OUTDIR/<stage>.log and the script goes on after a failing stage; the exit code
# is the number of stages that failed.
set -u
out=${1:?usage: scripts/gpu-check.sh OUTDIR [STAGE...]}
shift
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(build test sanitize bench)
mkdir -p "$out"
build=build-gpu
gpulb=$build/tools/gpulb
failed=0

stage() {  # stage NAME SECONDS COMMAND...: run with a time limit, log, count failures
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "== $name" >&2
  if timeout "$limit" bash -c "$*" >"$out/$name.log" 2>&1; then
    echo "== $name: ok ($((SECONDS - t0)) s)" >&2
  else
    echo "== $name: FAILED (exit $?, $((SECONDS - t0)) s); last lines:" >&2
    tail -25 "$out/$name.log" >&2
    failed=$((failed + 1))
  fi
}

for s in "${stages[@]}"; do
  case $s in
    build)
      stage build 400 "cmake -S . -B $build -G Ninja -DGPULB_CUDA=ON -DGPULB_VIEWER=OFF -DCMAKE_BUILD_TYPE=Release && ninja -C $build gpulb gpu_runtime_tests dynamic_gpu_tests multi_gpu_ws_tests gpu_fault_tests gcharm_gpu_tests md_gpu_tests md2d_gpu_tests work_stealing_lanes_gpu_tests" ;;
    test)
      stage test 480 "cd $build && ctest -L gpu --output-on-failure" ;;
    sanitize)
      # The large trees (T1) take too long under the sanitizers; the small instances cover the same code.
      filter='*GpuSpawning*:*GpuStaticList*:*GpuBlockingQueue*:*GpuWorkStealing*:-*T1*:*Watchdog*'
      stage memcheck 300 "compute-sanitizer --tool memcheck --error-exitcode 9 $build/tests/gpu/dynamic_gpu_tests --gtest_filter='$filter'"
      stage memcheck_faults 120 "for p in hardware task-queue work-stealing; do compute-sanitizer --tool memcheck --error-exitcode 9 $gpulb run faults --backend cuda --no-trace --param tasks=300 --param at=7 --policy \$p || exit 1; done"
      stage memcheck_gcharm 300 "compute-sanitizer --tool memcheck --error-exitcode 9 $build/tests/gpu/gcharm_gpu_tests --gtest_filter='*adaptive_reuse_sorted*:*adaptive_redundant*:*LaunchesCarry*:GpuHybrid.*'"
      stage racecheck_gcharm 300 "compute-sanitizer --tool racecheck --error-exitcode 9 $build/tests/gpu/gcharm_gpu_tests --gtest_filter='*adaptive_reuse_sorted*'"
      stage memcheck_lanes 300 "compute-sanitizer --tool memcheck --error-exitcode 9 $build/tests/gpu/work_stealing_lanes_gpu_tests --gtest_filter='-*T1*'"
      stage racecheck_lanes 300 "compute-sanitizer --tool racecheck --error-exitcode 9 $build/tests/gpu/work_stealing_lanes_gpu_tests --gtest_filter='*SmallDeques*:*TraceHasAZone*'"
      stage racecheck 300 "compute-sanitizer --tool racecheck --error-exitcode 9 $build/tests/gpu/dynamic_gpu_tests --gtest_filter='*GpuSpawning.EverySpawnedTaskRunsExactlyOnce*:*GpuSpawningScenarios.Connect4*'" ;;
    bench)
      stage bench_uts 420 "$gpulb bench uts --repeats 3 -o $out/bench_uts.md"
      stage bench_nqueens 200 "$gpulb bench nqueens --repeats 3 -o $out/bench_nqueens.md"
      stage bench_combining 300 "$gpulb bench combining --backend cuda --repeats 3 -o $out/bench_combining.md" ;;
    traces)
      stage traces 200 "$gpulb run uts --param tree=custom --param t=1 --param a=3 --param d=7 --param b=4 --param r=19 --policy work-stealing --backend cuda -o $out/uts-geometric-d7-work-stealing.gpulb &&
        $gpulb run nqueens --param n=10 --param cutoff=4 --policy work-stealing --backend cuda -o $out/nqueens-10-work-stealing.gpulb &&
        $gpulb run connect4 --param lookahead=4 --policy static-list --backend cuda -o $out/connect4-4-static-list.gpulb &&
        $gpulb run connect4 --param lookahead=4 --policy work-stealing --backend cuda -o $out/connect4-4-work-stealing.gpulb &&
        $gpulb run nbody --param particles=20000 --param steps=2 --policy combining --param strategy=adaptive --backend cuda -o $out/nbody-20k-combining-adaptive.gpulb &&
        $gpulb run nbody --param particles=20000 --param steps=2 --policy combining --param strategy=static --backend cuda -o $out/nbody-20k-combining-static.gpulb" ;;
    *) echo "unknown stage '$s' (build, test, sanitize, bench, traces)" >&2; exit 2 ;;
  esac
done
exit $failed
