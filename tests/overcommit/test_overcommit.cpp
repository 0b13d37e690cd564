// Overcommit ceilings with hand-computed outcomes, the usage mode's SLA guard, and the random
// property that no node ever ends above a ceiling.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/overcommit/overcommit_fit.hpp"
#include "gpusched/overcommit/usage_overcommit.hpp"
#include "gpusched/preemption/preemption.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
using cluster = bound_cluster<>;

pod cpu_pod(const std::string& name, milli cpu, qos_class q) { return make_pod(name).cpu(cpu).memory(100).qos(q); }
}  // namespace

TEST_CASE("overcommit.classes nest: Guaranteed within capacity, Burstable within 120%") {
  // Node: 10 cores. Seed policy: Burstable and BestEffort CPU ceilings 1200 permille (12 cores);
  // BestEffort raised to 1500 (15 cores).
  cluster c;
  c.base().add_node(testing::gpu_node("n", 10000, 1000000, 0));
  overcommit_policy pol = seed_overcommit_policy();
  pol.best_effort.cpu_permille = 1500;
  const overcommit_fit fit{pol};
  c.bind(cpu_pod("g1", 6000, qos_class::guaranteed), make_binding(cpu_pod("g1", 6000, qos_class::guaranteed), 0, 0));
  // Burstable 6 cores: G + B = 6 + 6 = 12 <= 12; G + B + BE = 12 <= 15: fits.
  const pod b1 = cpu_pod("b1", 6000, qos_class::burstable);
  CHECK(fit.check(c, b1, 0) == reason::ok);
  c.bind(b1, make_binding(b1, 0, 0));
  // Guaranteed 1 core: G = 7 <= 10, but G + B = 13 > 12: refused.
  CHECK(fit.check(c, cpu_pod("g2", 1000, qos_class::guaranteed), 0) == reason::insufficient_cpu);
  // Burstable 1 core: G + B = 13 > 12: refused. BestEffort 2 cores: 12 + 2 = 14 <= 15: fits.
  CHECK(fit.check(c, cpu_pod("b2", 1000, qos_class::burstable), 0) == reason::insufficient_cpu);
  CHECK(fit.check(c, cpu_pod("e1", 2000, qos_class::best_effort), 0) == reason::ok);
  CHECK(fit.check(c, cpu_pod("e2", 3001, qos_class::best_effort), 0) == reason::insufficient_cpu);
  // Guaranteed is never overcommitted: on a fresh node with G = 9 cores, 2 more Guaranteed
  // cores (11 > 10) are refused although Burstable may reach 12.
  cluster d;
  d.base().add_node(testing::gpu_node("n", 10000, 1000000, 0));
  d.bind(cpu_pod("g", 9000, qos_class::guaranteed), make_binding(cpu_pod("g", 9000, qos_class::guaranteed), 0, 0));
  CHECK(fit.check(d, cpu_pod("g+", 2000, qos_class::guaranteed), 0) == reason::insufficient_cpu);
  CHECK(fit.check(d, cpu_pod("b+", 2000, qos_class::burstable), 0) == reason::ok);
}

TEST_CASE("overcommit.without per-class accounting the total counts as Guaranteed (conservative)") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n", 10000, 1000000, 0));
  const pod b = cpu_pod("b", 9000, qos_class::burstable);
  c.reserve(b, make_binding(b, 0, 0));
  const overcommit_fit fit{seed_overcommit_policy()};
  CHECK(fit.check(c, cpu_pod("x", 3000, qos_class::burstable), 0) == reason::ok);          // 12 <= 12
  CHECK(fit.check(c, cpu_pod("y", 3001, qos_class::burstable), 0) == reason::insufficient_cpu);
  CHECK(fit.check(c, cpu_pod("z", 1001, qos_class::guaranteed), 0) == reason::insufficient_cpu);  // 10.001 > 10
}

