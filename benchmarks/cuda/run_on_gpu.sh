#!/usr/bin/env bash
# One prepared run of everything CUDA on a machine with an NVIDIA GPU (sized for an H100/H200:
# CMAKE_CUDA_ARCHITECTURES=90, override with CUDA_ARCH=...; about 3-4 minutes with 16 cores):
#   1. builds the CUDA tests, the CPU batch tests and both benchmark executables (Release,
#      -march=native for the CPU side);
#   2. runs the CUDA tests (CUDA results compared to the CPU engine's, exactly);
#   3. runs BM_ScorePairs/batch_cuda and, on the same machine, the CPU batch benchmarks, so that
#      the ratios in docs/batch.md can be measured in one run.
# Output goes to $OUT when set (else ./gpu-results): the tests' and benchmarks' text and JSON,
# nvidia-smi and lscpu.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out="${OUT:-$root/gpu-results}"
mkdir -p "$out"
jobs=$(nproc 2>/dev/null || echo 4)
arch="${CUDA_ARCH:-90}"
log() { echo "[run_on_gpu] $*" | tee -a "$out/run.log"; }

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || missing+=(nvcc)
[ -d /usr/include/eigen3 ] || [ -d /usr/local/include/eigen3 ] || missing+=(eigen3)
[ -f /usr/include/boost/version.hpp ] || [ -f /usr/local/include/boost/version.hpp ] || missing+=(boost)
[ -f /usr/include/doctest/doctest.h ] || [ -f /usr/local/include/doctest/doctest.h ] || missing+=(doctest)
[ -f /usr/include/benchmark/benchmark.h ] || [ -f /usr/local/include/benchmark/benchmark.h ] || missing+=(google-benchmark)
if [ ${#missing[@]} -gt 0 ]; then
  log "missing: ${missing[*]} (scripts/install-deps.sh installs them); stopping"
  exit 2
fi
export PATH="$PATH:/usr/local/cuda/bin"
{ nvidia-smi || true; } > "$out/nvidia-smi.txt" 2>&1
{ lscpu || true; } > "$out/lscpu.txt" 2>&1
git -C "$root" rev-parse HEAD > "$out/commit.txt" 2>/dev/null || true

start=$(date +%s)
log "configure (CUDA arch $arch)"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DGPUSCHED_BUILD_EXAMPLES=OFF -DGPUSCHED_TEST_CONSUMERS=OFF -DGPUSCHED_CHECK_HEADERS=OFF -DGPUSCHED_BUILD_BENCHMARKS=ON \
  -DCMAKE_CXX_FLAGS=-march=native > "$out/configure.txt" 2>&1
log "build"
cmake --build build-gpu --target gpusched_test_cuda gpusched_test_batch bench_batch -j "$jobs" > "$out/build.txt" 2>&1
bench=build-gpu/benchmarks/cuda/bench_cuda_batch
if ! cmake --build build-gpu --target bench_cuda_batch -j "$jobs" >> "$out/build.txt" 2>&1; then
  log "bench_cuda_batch is not in the main build (benchmarks/CMakeLists.txt lacks add_subdirectory(cuda)); building it standalone"
  cmake -S benchmarks/cuda -B build-gpu-bench -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_SOURCE_DIR="$root" \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" >> "$out/configure.txt" 2>&1
  cmake --build build-gpu-bench --target bench_cuda_batch -j "$jobs" >> "$out/build.txt" 2>&1
  bench=build-gpu-bench/bench_cuda_batch
fi
log "built in $(( $(date +%s) - start )) s"

status=0
log "CUDA tests"
./build-gpu/tests/cuda/gpusched_test_cuda 2>&1 | tee "$out/test_cuda.txt" || status=1
log "CPU batch tests"
./build-gpu/tests/gpusched_test_batch 2>&1 | tail -4 | tee "$out/test_batch.txt" || status=1
log "BM_ScorePairs/batch_cuda"
"$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/bench_cuda_batch.json" --benchmark_out_format=json 2>&1 | tee "$out/bench_cuda_batch.txt" || status=1
log "CPU batch benchmarks on this machine"
./build-gpu/benchmarks/bench_batch --benchmark_filter='BM_ScorePairs|BM_AssignBatch/1000/' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$out/bench_batch.json" --benchmark_out_format=json 2>&1 \
  | tee "$out/bench_batch.txt" || status=1
log "done in $(( $(date +%s) - start )) s, status $status"
exit $status
