// Preemption with hand-computed outcomes: Kubernetes' victim rules and node cascade, then the
// gpusched extensions (tiers, Guaranteed protection, budgets), dry run and transaction.
#include <doctest/doctest.h>

#include <vector>

#include "fixtures.hpp"

using namespace gpusched;

namespace {
using fx::all_nodes;
}  // namespace

TEST_CASE("preemption.select victims: remove all lower, reprieve most important first") {
  // One node, 4 GPUs: a(p1), b(p2), c(p3), d(p6), one GPU each. The p5 preemptor needs 2 GPUs.
  // Eligible: a, b, c (d is not lower). Without them 3 GPUs are free: fits. Reprieve c (p3): 2
  // free, fits, c stays. Reprieve b: 1 free, no: victim. Reprieve a: no: victim. Victims b, a.
  fx::cluster c;
  fx::add_node(c, "n0", 4);
  fx::run(c, fx::gpu_pod("a", 1, 1), 0, 0b0001, 10);
  fx::run(c, fx::gpu_pod("b", 2, 1), 0, 0b0010, 20);
  fx::run(c, fx::gpu_pod("c", 3, 1), 0, 0b0100, 30);
  fx::run(c, fx::gpu_pod("d", 6, 1), 0, 0b1000, 40);
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const pod p = fx::gpu_pod("p", 5, 2);
  const preemption_result r = pre.plan(c, p, 100.0);
  REQUIRE(r.found);
  CHECK(r.node == 0);
  CHECK(fx::victim_names(r) == std::vector<std::string>{"b", "a"});  // most important first
  CHECK(r.preemptor_binding.gpus == 0b0011);                        // the GPUs b and a free
  CHECK(r.cost.highest_priority == 2);
  CHECK(r.cost.priority_sum == 3 + 2 * (std::int64_t{1} << 31));
  CHECK(r.cost.count == 2);
  CHECK(r.cost.earliest_start_of_highest == 20.0);
  CHECK(r.explain() == "preempt 2 pod(s) on node #0, chosen among 1 candidate(s): highest victim priority 2; b a");
}

