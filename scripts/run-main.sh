#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=${GPUSCHED_BUILD_DIR:-build/main}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DGPUSCHED_BUILD_TESTS=OFF -DGPUSCHED_BUILD_BENCHMARKS=OFF -DGPUSCHED_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target gpusched-sim -j "$(nproc)"
# The main job: replay the Alibaba openb default trace (FGD paper protocol, tune 1.3) with the
# paper's six policies and gpusched's three (gpusched; gpusched-fillaware and gpusched-binding, its ablation) on seeds 42-51, and print
# the comparison table.
"$build/tools/gpusched-sim" --seeds 42-51 --jobs "$(nproc)" "$@"
