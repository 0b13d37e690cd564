// Gang placement: all-or-nothing, topology, elastic roles, the profile as the authority. Every
// expected placement is worked out by hand in the comments from the rules in gang/placement.hpp.
#include <doctest/doctest.h>

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gang/gang_fixtures.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/nvlink_selector.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/scoring/node_resources.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
auto nv_profile() { return make_profile(checks(gpu_check{}, resource_fit{}), scores(), nvlink_aware_gpus{}); }
using nv_placer = gang_placer<decltype(nv_profile())>;

node_spec node8(const std::string& name, const std::string& rack = "", bool interleaved = false) {
  node_spec n{name, 64000, 512 * 1024, {}, rack};
  for (int g = 0; g < 8; ++g) n.add_gpus(1, "V100M32", 32768, static_cast<std::int16_t>(interleaved ? g % 2 : g / 4));
  return n;
}

// Takes GPUs `gpus` of node n with a filler pod (a reservation that is not the gang's).
void occupy(in_memory_cluster& c, node_index n, gpu_set gpus) {
  static const pod filler = make_pod("filler").gpus(1);
  for_each_gpu(gpus, [&](int g) { c.reserve(filler, make_binding(filler, n, gpu_set{1} << g)); });
}

std::vector<int> members_per_node(const in_memory_cluster& c, const gang_result& r) {
  std::vector<int> k(c.size(), 0);
  for (const auto& m : r.members) ++k[m.where.node];
  return k;
}
}  // namespace

TEST_CASE("gang.place.a 256-GPU job takes 32 whole nodes, never 64 half nodes") {
  // Nodes 0..31 have 4 of 8 GPUs busy (listed first, so index order alone would pick them);
  // nodes 32..63 are free.
  in_memory_cluster c;
  for (int i = 0; i < 64; ++i) c.add_node(node8("n" + std::to_string(i)));
  for (node_index n = 0; n < 32; ++n) occupy(c, n, 0x0F);
  nv_placer placer(nv_profile());

  for (int per_member : {1, 4, 8}) {
    CAPTURE(per_member);
    const in_memory_cluster before = c;
    const std::int32_t members = 256 / per_member;
    const gang_spec g = make_gang("train").role("worker", make_pod("w").cpu(1000).gpus(per_member), members);
    const gang_result r = placer.place(c, g);
    REQUIRE(r.placed);
    CHECK(r.members.size() == static_cast<std::size_t>(members));
    // Take per free node = 8 / per_member, per half node 4 / per_member (0 for 8-GPU members):
    // the larger take first, and 32 free nodes hold exactly 256 GPUs.
    CHECK(r.nodes_used == 32);
    const auto k = members_per_node(c, r);
    for (node_index n = 0; n < 32; ++n) CHECK(k[n] == 0);
    for (node_index n = 32; n < 64; ++n) CHECK(k[n] == 8 / per_member);
    release_gang(c, g, r);
    CHECK(c == before);
  }
}

TEST_CASE("gang.place.fewest nodes, then best fit for the last one") {
  // Free GPUs: node 0 has 3, node 1 has 2, node 2 has 2, node 3 has 1 (4-GPU nodes).
  in_memory_cluster c;
  for (int i = 0; i < 4; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 64000, 262144, 4));
  occupy(c, 0, 0b0001);
  occupy(c, 1, 0b0011);
  occupy(c, 2, 0b0011);
  occupy(c, 3, 0b0111);
  nv_placer placer(nv_profile());
  // Four 1-GPU members: node 0 takes 3 (largest first), the last one goes to the node with the least
  // room that holds it: node 3 (1 free), not node 1 (2 free).
  const gang_result r = placer.place(c, make_gang("g").role("w", make_pod("w").gpus(1), 4));
  REQUIRE(r.placed);
  CHECK(members_per_node(c, r) == std::vector<int>{3, 0, 0, 1});
  CHECK(r.nodes_used == 2);
}