TEST_CASE("preemption.cascade: each criterion decides in Kubernetes' order") {
  const pod p = fx::gpu_pod("p", 5, 4);
  SUBCASE("lowest highest-victim priority") {
    fx::cluster c;
    fx::add_node(c, "n0", 4);
    fx::add_node(c, "n1", 4);
    fx::run(c, fx::gpu_pod("x", 3, 4), 0, 0xF, 0);
    fx::run(c, fx::gpu_pod("y", 2, 4), 1, 0xF, 0);
    fx::preemptor pre(fx::fit_profile(), all_nodes());
    const auto r = pre.plan(c, p, 1);
    CHECK(r.node == 1);
    CHECK(fx::victim_names(r) == std::vector<std::string>{"y"});
  }
  SUBCASE("sum of priority + 2^31: one p2 victim beats p2 + p0") {
    // n0: {p2 on 4 GPUs} -> 2 + 2^31. n1: {p2, p0, 2 GPUs each} -> 2 + 0 + 2 * 2^31. The offset
    // makes fewer victims win although n1's raw sum (2) equals n0's.
    fx::cluster c;
    fx::add_node(c, "n0", 4);
    fx::add_node(c, "n1", 4);
    fx::run(c, fx::gpu_pod("x", 2, 4), 0, 0xF, 0);
    fx::run(c, fx::gpu_pod("y", 2, 2), 1, 0x3, 0);
    fx::run(c, fx::gpu_pod("z", 0, 2), 1, 0xC, 0);
    fx::preemptor pre(fx::fit_profile(), all_nodes());
    const auto r = pre.plan(c, p, 1);
    CHECK(r.node == 0);
    CHECK(r.cost.priority_sum == 2 + (std::int64_t{1} << 31));
  }
  SUBCASE("sum decides between equal counts") {
    // n0: {p3, p1} -> 4 + 2 * 2^31; n1: {p3, p0} -> 3 + 2 * 2^31: n1.
    fx::cluster c;
    fx::add_node(c, "n0", 4);
    fx::add_node(c, "n1", 4);
    fx::run(c, fx::gpu_pod("a", 3, 2), 0, 0x3, 0);
    fx::run(c, fx::gpu_pod("b", 1, 2), 0, 0xC, 0);
    fx::run(c, fx::gpu_pod("c", 3, 2), 1, 0x3, 0);
    fx::run(c, fx::gpu_pod("d", 0, 2), 1, 0xC, 0);
    fx::preemptor pre(fx::fit_profile(), all_nodes());
    CHECK(pre.plan(c, p, 1).node == 1);
  }
  SUBCASE("latest start of the highest-priority victims") {
    fx::cluster c;
    fx::add_node(c, "n0", 4);
    fx::add_node(c, "n1", 4);
    fx::run(c, fx::gpu_pod("old", 2, 4), 0, 0xF, 100);
    fx::run(c, fx::gpu_pod("young", 2, 4), 1, 0xF, 200);
    fx::preemptor pre(fx::fit_profile(), all_nodes());
    CHECK(fx::victim_names(pre.plan(c, p, 300)) == std::vector<std::string>{"young"});
  }
  SUBCASE("full tie: the first node examined") {
    fx::cluster c;
    fx::add_node(c, "n0", 4);
    fx::add_node(c, "n1", 4);
    fx::run(c, fx::gpu_pod("a", 2, 4), 0, 0xF, 100);
    fx::run(c, fx::gpu_pod("b", 2, 4), 1, 0xF, 100);
    fx::preemptor pre(fx::fit_profile(), all_nodes());  // no sampling: examination starts at node 0
    CHECK(pre.plan(c, p, 300).node == 0);
  }
  SUBCASE("fewest budget violations comes first (soft budget)") {
    // n0's only pod is p1 but its budget is spent; n1's is p3 with budget left: n1 despite p3 > p1.
    fx::cluster c;
    fx::add_node(c, "n0", 4);
    fx::add_node(c, "n1", 4);
    fx::run(c, fx::gpu_pod("spent", 1, 4), 0, 0xF, 100);
    fx::run(c, fx::gpu_pod("fresh", 3, 4), 1, 0xF, 100);
    budget_options bo;
    bo.max_preemptions = 1;
    bo.hard = false;
    preemption_budget budget(bo);
    budget.record(pod_key("spent"), 50);  // preempted once in (100 - 3600, 100]: protected until 100 + 1800
    fx::preemptor pre(fx::fit_profile(), all_nodes());
    const auto r = pre.plan(c, p, 200, &budget);
    CHECK(r.node == 1);
    CHECK(r.cost.violations == 0);
  }
}

TEST_CASE("preemption.dev never preempts prod; prod preempts dev and lower prod") {
  fx::cluster c;
  fx::add_node(c, "n0", 2);
  fx::run(c, fx::gpu_pod("prod-low", 1, 1, true), 0, 0b01, 0);
  fx::run(c, fx::gpu_pod("dev-low", 1, 1), 0, 0b10, 0);
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const pod dev_hi = fx::gpu_pod("dev-hi", 9, 2);
  const auto r = pre.plan(c, dev_hi, 1);
  CHECK_FALSE(r.found);
  CHECK(r.does_not_fit == 1);  // only dev-low may go: one GPU is not enough
  const pod prod_hi = fx::gpu_pod("prod-hi", 9, 2, true);
  const auto r2 = pre.plan(c, prod_hi, 1);
  REQUIRE(r2.found);
  CHECK(r2.victims.size() == 2);
  const pod dev_one = fx::gpu_pod("dev-one", 9, 1);
  CHECK(fx::victim_names(pre.plan(c, dev_one, 1)) == std::vector<std::string>{"dev-low"});
}

TEST_CASE("preemption.Guaranteed protection") {
  fx::cluster c;
  fx::add_node(c, "n0", 1);
  fx::run(c, make_pod("g").cpu(1000).memory(1024).gpus(1).priority(1).qos(qos_class::guaranteed), 0, 0b1, 0);
  const pod p = fx::gpu_pod("p", 9, 1, true);
  fx::preemptor open(fx::fit_profile(), all_nodes());
  CHECK(open.plan(c, p, 1).found);
  preemption_options o = all_nodes();
  o.protect_guaranteed = true;
  fx::preemptor guarded(fx::fit_profile(), o);
  const auto r = guarded.plan(c, p, 1);
  CHECK_FALSE(r.found);
  CHECK(r.no_eligible_victims == 1);
  CHECK(r.explain() ==
        "no preemption: 0/1 nodes can be freed: 1 hold nothing the pod may preempt, 0 would not fit it even then, 0 fit it already");
}

