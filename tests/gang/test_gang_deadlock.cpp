// No deadlock: the wait-for graph and its breaking order, and the coordinator's cycles worked through
// by hand (two 100-pod gangs where only one fits; interleaved partial holds; the timeout fallback).
#include <doctest/doctest.h>

#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/coordinator.hpp"
#include "gpusched/gang/wait_for.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "support/builders.hpp"
#include "support/fit_profile.hpp"

using namespace gpusched;

TEST_CASE("gang.wait_for.cycles break in priority, then age order") {
  wait_for_graph w;
  w.reset(3);
  w.add_wait(0, 1);
  w.add_wait(1, 0);
  w.add_wait(2, 0);
  w.add_wait(2, 2);  // ignored: nobody waits on itself
  CHECK(w.has_cycle());
  // Same priority: the younger (1, submitted at t=1) gives way.
  const std::vector<waiting_gang_key> same{{5, 0.0, 0}, {5, 1.0, 1}, {5, 2.0, 2}};
  CHECK(w.break_cycles(same) == std::vector<std::size_t>{1});
  CHECK_FALSE(w.has_cycle());
  CHECK(w.waits(2, 0));

  // Lower priority gives way even when older.
  w.reset(2);
  w.add_wait(0, 1);
  w.add_wait(1, 0);
  const std::vector<waiting_gang_key> prio{{2, 0.0, 0}, {7, 9.0, 1}};
  CHECK(w.break_cycles(prio) == std::vector<std::size_t>{0});

  // Equal priority and time: the later submission.
  w.reset(2);
  w.add_wait(0, 1);
  w.add_wait(1, 0);
  const std::vector<waiting_gang_key> tie{{3, 1.0, 10}, {3, 1.0, 11}};
  CHECK(w.break_cycles(tie) == std::vector<std::size_t>{1});

  // Two separate cycles: one victim each.
  w.reset(4);
  w.add_wait(0, 1);
  w.add_wait(1, 0);
  w.add_wait(2, 3);
  w.add_wait(3, 2);
  const std::vector<waiting_gang_key> four{{1, 0, 0}, {0, 0, 1}, {1, 0, 2}, {4, 0, 3}};
  CHECK(w.break_cycles(four) == std::vector<std::size_t>{1, 2});

  // One component 0 <-> 1 <-> 2: removing 0 (lowest priority) leaves 1 <-> 2, then 2 gives way.
  w.reset(3);
  w.add_wait(0, 1);
  w.add_wait(1, 0);
  w.add_wait(1, 2);
  w.add_wait(2, 1);
  const std::vector<waiting_gang_key> chain{{1, 0, 0}, {5, 0, 1}, {3, 0, 2}};
  CHECK(w.break_cycles(chain) == std::vector<std::size_t>{0, 2});
  CHECK_FALSE(w.has_cycle());
}

namespace {
using coordinator = gang_coordinator<decltype(testing::gpu_first_profile())>;

// 25 nodes x 4 GPUs = 100 GPUs.
in_memory_cluster hundred_gpus() {
  in_memory_cluster c;
  for (int i = 0; i < 25; ++i) c.add_node(testing::gpu_node("n" + std::to_string(i), 64000, 262144, 4));
  return c;
}
int free_gpus(const in_memory_cluster& c) {
  int k = 0;
  for (node_index n = 0; n < c.size(); ++n) {
    for (const auto& d : c.gpus(n)) k += d.milli_free == gpu_milli_whole ? 1 : 0;
  }
  return k;
}
gang_spec pods(const char* name, int members, int priority = 1, double t = 0.0) {
  return make_gang(name).priority(priority).submitted(t).role("w", make_pod("w").cpu(100).gpus(1), members);
}
}  // namespace

