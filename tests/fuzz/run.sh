#!/usr/bin/env bash
# Runs every libFuzzer harness for SECONDS each, over its committed seed corpus (read only: new
# inputs go to a scratch corpus under the build folder) and prints one line per harness: runs,
# executions per second, corpus size, findings. Exits non-zero if any harness found a crash, leak
# or timeout; the reproducer is written next to the scratch corpus. docs/hardening.md describes the
# runs. The harnesses run side by side, as many at once as there are cores (GPUSCHED_FUZZ_JOBS
# overrides), so the CI run takes SECONDS per core's share of the harnesses, not SECONDS each in turn.
#   bash tests/fuzz/run.sh [SECONDS=10] [BUILD_DIR=build/clang]
# CI runs it for 10 s each (scripts/test.sh); the long run is `nice -n 10 bash tests/fuzz/run.sh 180`.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-10}
build=${2:-build/clang}
jobs=${GPUSCHED_FUZZ_JOBS:-$(nproc)}
work="$build/fuzz-work"

harnesses=()
for corpus in tests/fuzz/corpus/*/; do
  h=$(basename "$corpus")
  bin="$build/tests/fuzz/fuzz_$h"
  [[ -x $bin ]] || { echo "fuzz: $bin is missing (configure with -DGPUSCHED_BUILD_FUZZERS=ON)" >&2; exit 1; }
  harnesses+=("$h")
done

# One harness: its log in $work/<h>.log, its exit status in $work/<h>.rc.
fuzz_one() {
  local h=$1 rc=0
  mkdir -p "$work/$h"
  # -timeout: one input may take at most 10 s; -rss_limit_mb: libFuzzer's default, said explicitly.
  "$build/tests/fuzz/fuzz_$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$h-" "$work/$h" "tests/fuzz/corpus/$h/" >"$work/$h.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$h.rc"
}

mkdir -p "$work"
running=0
for h in "${harnesses[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait

status=0
for h in "${harnesses[@]}"; do
  log="$work/$h.log"
  rc=$(cat "$work/$h.rc")
  if ((rc == 0)); then
    result="no findings"
  else
    result="FINDING (exit status $rc): $(grep -m1 -E 'ERROR|SUMMARY|deadly signal' "$log" || true) (log: $log)"
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  size=$(find "$work/$h" -type f | wc -l)
  printf 'fuzz %-17s %4ss: %9s runs, %6s exec/s, %5s corpus inputs, %s\n' "$h" "$secs" "${runs:-?}" "${rate:-?}" "$size" "$result"
  if ((rc != 0)); then
    grep -m1 -E 'Test unit written|artifact_prefix' "$log" || true
  fi
done
exit "$status"
