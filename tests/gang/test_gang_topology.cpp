// Topology pieces of gang placement: member capacity, the GPU interconnect graph and the NVLink-aware
// device choice, the rack tree. Expected values are worked out by hand in the comments.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/capacity.hpp"
#include "gpusched/gang/interconnect.hpp"
#include "gpusched/gang/nvlink_selector.hpp"
#include "gpusched/gang/rack.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
gpu_set set_of(std::initializer_list<int> gs) {
  gpu_set s = 0;
  for (int g : gs) s |= gpu_set{1} << g;
  return s;
}
// Bandwidth of the island model with the default weights.
struct islands_bw {
  std::vector<int> island;
  std::uint32_t operator()(int a, int b) const { return island[static_cast<std::size_t>(a)] == island[static_cast<std::size_t>(b)] ? nvlink_gbps : pcie_gbps; }
};
}  // namespace

TEST_CASE("gang.capacity.distinct devices per copy") {
  const std::int64_t a[] = {3, 3, 3};
  CHECK(distinct_device_copies(a, 3, 1) == 9);
  CHECK(distinct_device_copies(a, 3, 2) == 4);  // 9 slots / 2 = 4 pairs: (0,1) (0,2) (1,2) (0,1)
  CHECK(distinct_device_copies(a, 3, 3) == 3);
  const std::int64_t b[] = {5, 1, 1};
  CHECK(distinct_device_copies(b, 3, 2) == 2);  // every pair needs device 1 or 2, one slot each
  const std::int64_t z[] = {0, 0};
  CHECK(distinct_device_copies(z, 2, 2) == 0);
}

TEST_CASE("gang.capacity.member capacity of a node") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 32000, 262144, 8));
  const pod two = make_pod("w").cpu(4000).memory(16384).gpus(2);
  CHECK(member_capacity(c, two, 0, {}, 1000) == 4);                  // 8 free GPUs / 2
  CHECK(member_capacity(c, two, 0, {}, 3) == 3);                     // capped by the caller
  const pod cpu_heavy = make_pod("w").cpu(10000).gpus(2);
  CHECK(member_capacity(c, cpu_heavy, 0, {}, 1000) == 3);            // 32000 / 10000
  CHECK(member_capacity(c, cpu_heavy, 0, {1200, 1000}, 1000) == 3);  // 38400 / 10000, still 3
  CHECK(member_capacity(c, cpu_heavy, 0, {1250, 1000}, 1000) == 4);  // 40000 / 10000
  const pod cpu_only = make_pod("l").cpu(0).memory(0);
  CHECK(member_capacity(c, cpu_only, 0, {}, 77) == 77);              // unbounded: the cap

  // GPU shares: free share 1000, 500, 300, 1000 (32 GiB each, 16 GiB used on none).
  in_memory_cluster s;
  s.add_node(testing::gpu_node("s", 64000, 262144, 4));
  const pod filler = make_pod("f").gpu_share(500);
  s.reserve(filler, make_binding(filler, 0, set_of({1})));
  const pod filler7 = make_pod("f7").gpu_share(700);
  s.reserve(filler7, make_binding(filler7, 0, set_of({2})));
  CHECK(member_capacity(s, make_pod("p").gpu_share(300), 0, {}, 1000) == 3 + 1 + 1 + 3);
  // 16 GiB per copy: at most 2 per 32 GiB device -> 2 + 1 + 1 + 2.
  CHECK(member_capacity(s, make_pod("p").gpu_share(300).gpu_memory(16384), 0, {}, 1000) == 6);
  // Two devices of 500 each: units 2, 1, 0, 2 -> k = 2 (k = 3 would need 6 slots of 5).
  CHECK(member_capacity(s, make_pod("p").gpu_share(500, 2), 0, {}, 1000) == 2);
  // Whole GPUs need wholly free devices: 0 and 3.
  CHECK(member_capacity(s, make_pod("p").gpus(1), 0, {}, 1000) == 2);
  CHECK(member_capacity(s, make_pod("p").gpus(1).allow_model("T4"), 0, {}, 1000) == 0);
}