TEST_CASE("gang.place.a whole-node member takes a node it fills") {
  in_memory_cluster c;
  node_spec big{"big", 128000, 1024 * 1024, {}, ""};
  big.add_gpus(16, "V100M32", 32768);
  c.add_node(big);
  c.add_node(node8("a"));
  c.add_node(node8("b"));
  nv_placer placer(nv_profile());
  // Room left over: big 1 more member, a and b none: a (lower index than b).
  const gang_result r = placer.place(c, make_gang("g").role("w", make_pod("w").gpus(8), 1));
  REQUIRE(r.placed);
  CHECK(r.members[0].where.node == 1);
  CHECK(r.members[0].where.gpus == gpu_set{0xFF});
  // Two such members: one node (big) beats two.
  const gang_result two = placer.place(c, make_gang("h").role("w", make_pod("w").gpus(8), 2));
  REQUIRE(two.placed);
  CHECK(members_per_node(c, two) == std::vector<int>{2, 0, 0});
}

TEST_CASE("gang.place.racks: one rack when it can, the best-fitting one") {
  // Rack r1: nodes 0..2; rack r2: nodes 3..6; all free 8-GPU nodes.
  in_memory_cluster c;
  for (int i = 0; i < 7; ++i) c.add_node(node8("n" + std::to_string(i), i < 3 ? "r1" : "r2"));
  nv_placer placer(nv_profile());
  auto whole = [](const char* name, int k) { return make_gang(name).role("w", make_pod("w").gpus(8), k).build(); };

  // Four whole nodes: only r2 holds them.
  const gang_result four = placer.place(c, whole("four", 4));
  REQUIRE(four.placed);
  CHECK(members_per_node(c, four) == std::vector<int>{0, 0, 0, 1, 1, 1, 1});
  CHECK(four.racks_used == 1);
  release_gang(c, whole("four", 4), four);

  // Two whole nodes: both racks hold them; r1 has less room (3 < 4), so r1 (best fit).
  const gang_result two = placer.place(c, whole("two", 2));
  REQUIRE(two.placed);
  CHECK(members_per_node(c, two) == std::vector<int>{1, 1, 0, 0, 0, 0, 0});
  release_gang(c, whole("two", 2), two);

  // Five: no rack holds them; the rack with the most room first (r2: 4), then the last member in r1.
  const gang_result five = placer.place(c, whole("five", 5));
  REQUIRE(five.placed);
  CHECK(members_per_node(c, five) == std::vector<int>{1, 0, 0, 1, 1, 1, 1});
  CHECK(five.racks_used == 2);
  CHECK(five.explain(whole("five", 5)) == "gang 'five' placed 5 members on 5 nodes in 2 racks (w 5)");
}

TEST_CASE("gang.place.fewer nodes outrank fewer racks") {
  // Rack r1: nodes 0..3 with 4 GPUs free each; r2: nodes 4, 5 free; r3: nodes 6, 7 free.
  in_memory_cluster c;
  for (int i = 0; i < 8; ++i) c.add_node(node8("n" + std::to_string(i), i < 4 ? "r1" : i < 6 ? "r2" : "r3"));
  for (node_index n = 0; n < 4; ++n) occupy(c, n, 0xF0);
  nv_placer placer(nv_profile());
  // Four 4-GPU members: 2 nodes suffice (2 per free node). r1 holds them only on 4 nodes; r2 and r3
  // on 2 with equal room (4): the first rack, r2. Each member gets one NVLink island.
  const gang_result r = placer.place(c, make_gang("g").role("w", make_pod("w").gpus(4), 4));
  REQUIRE(r.placed);
  CHECK(members_per_node(c, r) == std::vector<int>{0, 0, 0, 0, 2, 2, 0, 0});
  for (const auto& m : r.members) CHECK((m.where.gpus == 0x0F || m.where.gpus == 0xF0));
}

