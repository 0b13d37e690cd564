#!/usr/bin/env bash
# The batch engine built for targets that have AVX2 or AVX-512 themselves (-march=x86-64-v3 / -v4):
# there batch/simd.hpp takes the target's own intrinsics instead of the run-time-dispatched path
# that every other CI build compiles (ADR 0007). Two batch test files (the SIMD widths and the
# configured profiles, whose FGD form once differed from its per-pod path under -march=native),
# compiled with g++ -Werror for each level and with clang++ for v4; the g++ builds are linked with
# the Release build's doctest main and run where this CPU has the level.
# Usage: tests/batch/isa_builds.sh [release build dir, default build/main]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/main}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
files=(tests/batch/test_simd_widths.cpp tests/batch/test_configured_profiles.cpp)
flags=(-std=gnu++20 -O2 -DNDEBUG -DBOOST_ALL_NO_LIB "-DGPUSCHED_SOURCE_DIR=\"$PWD\"" -Itests -Iinclude -isystem /usr/include/eigen3
       -Wall -Wextra -Werror -ffp-contract=off)
cpu_has() { grep -qw "$1" /proc/cpuinfo; }
# The two files as one translation unit (as the unity build of tests/batch compiles them), and the
# three compilations side by side: each is a separate process, so CI's cores share them.
unity="$out/isa_tests.cpp"
for f in "${files[@]}"; do echo "#include \"$PWD/$f\""; done >"$unity"
pids=()
for level in x86-64-v3 x86-64-v4; do
  g++ "${flags[@]}" -Wno-psabi -march=$level -c "$unity" -o "$out/$level.o" & pids+=($!)
done
clang++-14 "${flags[@]}" -march=x86-64-v4 -c "$unity" -o "$out/clang.o" & pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done  # all three finish (the EXIT trap removes $out) ...
((rc == 0)) || { echo "isa_builds: a compilation failed (its errors are above)" >&2; exit 1; }  # ... then any failure fails
for level in x86-64-v3 x86-64-v4; do
  need=avx2; [ $level = x86-64-v4 ] && need=avx512f
  if cpu_has $need; then
    g++ "$out/$level.o" -o "$out/$level" "$build/tests/libgpusched_doctest_main.a" -lyaml-cpp -pthread
    echo "g++ -march=$level: $("$out/$level" | grep 'test cases')"
  else
    echo "g++ -march=$level: compiled; not run (this CPU lacks $need)"
  fi
done
echo "clang++-14 -march=x86-64-v4: compiled"