TEST_CASE("gang.capacity.limits are validated") {
  CHECK_THROWS_WITH_AS(validate(capacity_limits{0, 1000}), "capacity_limits.cpu_ratio_permille: must be within 1..4000",
                       invalid_argument_error);
  CHECK_THROWS_AS(validate(capacity_limits{1000, 5000}), invalid_argument_error);
}

TEST_CASE("gang.interconnect.graph from islands and from links") {
  const std::int16_t isl[] = {0, 0, 1, 1};
  const gpu_interconnect t = gpu_interconnect::from_islands(isl);
  CHECK(t.size() == 4);
  CHECK(t.bandwidth(0, 1) == 300);
  CHECK(t.bandwidth(1, 2) == 32);
  CHECK(t.bandwidth(2, 2) == 0);
  CHECK(t.islands() == std::vector<int>{0, 0, 1, 1});

  // Links described one by one: 0-1-2 chained by NVLink, 3-4 paired, 5 on PCIe only.
  gpu_interconnect l(6);
  l.set_link(0, 1, 300);
  l.set_link(1, 2, 300);
  l.set_link(3, 4, 300);
  CHECK(l.bandwidth(0, 2) == 32);
  CHECK(l.islands() == std::vector<int>{0, 0, 0, 1, 1, 2});
  CHECK(l.islands(32) == std::vector<int>{0, 0, 0, 0, 0, 0});  // everything is reachable over PCIe

  CHECK_THROWS_WITH_AS(l.set_link(0, 6, 10), "gpu_interconnect.link.b: device 6 out of range", invalid_argument_error);
  CHECK_THROWS_WITH_AS(l.set_link(2, 2, 10), "gpu_interconnect.link.b: a device has no link to itself", invalid_argument_error);
  CHECK_THROWS_AS(gpu_interconnect(65), invalid_argument_error);
}

TEST_CASE("gang.interconnect.subset choice by bandwidth") {
  const islands_bw two_islands{{0, 0, 0, 0, 1, 1, 1, 1}};
  const std::int32_t whole[8] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
  // GPUs 0 and 4 busy: free {1,2,3} on island 0 and {5,6,7} on island 1. Any pair inside an island
  // has 300 inside and cut 696 + 696 - 600 = 792; the smallest such set is {1,2}.
  const gpu_set f1 = set_of({1, 2, 3, 5, 6, 7});
  CHECK(choose_gpu_subset(8, f1, 2, whole, two_islands) == set_of({1, 2}));
  // Then free {3} and {5,6,7}: {5,6} (300 inside) beats {3,5} (32), which lowest-index takes.
  const gpu_set f2 = set_of({3, 5, 6, 7});
  CHECK(choose_gpu_subset(8, f2, 2, whole, two_islands) == set_of({5, 6}));
  // One GPU: the lone device of island 0 (cut 3 x 32 = 96) rather than one of island 1 (632).
  CHECK(choose_gpu_subset(8, f2, 1, whole, two_islands) == set_of({3}));
  // Three GPUs: all of island 1.
  CHECK(choose_gpu_subset(8, f2, 3, whole, two_islands) == set_of({5, 6, 7}));
  // Too few fitting devices.
  CHECK(choose_gpu_subset(8, f2, 5, whole, two_islands) == 0);

  // Interleaved islands (0,1,0,1,...): four GPUs on island 0 are {0,2,4,6}, not {0,1,2,3}.
  const islands_bw interleaved{{0, 1, 0, 1, 0, 1, 0, 1}};
  CHECK(choose_gpu_subset(8, gpu_set{0xFF}, 4, whole, interleaved) == set_of({0, 2, 4, 6}));

  // GPU shares of one device: best fit first. Free 400 on devices 1 and 3, whose cuts are equal
  // (300 + 32 + 32 = 364 each), so the lower index.
  const islands_bw pairs{{0, 0, 1, 1}};
  const std::int32_t share[4] = {1000, 400, 700, 400};
  CHECK(choose_gpu_subset(4, gpu_set{0xF}, 1, share, pairs) == set_of({1}));
  // Free 400 on devices 0, 2, 3 (device 1 is too full to fit): device 0's island mate is busy, so its
  // cut to the fitting devices is 32 + 32 = 64 against 32 + 300 = 332 for devices 2 and 3.
  const std::int32_t share3[4] = {400, 100, 400, 400};
  CHECK(choose_gpu_subset(4, set_of({0, 2, 3}), 1, share3, pairs) == set_of({0}));

  // 16 GPUs, two islands of 8, 8 wanted: C(16,8) = 12870 subsets, so the greedy path; it takes one
  // whole island, the lower one.
  std::vector<int> sixteen(16, 0);
  for (int i = 8; i < 16; ++i) sixteen[static_cast<std::size_t>(i)] = 1;
  std::int32_t whole16[16];
  for (auto& w : whole16) w = 1000;
  CHECK(choose_gpu_subset(16, gpu_set{0xFFFF}, 8, whole16, islands_bw{sixteen}) == gpu_set{0xFF});
  // Island 0 half busy (devices 0..3): the greedy path takes island 1 whole.
  CHECK(choose_gpu_subset(16, gpu_set{0xFFF0}, 8, whole16, islands_bw{sixteen}) == gpu_set{0xFF00});
}