TEST_CASE("gang.place.members of one node get their own NVLink island") {
  in_memory_cluster c;
  c.add_node(node8("dgx", "", /*interleaved=*/true));  // islands 0,1,0,1,...
  nv_placer placer(nv_profile());
  const gang_result r = placer.place(c, make_gang("g").role("w", make_pod("w").gpus(4), 2));
  REQUIRE(r.placed);
  CHECK(r.members[0].where.gpus == 0x55);  // devices 0,2,4,6: island 0
  CHECK(r.members[1].where.gpus == 0xAA);  // devices 1,3,5,7: island 1
}

TEST_CASE("gang.place.the launcher joins its workers") {
  // Nodes 0 and 1: 8 GPUs; node 2: a small CPU-only node that fits the launcher exactly (best fit
  // alone would choose it).
  in_memory_cluster c;
  c.add_node(node8("a"));
  c.add_node(node8("b"));
  c.add_node(node_spec{"cpu", 4000, 16384, {}, ""});
  nv_placer placer(nv_profile());
  const gang_spec g = make_gang("job")
                          .role("launcher", make_pod("l").cpu(4000).memory(8192))
                          .role("worker", make_pod("w").cpu(8000).memory(65536).gpus(8), 2);
  const gang_result r = placer.place(c, g);
  REQUIRE(r.placed);
  // Workers first (larger role): nodes 0 and 1. Launcher: a node the gang uses, the least room
  // (both 14 launchers' worth), the lower index: node 0.
  REQUIRE(r.members.size() == 3);
  CHECK(r.members[0].role == 1);
  CHECK(r.members[1].role == 1);
  CHECK(r.members[2].role == 0);
  CHECK(r.members[2].where.node == 0);
  CHECK(r.per_role == std::vector<std::int32_t>{1, 2});
  CHECK(r.explain(g) == "gang 'job' placed 3 members on 2 nodes in 1 rack (launcher 1, worker 2)");
}

TEST_CASE("gang.place.all or nothing: the cluster is exactly as before, and the failure says why") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 16000, 65536, 4));
  c.add_node(testing::gpu_node("b", 16000, 65536, 4));
  const in_memory_cluster before = c;
  nv_placer placer(nv_profile());

  // The workers fit (3 x 2 GPUs), the launcher (20 cores) fits no node.
  const gang_spec big_launcher = make_gang("job")
                                     .role("launcher", make_pod("l").cpu(20000))
                                     .role("worker", make_pod("w").cpu(4000).gpus(2), 3);
  const gang_result r = placer.place(c, big_launcher);
  CHECK_FALSE(r.placed);
  CHECK(r.members.empty());
  CHECK(c == before);
  CHECK(r.failure.role == 0);
  CHECK(r.failure.placed == 0);
  CHECK(r.failure.needed == 1);
  CHECK(r.failure.rejections[reason::insufficient_cpu] == 2);
  CHECK(r.explain(big_launcher) ==
        "gang 'job' not placed: role 'launcher' got 0 of the 1 members it needs; for the next one 0/2 nodes fit: "
        "2 insufficient CPU");

  // Five 2-GPU workers on 2 x 4 GPUs: four fit, the fifth finds every device taken.
  const gang_spec five = make_gang("five").role("worker", make_pod("w").cpu(1000).gpus(2), 5);
  const gang_result f = placer.place(c, five);
  CHECK_FALSE(f.placed);
  CHECK(c == before);
  CHECK(f.failure.placed == 4);
  CHECK(f.failure.needed == 5);
  CHECK(f.explain(five) ==
        "gang 'five' not placed: role 'worker' got 4 of the 5 members it needs; for the next one 0/2 nodes fit: "
        "2 insufficient GPU share");
}

