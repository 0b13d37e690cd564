#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, and run every test:
# the Release suite in build/main (unit tests, consumer projects, CUDA compile where nvcc exists), the batch tests at every SIMD
# width and built for -march=x86-64-v3 / -v4, the Python package's tests, the docs' snippets (tests/docs), then clang 14:
# the header self-containment check, the same unit and CLI tests under AddressSanitizer +
# UndefinedBehaviorSanitizer, and 10 s of each libFuzzer harness.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
export CCACHE_BASEDIR="$PWD"
# Each stage prints its wall time, so the CI log shows where the budget (30 min on 2 cores) goes
# (docs/building.md: the stages, the options, and the unity build of the tests that keeps them short).
stage_start=$SECONDS
stage() { echo "   (stage took $((SECONDS - stage_start)) s, $SECONDS s in all)"; stage_start=$SECONDS; echo "== $*"; }

# build/main is the one build folder of the docs and scripts (scripts/run-main.sh builds its CLI there).
# Header self-containment is checked once, by the clang stage (both compilers use libstdc++ here, so
# a missing include shows in either; the -O3 g++ pass cost about 3 minutes of CI).
echo "== Release build and tests"
cmake -S . -B build/main -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
  -DGPUSCHED_BUILD_TESTS=ON -DGPUSCHED_BUILD_EXAMPLES=ON -DGPUSCHED_BUILD_BENCHMARKS=ON -DGPUSCHED_BUILD_TOOLS=ON \
  -DGPUSCHED_CHECK_HEADERS=OFF >/dev/null
cmake --build build/main -j "$jobs"
ctest --test-dir build/main --output-on-failure -j "$jobs"
# The batch engine picks AVX-512, AVX2 or the baseline at run time (ADR 0007): the batch tests once
# more on each narrower path this machine can be capped to, so every kernel runs in CI.
for simd in avx2 baseline; do
  stage "batch tests with GPUSCHED_SIMD=$simd"
  GPUSCHED_SIMD=$simd build/main/tests/gpusched_test_batch
done
# A build whose own target has AVX2 / AVX-512 takes other branches of batch/simd.hpp (the target's
# intrinsics); two batch test files built that way (g++ -Werror, clang++), run where the CPU can.
stage "batch tests built for -march=x86-64-v3 and -v4 (tests/batch/isa_builds.sh)"
bash tests/batch/isa_builds.sh build/main

stage "Python package: build, pytest (incl. the C++ cross-check), stub check"
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --no-build-isolation ./python  # PEP 668: see install-deps.sh
GPUSCHED_CXX_EXAMPLES_DIR=build/main/examples python3 -m pytest -q python/tests
python3 python/tools/check_stubs.py

stage "Docs as tests: every C++, Python and shell snippet of README.md and docs/ (tests/docs/docs_test.py)"
# Ends with "docs test: N snippets run, M passed, K skipped (reasons)"; a broken snippet fails CI.
python3 tests/docs/docs_test.py --build-dir build/main
# A host hook with the right name and a wrong signature, a missing hook, a wrong profile: each a
# compile error whose message names it and docs/concepts.md (tests/docs/hook_errors/).
bash tests/docs/check_hook_errors.sh

stage "clang 14: every public header on its own, the unit and CLI tests under ASan + UBSan, and a bounded run of each fuzzer (docs/hardening.md)"
# One clang build covers what g++'s Release build does not: the second compiler over the headers
# (each alone) and over every test, the sanitizers, the fuzzers (ADR 0019, Amendment 1: one build
# where there were two, in about the same time). No build type: the headers compile
# unoptimised and without debug info, GPUSCHED_SANITIZE adds -g1 to the tests and tools, the
# fuzzers add -O1 -g themselves.
cmake -S . -B build/clang -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE= -DGPUSCHED_SANITIZE=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DGPUSCHED_BUILD_TESTS=ON -DGPUSCHED_BUILD_EXAMPLES=OFF \
  -DGPUSCHED_BUILD_BENCHMARKS=OFF -DGPUSCHED_BUILD_TOOLS=ON -DGPUSCHED_ENABLE_CUDA=OFF \
  -DGPUSCHED_TEST_CONSUMERS=OFF -DGPUSCHED_BUILD_FUZZERS=ON >/dev/null
cmake --build build/clang -j "$jobs"  # all: the header check, the tests, the tools and the fuzzers
ctest --test-dir build/clang --output-on-failure -j "$jobs"
bash tests/fuzz/run.sh 10 build/clang
stage "done"
