// fill_aware_options::cpu_by_shape (docs/adr/0017-quality-method.md): CPU stranding as the expectation
// over the workload's GPU shapes, each at its own CPU per GPU; off by default.
#include <doctest/doctest.h>

#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/scoring/fill_aware.hpp"
#include "support/builders.hpp"
#include "support/typical_workloads.hpp"

using namespace gpusched;

namespace {
using testing::two_ratios;
}  // namespace

TEST_CASE("stranded_by_shape: the GPU shapes' stranding, each at its own ratio, weighted") {
  fill_aware_options o;
  o.cpu_by_shape = true;
  const fill_aware_scorer f(two_ratios(), o);
  // 2000 milli-GPU free, 8000 milli-CPU left: at 4000/GPU the CPU serves 2000 (none stranded); at
  // 12000/GPU it serves 666.7, so 1333.3 stranded. Weights 0.4 / 0.8 = 0.5 each: 666.7.
  CHECK(f.stranded_by_shape(2000, 8000) == doctest::Approx(2000.0 / 3));
  // 4000 CPU left: 1000 and 1666.7 stranded -> 1333.3.
  CHECK(f.stranded_by_shape(2000, 4000) == doctest::Approx(4000.0 / 3));
  // The mean-ratio form sees (0.4 * 4000 + 0.4 * 12000) / 0.8 = 8000 per GPU: 8000 CPU serve exactly
  // 1000 of the 2000, the same as neither shape alone.
  CHECK(f.cpu_per_gpu() == doctest::Approx(8000));
}

TEST_CASE("cpu_by_shape scores a CPU-only pod by the stranding it adds; off by default") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  const pod cpu_only = make_pod("c").cpu(4000);
  fill_aware_options o;
  o.cpu_by_shape = true;
  const fill_aware_scorer by_shape(two_ratios(), o);
  // saved = cpu_weight 0.5 x (666.7 - 1333.3) = -333.3 milli-GPU; score = (1e6 + saved) x 1000, rounded.
  CHECK(by_shape.score(c, cpu_only, 0) == 999'666'667);
  // Default (mean ratio 8000): before 2000 - 1000 = 1000 stranded, after 2000 - 500 = 1500: saved -250.
  const fill_aware_scorer mean(two_ratios());
  CHECK(mean.score(c, cpu_only, 0) == 999'750'000);
}

TEST_CASE("cpu_by_shape_cpu_only: CPU-only pods by shape, GPU pods by the mean ratio") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 8000, 1 << 20, 2));
  const pod cpu_only = make_pod("c").cpu(4000);
  const pod gpu = make_pod("g").cpu(4000).gpus(1);
  fill_aware_options o;
  o.cpu_by_shape_cpu_only = true;
  const fill_aware_scorer f(two_ratios(), o);
  CHECK(f.score(c, cpu_only, 0) == 999'666'667);  // as cpu_by_shape: saved -333.3
  // The GPU pod by the mean ratio 8000: stranded 2000 - 1000 = 1000 before, 1000 - 500 = 500 after:
  // saved 0.5 x 500 = 250. Hole term: both GPU shapes are whole GPUs, so E(1000) = E(0) = 0.
  CHECK(f.score(c, gpu, 0) == 1'000'250'000);
  // cpu_by_shape scores it by shape: 666.7 before, (0 + 666.7) / 2 = 333.3 after: saved 166.7.
  fill_aware_options all;
  all.cpu_by_shape = true;
  CHECK(fill_aware_scorer(two_ratios(), all).score(c, gpu, 0) == 1'000'166'667);
}