TEST_CASE("gang.place.elastic roles take what fits between the minimum and the desired count") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 64000, 262144, 4));
  c.add_node(testing::gpu_node("b", 64000, 262144, 4));
  const gang_spec g = make_gang("el").role("launcher", make_pod("l").cpu(1000)).role("w", make_pod("w").gpus(2), 2, 6);
  {
    nv_placer placer(nv_profile());
    const gang_result r = placer.place(c, g);  // desired 6 x 2 GPUs > 8 GPUs: minimum, then 2 extra
    REQUIRE(r.placed);
    CHECK(r.per_role == std::vector<std::int32_t>{1, 4});
    release_gang(c, g, r);
  }
  {
    gang_options fixed;
    fixed.elastic = false;
    nv_placer placer(nv_profile(), fixed);
    const gang_result r = placer.place(c, g);
    REQUIRE(r.placed);
    CHECK(r.per_role == std::vector<std::int32_t>{1, 2});
    release_gang(c, g, r);
  }
  const in_memory_cluster before = c;
  nv_placer placer(nv_profile());
  const gang_result r = placer.place(c, make_gang("el").role("w", make_pod("w").gpus(2), 5, 6));
  CHECK_FALSE(r.placed);
  CHECK(c == before);
}

namespace {
// A host-defined check: at most one replica of a served model per node.
struct one_replica_per_node {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "OneReplicaPerNode"; }
  template <Cluster C>
  [[nodiscard]] reason check(const C& c, const pod& p, node_index n) const {
    if constexpr (ServedModels<C>) {
      if (!p.model_type.empty() && traits_of<C>::model_replicas(c, n, p.model_type) > 0) return reason::custom;
    }
    return reason::ok;
  }
};
}  // namespace

TEST_CASE("gang.place.the profile's checks confirm every member") {
  in_memory_cluster c;
  for (int i = 0; i < 3; ++i) c.add_node(node8("n" + std::to_string(i)));
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}, one_replica_per_node{}), scores(), nvlink_aware_gpus{});
  gang_placer placer(prof);
  // Capacity alone would put all three on node 0 (8 GPUs); the check allows one per node.
  const gang_result r = placer.place(c, make_gang("s").role("w", make_pod("w").gpus(1).model("bert"), 3));
  REQUIRE(r.placed);
  CHECK(members_per_node(c, r) == std::vector<int>{1, 1, 1});
  // A fourth replica has no node left: 0/3 fit, 3 rejected by the custom check.
  const in_memory_cluster before = c;
  const gang_result more = placer.place(c, make_gang("t").role("w", make_pod("w").gpus(1).model("bert"), 1));
  CHECK_FALSE(more.placed);
  CHECK(more.failure.rejections[reason::custom] == 3);
  CHECK(c == before);
}

TEST_CASE("gang.place.the profile's score breaks topology ties") {
  // Three equal free nodes; node 0 has half its CPU taken by another pod.
  in_memory_cluster c;
  for (int i = 0; i < 3; ++i) c.add_node(node8("n" + std::to_string(i)));
  const pod cpu_hog = make_pod("hog").cpu(32000);
  c.reserve(cpu_hog, make_binding(cpu_hog, 0, 0));
  const gang_spec g = make_gang("g").role("w", make_pod("w").cpu(8000).gpus(8), 1);
  {
    nv_placer plain(nv_profile());  // no scorer: the lowest index
    const gang_result r = plain.place(c, g);
    REQUIRE(r.placed);
    CHECK(r.members[0].where.node == 0);
    release_gang(c, g, r);
  }
  // LeastAllocated (cpu, memory): node 0 scores lower than nodes 1 and 2; of those, the lower index.
  gang_placer spread(make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{least_allocated{}, 1}),
                                  nvlink_aware_gpus{}));
  const gang_result r = spread.place(c, g);
  REQUIRE(r.placed);
  CHECK(r.members[0].where.node == 1);
}