TEST_CASE("preemption.budget: preempted k times in the window, protected for the cooldown on its next run") {
  // k = 2, W = 3600 s, C = 1800 s. The dev pod is preempted at t = 10 and t = 20 and restarts at
  // t = 30: both preemptions lie in (30 - 3600, 30], so it is protected until 30 + 1800 = 1830.
  fx::cluster c;
  fx::add_node(c, "n0", 1);
  const pod dev = fx::gpu_pod("train", 1, 1);
  const pod prod = fx::gpu_pod("infer", 9, 1, true);
  budget_options bo;
  bo.max_preemptions = 2;
  bo.window_s = 3600;
  bo.cooldown_s = 1800;
  preemption_budget budget(bo);
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  fx::run(c, dev, 0, 0b1, 0);
  for (double t : {10.0, 20.0}) {
    const auto r = pre.plan(c, prod, t, &budget);
    REQUIRE(r.found);
    pre.apply(c, prod, r, t, &budget);
    CHECK(c.find("train") == nullptr);
    c.unbind(c.find("infer")->id);  // the prod pod ends; the dev pod runs again
    fx::run(c, dev, 0, 0b1, t + (t == 20.0 ? 10.0 : 5.0));
  }
  CHECK(budget.count(pod_key("train"), 30 - 3600, 30) == 2);
  CHECK(budget.is_protected(*c.find("train"), 1829.0));
  CHECK_FALSE(pre.plan(c, prod, 1829.0, &budget).found);
  CHECK_FALSE(budget.is_protected(*c.find("train"), 1830.0));
  CHECK(pre.plan(c, prod, 1830.0, &budget).found);
  // Without the budget it would be preemptible at any time.
  CHECK(pre.plan(c, prod, 100.0).found);
}

TEST_CASE("preemption.dry run and transaction: a failed preemption leaves the cluster exactly as before") {
  fx::cluster c;
  fx::add_node(c, "n0", 2);
  fx::add_node(c, "n1", 2);
  fx::run(c, fx::gpu_pod("hi-0", 9, 2, true), 0, 0b11, 0);
  fx::run(c, fx::gpu_pod("lo-1", 1, 2), 1, 0b11, 0);
  fx::preemptor pre(fx::fit_profile(), all_nodes());

  SUBCASE("a plan is a dry run; no plan changes nothing either") {
    const fx::cluster before = c;
    const auto r = pre.plan(c, fx::gpu_pod("dev", 5, 2), 1);  // lo-1 on n1 may go; hi-0 (prod p9) may not
    CHECK(r.found);
    CHECK(r.node == 1);
    CHECK(c == before);
    const auto none = pre.plan(c, fx::gpu_pod("p0", min_priority, 2), 1);  // the lowest int32 preempts nothing
    CHECK_FALSE(none.found);
    CHECK(none.explain() == "no preemption: priority -2147483648 is the lowest; only lower priorities are preempted");
    const auto blocked = pre.plan(c, fx::gpu_pod("dev4", 9, 4), 1);  // 4 GPUs fit no node
    CHECK_FALSE(blocked.found);
    CHECK(blocked.does_not_fit + blocked.no_eligible_victims == 2);
    CHECK(c == before);
  }
  SUBCASE("stale plan: a victim left meanwhile") {
    const pod p = fx::gpu_pod("p", 5, 2);
    const auto r = pre.plan(c, p, 1);
    REQUIRE(r.found);
    c.unbind(c.find("lo-1")->id);
    fx::run(c, fx::gpu_pod("lo-1", 1, 2), 1, 0b11, 2);  // same name, bound again: another start time
    const fx::cluster before = c;
    CHECK_THROWS_WITH_AS(pre.apply(c, p, r, 3), "preemption_plan: victim 'lo-1' is no longer bound as planned",
                         invalid_argument_error);
    CHECK(c == before);
  }
  SUBCASE("stale plan: the node filled up meanwhile") {
    // n0: lo (p1) on GPU 0, hi (prod p9) on GPU 1. The plan evicts lo. Before it is applied, hi
    // is replaced by a pod holding all of n0's CPU, so p no longer fits once lo leaves.
    fx::cluster c2;
    fx::add_node(c2, "n0", 2);
    fx::run(c2, fx::gpu_pod("lo", 1, 1), 0, 0b01, 0);
    fx::run(c2, fx::gpu_pod("hi", 9, 1, true), 0, 0b10, 0);
    const pod p = fx::gpu_pod("p", 5, 1);
    const auto r = pre.plan(c2, p, 1);
    REQUIRE(r.found);
    c2.unbind(c2.find("hi")->id);
    fx::run(c2, make_pod("hog").cpu(64000).gpus(1).priority(9).prod(), 0, 0b10, 1);
    const fx::cluster before = c2;
    CHECK_THROWS_WITH_AS(pre.apply(c2, p, r, 2), "preemption_plan: pod 'p' no longer fits node #0 once the victims leave",
                         invalid_argument_error);
    CHECK(c2 == before);
  }
  SUBCASE("apply: victims out, preemptor in, one transaction") {
    const pod p = fx::gpu_pod("p", 5, 2);
    const auto r = pre.plan(c, p, 1);
    pre.apply(c, p, r, 1);
    CHECK(c.find("lo-1") == nullptr);
    REQUIRE(c.find("p") != nullptr);
    CHECK(c.find("p")->where == make_binding(p, 1, 0b11));
    CHECK(c.bound_count() == 2);
    preemption_result empty;
    CHECK_THROWS_AS(pre.apply(c, p, empty, 1), invalid_argument_error);
  }
}