TEST_CASE("overcommit.GPU memory only when enabled, never for Guaranteed") {
  // One device: 32768 MiB, 30000 free (2768 used). A pod wanting 32000 MiB: 2768 + 32000 = 34768.
  // Not overcommitted: > 32768, refused. At 1200 permille: 32768 * 1200 / 1000 = 39321 >= 34768.
  in_memory_cluster c;
  node_spec n = testing::gpu_node("n", 64000, 1000000, 1);
  n.gpus[0].mem_free_mib = 30000;
  n.gpus[0].milli_free = 500;
  c.add_node(n);
  const pod p = make_pod("p").gpu_share(400).gpu_memory(32000).qos(qos_class::burstable);
  overcommit_policy pol;
  pol.burstable.gpu_memory_permille = 1200;
  pol.best_effort.gpu_memory_permille = 1200;
  CHECK(overcommit_fit{pol}.check(c, p, 0) == reason::insufficient_gpu_memory);  // not enabled
  pol.allow_gpu_memory_overcommit = true;
  CHECK(overcommit_fit{pol}.check(c, p, 0) == reason::ok);
  CHECK(overcommit_best_fit_gpus{pol}.select(c, p, 0) == 0b1);
  CHECK(best_fit_gpus{}.select(c, p, 0) == 0);  // the plain selector would find no device
  pod g = p;
  g.qos = qos_class::guaranteed;
  CHECK(overcommit_fit{pol}.check(c, g, 0) == reason::insufficient_gpu_memory);
  CHECK(overcommit_best_fit_gpus{pol}.select(c, g, 0) == 0);
  pod share = p;
  share.gpu_milli = 600;  // GPU share is never overcommitted
  CHECK(overcommit_fit{pol}.check(c, share, 0) == reason::insufficient_gpu_share);
}

TEST_CASE("overcommit.the default policy accepts exactly what NodeResourcesFit + GPUCheck accept") {
  std::mt19937_64 rng(11);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int agree = 0;
  for (int i = 0; i < 2000; ++i) {
    in_memory_cluster c;
    // One draw per statement, in GCC's (right-to-left) argument order: a call's is unspecified.
    const int gpus = uni(0, 4);
    const int mem_gib = uni(1, 64);
    const int cores = uni(1, 16);
    node_spec n = testing::gpu_node("n", cores * 1000, mem_gib * 1024, gpus);
    for (auto& d : n.gpus) {
      d.milli_free = uni(0, 10) * 100;
      d.mem_free_mib = uni(0, 32768);
    }
    c.add_node(n);
    auto b = make_pod("p").cpu(uni(0, 16) * 1000).memory(uni(0, 64) * 1024).qos(static_cast<qos_class>(uni(0, 2)));
    if (uni(0, 1)) {
      const int devices = uni(1, 2);
      const int share = uni(1, 10);
      b.gpu_share(share * 100, devices).gpu_memory(uni(0, 32768));
    }
    const pod p = b;
    const bool reference = resource_fit{}.check(c, p, 0) == reason::ok && gpu_check{}.check(c, p, 0) == reason::ok;
    CHECK((overcommit_fit{}.check(c, p, 0) == reason::ok) == reference);
    agree += reference ? 1 : 0;
  }
  CHECK(agree > 100);  // both outcomes occur
}

