// Hot path: once warmed up on a cluster, placing and releasing a gang allocates nothing. Counted by
// replacing the global allocation functions for this test executable (counting only while armed).
#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/nvlink_selector.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/scoring/node_resources.hpp"

#include "support/counting_new.hpp"  // armed, allocations

using namespace gpusched;

TEST_CASE("gang.place allocates nothing after warm-up") {
  in_memory_cluster c;
  for (int i = 0; i < 64; ++i) {
    node_spec n{"n" + std::to_string(i), 96000, 786432, {}, "rack-" + std::to_string(i / 8)};
    n.add_gpus(4, "V100M32", 32768, 0).add_gpus(4, "V100M32", 32768, 1);
    c.add_node(n);
  }
  const gang_spec g = make_gang("train")
                          .role("launcher", make_pod("l").cpu(4000).memory(16384))
                          .role("worker", make_pod("w").cpu(8000).memory(65536).gpus(4), 60, 80);
  const gang_spec too_big = make_gang("big").role("worker", make_pod("w").gpus(4), 200);
  gang_placer placer(make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{most_allocated{}, 1}),
                                  nvlink_aware_gpus{}));
  gang_result r, fail;
  for (int warm = 0; warm < 2; ++warm) {
    REQUIRE(placer.place(c, g, r));
    release_gang(c, g, r);
    REQUIRE_FALSE(placer.place(c, too_big, fail));
  }
  armed = true;
  const bool placed = placer.place(c, g, r);
  release_gang(c, g, r);
  const bool big_placed = placer.place(c, too_big, fail);
  armed = false;
  CHECK(placed);
  CHECK_FALSE(big_placed);
  CHECK(allocations.load() == 0);
}
