// A gang as a preemptor (room for the whole gang or nothing) and as a victim (evicted whole), and
// gangs built from a queue unit's pods. Expected victims are worked out by hand in each comment.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <cstddef>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gang/gang_fixtures.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/gang/gang_pods.hpp"
#include "gpusched/gang/gang_preemption.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/queue/scheduling_queue.hpp"
#include "support/builders.hpp"
#include "support/fit_profile.hpp"

using namespace gpusched;

namespace {

using cluster = bound_cluster<>;
using gpre = gang_preemptor<cluster, decltype(testing::gpu_first_profile())>;

cluster nodes(int n) {
  cluster c;
  for (int i = 0; i < n; ++i) c.base().add_node(testing::gpu_node("n" + std::to_string(i), 64000, 262144, 8));
  return c;
}
using testing::gpu_pod;
// Binds `count` pods name0.. of `gpus` GPUs each on node n, side by side from device 0.
void fill(cluster& c, node_index n, const std::string& name, int count, int gpus, int priority, double start) {
  for (int i = 0; i < count; ++i) {
    const pod p = gpu_pod(name + std::to_string(i), priority, gpus);
    c.bind(p, make_binding(p, n, ((gpu_set{1} << gpus) - 1) << (i * gpus)), start);
  }
}
std::vector<std::string> names(const gang_preemption_result& r) {
  std::vector<std::string> v;
  for (const auto& x : r.victims) v.push_back(x.spec.name);
  return v;
}
std::set<node_index> nodes_of(const gang_result& r) {
  std::set<node_index> s;
  for (const auto& m : r.members) s.insert(m.where.node);
  return s;
}
gang_spec workers(const std::string& name, int priority, int count, int gpus) {
  return make_gang(name).priority(priority).role("w", make_pod("w").cpu(1000).memory(1024).gpus(gpus), count);
}

}  // namespace