TEST_CASE("overcommit.usage mode admits beyond the static ceiling only under the SLA guard") {
  // 10 cores, fully allocated to Burstable. Static: no overcommit; hard ceiling 1500 (15 cores);
  // guard 70%. A 2-core Burstable pod: hard ceiling 12 <= 15 holds; estimate = used * 10 +
  // assigned since + 2 cores: at 30% used, 3 + 0 + 2 = 5 <= 7: admitted; at 60%, 6 + 2 = 8 > 7.
  cluster c;
  c.base().add_node(testing::gpu_node("n", 10000, 1000000, 0));
  const pod full = cpu_pod("full", 10000, qos_class::burstable);
  c.bind(full, make_binding(full, 0, 0));
  usage_overcommit u;
  u.hard_policy.burstable = qos_ceiling{1500, 1500, 1000};
  u.hard_policy.best_effort = qos_ceiling{1500, 1500, 1000};
  u.guard = sla_guard{0.70, 0.80};
  u.validate();
  const pod p = cpu_pod("p", 2000, qos_class::burstable);
  CHECK(u.check(c, p, 0) == reason::insufficient_cpu);  // no reading: static ceiling
  node_metrics m{0.30, 0.10, 0.0};
  c.base().set_load(0, &m);
  CHECK(u.check(c, p, 0) == reason::ok);
  m.assigned_cpu_since = 2001;  // a pod assigned since the reading: 3 + 2.001 + 2 = 7.001 > 7
  c.base().set_load(0, &m);
  CHECK(u.check(c, p, 0) == reason::cpu_load_too_high);
  m = node_metrics{0.60, 0.10, 0.0};
  c.base().set_load(0, &m);
  CHECK(u.check(c, p, 0) == reason::cpu_load_too_high);
  m = node_metrics{0.10, 0.10, 0.0};
  c.base().set_load(0, &m);
  CHECK(u.check(c, cpu_pod("big", 5001, qos_class::burstable), 0) == reason::insufficient_cpu);  // 15.001 > 15
  CHECK(u.check(c, cpu_pod("g", 1000, qos_class::guaranteed), 0) == reason::insufficient_cpu);   // never on usage
}

TEST_CASE("overcommit.bad policies name the field") {
  overcommit_policy p;
  p.burstable.cpu_permille = 900;
  CHECK_THROWS_WITH_AS(p.validate(), "overcommit.burstable.cpu_permille: must be within 1000..10000 permille, got 900",
                       invalid_argument_error);
  p = overcommit_policy{};
  p.burstable.memory_permille = 1300;
  p.best_effort.memory_permille = 1200;
  CHECK_THROWS_WITH_AS(p.validate(), "overcommit.best_effort.memory_permille: must be >= the burstable ceiling (1300) so that classes nest",
                       invalid_argument_error);
  usage_overcommit u;
  u.guard.cpu = 1.5;
  CHECK_THROWS_WITH_AS(u.validate(), "usage_overcommit.guard.cpu: must be a finite fraction within (0, 1]", invalid_argument_error);
  u = usage_overcommit{};
  u.static_policy = seed_overcommit_policy();
  CHECK_THROWS_AS(u.validate(), invalid_argument_error);  // hard (1000) below static (1200)
}

namespace {
// For every node and class q: requests of q and more protected classes <= capacity * ceiling(q).
bool within_all_ceilings(const cluster& c, const overcommit_policy& pol) {
  for (node_index n = 0; n < c.base().size(); ++n) {
    const node_state r = c.base().resources(n);
    const qos_allocation a = c.qos_on(n);
    for (int k = 0; k < 3; ++k) {
      const auto q = static_cast<qos_class>(k);
      if (a.cpu_through(q) > r.cpu_capacity * pol.ceiling(q).cpu_permille / 1000) return false;
      if (a.memory_through(q) > r.mem_capacity * pol.ceiling(q).memory_permille / 1000) return false;
    }
    // GPU memory: the largest ceiling any class may use (BestEffort's when enabled, else 1000).
    const std::int64_t gpu_max = pol.allow_gpu_memory_overcommit ? pol.best_effort.gpu_memory_permille : 1000;
    for (const gpu_device& d : c.base().gpus(n)) {
      if (d.mem_total_mib - d.mem_free_mib > std::int64_t{d.mem_total_mib} * gpu_max / 1000) return false;
      if (d.milli_free < 0) return false;
    }
  }
  return true;
}
}  // namespace

