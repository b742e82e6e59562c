#!/usr/bin/env bash
# Runs libFuzzer targets for a set time each, one after the other, and prints what they did.
#
#   scripts/run-fuzz.sh BUILD_DIR SECONDS TARGET...      (make fuzz: build-fuzz 60 decode export model)
#
# Each target starts from the seeds in fuzz/corpus/<target>/ (read only) plus its working corpus
# BUILD_DIR/fuzz/work/<target>/ (what earlier runs found; kept between runs). A crash, leak,
# timeout or OOM lands in BUILD_DIR/fuzz/findings/<target>/: minimise it (fuzz/README.md), add it
# to fuzz/corpus/<target>/ and fix it. Exits 1 when any target found something.
# FUZZ_JOBS=N runs N jobs per target in parallel (default 1: CI machines have two cores).
set -uo pipefail
if [ $# -lt 3 ]; then sed -n '2,9p' "$0" >&2; exit 2; fi
build=$1 seconds=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${FUZZ_JOBS:-1}
status=0
summary=()
for target in "$@"; do
  exe=$build/fuzz/fuzz_$target
  if [ ! -x "$exe" ]; then echo "run-fuzz: $exe not built" >&2; exit 2; fi
  work=$build/fuzz/work/$target findings=$build/fuzz/findings/$target logs=$build/fuzz/logs
  mkdir -p "$work" "$findings" "$logs"
  marker=$(mktemp); touch "$marker"; sleep 1
  log=$logs/$target.log
  echo "== fuzz_$target: ${seconds}s over fuzz/corpus/$target (+ $work), log $log"
  args=(-max_len=16384 -timeout=10 -rss_limit_mb=1536 -dict="$root/fuzz/gpulb.dict"
        -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$findings/")
  if [ "$jobs" -gt 1 ]; then
    # -jobs writes one fuzz-N.log per job in the working directory.
    (cd "$logs" && "$(realpath "$exe")" "${args[@]}" -jobs="$jobs" -workers="$jobs" \
       "$(realpath "$work")" "$root/fuzz/corpus/$target") > "$log" 2>&1
    cat "$logs"/fuzz-*.log >> "$log" 2>/dev/null; rm -f "$logs"/fuzz-*.log
  else
    "$exe" "${args[@]}" "$work" "$root/fuzz/corpus/$target" > "$log" 2>&1
  fi
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  found=$(find "$findings" -type f -newer "$marker" | wc -l)
  units=$(find "$work" -type f | wc -l)
  line="fuzz_$target: $execs executions ($rate/s), working corpus $units inputs, $found new finding(s)"
  if [ "$found" -gt 0 ] || { [ "$rc" -ne 0 ] && [ "$found" -eq 0 ] && ! grep -q 'Done [0-9]* runs' "$log"; }; then
    status=1
    line="$line -- FINDING (exit $rc): $(grep -m1 -E 'ERROR|SUMMARY|fuzz check failed|deadly signal' "$log")"
    find "$findings" -type f -newer "$marker" | sed 's/^/   /'
  fi
  rm -f "$marker"
  echo "$line"
  summary+=("$line")
done
echo "== fuzz summary"
printf '  %s\n' "${summary[@]}"
exit $status