TEST_CASE("gang.preemption.a 2x8-GPU gang empties exactly the two nodes cheapest to empty") {
  // n0: a0..a3 (2 GPUs, p1, t=0); n1: b0,b1 (4 GPUs, p2); n2: c0..c7 (1 GPU, p1, t=10); n3: d0,d1 (4 GPUs, p1, t=20).
  // Reprieve by importance (b, a, c, d): b and a stay, every c and d is a victim: 10 pods.
  // Node by node, costliest first (n1: p2; then n2 8 pods, n0 4, n3 2): b and c stay, a and d go: 6 pods.
  // Same highest priority (1), smaller sum of priorities: the 6, on n0 and n3.
  cluster c = nodes(4);
  fill(c, 0, "a", 4, 2, 1, 0.0);
  fill(c, 1, "b", 2, 4, 2, 0.0);
  fill(c, 2, "c", 8, 1, 1, 10.0);
  fill(c, 3, "d", 2, 4, 1, 20.0);
  const cluster before = c;
  const pod_gang pg = name_members(workers("t", 5, 2, 8));
  gpre pre(testing::gpu_first_profile());
  const gang_preemption_result r = pre.plan(c, pg.spec, 100.0);
  CHECK(c == before);
  REQUIRE(r.found);
  REQUIRE(r.victims.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(r.victims[i].record.start_time == (i < 4 ? 0.0 : 20.0));  // earlier first
  std::vector<std::string> v = names(r);
  std::sort(v.begin(), v.end());
  CHECK(v == std::vector<std::string>{"a0", "a1", "a2", "a3", "d0", "d1"});
  CHECK(r.gangs == 0);
  CHECK(r.cost.count == 6);
  CHECK(r.cost.highest_priority == 1);
  CHECK(r.candidate_units == 16);
  CHECK(nodes_of(r.placement) == std::set<node_index>{0, 3});

  cluster stale = c;  // a victim left meanwhile: the plan is refused and nothing changes
  stale.unbind(stale.find("d0")->id);
  const cluster stale_before = stale;
  CHECK_THROWS_AS(pre.apply(stale, pg, r, 100.0), invalid_argument_error);
  CHECK(stale == stale_before);

  pre.apply(c, pg, r, 100.0);
  CHECK(c.bound_count() == 16 - 6 + 2);
  REQUIRE(c.find("t-w-0") != nullptr);
  REQUIRE(c.find("t-w-1") != nullptr);
  CHECK(c.find("t-w-0")->where.gpus == 0xFF);
  CHECK(c.gang(c.gang_of("t")).size() == 2);
  for (const char* gone : {"a0", "a3", "d0", "d1"}) CHECK(c.find(gone) == nullptr);
  for (const char* kept : {"b0", "b1", "c0", "c7"}) CHECK(c.find(kept) != nullptr);
}

TEST_CASE("gang.preemption.the fewest victims: one 8-GPU pod rather than eight 1-GPU pods") {
  // n0: e0..e7 (1 GPU, p1, t=100..); n1: big (8 GPUs, p1, t=0). The gang: 2 x 4 GPUs.
  // By importance big (earliest) stays and all eight e go; node by node n0 (8 pods) is costlier
  // and stays, big goes. Same highest priority, sum 1 x (1 + 2^31) < 8 x: big alone.
  cluster c = nodes(2);
  fill(c, 0, "e", 8, 1, 1, 100.0);
  c.bind(gpu_pod("big", 1, 8), make_binding(gpu_pod("big", 1, 8), 1, 0xFF), 0.0);
  const pod_gang pg = name_members(workers("t", 5, 2, 4));
  gpre pre(testing::gpu_first_profile());
  // Offered only the e pods, the gang needs all eight of them (any one left leaves 7 GPUs on n0).
  std::vector<pod_id> offered;
  for (int i = 0; i < 8; ++i) offered.push_back(c.find("e" + std::to_string(i))->id);
  const gang_preemption_result only_e = pre.plan(c, pg.spec, 200.0, nullptr, offered);
  REQUIRE(only_e.found);
  CHECK(only_e.victims.size() == 8);
  CHECK(only_e.candidate_units == 8);

  const gang_preemption_result r = pre.preempt(c, pg, 200.0);
  REQUIRE(r.found);
  CHECK(names(r) == std::vector<std::string>{"big"});
  CHECK(nodes_of(r.placement) == std::set<node_index>{1});
  CHECK(c.find("big") == nullptr);
  CHECK(c.bound_count() == 8 + 2);

  // A gang that fits already preempts nobody.
  const gang_preemption_result none = pre.plan(nodes(1), workers("u", 5, 1, 1), 200.0);
  CHECK(none.found);
  CHECK(none.victims.empty());
}

namespace {
using gang_test::prefilter_log;
}  // namespace

TEST_CASE("gang.preemption.a plan's what-ifs run no PreFilter: the cycle's own place ran it once") {
  // As the case above: n0 holds e0..e7 (1 GPU each), n1 big (8 GPUs), all priority 1; the gang is
  // 2 workers of 4 GPUs at priority 5. Its cycle: place fails (PreFilter sees role "w" once), then
  // plan, which needs several what-ifs (steps 1, 2, the reprieves and 5) and runs PreFilter in none.
  cluster c = nodes(2);
  fill(c, 0, "e", 8, 1, 1, 100.0);
  c.bind(gpu_pod("big", 1, 8), make_binding(gpu_pod("big", 1, 8), 1, 0xFF), 0.0);
  const pod_gang pg = name_members(workers("t", 5, 2, 4));
  const prefilter_log log;
  auto prof = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{log, 1}));
  cluster_overlay<cluster> live(c);
  gang_placer<decltype(prof)> placer(prof);
  CHECK_FALSE(placer.place(live, pg.spec).placed);
  CHECK(*log.seen == std::vector<std::string>{"w"});

  gang_preemptor<cluster, decltype(prof)> pre(prof);
  const gang_preemption_result r = pre.plan(c, pg.spec, 200.0);
  REQUIRE(r.found);
  CHECK(r.what_ifs >= 3);
  CHECK(names(r) == std::vector<std::string>{"big"});
  CHECK(*log.seen == std::vector<std::string>{"w"});  // unchanged by the plan

  // The option itself: a placer told not to run it (a what-if elsewhere) adds nothing either.
  gang_options quiet;
  quiet.pre_filter = false;
  gang_placer<decltype(prof)> what_if(prof, quiet);
  CHECK_FALSE(what_if.place(live, pg.spec).placed);
  CHECK(log.seen->size() == 1);
}

