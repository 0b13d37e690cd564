// Kubernetes' int32 priorities in the scheduling queue (issue 13 item 2): any value orders, the
// seed band 0..10 ages as before, values above it are strict priority (kube-scheduler's
// PrioritySort), and the seed's ModelJob priority and tier map onto one Kubernetes value.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/queue/scheduling_queue.hpp"

using namespace gpusched;

namespace {
std::vector<std::string> drain(scheduling_queue& q, double now) {
  std::vector<std::string> out;
  while (auto u = q.pop(now)) {
    out.push_back(u->pods[0]->name);
    q.scheduled(u->ticket, now);
  }
  return out;
}
}  // namespace

TEST_CASE("queue.int32: any priority orders, highest first, FIFO among equals") {
  scheduling_queue q;
  const pod crit = make_pod("crit").priority(2'000'000'000);  // system-cluster-critical
  const pod user = make_pod("user").priority(1'000'000'000);  // HighestUserDefinablePriority
  const pod neg = make_pod("neg").priority(-5);
  const pod lowest = make_pod("lowest").priority(min_priority);
  const pod seven = make_pod("seven").priority(7);
  const pod crit2 = make_pod("crit2").priority(2'000'000'000);
  const pod top = make_pod("top").priority(max_priority);
  for (const pod* p : {&neg, &crit, &lowest, &seven, &user, &crit2, &top}) q.push(*p, 0.0);
  CHECK(drain(q, 0.0) == std::vector<std::string>{"top", "crit", "crit2", "user", "seven", "neg", "lowest"});
}

TEST_CASE("queue.int32: priorities above the seed band do not age; a starving seed-band pod overtakes them") {
  queue_options o;
  o.age_step_s = 10.0;
  scheduling_queue q(o);
  // low (0) ready at 0 needs 11 steps (110 s) to starve. big (1e6) ready at 100 never ages.
  const pod low = make_pod("low").priority(0), big = make_pod("big").priority(1'000'000);
  q.push(low, 0.0);
  q.push(big, 100.0);
  {
    auto u = q.pop(109.0);  // low has 0 + 10 = 10 < 1e6
    REQUIRE(u);
    CHECK(u->pods[0]->name == "big");
    CHECK(u->effective_priority == 1'000'000);
    q.unschedulable(u->ticket, 109.0, {});  // parks big
  }
  scheduling_queue q2(o);
  q2.push(low, 0.0);
  q2.push(big, 100.0);
  auto u = q2.pop(110.0);  // low: 0 + 11 > 10, starving, above every priority
  REQUIRE(u);
  CHECK(u->pods[0]->name == "low");
  CHECK(u->effective_priority == starving_level);
  q2.scheduled(u->ticket, 110.0);
  u = q2.pop(1e6);  // a million seconds later big is still 1e6
  REQUIRE(u);
  CHECK(u->effective_priority == 1'000'000);
}

TEST_CASE("queue.int32: the old 0..10 behaviour is unchanged") {
  // The same scenario as queue.aging: x (p2) ready at 0, y (p5) at 180, a = 60. At 180 x has
  // 2 + 3 = 5 = y's 5 and the earlier ready time wins; effective priorities as before.
  scheduling_queue q;
  const pod x = make_pod("x").priority(2), y = make_pod("y").priority(5);
  q.push(x, 0.0);
  q.push(y, 180.0);
  auto u = q.pop(180.0);
  REQUIRE(u);
  CHECK(u->pods[0]->name == "x");
  CHECK(u->effective_priority == 5);
}

TEST_CASE("queue.int32: many distinct priorities in one tenant") {
  scheduling_queue q;
  std::vector<pod> pods;
  for (int i = 0; i < 100; ++i) pods.push_back(make_pod("p" + std::to_string(i)).priority((i * 7919) % 100 * 20'000'000 - 1'000'000'000));
  for (const pod& p : pods) q.push(p, 0.0);
  std::vector<std::string> got = drain(q, 0.0);
  REQUIRE(got.size() == 100);
  // (i * 7919) % 100 is a permutation of 0..99 (7919 is coprime to 100): the pod with residue 99 first.
  for (std::size_t k = 0; k + 1 < got.size(); ++k) {
    const int a = std::stoi(got[k].substr(1)), b = std::stoi(got[k + 1].substr(1));
    CHECK((a * 7919) % 100 == 99 - static_cast<int>(k));
    CHECK((a * 7919) % 100 > (b * 7919) % 100);
  }
}

TEST_CASE("queue.int32: the ModelJob mapping keeps the seed's order: tier, then priority") {
  CHECK(kubernetes_priority(0, tier::dev) == 0);  // Kubernetes' default (no PriorityClass)
  CHECK(kubernetes_priority(10, tier::dev) == 10'000);
  CHECK(kubernetes_priority(0, tier::prod) == 100'000);
  CHECK(kubernetes_priority(7, tier::prod) == 107'000);
  CHECK(kubernetes_priority(10, tier::prod) == 110'000);
  CHECK(kubernetes_priority(10, tier::prod) < 1'000'000'000);  // user-definable
  // Every prod value above every dev value, and within a tier increasing in the ModelJob priority.
  for (std::int32_t a = seed_min_priority; a <= seed_max_priority; ++a) {
    for (std::int32_t b = seed_min_priority; b <= seed_max_priority; ++b) {
      CHECK(kubernetes_priority(a, tier::prod) > kubernetes_priority(b, tier::dev));
      if (a < b) CHECK(kubernetes_priority(a, tier::dev) < kubernetes_priority(b, tier::dev));
    }
  }
  CHECK_THROWS_WITH_AS((void)kubernetes_priority(11, tier::dev), "modeljob.priority: must be within 0..10, got 11",
                       invalid_argument_error);
  CHECK_THROWS_WITH_AS((void)checked_priority(std::int64_t{1} << 31, "pod.priority"),
                       "pod.priority: must be a Kubernetes priority within -2147483648..2147483647 (int32), got 2147483648",
                       invalid_argument_error);
  CHECK(checked_priority(-2'147'483'648LL, "pod.priority") == min_priority);
}