TEST_CASE("overcommit.properties: no node above its ceiling, static and usage modes (100 seeds)") {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    overcommit_policy pol;
    pol.burstable = qos_ceiling{uni(10, 15) * 100, uni(10, 15) * 100, uni(10, 12) * 100};
    pol.best_effort = qos_ceiling{pol.burstable.cpu_permille + uni(0, 5) * 100, pol.burstable.memory_permille + uni(0, 5) * 100,
                                  pol.burstable.gpu_memory_permille + uni(0, 3) * 100};
    pol.allow_gpu_memory_overcommit = uni(0, 1) == 1;
    pol.validate();
    const bool usage_mode = uni(0, 1) == 1;
    usage_overcommit u;
    u.static_policy = pol;
    u.hard_policy = pol;
    u.hard_policy.burstable.cpu_permille += 300;
    u.hard_policy.best_effort.cpu_permille += 300;
    u.hard_policy.burstable.memory_permille += 300;
    u.hard_policy.best_effort.memory_permille += 300;
    u.validate();
    cluster c;
    const int nodes = uni(2, 6);
    for (int i = 0; i < nodes; ++i) {
      // One draw per statement: the order of a call's arguments is unspecified (GCC evaluates these
      // right to left, Clang left to right). This is GCC's order, the one the seeds were run with.
      const int gpus = uni(0, 4);
      const int mem_gib = uni(8, 64);
      const int cores = uni(4, 32);
      c.base().add_node(testing::gpu_node("n" + std::to_string(i), cores * 1000, mem_gib * 1024, gpus, "V100M32", 16384));
      node_metrics m{uni(0, 90) / 100.0, uni(0, 90) / 100.0, 0.0};
      c.base().set_load(static_cast<node_index>(i), &m);
    }
    for (int i = 0; i < 120; ++i) {
      auto b = make_pod("p" + std::to_string(i)).cpu(uni(1, 8) * 500).memory(uni(1, 16) * 512)
                   .qos(static_cast<qos_class>(uni(0, 2)));
      if (uni(0, 2) == 0) b.gpu_share(uni(1, 10) * 100).gpu_memory(uni(1, 16) * 1024);
      const pod p = b;
      if (usage_mode) {
        auto prof = make_profile(checks(u), scores(), overcommit_best_fit_gpus{u.static_policy});
        scheduler<cluster, decltype(prof)> s(prof, schedule_options{100, seed, false});
        s.place_one(c, p);
      } else {
        auto prof = make_profile(checks(overcommit_fit{pol}), scores(), overcommit_best_fit_gpus{pol});
        scheduler<cluster, decltype(prof)> s(prof, schedule_options{100, seed, false});
        s.place_one(c, p);
      }
      REQUIRE(within_all_ceilings(c, usage_mode ? u.hard_policy : pol));
    }
    CHECK(c.bound_count() > 10);
  }
}

TEST_CASE("overcommit.preemption's dry run respects the ceilings per class") {
  // 10 cores, seed policy (Burstable 12). Bound: G (Guaranteed, 6 cores, p1, started 0) and B
  // (Burstable, 6 cores, p1, started 10). Preemptor: Guaranteed 5 cores, p9.
  // Without both: G' = 5 <= 10 fits. Reprieve G first (older, equally important): G = 11 > 10:
  // victim. Reprieve B: G = 5, G + B = 11 <= 12: B stays. Victims: G alone.
  cluster c;
  c.base().add_node(testing::gpu_node("n", 10000, 1000000, 0));
  const pod g = make_pod("G").cpu(6000).memory(100).priority(1).qos(qos_class::guaranteed);
  const pod b = make_pod("B").cpu(6000).memory(100).priority(1).qos(qos_class::burstable);
  c.bind(g, make_binding(g, 0, 0), 0.0);
  c.bind(b, make_binding(b, 0, 0), 10.0);
  auto prof = make_profile(checks(overcommit_fit{seed_overcommit_policy()}), scores());
  preemptor<cluster, decltype(prof)> pre(prof);
  const pod p = make_pod("P").cpu(5000).memory(100).priority(9).qos(qos_class::guaranteed).prod();
  const preemption_result r = pre.plan(c, p, 20.0);
  REQUIRE(r.found);
  REQUIRE(r.victims.size() == 1);
  CHECK(r.victims[0].spec.name == "G");
  pre.apply(c, p, r, 20.0);
  CHECK(c.qos_on(0).cpu_through(qos_class::guaranteed) == 5000);
  CHECK(c.qos_on(0).cpu_through(qos_class::burstable) == 11000);
}