TEST_CASE("gang.preemption.a dev gang that would need a prod victim preempts nothing") {
  // n0: serve (prod, p1, 8 GPUs); n1: exp (dev, p1, 8 GPUs). A dev 2 x 8-GPU gang may take only exp:
  // with exp gone one member fits, the second does not.
  cluster c = nodes(2);
  const pod serve = make_pod("serve").cpu(1000).memory(1024).gpus(8).priority(1).prod();
  c.bind(serve, make_binding(serve, 0, 0xFF), 0.0);
  c.bind(gpu_pod("exp", 1, 8), make_binding(gpu_pod("exp", 1, 8), 1, 0xFF), 0.0);
  const cluster before = c;
  gpre pre(testing::gpu_first_profile());
  const gang_preemption_result r = pre.preempt(c, name_members(workers("t", 5, 2, 8)), 10.0);
  CHECK_FALSE(r.found);
  CHECK(r.victims.empty());
  CHECK(c == before);
  CHECK(r.candidate_pods == 1);
  CHECK(r.why_not.find("1 prod (the gang is dev)") != std::string::npos);
  CHECK(r.explain(workers("t", 5, 2, 8)).find("role 'w' got 1 of the 2 members it needs") != std::string::npos);

  // The same gang as prod takes both.
  gang_spec prod_gang = workers("t", 5, 2, 8);
  prod_gang.roles[0].member.tier_ = tier::prod;
  const gang_preemption_result p = pre.plan(c, prod_gang, 10.0);
  REQUIRE(p.found);
  std::vector<std::string> v = names(p);
  std::sort(v.begin(), v.end());
  CHECK(v == std::vector<std::string>{"exp", "serve"});
}

TEST_CASE("gang.preemption.a running gang is evicted whole, never half") {
  // Gang old (p1): old0 on n0 devices 0-3, old1 on n1 devices 0-3; s0 (p2, t=0) on n0 4-7, s1 (p2, t=5) on n1 4-7.
  // A 1 x 4-GPU gang needs half of old, but old goes whole: by importance s0, s1 stay and old goes
  // (highest victim priority 1); node by node s1 would go (priority 2): old wins the cascade.
  cluster c = nodes(2);
  for (int i = 0; i < 2; ++i) {
    const pod m = make_pod("old" + std::to_string(i)).cpu(1000).memory(1024).gpus(4).priority(1).gang("old", 2).qos(
        i == 1 ? qos_class::guaranteed : qos_class::burstable);
    c.bind(m, make_binding(m, static_cast<node_index>(i), 0x0F), 0.0);
  }
  c.bind(gpu_pod("s0", 2, 4), make_binding(gpu_pod("s0", 2, 4), 0, 0xF0), 0.0);
  c.bind(gpu_pod("s1", 2, 4), make_binding(gpu_pod("s1", 2, 4), 1, 0xF0), 5.0);
  const cluster before = c;
  const pod_gang pg = name_members(workers("t", 5, 1, 4));

  // old1 Guaranteed and protected: the whole gang old is no victim; s1 (later start) goes.
  gang_preemption_options protect;
  protect.protect_guaranteed = true;
  gpre guarded(testing::gpu_first_profile(), protect);
  const gang_preemption_result g = guarded.plan(c, pg.spec, 10.0);
  REQUIRE(g.found);
  CHECK(names(g) == std::vector<std::string>{"s1"});
  CHECK(g.candidate_units == 2);
  CHECK(c == before);

  gpre pre(testing::gpu_first_profile());
  const gang_preemption_result r = pre.preempt(c, pg, 10.0);
  REQUIRE(r.found);
  CHECK(r.gangs == 1);
  std::vector<std::string> v = names(r);
  std::sort(v.begin(), v.end());
  CHECK(v == std::vector<std::string>{"old0", "old1"});
  CHECK(c.gang(c.gang_of("old")).empty());
  CHECK(c.find("s0") != nullptr);
  CHECK(c.find("s1") != nullptr);
  CHECK(c.bound_count() == 3);
}