TEST_CASE("gang.coordinator.two 100-pod gangs where one fits: one runs, then the other") {
  hold_policy atomic;
  atomic.max_holders = 0;
  hold_policy interleaving;
  interleaving.max_holders = 2;
  interleaving.members_per_cycle = 10;
  for (const hold_policy& h : {atomic, hold_policy{}, interleaving}) {
    CAPTURE(h.max_holders);
    in_memory_cluster c = hundred_gpus();
    const in_memory_cluster empty = c;
    coordinator co(testing::gpu_first_profile(), {}, h);
    const gang_id a = co.submit(pods("a", 100));
    const gang_id b = co.submit(pods("b", 100));
    cycle_report r = co.run_cycle(c, 0.0);
    CHECK(r.started == std::vector<gang_id>{a});
    CHECK(co.state(b) == gang_state::pending);
    CHECK(free_gpus(c) == 0);
    CHECK(co.placement(b).explain(co.spec(b)) ==
          "gang 'b' not placed: role 'w' got 0 of the 100 members it needs; for the next one 0/25 nodes fit: "
          "25 insufficient GPU share");
    r = co.run_cycle(c, 1.0);
    CHECK(r.started.empty());
    CHECK(co.state(a) == gang_state::running);
    co.finish(c, a);
    CHECK(c == empty);
    r = co.run_cycle(c, 10.0);
    CHECK(r.started == std::vector<gang_id>{b});
    CHECK(co.placement(b).members.size() == 100);
    co.finish(c, b);
    CHECK(c == empty);
    CHECK(co.state(a) == gang_state::done);
  }
}

TEST_CASE("gang.coordinator.interleaved partial holds: the wait-for cycle is found and broken") {
  // Kubernetes-style one-step-at-a-time holds (10 members per cycle, two holders) let two 100-pod
  // gangs each grab part of a 100-GPU cluster while two 50-pod gangs z1, z2 run.
  hold_policy h;
  h.max_holders = 2;
  h.members_per_cycle = 10;
  in_memory_cluster c = hundred_gpus();
  const in_memory_cluster empty = c;
  coordinator co(testing::gpu_first_profile(), {}, h);
  const gang_id z1 = co.submit(pods("z1", 50, 9));
  const gang_id z2 = co.submit(pods("z2", 50, 9));
  const gang_id a = co.submit(pods("a", 100));
  const gang_id b = co.submit(pods("b", 100));

  cycle_report r = co.run_cycle(c, 0.0);
  CHECK(r.started == std::vector<gang_id>{z1, z2});
  CHECK(r.holding.empty());  // nothing free to hold

  co.finish(c, z1);
  r = co.run_cycle(c, 1.0);  // a and b take 10 each of the 50 freed
  CHECK(r.holding == std::vector<gang_id>{a, b});
  CHECK(co.placement(a).members.size() == 10);
  CHECK(co.placement(b).members.size() == 10);
  CHECK_FALSE(co.placement(a).placed);
  CHECK(free_gpus(c) == 30);

  // Even once z2 leaves, a could reach 10 + 80 = 90 < 100 while b holds 10, and the same for b: each
  // waits for the other. Equal priority and age: b (submitted later) gives way; a grows to 20.
  r = co.run_cycle(c, 2.0);
  CHECK(r.gave_way == std::vector<gang_id>{b});
  CHECK(r.timed_out.empty());
  CHECK(r.holding == std::vector<gang_id>{a});
  CHECK(co.state(b) == gang_state::pending);
  CHECK(co.placement(a).members.size() == 20);
  CHECK(free_gpus(c) == 30);

  r = co.run_cycle(c, 3.0);  // a: 30 held; b backs off until t = 62
  CHECK(co.placement(a).members.size() == 30);
  CHECK(r.holding == std::vector<gang_id>{a});

  co.finish(c, z2);
  r = co.run_cycle(c, 4.0);  // 70 free: a completes
  CHECK(r.started == std::vector<gang_id>{a});
  CHECK(co.state(a) == gang_state::running);
  CHECK(co.placement(a).placed);
  CHECK(co.state(b) == gang_state::pending);

  co.finish(c, a);
  r = co.run_cycle(c, 5.0);
  CHECK(r.started == std::vector<gang_id>{b});
  co.finish(c, b);
  CHECK(c == empty);
}

