// The CUDA batch engine against the CPU batch engine: the same matrix, the same top-k lists and
// feasible counts, for every foundation plugin and a normalising one. Skipped (with the reason)
// where no CUDA device exists.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/cuda/batch_scorer.cuh"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/load_threshold.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/scoring/fgd.hpp"
#include "gpusched/scoring/load_aware.hpp"
#include "gpusched/scoring/model_affinity.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "gpusched/scoring/qos_aware.hpp"
#include "../batch/free_memory_packing.hpp"
#include "../batch/random_workload.hpp"

using namespace gpusched;
using testing::free_memory_packing;

namespace {

const cuda::status gpu = cuda::device_status();

model_affinity affinity() {
  model_affinity m;
  m.interfering.emplace_back(short_name("resnet50"), short_name("bert"));
  return m;
}

template <class Profile>
void check_cuda_equals_cpu(const Profile& prof, std::uint64_t seed, int nodes, int pods, std::size_t k) {
  std::mt19937_64 rng(seed);
  const in_memory_cluster c = testing::random_cluster(rng, nodes);
  const std::vector<pod> ps = testing::random_pods(rng, pods);
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto cpu = batch::make_batch_scorer(prof, {1, seed, 512, 8});
  cpu.prepare(t);
  auto dev = cuda::make_batch_scorer(prof, {seed});
  REQUIRE(dev.can_run(t, pt.size(), k));
  dev.prepare(t);

  batch::score_matrix want, got;
  cpu.scores(pt, want);
  dev.scores(pt, got);
  REQUIRE(got.rows() == want.rows());
  REQUIRE(got.cols() == want.cols());
  CHECK((got == want).all());

  batch::top_k_result tw, tg;
  cpu.top_k(pt, k, tw);
  dev.top_k(pt, k, tg);
  for (std::size_t i = 0; i < pt.size(); ++i) {
    CHECK(tg.feasible(i) == tw.feasible(i));
    const auto a = tw.candidates(i), b = tg.candidates(i);
    REQUIRE(a.size() == b.size());
    for (std::size_t j = 0; j < a.size(); ++j) CHECK(a[j] == b[j]);
  }
}

}  // namespace

TEST_CASE("cuda.can_run says why it cannot") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 1000, 1000, 1));
  batch::node_table t(c);
  auto dev = cuda::make_batch_scorer(make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 1})));
  const cuda::status s = dev.can_run(t, 10, 1);
  CHECK(s.ok == gpu.ok);
  if (!gpu) {
    MESSAGE("no usable CUDA device (" << gpu.reason << "): the CUDA comparisons below are skipped");
    CHECK(s.reason == gpu.reason);
  } else {
    CHECK_FALSE(dev.can_run(t, 10, cuda::max_k + 1));
  }
  CHECK(cuda::batch_scorer<decltype(make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 1})))>::workspace_bytes(100, 1000, 4) >=
        100 * 4 * 4 * sizeof(batch::candidate));
}

TEST_CASE("cuda.equals the CPU engine: seed profile" * doctest::skip(!gpu.ok)) {
  check_cuda_equals_cpu(make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 10}, weighted{affinity(), 5})), 1, 2000, 300, 1);
  check_cuda_equals_cpu(make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 10}, weighted{affinity(), 5})), 2, 777, 70, 8);
}

TEST_CASE("cuda.equals the CPU engine: every foundation plugin" * doctest::skip(!gpu.ok)) {
  check_cuda_equals_cpu(make_profile(checks(gpu_check{}, resource_fit{1500, 1200}, load_threshold{0.8, 0.9, 0.95}),
                                     scores(weighted{least_allocated{{1, 2, 3}}, 3}, weighted{most_allocated{{2, 1, 1}}, 2},
                                            weighted{balanced_allocation{{1, 1, 1}}, 1})),
                        3, 1500, 100, 4);
  check_cuda_equals_cpu(make_profile(checks(resource_fit{}),
                                     scores(weighted{requested_to_capacity_ratio({{0, 10}, {40, 7}, {100, 0}}, {1, 1, 2}), 4},
                                            weighted{qos_aware{}, 7}, weighted{load_aware{{2, 1, 0}}, 1})),
                        4, 1500, 100, 3);
}

TEST_CASE("cuda.equals the CPU engine: FGD" * doctest::skip(!gpu.ok)) {
  std::mt19937_64 rng(91);
  const fgd_scorer fgd(typical_workload::from_pods(testing::random_pods(rng, 300)));
  check_cuda_equals_cpu(make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{fgd, 3}, weighted{load_aware{}, 1}), fgd), 6,
                        1200, 80, 3);
}

TEST_CASE("cuda.equals the CPU engine: a normalising scorer" * doctest::skip(!gpu.ok)) {
  check_cuda_equals_cpu(make_profile(checks(gpu_check{}), scores(weighted{free_memory_packing{}, 2}, weighted{least_allocated{}, 1})), 5,
                        1000, 100, 2);
}

TEST_CASE("cuda.buffers are reused and changed nodes re-uploaded" * doctest::skip(!gpu.ok)) {
  std::mt19937_64 rng(6);
  const in_memory_cluster c = testing::random_cluster(rng, 500);
  const std::vector<pod> ps = testing::random_pods(rng, 64);
  batch::node_table t(c);
  batch::pod_table pt(ps, t);
  auto prof = make_profile(checks(gpu_check{}), scores(weighted{load_aware{}, 10}, weighted{affinity(), 5}));
  auto dev = cuda::make_batch_scorer(prof, {6});
  dev.prepare(t);
  batch::top_k_result r;
  dev.top_k(pt, 2, r);
  const std::size_t held = dev.device_bytes();
  dev.top_k(pt, 2, r);
  CHECK(dev.device_bytes() == held);
  // A placement on the best node of pod 0 changes the node table; the next call sees it.
  const pod big = make_pod("big").cpu(1).gpus(1);
  const node_index n = r.best(0).node;
  for (int g = 0; g < t.gpu_count()[n]; ++g) {
    if (t.milli_free()(n, g) == gpu_milli_whole) {
      t.apply(big, make_binding(big, n, gpu_set{1} << g));
      break;
    }
  }
  auto cpu = batch::make_batch_scorer(prof, {1, 6, 512, 8});
  cpu.prepare(t);
  batch::top_k_result want;
  cpu.top_k(pt, 2, want);
  dev.top_k(pt, 2, r);
  for (std::size_t i = 0; i < pt.size(); ++i) {
    REQUIRE(r.candidates(i).size() == want.candidates(i).size());
    for (std::size_t j = 0; j < want.candidates(i).size(); ++j) CHECK(r.candidates(i)[j] == want.candidates(i)[j]);
  }
}