TEST_CASE("gang.preemption.a spent preemption budget protects: nothing in hard mode, a violation in soft mode") {
  // v (p1, 8 GPUs) started at t=100, preempted at 50 and 90: 2 preemptions in (100 - 3600, 100], k = 2,
  // and 200 < 100 + 1800: protected.
  cluster c = nodes(1);
  c.bind(gpu_pod("v", 1, 8), make_binding(gpu_pod("v", 1, 8), 0, 0xFF), 100.0);
  const cluster before = c;
  preemption_budget hard;
  hard.record(pod_key("v"), 50.0);
  hard.record(pod_key("v"), 90.0);
  gpre pre(testing::gpu_first_profile());
  const pod_gang pg = name_members(workers("t", 5, 2, 4));
  const gang_preemption_result r = pre.preempt(c, pg, 200.0, &hard);
  CHECK_FALSE(r.found);
  CHECK(c == before);
  CHECK(r.why_not.find("1 protected by the preemption budget") != std::string::npos);

  budget_options soft_o;
  soft_o.hard = false;
  preemption_budget soft(soft_o);
  soft.record(pod_key("v"), 50.0);
  soft.record(pod_key("v"), 90.0);
  const gang_preemption_result s = pre.preempt(c, pg, 200.0, &soft);
  REQUIRE(s.found);
  CHECK(s.cost.violations == 1);
  CHECK(s.victims.at(0).violating);
  CHECK(c.find("v") == nullptr);
  CHECK(soft.count(pod_key("v"), 0.0, 200.0) == 2);  // keeps the 2 latest: 90 and 200
}

TEST_CASE("gang.preemption.gang_from_pods: roles from shapes, the minimum from gang_min_members") {
  std::vector<pod> u = {make_pod("l").cpu(4000).memory(16384).priority(5).gang("t", 3).submitted(30),
                        make_pod("w0").cpu(8000).gpus(4).priority(5).gang("t", 3).submitted(10),
                        make_pod("w1").cpu(8000).gpus(4).priority(5).gang("t", 3).submitted(20),
                        make_pod("w2").cpu(8000).gpus(4).priority(5).gang("t", 3).submitted(40)};
  const pod_gang g = gang_from_pods(std::span<const pod>(u));
  CHECK(g.spec.name == "t");
  CHECK(g.spec.priority == 5);
  CHECK(g.spec.submit_time == 10.0);
  REQUIRE(g.spec.roles.size() == 2);
  CHECK(g.spec.roles[0].name == "l");
  CHECK(g.spec.roles[0].min_count == 1);
  CHECK(g.spec.roles[1].name == "w0");
  CHECK(g.spec.roles[1].min_count == 2);  // 4 pods, minimum 3: the workers absorb the one optional pod
  CHECK(g.spec.roles[1].desired_count == 3);
  CHECK(g.member(member_binding{1, 2, {}}).name == "w2");

  // A queue unit: the gang is popped once gang_min_members of it have arrived.
  scheduling_queue q;
  for (std::size_t i = 0; i < 3; ++i) q.push(u[i], 50.0);
  const auto unit = q.pop(50.0);
  REQUIRE(unit.has_value());
  const pod_gang from_queue = gang_from_pods(unit->pods);
  REQUIRE(from_queue.spec.roles.size() == 2);
  CHECK(from_queue.spec.roles[1].min_count == 2);  // w0, w1: both needed (3 of 3 arrived)
  CHECK(from_queue.spec.min_members() == 3);
  std::vector<const pod*> ptrs = {&u[1], &u[2]};
  CHECK_THROWS_WITH_AS(gang_from_pods(std::span<const pod* const>(ptrs)), "gang 't'.pods: 2 pods given, gang_min_members is 3",
                       invalid_argument_error);

  auto field_of = [](std::vector<pod> pods) {
    try {
      (void)gang_from_pods(std::span<const pod>(pods));
    } catch (const invalid_argument_error& e) {
      return e.field();
    }
    return std::string("no error");
  };
  auto bad = u;
  bad[2].gang = "x";
  CHECK(field_of(bad) == "pod 'w1'.gang");
  bad = u;
  bad[3].gang_min_members = 4;
  CHECK(field_of(bad) == "pod 'w2'.gang_min_members");
  bad = u;
  bad[1].priority = 4;
  CHECK(field_of(bad) == "pod 'w0'.priority");
  bad = u;
  bad[3].name = "w1";
  CHECK(field_of(bad) == "pod 'w1'.name");
  bad = u;
  for (pod& p : bad) p.gang_min_members = 1;  // 3 optional pods would leave the workers empty
  CHECK(field_of(bad) == "gang 't'.gang_min_members");
  CHECK(field_of({make_pod("x").cpu(1)}) == "pod 'x'.gang");
  CHECK(field_of({}) == "gang.pods");
}