TEST_CASE("gang.coordinator.the timeout fallback frees a hold that can never complete") {
  in_memory_cluster c = hundred_gpus();
  const pod outsider = make_pod("outsider").gpus(4);  // not the coordinator's: never leaves
  for (node_index n = 0; n < 10; ++n) c.reserve(outsider, make_binding(outsider, n, 0xF));
  coordinator co(testing::gpu_first_profile());  // one holder, timeout 300 s, backoff 60 s
  const gang_id a = co.submit(pods("a", 100, 1, 0.0));
  cycle_report r = co.run_cycle(c, 0.0);
  CHECK(r.holding == std::vector<gang_id>{a});  // the head of the line holds the 60 free GPUs
  CHECK(co.placement(a).members.size() == 60);
  CHECK(free_gpus(c) == 0);

  const gang_id b = co.submit(pods("b", 10, 1, 1.0));
  r = co.run_cycle(c, 1.0);
  CHECK(r.started.empty());
  CHECK(co.state(b) == gang_state::pending);  // one holder at most: b waits
  CHECK(co.next_wakeup(1.0) == doctest::Approx(300.0));

  r = co.run_cycle(c, 300.0);
  CHECK(r.timed_out == std::vector<gang_id>{a});
  CHECK(r.started == std::vector<gang_id>{b});  // a cycle that drops holds grants none: b fits
  CHECK(r.holding.empty());
  CHECK(co.next_wakeup(300.0) == doctest::Approx(360.0));  // a's backoff

  r = co.run_cycle(c, 360.0);
  CHECK(r.holding == std::vector<gang_id>{a});
  CHECK(co.placement(a).members.size() == 50);
  co.withdraw(c, a);
  co.finish(c, b);
  CHECK(free_gpus(c) == 60);
}

TEST_CASE("gang.coordinator.priority first, then age") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 16000, 65536, 4));
  coordinator co(testing::gpu_first_profile());
  const gang_id x = co.submit(pods("x", 4, 1, 0.0));
  const gang_id y = co.submit(pods("y", 4, 5, 1.0));
  const gang_id z = co.submit(pods("z", 4, 5, 0.5));
  CHECK(co.run_cycle(c, 2.0).started == std::vector<gang_id>{z});
  co.finish(c, z);
  CHECK(co.run_cycle(c, 3.0).started == std::vector<gang_id>{y});
  co.finish(c, y);
  CHECK(co.run_cycle(c, 4.0).started == std::vector<gang_id>{x});
}

TEST_CASE("gang.coordinator.elastic gangs start with what fits") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 16000, 65536, 4));
  coordinator co(testing::gpu_first_profile());
  const gang_id e = co.submit(make_gang("e").role("w", make_pod("w").gpus(1), 2, 6));
  CHECK(co.run_cycle(c, 0.0).started == std::vector<gang_id>{e});
  CHECK(co.placement(e).per_role == std::vector<std::int32_t>{4});
}

TEST_CASE("gang.coordinator.bad input names the field and changes nothing") {
  in_memory_cluster c = hundred_gpus();
  coordinator co(testing::gpu_first_profile());
  CHECK_THROWS_WITH_AS(co.submit(make_gang("g")), "gang 'g'.roles: a gang needs at least one role", invalid_argument_error);
  CHECK(co.size() == 0);
  const gang_id a = co.submit(pods("a", 1));
  CHECK_THROWS_AS(co.finish(c, a), invalid_argument_error);  // not running
  CHECK_THROWS_AS(co.finish(c, 99), invalid_argument_error);
  CHECK_THROWS_AS((void)co.state(99), invalid_argument_error);
  CHECK_THROWS_AS(co.run_cycle(c, std::nan("")), invalid_argument_error);
  hold_policy bad;
  bad.timeout = 0.0;
  CHECK_THROWS_WITH_AS(coordinator(testing::gpu_first_profile(), {}, bad), "hold_policy.timeout: must be a finite time > 0",
                       invalid_argument_error);
  bad = hold_policy{};
  bad.max_holders = -1;
  CHECK_THROWS_AS(coordinator(testing::gpu_first_profile(), {}, bad), invalid_argument_error);
}
