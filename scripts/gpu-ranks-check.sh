#!/usr/bin/env bash
# The checks and the scaling runs of GPU ranks (`mpirun -np R gpulb run ... --distributed --backend
# cuda`, docs/distributed.md) on one GPU host, which may have CUDA but no MPI of its own.
#   scripts/gpu-ranks-check.sh OUTDIR [STAGE...]
# Stages (default: mpi build test scale); each writes OUTDIR/<stage>.log, and the script goes on
# after a failing stage; the exit code is the number of stages that failed.
#   mpi    an Open MPI to run with: mpirun on PATH, else the tarball OPENMPI_TGZ that
#          ../shared/tools/carry-openmpi.sh DIR makes (DIR/openmpi.tgz), unpacked into OPENMPI_ROOT
#          (default /opt/ompi)
#   build  configure BUILD (default build-gpu-mpi/: CUDA and MPI on, viewer off, Release) and build
#          gpulb and the tests
#   test   ctest -L mpi: the gpu+mpi cases run on a host with 2 GPUs or more (killed rank, merged
#          trace, refused policy, P2 over ranks), the CPU-rank cases everywhere
#   scale  patterns P3 (400,000 blocks of work 4000) under task-queue: one process on 1 GPU, then
#          1, 2 and 4 ranks of one GPU each and 2 ranks of 2 GPUs, as the GPUs allow (REPEATS runs
#          each, default 3, every run verified); OUTDIR/scale.md has the median makespans and the
#          speedups over one rank
# SCALE_BACKEND=cpu runs the scale table on CPU ranks of 2 workers, as if the host had 4 GPUs, and
# SCALE_BLOCKS sets the blocks: to try the script where there is no GPU.
set -u
out=${1:?usage: scripts/gpu-ranks-check.sh OUTDIR [STAGE...]}
shift
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(mpi build test scale)
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-gpu-mpi}
repeats=${REPEATS:-3}
backend=${SCALE_BACKEND:-cuda}
mkdir -p "$out"
out=$(cd "$out" && pwd)
failed=0

stage() {  # stage NAME SECONDS FUNCTION: run with a time limit, log, count failures
  local name=$1 limit=$2 fn=$3 t0=$SECONDS
  echo "== $name" >&2
  if timeout "$limit" bash -c "$(declare -f "$fn" use_mpi scale_row median); $fn" >"$out/$name.log" 2>&1; then
    echo "== $name: ok ($((SECONDS - t0)) s)" >&2
  else
    echo "== $name: FAILED (exit $?, $((SECONDS - t0)) s); last lines:" >&2
    tail -20 "$out/$name.log" >&2
    failed=$((failed + 1))
  fi
}

# The environment mpirun needs where it was unpacked from the tarball (carry-openmpi.sh's header).
openmpi_root=${OPENMPI_ROOT:-/opt/ompi}
# An OPAL_PREFIX naming a missing folder (left from another Open MPI) makes mpirun refuse every
# flag as an "unknown option": drop it.
if [ -n "${OPAL_PREFIX:-}" ] && [ ! -d "$OPAL_PREFIX" ]; then
  echo "gpu-ranks-check: OPAL_PREFIX=$OPAL_PREFIX does not exist: unset" >&2
  unset OPAL_PREFIX
fi
mpi_env() {
  if ! command -v mpirun >/dev/null && [ -x "$openmpi_root/usr/bin/mpirun" ]; then
    export OPAL_PREFIX=$openmpi_root/usr PATH=$openmpi_root/usr/bin:$PATH
    export LD_LIBRARY_PATH=$openmpi_root/usr/lib/x86_64-linux-gnu:$openmpi_root/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
}
mpi_env
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
blocks=${SCALE_BLOCKS:-400000}
export root build repeats backend out openmpi_root blocks OPENMPI_TGZ=${OPENMPI_TGZ:-}

