// Leak detection (least squares by hand, the time-left rule, bad input) and the eviction order.
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

TEST_CASE("eviction.time left decides: a steady fall is flagged within the horizon, a flat device and a step never") {
  // Readings one second apart. Device 0 falls 10 MiB/s from 500; device 1 stays at 30000; device 2
  // steps from 20000 to 15000 at reading 5. Horizon H = 1 (interval) + 0 (plan) + 30 (start-up) = 31 s;
  // flagged when time to full <= H + 1 = 32 s.
  // Device 0 is an exact line (se = 0): at reading i, (500 - 10 i) / 10 = 50 - i s to full: i = 17
  // leaves 33 s (not yet), i = 18 leaves 32 s: flagged, 32 s >= H left.
  // Device 2: a single mean shift at reading 5 fits exactly (SSE 0) where a line does not: the
  // readings before it are cut off and the 14 after it are flat: slope 0, never a leak.
  gpu_memory_monitor mon;
  for (int i = 0; i <= 18; ++i) {
    const std::array<std::int32_t, 3> r{500 - 10 * i, 30000, i < 5 ? 20000 : 15000};
    mon.record(3, i, r);
    if (i == 17) CHECK_FALSE(mon.check(3).leaking);
  }
  const leak_report rep = mon.check(3);
  REQUIRE(rep.devices.size() == 3);
  CHECK(rep.leaking);
  CHECK(rep.leaking_gpus == 0b001);
  CHECK(rep.devices[0].rule == leak_rule::time_left);
  CHECK(rep.devices[0].slope_mib_per_s == doctest::Approx(-10.0));
  CHECK(rep.devices[0].slope_se == doctest::Approx(0.0));
  CHECK(rep.devices[0].r2 == doctest::Approx(1.0));
  CHECK(rep.devices[0].free_mib == 320);
  CHECK(rep.devices[0].seconds_to_exhaustion == doctest::Approx(32.0));
  CHECK(rep.devices[0].horizon_s == doctest::Approx(31.0));
  CHECK(rep.devices[0].segment == 19);
  CHECK_FALSE(rep.devices[1].leaking);
  CHECK_FALSE(rep.devices[2].leaking);
  CHECK(rep.devices[2].segment == 14);
  CHECK(rep.devices[2].slope_mib_per_s == doctest::Approx(0.0));
  CHECK(rep.explain() ==
        "node #3 leaks GPU memory: GPU 0 free 320 MiB falling 10 MiB/s (at most 10), full in 32 s or more, horizon 31 "
        "s;");
  CHECK(mon.leaking_nodes() == std::vector<node_index>{3});
  // A longer horizon flags earlier: horizon_s 100 -> flagged at 50 - i <= 101, from the third reading.
  leak_detector_options o;
  o.horizon_s = 100;
  gpu_memory_monitor early(o);
  for (int i = 0; i < 3; ++i) {
    const std::array<std::int32_t, 1> r{500 - 10 * i};
    early.record(0, i, r);
  }
  CHECK(early.check(0).leaking);
  // The old gates still apply when set: a 10 MiB/s fall is not flagged under min_slope 20 MiB/s.
  o.min_slope_mib_per_s = 20;
  gpu_memory_monitor gated(o);
  for (int i = 0; i < 3; ++i) {
    const std::array<std::int32_t, 1> r{500 - 10 * i};
    gated.record(0, i, r);
  }
  CHECK_FALSE(gated.check(0).leaking);
}

TEST_CASE("eviction.the window keeps the last readings; too few readings are not judged") {
  leak_detector_options o;
  o.window = 5;
  o.min_samples = 5;
  {
    // Falling 100 MiB/s from 2000, one reading a second: (2000 - 100 i) / 100 = 20 - i <= 32 s from
    // the start, but the slope is judged from the 5th reading only.
    gpu_memory_monitor mon(o);
    for (int i = 0; i < 5; ++i) {
      const std::array<std::int32_t, 1> r{2000 - 100 * i};
      mon.record(0, i, r);
      CHECK(mon.check(0).leaking == (i == 4));
    }
  }
  gpu_memory_monitor mon(o);
  // Rising for 5 readings, then falling for 5: only the falling five remain in the window.
  for (int i = 0; i < 10; ++i) {
    const std::array<std::int32_t, 1> r{i < 5 ? 1000 + 100 * i : 2000 - 100 * (i - 5)};
    mon.record(0, i, r);
  }
  const auto rep = mon.check(0);
  CHECK(rep.samples == 5);
  CHECK(rep.devices[0].slope_mib_per_s == doctest::Approx(-100.0));
  CHECK(rep.leaking);  // 1600 / 100 = 16 s <= 32
  mon.reset(0);
  CHECK(mon.check(0).samples == 0);
}

TEST_CASE("eviction.bad readings name the field and record nothing") {
  gpu_memory_monitor mon;
  const std::array<std::int32_t, 2> two{1, 2};
  const std::array<std::int32_t, 3> three{1, 2, 3};
  const std::array<std::int32_t, 2> negative{1, -2};
  mon.record(0, 10, two);
  CHECK_THROWS_WITH_AS(mon.record(0, 10, two), "gpu_memory_monitor.time: must increase for each node",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS(mon.record(0, 11, three), "gpu_memory_monitor.free_mib: node #0 had 2 devices, got 3",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS(mon.record(0, 11, negative), "gpu_memory_monitor.free_mib[1]: must be >= 0",
                       invalid_argument_error);
  CHECK_THROWS_AS(mon.record(0, std::nan(""), two), invalid_argument_error);
  CHECK(mon.check(0).samples == 1);
  CHECK_THROWS_AS(mon.record(7, 1, negative), invalid_argument_error);
  CHECK(mon.check(7).samples == 0);
  leak_detector_options o;
  o.min_samples = 2;
  CHECK_THROWS_WITH_AS(gpu_memory_monitor{o}, "leak_detector_options.min_samples: must be within 3..window",
                       invalid_argument_error);
  o = {};
  o.false_positive_rate = 0.0;
  CHECK_THROWS_WITH_AS(gpu_memory_monitor{o}, "leak_detector_options.false_positive_rate: must be within (0, 0.5)",
                       invalid_argument_error);
  o = {};
  o.startup_s = -1.0;
  CHECK_THROWS_WITH_AS(gpu_memory_monitor{o}, "leak_detector_options.startup_s: must be a finite number >= 0",
                       invalid_argument_error);
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