TEST_CASE("gang.nvlink_aware_gpus on a cluster, against lowest-index best fit") {
  in_memory_cluster c;
  node_spec n{"dgx", 64000, 262144, {}, ""};
  n.add_gpus(4, "V100M32", 32768, 0).add_gpus(4, "V100M32", 32768, 1);
  c.add_node(n);
  const pod one = make_pod("one").gpus(1);
  c.reserve(one, make_binding(one, 0, set_of({0})));
  c.reserve(one, make_binding(one, 0, set_of({4})));
  c.reserve(one, make_binding(one, 0, set_of({1})));
  c.reserve(one, make_binding(one, 0, set_of({2})));
  // Free: {3} on island 0, {5,6,7} on island 1.
  const pod two = make_pod("two").gpus(2);
  CHECK(nvlink_aware_gpus{}.select(c, two, 0) == set_of({5, 6}));
  CHECK(best_fit_gpus{}.select(c, two, 0) == set_of({3, 5}));  // straddles the islands
  CHECK(nvlink_aware_gpus{}.select(c, one, 0) == set_of({3}));
  CHECK(nvlink_aware_gpus{}.select(c, make_pod("four").gpus(4), 0) == set_of({3, 5, 6, 7}));
  CHECK(nvlink_aware_gpus{}.select(c, make_pod("five").gpus(5), 0) == 0);
  CHECK(nvlink_aware_gpus{}.select(c, make_pod("cpu").cpu(10), 0) == 0);

  // An explicit interconnect overrides the islands: here 3-5 is the NVLink pair.
  auto table = std::make_shared<interconnect_table>();
  gpu_interconnect t(8);
  t.set_link(3, 5, 300);
  table->assign(0, table->add_layout(std::move(t)));
  nvlink_aware_gpus explicit_sel;
  explicit_sel.table = table;
  CHECK(explicit_sel.select(c, two, 0) == set_of({3, 5}));
  CHECK_THROWS_AS(table->assign(1, 7), invalid_argument_error);
}

TEST_CASE("gang.rack_topology.tree and hops") {
  in_memory_cluster c;
  auto add = [&](const char* name, const char* rack) {
    node_spec n = testing::gpu_node(name, 1000, 1000, 1);
    n.rack = rack;
    c.add_node(n);
  };
  add("a", "r1");
  add("b", "r1");
  add("c", "r2");
  add("d", "");
  const rack_topology t(c);
  CHECK(t.rack_count() == 3);
  CHECK(t.rack_of(0) == 0);
  CHECK(t.rack_of(1) == 0);
  CHECK(t.rack_of(2) == 1);
  CHECK(t.rack_of(3) == 2);
  CHECK(t.rack_name(1) == "r2");
  CHECK(t.hops(0, 0) == 0);
  CHECK(t.hops(0, 1) == 2);  // node - rack switch - node
  CHECK(t.hops(0, 2) == 4);  // node - rack - spine - rack - node
  CHECK(boost::num_vertices(t.graph()) == 1 + 3 + 4);
  CHECK_THROWS_AS((void)t.hops(0, 9), invalid_argument_error);
}
