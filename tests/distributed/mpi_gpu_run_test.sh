#!/usr/bin/env bash
# Distributed runs on the CUDA backend through mpirun: a GPU a rank (ctest labels gpu and mpi;
# docs/distributed.md). Skipped (exit 77) where the host has fewer than 2 CUDA GPUs.
# Usage: mpi_gpu_run_test.sh CASE GPULB MPIEXEC
#   gpu_patterns_task_queue  patterns P2 (the second half of the blocks nullified) under task-queue over
#                        one rank a GPU (at most 4): each rank's pool starts with a slice of the
#                        blocks, rank 0's all full, and the ranks steal from each other; verified on
#                        rank 0, every block once, tasks moved between ranks
#   gpu_merged_trace     the same run traced: one file with every rank's GPU under its rank, every
#                        task, the ranks' balancer tracks with the chunks they moved
#   gpu_uts_work_stealing  UTS T1 and T1L under work-stealing over 2 ranks and one rank a GPU (at
#                        most 4): the root starts on one rank, the others steal from its GPU's
#                        deques; exact counts verified on rank 0, chunks moved between ranks
#   gpu_killed_rank      a rank killed (SIGKILL) mid-run ends the job, named, in under 10 s
#   gpu_refused_policy   a policy without a distributed CUDA version is refused on every rank, once
# GPULB_TEST_GPUS=N takes the host for one of N GPUs: with one GPU split by MPS and
# CUDA_VISIBLE_DEVICES=0,0,0,0 (docs/distributed.md, "Four ranks on one GPU"), N=4 runs the cases
# on 4 ranks of one GPU (gpu_killed_rank then fails: under MPS the other ranks lose their GPU work
# with the killed one, and name their own GPU's error).
set -uo pipefail
case_name=$1 gpulb=$2 mpiexec=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL ($case_name): $*"; exit 1; }