TEST_CASE("gang.preemption.random clusters: a plan changes nothing, applies whole, and says no only when no room exists") {
  // 300 random clusters of 5 nodes x 8 GPUs, filled with 1/2/4-GPU pods of priority 0..3; a gang
  // of 2..3 workers x 4 or 8 GPUs at priority 1..4. Properties: plan() leaves c as it was; a found
  // plan applies as one transaction (every member bound, every victim of lower priority); "not
  // found" only when the gang does not fit even with every lower-priority pod gone.
  std::mt19937_64 rng(2026);
  gpre pre(testing::gpu_first_profile());
  gang_placer placer(testing::gpu_first_profile());
  int found = 0, refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    cluster c = nodes(5);
    int serial = 0;
    for (node_index n = 0; n < 5; ++n) {
      gpu_set used = 0;
      for (int attempt = 0; attempt < 6; ++attempt) {
        const int gpus = 1 << (rng() % 3);
        const gpu_set want = ((gpu_set{1} << gpus) - 1) << (gpus * static_cast<int>(rng() % static_cast<std::uint64_t>(8 / gpus)));
        if ((used & want) != 0) continue;
        used |= want;
        const pod p = gpu_pod("p" + std::to_string(serial++), static_cast<int>(rng() % 4), gpus);
        c.bind(p, make_binding(p, n, want), static_cast<double>(rng() % 100));
      }
    }
    const int prio = 1 + static_cast<int>(rng() % 4);
    const pod_gang pg = name_members(workers("g" + std::to_string(trial), prio, 2 + static_cast<int>(rng() % 2), rng() % 2 ? 8 : 4));
    const cluster before = c;
    const gang_preemption_result r = pre.plan(c, pg.spec, 200.0);
    REQUIRE(c == before);
    if (r.found) {
      ++found;
      for (const auto& v : r.victims) CHECK(v.record.priority < prio);
      pre.apply(c, pg, r, 200.0);
      CHECK(c.bound_count() == before.bound_count() - r.victims.size() + pg.spec.roles[0].min_count);
      CHECK(c.gang(c.gang_of(pg.spec.name)).size() == static_cast<std::size_t>(pg.spec.roles[0].min_count));
    } else {
      ++refused;
      cluster emptied = c;  // every pod it could preempt gone: the gang must not fit there either
      for (int i = 0; i < serial; ++i) {
        const auto* b = emptied.find("p" + std::to_string(i));
        if (b != nullptr && b->priority < prio) emptied.unbind(b->id);
      }
      gang_result probe;
      CHECK_FALSE(placer.place(emptied.base(), pg.spec, probe));
    }
  }
  CHECK(found > 50);  // both outcomes occur often enough for the properties to mean something
  CHECK(refused > 10);
}
