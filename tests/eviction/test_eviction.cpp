// Leak detection (least-squares slope and R^2, hand-computed) and the eviction order.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/eviction/eviction_plan.hpp"
#include "gpusched/eviction/leak_detector.hpp"
#include "support/builders.hpp"

using namespace gpusched;

TEST_CASE("eviction.least squares: slope and R^2 by hand") {
  const std::vector<double> t{0, 1, 2, 3};
  const std::vector<double> falling{10, 8, 6, 4};
  auto f = least_squares(t, falling);
  CHECK(f.slope == doctest::Approx(-2.0));
  CHECK(f.r2 == doctest::Approx(1.0));
  // y = 1, 3, 2, 4: t_mean 1.5, y_mean 2.5; Sxy = 2.25 - 0.25 - 0.25 + 2.25 = 4, Sxx = 5, Syy = 5:
  // slope 0.8, R^2 = 16 / 25 = 0.64.
  const std::vector<double> noisy{1, 3, 2, 4};
  f = least_squares(t, noisy);
  CHECK(f.slope == doctest::Approx(0.8));
  CHECK(f.r2 == doctest::Approx(0.64));
  const std::vector<double> flat{5, 5, 5, 5};
  f = least_squares(t, flat);
  CHECK(f.slope == 0.0);
  CHECK(f.r2 == 0.0);
}

TEST_CASE("eviction.a steady fall is a leak, a flat device and a single step are not") {
  // Device 0 falls 10 MiB/s from 20000; device 1 stays at 30000; device 2 steps from 20000 to
  // 15000 between t = 4 and t = 5. Ten readings, one per second.
  // Device 0: slope -10, R^2 1; last 20000 - 90 = 19910, exhausted in 19910 / 10 = 1991 s.
  // Device 2: t_mean 4.5, dy = +-2500, Sxy = -2500 * 12.5 * 2 = -62500, Sxx = 82.5, slope -757.6;
  // Syy = 10 * 2500^2 = 62.5e6, R^2 = 62500^2 / (82.5 * 62.5e6) = 0.7576 < 0.8: no leak.
  gpu_memory_monitor mon;
  for (int i = 0; i < 10; ++i) {
    const std::array<std::int32_t, 3> r{20000 - 10 * i, 30000, i < 5 ? 20000 : 15000};
    mon.record(3, i, r);
  }
  const leak_report rep = mon.check(3);
  REQUIRE(rep.devices.size() == 3);
  CHECK(rep.leaking);
  CHECK(rep.leaking_gpus == 0b001);
  CHECK(rep.devices[0].slope_mib_per_s == doctest::Approx(-10.0));
  CHECK(rep.devices[0].r2 == doctest::Approx(1.0));
  CHECK(rep.devices[0].free_mib == 19910);
  CHECK(rep.devices[0].seconds_to_exhaustion == doctest::Approx(1991.0));
  CHECK_FALSE(rep.devices[1].leaking);
  CHECK(rep.devices[2].slope_mib_per_s == doctest::Approx(-62500.0 / 82.5));
  CHECK(rep.devices[2].r2 == doctest::Approx(62500.0 * 62500.0 / (82.5 * 62.5e6)));
  CHECK_FALSE(rep.devices[2].leaking);
  CHECK(rep.explain() == "node #3 leaks GPU memory: GPU 0 free 19910 MiB falling 10 MiB/s (R^2 100%), exhausted in 1991 s;");
  CHECK(mon.leaking_nodes() == std::vector<node_index>{3});
  // Horizon: 1991 s away is not urgent under a 1000 s horizon.
  leak_detector_options o;
  o.horizon_s = 1000;
  gpu_memory_monitor urgent(o);
  for (int i = 0; i < 10; ++i) {
    const std::array<std::int32_t, 1> r{20000 - 10 * i};
    urgent.record(0, i, r);
  }
  CHECK_FALSE(urgent.check(0).leaking);
}

TEST_CASE("eviction.the window keeps the last readings; too few readings are not judged") {
  leak_detector_options o;
  o.window = 5;
  o.min_samples = 5;
  gpu_memory_monitor mon(o);
  // Rising for 5 readings, then falling for 5: only the falling five remain in the window.
  for (int i = 0; i < 10; ++i) {
    const std::array<std::int32_t, 1> r{i < 5 ? 1000 + 100 * i : 2000 - 100 * (i - 5)};
    mon.record(0, i, r);
    if (i == 3) CHECK_FALSE(mon.check(0).leaking);  // 4 readings < 5
  }
  const auto rep = mon.check(0);
  CHECK(rep.samples == 5);
  CHECK(rep.devices[0].slope_mib_per_s == doctest::Approx(-100.0));
  CHECK(rep.leaking);
  mon.reset(0);
  CHECK(mon.check(0).samples == 0);
}