gpus=${GPULB_TEST_GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')}
if [ "${gpus:-0}" -lt 2 ]; then echo "skipped: $case_name needs 2 CUDA GPUs, this host has ${gpus:-0}"; exit 77; fi
ranks=$((gpus < 4 ? gpus : 4))
flags=()
if "$mpiexec" --version 2>&1 | grep -Eq 'Open ?MPI|OpenRTE'; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
  flags+=(--oversubscribe --bind-to none)
fi
run_mpi() {
  timeout -k 5 60 "$mpiexec" "${flags[@]}" -np "$ranks" "$@"
}
run_mpi_on() {
  local np=$1
  shift
  timeout -k 5 60 "$mpiexec" "${flags[@]}" -np "$np" "$@"
}
json_value() { grep -E "^${3:-  }\"$1\": " "$2" | head -1 | sed -E 's/.*: ([0-9a-z]*).*/\1/'; }
blocks=200000
p2() { run_mpi "$gpulb" run patterns --param pattern=P2 --param blocks=$blocks --param work=4000 --policy task-queue --backend cuda --distributed "$@"; }

case "$case_name" in
  gpu_patterns_task_queue)
    p2 --json --no-trace >"$tmp/out.json" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
    [ "$(grep -c '"verified"' "$tmp/out.json")" = 1 ] || fail "expected one JSON report (rank 0's): $(cat "$tmp/out.json")"
    [ "$(json_value verified "$tmp/out.json")" = true ] || fail "not verified: $(cat "$tmp/out.json")"
    [ "$(json_value tasks "$tmp/out.json")" = $blocks ] || fail "tasks is not the $blocks blocks: $(cat "$tmp/out.json")"
    stolen=$(json_value rank_tasks_stolen "$tmp/out.json" "    ")
    [ "${stolen:-0}" -gt 0 ] || fail "no task moved between ranks: the pool did not spread"
    echo "P2 under task-queue over $ranks ranks of a GPU: verified, $blocks tasks, $stolen moved between ranks"
    ;;
  gpu_merged_trace)
    p2 -o "$tmp/t.gpulb" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || fail "exit $rc: $(cat "$tmp/err")"
    "$gpulb" info --json "$tmp/t.gpulb" >"$tmp/info.json" || fail "gpulb info cannot read the merged trace"
    [ "$(json_value ranks "$tmp/info.json")" = "$ranks" ] || fail "the trace does not say $ranks ranks"
    for ((r = 0; r < ranks; ++r)); do grep -q "\"name\": \"rank $r: .*H[0-9]*" "$tmp/info.json" || grep -q "\"name\": \"rank $r: " "$tmp/info.json" || fail "no device of rank $r"; done
    [ "$(json_value tasks "$tmp/info.json")" = $blocks ] || fail "the merged trace does not hold the $blocks tasks"
    steals=$(json_value rank_steals "$tmp/info.json")
    [ "${steals:-0}" -gt 0 ] || fail "gpulb info counts no chunk moved between ranks"
    echo "merged GPU trace: $ranks ranks, $blocks tasks, $steals chunks moved between ranks"
    ;;
  gpu_uts_work_stealing)
    for np in $(printf '%s\n' 2 "$ranks" | sort -u); do
      for tree in T1 T1L; do
        run_mpi_on "$np" "$gpulb" run uts --param tree=$tree --policy work-stealing --backend cuda --distributed \
          --json --no-trace >"$tmp/out.json" 2>"$tmp/err"
        rc=$?
        [ $rc -eq 0 ] || fail "$tree on $np ranks: exit $rc: $(cat "$tmp/err")"
        [ "$(grep -c '"verified"' "$tmp/out.json")" = 1 ] || fail "$tree on $np ranks: expected one JSON report: $(cat "$tmp/out.json")"
        [ "$(json_value verified "$tmp/out.json")" = true ] || fail "$tree on $np ranks: not verified: $(cat "$tmp/out.json")"
        stolen=$(json_value rank_tasks_stolen "$tmp/out.json" "    ")
        [ "${stolen:-0}" -gt 0 ] || fail "$tree on $np ranks: no task moved between ranks"
        echo "UTS $tree under work-stealing over $np ranks of a GPU: verified, $stolen tasks moved between ranks"
      done
    done
    ;;
  gpu_killed_rank)
    cat >"$tmp/wrap.sh" <<'WRAP'
#!/usr/bin/env bash
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}}" = 1 ]; then (sleep 3; kill -KILL $$) & fi
exec "$@"
WRAP
    chmod +x "$tmp/wrap.sh"
    start=$(date +%s%N)
    run_mpi "$tmp/wrap.sh" "$gpulb" run patterns --param pattern=P0 --param blocks=4000000 --param work=40000 --policy task-queue \
      --backend cuda --distributed --no-trace --rank-timeout 2000 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    elapsed_ms=$((($(date +%s%N) - start) / 1000000))
    [ $rc -ne 0 ] || fail "the job succeeded with rank 1 killed"
    [ $rc -ne 124 ] || fail "the job did not end within 60 s: $(tail -5 "$tmp/err")"
    [ "$elapsed_ms" -lt 13000 ] || fail "the job took $elapsed_ms ms to end (3 s of it before the kill)"
    grep -Eq "rank 1 (sent nothing|did not answer|with PID [0-9]+ on node [^ ]+ exited on signal 9)" "$tmp/err" ||
      fail "the error does not name rank 1: $(cat "$tmp/err")"
    echo "rank 1 killed 3 s in: the job ended $((elapsed_ms - 3000)) ms after, naming it: $(grep -m1 -E 'rank 1' "$tmp/err")"
    ;;
  gpu_refused_policy)
    run_mpi "$gpulb" run uts --param tree=T1 --policy static-list --backend cuda --distributed >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "exit $rc, not 2: $(cat "$tmp/err")"
    n=$(grep -c "has no distributed version yet on the cuda backend; use task-queue, work-stealing" "$tmp/err")
    [ "$n" = 1 ] || fail "expected the refusal once (rank 0), got $n: $(cat "$tmp/err")"
    ;;
  *) fail "unknown case" ;;
esac