TEST_CASE("gang.place.bad input names the field and changes nothing") {
  in_memory_cluster c;
  c.add_node(node8("a"));
  const in_memory_cluster before = c;
  nv_placer placer(nv_profile());
  auto field_of = [&](const gang_spec& g) {
    try {
      (void)placer.place(c, g);
    } catch (const invalid_argument_error& e) {
      return e.field();
    }
    return std::string("no error");
  };
  const pod w = make_pod("w").gpus(1);
  gang_spec g;
  CHECK(field_of(g) == "gang.name");
  g.name = "g";
  CHECK(field_of(g) == "gang 'g'.roles");
  g.roles.push_back(gang_role{"w", w, 2, 1});
  CHECK(field_of(g) == "gang 'g'.roles[0].desired_count");
  g.roles[0] = gang_role{"w", w, 0, 1};
  CHECK(field_of(g) == "gang 'g'.roles");  // minimums add up to 0
  g.roles[0] = gang_role{"w", w, 1, 1};
  g.roles.push_back(gang_role{"w", w, 1, 1});
  CHECK(field_of(g) == "gang 'g'.roles[1].name");
  g.roles[1].name = "v";
  g.roles[1].member.cpu_milli = -1;
  CHECK(field_of(g) == "pod 'w'.cpu_milli");
  g.roles[1].member.cpu_milli = 0;
  g.priority = -1;  // every int32 priority is valid (Kubernetes' PodSpec.Priority)
  CHECK_NOTHROW(validate(g));
  g.priority = 0;
  g.roles[1].desired_count = max_gang_members;
  CHECK(field_of(g) == "gang 'g'.roles[1].desired_count");
  CHECK(c == before);
  CHECK_THROWS_AS(nv_placer(nv_profile(), gang_options{capacity_limits{0, 1000}}), invalid_argument_error);
}

TEST_CASE("gang.place.same inputs give the same placement") {
  in_memory_cluster c;
  for (int i = 0; i < 12; ++i) c.add_node(node8("n" + std::to_string(i), i % 3 == 0 ? "r1" : "r2"));
  occupy(c, 4, 0x3C);
  occupy(c, 7, 0x01);
  const gang_spec g = make_gang("g").role("l", make_pod("l").cpu(2000)).role("w", make_pod("w").gpus(3), 9, 12);
  in_memory_cluster c2 = c;
  nv_placer p1(nv_profile()), p2(nv_profile());
  const gang_result a = p1.place(c, g);
  const gang_result b = p2.place(c2, g);
  REQUIRE(a.placed);
  CHECK(a.members == b.members);
  CHECK(c == c2);
}

namespace {
using gang_test::prefilter_log;
}  // namespace

TEST_CASE("gang.place.PreFilter runs once per role asked for, before any role is packed") {
  // One node of 8 GPUs. Role "big" asks 2 members of 8 GPUs and is packed first (the larger GPU
  // request); it cannot be placed, so all-or-nothing fails before "small" (1 member of 1 GPU) is
  // packed. Both roles' member pods reach PreFilter once, in declaration order.
  in_memory_cluster c;
  c.add_node(node8("n0"));
  const prefilter_log log;
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{log, 1}), nvlink_aware_gpus{});
  gang_placer<decltype(prof)> placer(prof);
  const gang_spec g = make_gang("job").role("small", make_pod("s").gpus(1)).role("big", make_pod("b").gpus(8), 2);
  CHECK_FALSE(placer.place(c, g).placed);
  CHECK(*log.seen == std::vector<std::string>{"s", "b"});

  // An elastic role (2 to 12 members of 1 GPU) on the 8-GPU node: the desired 12 do not fit and are
  // rolled back, then the minimum 2 and 6 extras are packed (three packings), and PreFilter still
  // sees the role once.
  log.seen->clear();
  const gang_spec e = make_gang("el").role("w", make_pod("w").gpus(1), 2, 12);
  const gang_result r = placer.place(c, e);
  REQUIRE(r.placed);
  CHECK(r.members.size() == 8);
  CHECK(*log.seen == std::vector<std::string>{"w"});
}