TEST_CASE("preemption.candidate sampling follows Kubernetes' numbers") {
  CHECK(num_preemption_candidates(10000, 10, 100) == 1000);
  CHECK(num_preemption_candidates(500, 10, 100) == 100);
  CHECK(num_preemption_candidates(50, 10, 100) == 50);
  // 300 identical candidate nodes: max(300 * 10 / 100, 100) = 100 are examined, then it stops.
  fx::cluster c;
  for (int i = 0; i < 300; ++i) {
    fx::add_node(c, "n" + std::to_string(i), 1);
    fx::run(c, fx::gpu_pod("v" + std::to_string(i), 1, 1), static_cast<node_index>(i), 0b1, 0);
  }
  preemption_options o;
  o.seed = 7;
  fx::preemptor pre(fx::fit_profile(), o);
  const auto r = pre.plan(c, fx::gpu_pod("p", 5, 1), 1);
  CHECK(r.examined == 100);
  CHECK(r.candidates == 100);
  // Same seed, same decision.
  fx::preemptor again(fx::fit_profile(), o);
  CHECK(again.plan(c, fx::gpu_pod("p", 5, 1), 1).node == r.node);
}

TEST_CASE("preemption.a gang is one victim: all of its members, on every node, or none") {
  fx::cluster c;
  fx::add_node(c, "n0", 2);
  fx::add_node(c, "n1", 2);
  const pod g0 = make_pod("g-0").cpu(100).gpus(2).priority(1).gang("g", 2);
  const pod g1 = make_pod("g-1").cpu(100).gpus(2).priority(1).gang("g", 2);
  fx::run(c, g0, 0, 0b11, 0);
  fx::run(c, g1, 1, 0b11, 0);
  fx::preemptor pre(fx::fit_profile(), all_nodes());
  const pod p = fx::gpu_pod("p", 5, 2);
  const auto r = pre.plan(c, p, 1);
  REQUIRE(r.found);
  CHECK(r.node == 0);
  CHECK(r.gangs == 1);
  CHECK(fx::victim_names(r) == std::vector<std::string>{"g-0", "g-1"});
  CHECK(r.cost.count == 2);
  pre.apply(c, p, r, 1);
  CHECK(c.find("g-0") == nullptr);
  CHECK(c.find("g-1") == nullptr);  // on n1, evicted with its gang
  CHECK(c.pods_on(1).empty());
  // A gang with one member the preemptor may not touch is not a victim at all.
  fx::cluster m;
  fx::add_node(m, "n0", 2);
  fx::add_node(m, "n1", 2);
  fx::run(m, make_pod("h-0").gpus(2).priority(1).gang("h", 2), 0, 0b11, 0);
  fx::run(m, make_pod("h-1").gpus(2).priority(7).gang("h", 2), 1, 0b11, 0);
  const auto r2 = pre.plan(m, p, 1);  // h-1 has priority 7 > 5
  CHECK_FALSE(r2.found);
  CHECK(r2.no_eligible_victims == 2);
}
