#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=${GPUSCHED_BUILD_DIR:-build/release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DGPUSCHED_BUILD_TESTS=OFF -DGPUSCHED_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" --target mixed_workload -j "$(nproc)"
"$build/examples/mixed_workload" "$@"