use_mpi() {
  if command -v mpirun >/dev/null; then
    echo "mpirun: $(command -v mpirun)"
  else
    [ -n "$OPENMPI_TGZ" ] && [ -f "$OPENMPI_TGZ" ] ||
      { echo "no mpirun on PATH: set OPENMPI_TGZ to what carry-openmpi.sh DIR made"; return 1; }
    mkdir -p "$openmpi_root" && tar -xzf "$OPENMPI_TGZ" -C "$openmpi_root" || return 1
    echo "unpacked $OPENMPI_TGZ into $openmpi_root"
  fi
  mpirun --version | head -1
}

build_all() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPULB_CUDA=ON -DGPULB_MPI=ON \
    -DGPULB_VIEWER=OFF -DGPULB_TESTS=ON -DMPIEXEC_EXECUTABLE="$(command -v mpirun)" && ninja -C "$build"
}

test_mpi() {
  cd "$build" && ctest -L mpi --output-on-failure --timeout 150
}

median() { sort -g | awk '{v[NR] = $1} END {print NR ? v[int((NR + 1) / 2)] : "nan"}'; }

# One row: LABEL RANKS GPUS_PER_RANK (RANKS 0: one process, no mpirun). Prints "label ms".
scale_row() {
  local label=$1 ranks=$2 per=$3 times=() i json ms
  local run=("$build/tools/gpulb" run patterns --param pattern=P3 --param blocks="$blocks"
             --param work=4000 --policy task-queue --backend "$backend" --no-trace --json)
  if [ "$backend" = cuda ]; then run+=(--gpus "$per"); else run+=(--workers 2); fi
  for i in $(seq 1 "$repeats"); do
    if [ "$ranks" -eq 0 ]; then
      json=$("${run[@]}" 2>>"$out/scale.err")
    else
      json=$(mpirun --oversubscribe --bind-to none -np "$ranks" "${run[@]}" --distributed 2>>"$out/scale.err")
    fi
    ms=$(python3 -c 'import json,sys; j=json.loads(sys.stdin.read()); print(j["makespan_ns"]/1e6 if j["verified"] else "unverified")' <<<"$json" 2>/dev/null)
    [ -n "$ms" ] && [ "$ms" != unverified ] || { echo "$label: run $i failed or did not verify" >&2; return 1; }
    times+=("$ms")
  done
  echo "$label $(printf '%s\n' "${times[@]}" | median)"
}

scale() {
  local gpus rows=() base line machine
  if [ "$backend" = cuda ]; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU '); else gpus=4; fi
  [ "${gpus:-0}" -ge 1 ] || { echo "no CUDA GPU"; return 1; }
  rows+=("$(scale_row one-process-1-GPU 0 1)") || return 1
  for r in 1 2 4; do
    [ "$r" -le "$gpus" ] || continue
    rows+=("$(scale_row "$r-ranks-x-1-GPU" "$r" 1)") || return 1
  done
  if [ "$gpus" -ge 4 ]; then rows+=("$(scale_row 2-ranks-x-2-GPUs 2 2)") || return 1; fi
  base=$(printf '%s\n' "${rows[@]}" | awk '$1 == "1-ranks-x-1-GPU" {print $2}')
  {
    echo "patterns P3, $blocks blocks of work 4000, task-queue, --backend $backend, median of $repeats"
    machine=$(nvidia-smi -L 2>/dev/null | head -1 | sed 's/ (UUID.*//')
    [ "$backend" = cuda ] || machine="CPU ranks of 2 workers, no GPU"
    echo "verified runs each ($(date -u +%F), $machine)"
    echo
    echo "| run | makespan | speedup over 1 rank |"
    echo "|---|---|---|"
    for line in "${rows[@]}"; do
      awk -v b="$base" '{printf "| %s | %.2f ms | %.2fx |\n", $1, $2, b / $2}' <<<"$line"
    done
  } | tee "$out/scale.md"
}

for s in "${stages[@]}"; do
  case $s in
    mpi)
      stage mpi 300 use_mpi
      mpi_env ;;
    build) stage build 1800 build_all ;;
    test) stage test 1200 test_mpi ;;
    scale) stage scale 1800 scale ;;
    *) echo "unknown stage '$s' (mpi, build, test, scale)" >&2; exit 2 ;;
  esac
done
exit $failed
