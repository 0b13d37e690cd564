// GPUCheck with a per-node summary of free devices (issue 14, item 3): on a bound_cluster observed
// by gpu_summary it gives the per-device loop's verdict and reason for every pod and node, while
// pods come and go; and hand-worked cases for each rule of core/gpu_summary.hpp.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "batch/random_workload.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/gpu_summary.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"

using namespace gpusched;

namespace {
using summarized = bound_cluster<in_memory_cluster, gpu_summary>;
}

TEST_CASE("gpu_summary: hand-worked summaries and GPUCheck verdicts") {
  summarized c;
  c.add_node(testing::gpu_node("n0", 64000, 262144, 4, "T4", 16384));
  const pod half = make_pod("half").cpu(1).gpu_share(500).gpu_memory(4000);
  const pod whole = make_pod("whole").cpu(1).gpus(1);
  c.bind(half, make_binding(half, 0, 0b0001));    // device 0: 500 free, 12384 MiB free
  c.bind(whole, make_binding(whole, 0, 0b0010));  // device 1: 0 free
  const gpu_free_summary& s = node_gpu_summary(c, 0);
  CHECK(s.max_free_milli == 1000);
  CHECK(s.min_free_mem == 12384);  // device 0: 16384 - 4000 (the whole-GPU pod asked for no memory)
  CHECK(s.whole_free == 2);    // devices 2, 3
  const gpu_check g;
  CHECK(g.check(c, make_pod("a").cpu(1).gpus(2), 0) == reason::ok);                         // 2 wholly free
  CHECK(g.check(c, make_pod("b").cpu(1).gpus(3), 0) == reason::insufficient_gpu_share);     // only 2
  CHECK(g.check(c, make_pod("c").cpu(1).gpus(5), 0) == reason::insufficient_gpu_count);     // 4 devices
  CHECK(g.check(c, make_pod("d").cpu(1).gpu_share(600), 0) == reason::ok);                  // device 2
  // Memory above the smallest free memory: the device loop decides.
  CHECK(g.check(c, make_pod("e").cpu(1).gpu_share(300).gpu_memory(13000), 0) == reason::ok);  // devices 2, 3
  CHECK(g.check(c, make_pod("f").cpu(1).gpu_share(600).gpu_memory(20000), 0) == reason::insufficient_gpu_memory);
  CHECK(g.check(c, make_pod("h").cpu(1).gpus(1).allow_model("A10"), 0) == reason::gpu_model_not_allowed);
  c.unbind(c.find("whole")->id);
  CHECK(node_gpu_summary(c, 0).whole_free == 3);
}

TEST_CASE("gpu_summary: GPUCheck gives the device loop's verdict and reason on random clusters and pods") {
  std::mt19937_64 rng(12);
  const in_memory_cluster base = testing::random_cluster(rng, 200);
  summarized c(base);
  in_memory_cluster plain = base;
  const gpu_check g;
  std::vector<pod> bound;
  int decided = 0;
  for (int i = 0; i < 600; ++i) {
    const pod p = testing::random_pod(rng, i);
    bool placed = false;
    for (node_index n = 0; n < num_nodes(plain); ++n) {
      const reason want = g.check(plain, p, n);
      CAPTURE(i);
      CAPTURE(n);
      REQUIRE(g.check(c, p, n) == want);
      decided += want == reason::ok ? 1 : 0;
      if (!placed && want == reason::ok && p.wants_gpu()) {  // place it on the first fitting node, first devices
        gpu_set gs = 0;
        int k = 0;
        for (int d = 0; d < static_cast<int>(plain.gpus(n).size()) && k < p.num_gpu; ++d) {
          const gpu_device& dev = plain.gpus(n)[static_cast<std::size_t>(d)];
          if ((p.allowed_models.empty() || p.model_allowed(dev.model)) && device_fits(dev.milli_free, dev.mem_free_mib, p.gpu_milli, p.gpu_mem_mib)) {
            gs |= gpu_set{1} << d;
            ++k;
          }
        }
        const pod q = make_pod(p.name).gpu_share(p.gpu_milli).gpu_memory(p.gpu_mem_mib);
        pod r = q;
        r.num_gpu = p.num_gpu;
        const binding b = make_binding(r, n, gs);
        plain.reserve(r, b);
        c.bind(r, b);
        bound.push_back(r);
        placed = true;
      }
    }
    if (i % 5 == 4 && !bound.empty()) {  // a pod leaves
      const pod& r = bound[rng() % bound.size()];
      const binding b = c.find(r.name)->where;
      plain.release(r, b);
      c.release(r, b);
      std::erase_if(bound, [&](const pod& x) { return x.name == r.name; });
    }
  }
  CHECK(decided > 1000);
  CHECK(!bound.empty());
}