TEST_CASE("eviction.bad readings name the field and record nothing") {
  gpu_memory_monitor mon;
  const std::array<std::int32_t, 2> two{1, 2};
  const std::array<std::int32_t, 3> three{1, 2, 3};
  const std::array<std::int32_t, 2> negative{1, -2};
  mon.record(0, 10, two);
  CHECK_THROWS_WITH_AS(mon.record(0, 10, two), "gpu_memory_monitor.time: must increase for each node", invalid_argument_error);
  CHECK_THROWS_WITH_AS(mon.record(0, 11, three), "gpu_memory_monitor.free_mib: node #0 had 2 devices, got 3",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS(mon.record(0, 11, negative), "gpu_memory_monitor.free_mib[1]: must be >= 0", invalid_argument_error);
  CHECK_THROWS_AS(mon.record(0, std::nan(""), two), invalid_argument_error);
  CHECK(mon.check(0).samples == 1);
  leak_detector_options o;
  o.min_samples = 50;
  CHECK_THROWS_WITH_AS(gpu_memory_monitor{o}, "leak_detector_options.min_samples: must be within 2..window", invalid_argument_error);
}

TEST_CASE("eviction.plan: BestEffort first, then lowest priority, then largest usage over request") {
  // Node with 2 GPUs of 32768 MiB; GPU 0 leaks, its last free reading is 1000 MiB.
  //   a: BestEffort p5, request 1000, uses 1000 (1.0)
  //   b: Burstable  p1, request 1000, uses 3000 (3.0)
  //   c: Burstable  p1, request 2000, uses 2000 (1.0)
  //   d: prod Guaranteed p9, request 4000, uses 4000 -> kept
  //   e: dev Guaranteed  p3, request 1000, uses 1500 (1.5)
  //   f: on GPU 1 only -> not a candidate
  // Order a, b, c, e. Target 10%: ceil(3276.8) = 3277 free; deficit 3277 - 1000 = 2277.
  // Evict a (1000 freed, 1277 left), b (3000 more: met): 2 pods.
  bound_cluster<> c;
  c.base().add_node(testing::gpu_node("n", 64000, 262144, 2));
  std::map<std::string, std::int64_t> use{{"a", 1000}, {"b", 3000}, {"c", 2000}, {"d", 4000}, {"e", 1500}, {"f", 100}};
  auto add = [&](const std::string& name, qos_class q, int prio, int req, gpu_set gpus, bool prod) {
    auto b = make_pod(name).gpu_share(100).gpu_memory(req).qos(q).priority(prio);
    if (prod) b.prod();
    const pod p = b;
    c.bind(p, make_binding(p, 0, gpus), 0.0);
  };
  add("a", qos_class::best_effort, 5, 1000, 0b01, false);
  add("b", qos_class::burstable, 1, 1000, 0b01, false);
  add("c", qos_class::burstable, 1, 2000, 0b01, false);
  add("d", qos_class::guaranteed, 9, 4000, 0b01, true);
  add("e", qos_class::guaranteed, 3, 1000, 0b01, false);
  add("f", qos_class::best_effort, 0, 100, 0b10, false);
  leak_report leak;
  leak.node = 0;
  leak.leaking = true;
  leak.leaking_gpus = 0b01;
  leak.devices = {device_trend{0, 1000, -5.0, 0.99, 200.0, true}, device_trend{1, 30000, 0.0, 0.0, INFINITY, false}};
  auto usage = [&](const bound_pod& bp) { return use.at(c.spec(bp.id).name); };
  const eviction_plan plan = plan_eviction(c, leak, usage);
  std::vector<std::string> order;
  for (const auto& e : plan.order) order.push_back(e.name);
  CHECK(order == std::vector<std::string>{"a", "b", "c", "e"});
  CHECK(plan.evict_count == 2);
  CHECK(plan.sufficient);
  CHECK(plan.protected_count == 1);
  CHECK(plan.order[1].usage_over_request == doctest::Approx(3.0));
  CHECK(plan.explain() == "evict 2 of 4 pod(s) on node #0: a b; 1 prod Guaranteed pod(s) kept");
  eviction_options all;
  all.allow_prod_guaranteed = true;
  all.target_free_fraction = 0.5;  // 16384 - 1000 = 15384: everything (11500) is not enough
  const eviction_plan deep = plan_eviction(c, leak, usage, all);
  CHECK(deep.order.back().name == "d");
  CHECK(deep.evict_count == 5);
  CHECK_FALSE(deep.sufficient);
  // No leak, no plan.
  leak_report calm;
  CHECK(plan_eviction(c, calm, usage).evict_count == 0);
  // Unmeasured pods count with their request: a 1000, b 1000 (277 short), c 2000: three pods.
  const eviction_plan blind = plan_eviction(c, leak, [](const bound_pod&) { return std::int64_t{-1}; });
  CHECK(blind.evict_count == 3);
}
