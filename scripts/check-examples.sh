#!/usr/bin/env bash
# Builds examples/own-policy and examples/own-scenario out of the tree against gpulb installed from
# BUILD, and runs them: each adds its policy or scenario to the shipped registry, runs it under the
# command line (a run that verifies and writes a trace), and the installed `gpulb info` reads the
# trace back. `make test` runs it (ctest: examples_build_and_run, label examples) on its build.
#
#   scripts/check-examples.sh BUILD [WORK_DIR]
#
# BUILD must be built whole (`cmake --install` copies every program). WORK_DIR (default: a new
# temporary folder, removed at the end) receives the install prefix, the examples' builds and the
# traces. The examples are compiled by BUILD's compiler, in its build type.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { echo "usage: scripts/check-examples.sh BUILD [WORK_DIR]" >&2; exit 2; }
[ -f "$1/CMakeCache.txt" ] || { echo "check-examples: $1 is no CMake build folder (no CMakeCache.txt)" >&2; exit 2; }
build=$(cd "$1" && pwd)
if [ $# -ge 2 ]; then
  mkdir -p "$2"
  work=$(cd "$2" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
fail() { echo "check-examples: $*" >&2; exit 1; }
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
started=$SECONDS

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 \
  || fail "cmake --install $build failed (build every target first); $work/install.log: $(tail -n 3 "$work/install.log")"
[ -f "$prefix/lib/cmake/gpulb/gpulbConfig.cmake" ] || [ -n "$(find "$prefix" -name gpulbConfig.cmake -print -quit)" ] \
  || fail "the install holds no gpulbConfig.cmake"
gpulb=$prefix/bin/gpulb

# Both examples configure and build at once (two compilers on a 2-core machine).
configure_and_build() {
  local name=$1
  cmake -S "$src/examples/$name" -B "$work/$name" -G "$(cache CMAKE_GENERATOR)" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE="$(cache CMAKE_BUILD_TYPE)" -DCMAKE_CXX_COMPILER="$(cache CMAKE_CXX_COMPILER)" >"$work/$name.log" 2>&1 &&
    cmake --build "$work/$name" >>"$work/$name.log" 2>&1
}
configure_and_build own-policy & policy_pid=$!
configure_and_build own-scenario & scenario_pid=$!
wait "$policy_pid" || fail "examples/own-policy did not build against the install; $work/own-policy.log: $(tail -n 20 "$work/own-policy.log")"
wait "$scenario_pid" || fail "examples/own-scenario did not build against the install; $work/own-scenario.log: $(tail -n 20 "$work/own-scenario.log")"
built=$SECONDS

# expect_refusal PROGRAM WORDS ARGS...: exit 2 and a message holding WORDS, nothing written.
expect_refusal() {
  local program=$1 words=$2 rc=0
  shift 2
  "$program" "$@" >"$work/out.txt" 2>"$work/err.txt" || rc=$?
  [ "$rc" -eq 2 ] || fail "$program $*: exit $rc, expected 2 (a refusal): $(cat "$work/err.txt")"
  grep -qF "$words" "$work/err.txt" || fail "$program $*: the refusal does not say '$words': $(cat "$work/err.txt")"
}

# json_has FILE TEXT...: each TEXT is a line of the pretty-printed JSON (two-space indent).
json_has() {
  local file=$1
  shift
  for text in "$@"; do grep -qF -- "$text" "$file" || fail "$file lacks $text"; done
}

# The policy: 512 tasks dealt to 4 workers, 128 each, the trace read by the installed gpulb.
own=$work/own-policy/own-gpulb
"$own" list --json >"$work/policy-list.json"
json_has "$work/policy-list.json" '"name": "round-robin"' '"name": "work-stealing"'
"$own" run patterns --policy round-robin --backend cpu --workers 4 --param blocks=512 --param work=200 \
  -o "$work/round-robin.gpulb" >"$work/out.txt" || fail "own-policy: the round-robin run failed or did not verify: $(cat "$work/out.txt")"
"$gpulb" info --json "$work/round-robin.gpulb" >"$work/round-robin.json"
json_has "$work/round-robin.json" '"policy": "round-robin"' '"scenario": "patterns"' '"verified": true' '"tasks": 512'
[ "$(grep -cE '^      "tasks": 128,?$' "$work/round-robin.json")" -eq 4 ] \
  || fail "own-policy: round-robin did not deal 128 tasks to each of 4 workers ($work/round-robin.json)"
# Its own option: 512 tasks dealt 100 at a time to 4 workers, chunks 0 and 4 to worker 0.
"$own" run patterns --policy round-robin --backend cpu --workers 4 --param blocks=512 --param work=200 \
  --param chunk=100 -o "$work/round-robin-chunk.gpulb" >"$work/out.txt" || fail "own-policy: the round-robin run with chunk=100 failed: $(cat "$work/out.txt")"
"$gpulb" info --json "$work/round-robin-chunk.gpulb" >"$work/round-robin-chunk.json"
grep -qE '^      "tasks": 200,?$' "$work/round-robin-chunk.json" \
  || fail "own-policy: round-robin with chunk=100 did not deal worker 0 two chunks ($work/round-robin-chunk.json)"
expect_refusal "$own" "spawns child tasks, which policy 'round-robin' cannot run" run uts --policy round-robin --backend cpu

# The scenario: run under a shipped policy, verified by its own verifier, read back.
own=$work/own-scenario/own-gpulb
"$own" run collatz --policy work-stealing --backend cpu --workers 2 --param numbers=100000 --param chunk=500 \
  -o "$work/collatz.gpulb" >"$work/out.txt" || fail "own-scenario: the collatz run failed or did not verify: $(cat "$work/out.txt")"
"$gpulb" info --json "$work/collatz.gpulb" >"$work/collatz.json"
json_has "$work/collatz.json" '"scenario": "collatz"' '"policy": "work-stealing"' '"verified": true' '"tasks": 200' '"total_steps": 10753840'
expect_refusal "$own" "parameter 'chunk'" run collatz --backend cpu --param chunk=0

# The viewer opens both traces (a picture each), where it was built and a display or Xvfb is at hand.
viewer=$prefix/bin/gpulb-viewer
if [ -x "$viewer" ] && { [ -n "${DISPLAY:-}" ] || command -v xvfb-run >/dev/null 2>&1; }; then
  run_viewer=("$viewer")
  [ -n "${DISPLAY:-}" ] || run_viewer=(xvfb-run -a "$viewer")
  "${run_viewer[@]}" "$work/round-robin.gpulb" "$work/collatz.gpulb" --view compare --screenshot "$work/viewer.png" --size 1200x800 \
    >"$work/viewer.log" 2>&1 || fail "gpulb-viewer did not open the examples' traces: $(tail -n 5 "$work/viewer.log")"
  [ "$(head -c 8 "$work/viewer.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "gpulb-viewer wrote no PNG"
  viewed="the viewer opened both traces"
else
  viewed="no viewer or display here: traces not opened in the viewer"
fi
echo "check-examples: both examples built against the install in $((built - started)) s and ran (round-robin dealt 128 tasks to each of 4 workers; collatz verified); $viewed; $((SECONDS - started)) s in all"
