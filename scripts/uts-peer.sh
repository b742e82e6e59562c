#!/usr/bin/env bash
# The official UTS 2.1 peer (../shared/peers/uts-1.1, uts_shm with OpenMP, built unmodified with
# the flags of ../shared/peers/run-uts-peer.sh), run with its per-thread report (-v 3: the counts
# are kept in every run, -v only prints them), so that `gpulb bench uts` can put the peer's load
# max/min beside the CPU backend's from the same run.
#   scripts/uts-peer.sh [THREADS] [TREE...]      (default: all cores; T1L T3L)
# Prints one line a run, run-uts-peer.sh's line plus the nodes each thread explored:
#   PEER impl=uts_shm-omp tree=T1 threads=2 nodes=4130071 s=0.41 nodes_per_s=9990129 thread_nodes=2088295,2041776
# UTS_PEER_SRC names another copy of uts-1.1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
src=${UTS_PEER_SRC:-$repo/../shared/peers/uts-1.1}
threads=${1:-$(nproc)}; shift || true
trees=("$@"); [ ${#trees[@]} -eq 0 ] && trees=(T1L T3L)
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "uts-peer.sh: THREADS must be a positive integer, got '$threads'" >&2; exit 2; }
# uts_shm's OpenMP build has MAX_THREADS 32 and indexes its per-thread stacks unchecked.
((threads <= 32)) || { echo "uts-peer.sh: THREADS is $threads; the peer's OpenMP build runs at most 32 threads" >&2; exit 2; }
[ -f "$src/uts_shm.c" ] || { echo "uts-peer.sh: no uts_shm.c in $src (set UTS_PEER_SRC to the uts-1.1 folder)" >&2; exit 2; }
args() { case $1 in  # the sample trees of uts-1.1/sample_trees.sh
  T1) echo "-t 1 -a 3 -d 10 -b 4 -r 19";;  T1L) echo "-t 1 -a 3 -d 13 -b 4 -r 29";;
  T2) echo "-t 1 -a 2 -d 16 -b 6 -r 502";; T2L) echo "-t 1 -a 2 -d 23 -b 7 -r 220";;
  T3) echo "-t 0 -b 2000 -q 0.124875 -m 8 -r 42";; T3L) echo "-t 0 -b 2000 -q 0.200014 -m 5 -r 7";;
  *) echo "uts-peer.sh: unknown tree '$1' (T1 T1L T2 T2L T3 T3L)" >&2; exit 2;; esac; }
for t in "${trees[@]}"; do args "$t" >/dev/null; done  # every tree known before the build
bin=${TMPDIR:-/tmp}/uts-peer-omp-threads
sources=("$src/uts_shm.c" "$src/uts.c" "$src/rng/brg_sha1.c")
stale=0
[ -x "$bin" ] || stale=1
for f in "${sources[@]}" "$src"/*.h "$src"/rng/*.h; do [ "$f" -nt "$bin" ] && stale=1; done
if ((stale)); then
  gcc -O3 -fopenmp -DBRG_RNG -o "$bin.tmp.$$" "${sources[@]}" -lm
  mv "$bin.tmp.$$" "$bin"
fi
for t in "${trees[@]}"; do
  a=$(args "$t")
  # shellcheck disable=SC2086
  out=$(OMP_NUM_THREADS=$threads "$bin" $a -v 3 2>&1) || { echo "uts-peer.sh: the peer failed on $t:" >&2; echo "$out" | tail -20 >&2; exit 1; }
  nodes=$(sed -n 's/.*Tree size = \([0-9]*\).*/\1/p' <<<"$out")
  secs=$(sed -n 's/.*Wallclock time = \([0-9.]*\) sec.*/\1/p' <<<"$out")
  rate=$(sed -n 's/.*performance = \([0-9]*\) nodes\/sec.*/\1/p' <<<"$out")
  per=$(sed -n 's/.*# nodes explored *= *\([0-9]*\).*/\1/p' <<<"$out" | paste -sd, -)
  [ -n "$nodes" ] && [ -n "$secs" ] && [ -n "$per" ] ||
    { echo "uts-peer.sh: the peer printed no tree size, time or per-thread nodes:" >&2; echo "$out" | head -20 >&2; exit 1; }
  echo "PEER impl=uts_shm-omp tree=$t threads=$threads nodes=$nodes s=$secs nodes_per_s=$rate thread_nodes=$per"
done
