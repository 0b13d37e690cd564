// The scheduling queue with hand-computed orders, waits and backoffs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/queue/scheduling_queue.hpp"

using namespace gpusched;

namespace {

std::string pop_name(scheduling_queue& q, double now) {
  auto u = q.pop(now);
  if (!u) return "-";
  const std::string n = u->pods[0]->name;
  q.scheduled(u->ticket, now);
  return n;
}

rejection_counts short_of(reason r, std::uint32_t nodes = 3) {
  rejection_counts rc;
  rc.examined = nodes;
  for (std::uint32_t i = 0; i < nodes; ++i) rc.add(r);
  return rc;
}

}  // namespace

TEST_CASE("queue.priority first, FIFO among equals") {
  scheduling_queue q;
  const pod a = make_pod("a").priority(5), b = make_pod("b").priority(7), c = make_pod("c").priority(5),
            d = make_pod("d").priority(7);
  for (const pod* p : {&a, &b, &c, &d}) q.push(*p, 0.0);
  CHECK(pop_name(q, 0) == "b");
  CHECK(pop_name(q, 0) == "d");
  CHECK(pop_name(q, 0) == "a");
  CHECK(pop_name(q, 0) == "c");
  CHECK(pop_name(q, 0) == "-");
  CHECK(q.empty());
}

TEST_CASE("queue.prod never waits behind dev") {
  scheduling_queue q;  // dev_share_period 0: prod strictly first
  const pod d10 = make_pod("dev-10").priority(10).dev(), d0 = make_pod("dev-0").priority(0).dev();
  const pod p0 = make_pod("prod-0").priority(0).prod();
  q.push(d10, 0);
  q.push(d0, 0);
  q.push(p0, 5000);  // the dev pods have aged to the starving level by now; prod still goes first
  CHECK(pop_name(q, 5000) == "prod-0");
  CHECK(pop_name(q, 5000) == "dev-10");
  CHECK(pop_name(q, 5000) == "dev-0");
}

TEST_CASE("queue.dev share: every P-th contended pop goes to dev") {
  queue_options o;
  o.dev_share_period = 3;
  scheduling_queue q(o);
  std::vector<pod> prods;
  for (int i = 0; i < 6; ++i) prods.push_back(make_pod("p" + std::to_string(i)).priority(9).prod());
  const pod d = make_pod("d").priority(1).dev(), e = make_pod("e").priority(1).dev();
  for (const auto& p : prods) q.push(p, 0);
  q.push(d, 0);
  q.push(e, 0);
  // Contended pops 1, 2, 3 (3 % 3 == 0: dev), 4, 5, 6 (dev), then prod alone.
  std::vector<std::string> got;
  for (int i = 0; i < 8; ++i) got.push_back(pop_name(q, 0));
  CHECK(got == std::vector<std::string>{"p0", "p1", "d", "p2", "p3", "e", "p4", "p5"});
}

TEST_CASE("queue.aging lifts a waiting pod one level per age step, up to the starving level") {
  CHECK(effective_priority(3, 59.9, 60) == 3);
  CHECK(effective_priority(3, 60, 60) == 4);
  CHECK(effective_priority(2, 180, 60) == 5);
  CHECK(effective_priority(0, 660, 60) == starving_level);  // 0 + 11 passes the seed band 0..10
  CHECK(effective_priority(0, 659.9, 60) == 10);
  CHECK(effective_priority(10, 60, 60) == starving_level);
  CHECK(effective_priority(9, 1e9, 60) == starving_level);
  CHECK(starving_level == 2147483648LL);  // one above every int32 priority
  // Below the band a unit climbs the whole way: -5 needs 16 steps.
  CHECK(effective_priority(-5, 15 * 60, 60) == 10);
  CHECK(effective_priority(-5, 16 * 60, 60) == starving_level);
  CHECK(effective_priority(min_priority, 1e300, 60) == starving_level);
  // Above the band (Kubernetes' priority classes) a unit keeps its priority: no aging.
  CHECK(effective_priority(11, 1e9, 60) == 11);
  CHECK(effective_priority(2'000'000'000, 1e9, 60) == 2'000'000'000);
  // x (p2) ready at 0, y (p5) ready at 180. At 179 x has 2 + 2 = 4 < 5; at 180 x has 5 = y's 5 and
  // the earlier ready time wins.
  const pod x = make_pod("x").priority(2), y = make_pod("y").priority(5);
  scheduling_queue q1;
  q1.push(x, 0);
  q1.push(y, 179);
  CHECK(pop_name(q1, 179) == "y");
  scheduling_queue q2;
  q2.push(x, 0);
  q2.push(y, 180);
  CHECK(pop_name(q2, 180) == "x");
}

TEST_CASE("queue.weighted dominant resource fairness between tenants") {
  // Capacity: 100 cores, 1000 MiB, 8 GPUs. Tenant A holds 30 cores: share 30/100 = 0.30.
  // Tenant B holds 4 GPUs: 4000/8000 = 0.50, weight 2: 0.25. B goes first; with weight 1
  // (0.50) A goes first.
  for (double weight_b : {2.0, 1.0}) {
    scheduling_queue q;
    q.set_capacity(resource_amount{100000, 1000, 8000});
    q.set_tenant_weight("B", weight_b);
    const pod ua = make_pod("use-a").cpu(30000).tenant("A"), ub = make_pod("use-b").gpus(4).tenant("B");
    q.push(ua, 0);
    q.push(ub, 0);
    CHECK(pop_name(q, 0) == "use-a");
    CHECK(pop_name(q, 0) == "use-b");
    CHECK(q.tenant_share("A") == doctest::Approx(0.30));
    CHECK(q.tenant_share("B") == doctest::Approx(0.50 / weight_b));
    const pod a = make_pod("a").priority(5).tenant("A"), b = make_pod("b").priority(5).tenant("B");
    q.push(a, 1);
    q.push(b, 1);
    CHECK(pop_name(q, 1) == (weight_b == 2.0 ? "b" : "a"));
    // Releasing B's pod drops its share to 0 (it holds nothing else): B would go first again.
    q.released(ub);
    CHECK(q.tenant_share("B") == 0.0);
  }
}

TEST_CASE("queue.at the starving level order is FIFO, whatever the shares") {
  scheduling_queue q;
  q.set_capacity(resource_amount{100000, 1000, 8000});
  const pod hog = make_pod("hog").cpu(90000).tenant("A");
  q.push(hog, 0);
  pop_name(q, 0);  // A now holds 0.9, B nothing
  const pod a = make_pod("a").priority(1).tenant("A"), b = make_pod("b").priority(1).tenant("B");
  q.push(a, 0);
  q.push(b, 1);
  scheduling_queue q2 = q;
  CHECK(pop_name(q, 10) == "b");    // both at 1: the lower share first
  CHECK(pop_name(q2, 601) == "a");  // 1 + floor(601/60) and 1 + floor(600/60): both 11, a is older
}

TEST_CASE("queue.backoff doubles from 1 s to at most 10 s") {
  CHECK(backoff_duration(0, 1, 10) == 0.0);
  CHECK(backoff_duration(1, 1, 10) == 1.0);
  CHECK(backoff_duration(2, 1, 10) == 2.0);
  CHECK(backoff_duration(3, 1, 10) == 4.0);
  CHECK(backoff_duration(4, 1, 10) == 8.0);
  CHECK(backoff_duration(5, 1, 10) == 10.0);
  CHECK(backoff_duration(60, 1, 10) == 10.0);
  CHECK(backoff_duration(3, 0.5, 3) == 2.0);
  CHECK(backoff_duration(4, 0.5, 3) == 3.0);
}

TEST_CASE("queue.unschedulable pods park until an event that could help, then respect their backoff") {
  scheduling_queue q;
  const pod p = make_pod("p").gpus(1), m = make_pod("model").gpus(1).allow_model("A100");
  q.push(p, 0);
  q.push(m, 0);
  auto up = q.pop(0);
  auto um = q.pop(0);
  q.unschedulable(up->ticket, 0, short_of(reason::insufficient_gpu_share));  // backoff 1 s
  q.unschedulable(um->ticket, 0, short_of(reason::gpu_model_not_allowed));
  CHECK_FALSE(q.pop(5).has_value());  // parked: no event yet
  q.on_cluster_event(cluster_event::resources_released, 5);
  auto again = q.pop(5);
  REQUIRE(again.has_value());
  CHECK(again->pods[0]->name == "p");  // a release helps a pod short of GPU share ...
  CHECK(again->attempts == 1);
  CHECK_FALSE(q.pop(5).has_value());   // ... not one whose GPU model exists nowhere
  q.unschedulable(again->ticket, 5, short_of(reason::insufficient_gpu_share));  // 2nd: backoff 2 s, until 7
  q.on_cluster_event(cluster_event::node_added, 6);
  auto model = q.pop(6);  // a new node may have the model; its 1 s backoff ended at 1
  REQUIRE(model.has_value());
  CHECK(model->pods[0]->name == "model");
  CHECK_FALSE(q.pop(6.5).has_value());  // p backs off until 7
  auto late = q.pop(7);
  REQUIRE(late.has_value());
  CHECK(late->pods[0]->name == "p");
  CHECK(late->waited == 0.0);
}

TEST_CASE("queue.parked pods are retried after max_unschedulable_s without any event") {
  queue_options o;
  o.max_unschedulable_s = 300;
  scheduling_queue q(o);
  const pod p = make_pod("p");
  q.push(p, 0);
  auto u = q.pop(0);
  q.unschedulable(u->ticket, 0, short_of(reason::gpu_model_not_allowed));
  CHECK_FALSE(q.pop(299).has_value());
  CHECK(q.pop(300).has_value());
}

TEST_CASE("queue.a gang queues as one unit once gang_min_members have arrived") {
  scheduling_queue q;
  const pod g0 = make_pod("g0").gpus(1).priority(4).gang("g", 3), g1 = make_pod("g1").gpus(1).priority(4).gang("g", 3),
            g2 = make_pod("g2").gpus(1).priority(4).gang("g", 3), solo = make_pod("solo").priority(1);
  const queue_ticket t0 = q.push(g0, 0);
  q.push(g1, 1);
  q.push(solo, 1);
  CHECK(pop_name(q, 2) == "solo");  // the gang is still gathering
  CHECK_FALSE(q.pop(2).has_value());
  CHECK(q.push(g2, 3) == t0);  // members share the unit's ticket
  auto u = q.pop(3);
  REQUIRE(u.has_value());
  REQUIRE(u->pods.size() == 3);
  CHECK(u->pods[0]->name == "g0");
  CHECK(u->pods[2]->name == "g2");
  // A member that disagrees with its gang is refused and changes nothing.
  const pod h0 = make_pod("h0").priority(4).gang("h", 2), h1 = make_pod("h1").priority(5).gang("h", 2),
            h2 = make_pod("h2").priority(4).gang("h", 3);
  q.push(h0, 4);
  CHECK_THROWS_WITH_AS(q.push(h1, 4), "pod 'h1'.priority: differs from gang 'h'", invalid_argument_error);
  CHECK_THROWS_WITH_AS(q.push(h2, 4), "pod 'h2'.gang_min_members: differs from gang 'h' (2)", invalid_argument_error);
  CHECK_FALSE(q.pop(4).has_value());
}

TEST_CASE("queue.a unit past its timeout is reported with its reason history") {
  queue_options o;
  o.timeout_s = 100;
  o.history = 2;
  scheduling_queue q(o);
  const pod p = make_pod("p").gpus(1);
  const pod gang_part = make_pod("w0").gang("w", 2);
  q.push(p, 0);
  q.push(gang_part, 0);
  for (double t : {0.0, 20.0, 40.0}) {
    q.on_cluster_event(cluster_event::node_added, t);
    auto u = q.pop(t);
    REQUIRE(u.has_value());
    q.unschedulable(u->ticket, t, short_of(t < 30 ? reason::insufficient_gpu_share : reason::insufficient_gpu_memory));
  }
  CHECK(q.expired(99).empty());
  const auto reports = q.expired(110);
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].attempts == 3);
  REQUIRE(reports[0].history.size() == 2);  // the last two
  CHECK(reports[0].history[0].time == 20.0);
  CHECK(reports[0].explain() ==
        "'p' timed out after 110 s, 3 failed attempts; t=20: 0/3 nodes fit: 3 insufficient GPU share; "
        "t=40: 0/3 nodes fit: 3 insufficient GPU memory");
  CHECK(reports[1].explain() == "gang 'w' (1/2 members) timed out after 110 s, 0 failed attempts");
  CHECK(q.empty());
}

TEST_CASE("queue.bad input names the field and changes nothing") {
  queue_options bad;
  bad.dev_share_period = 1;
  CHECK_THROWS_WITH_AS(scheduling_queue{bad}, "queue_options.dev_share_period: must be 0 (prod strictly first) or >= 2, got 1",
                       invalid_argument_error);
  bad = queue_options{};
  bad.max_backoff_s = 0.5;
  CHECK_THROWS_AS(scheduling_queue{bad}, invalid_argument_error);
  scheduling_queue q;
  pod p = make_pod("p");
  p.gang = "g";  // a gang member without gang_min_members
  CHECK_THROWS_WITH_AS(q.push(p, 0), "pod 'p'.gang_min_members: must be >= 1 for a gang member", invalid_argument_error);
  CHECK(q.empty());
  const pod ok = make_pod("ok");
  q.push(ok, 5);
  CHECK_THROWS_AS(q.push(ok, 4), invalid_argument_error);  // time went backwards
  auto u = q.pop(5);
  q.scheduled(u->ticket, 5);
  CHECK_THROWS_WITH_AS(q.scheduled(u->ticket, 5), "ticket: does not name a queued unit (already resolved or removed)",
                       invalid_argument_error);
  CHECK_THROWS_AS(q.set_tenant_weight("t", 0.0), invalid_argument_error);
  CHECK_THROWS_AS(q.released(make_pod("x").tenant("nobody")), invalid_argument_error);
}

TEST_CASE("queue.a steady prod stream and one dev pod: the dev pod is popped within the stated bound") {
  // One pop per second; one prod p9 pod arrives every second, so the prod tier is never empty.
  // P = 4: contended pops 1, 2, 3 take prod, pop 4 (t = 3) takes the dev pod, which waited 3 s.
  // Bound: (11 - 1) * 60 + (0 + 1) * 4 * 1 s = 604 s (n = 0 dev units ahead, tau = 1 s).
  // With P = 0 it would wait as long as the stream lasts.
  for (int period : {4, 0}) {
    queue_options o;
    o.dev_share_period = period;
    scheduling_queue q(o);
    std::vector<pod> stream;
    stream.reserve(2000);
    const pod dev = make_pod("dev").priority(1).dev();
    q.push(dev, 0);
    double dev_popped = -1;
    for (int t = 0; t < 2000; ++t) {
      stream.push_back(make_pod("s" + std::to_string(t)).priority(9).prod());
      q.push(stream.back(), t);
      auto u = q.pop(t);
      if (u->tier_ == tier::dev) dev_popped = t;
      q.scheduled(u->ticket, t);
    }
    if (period == 4) {
      CHECK(dev_popped == 3.0);
      CHECK(dev_popped <= (11 - 1) * 60 + 1 * 4 * 1);
    } else {
      CHECK(dev_popped == -1.0);
    }
  }
}

TEST_CASE("queue.removing ready units, at the front and in the middle of a bucket") {
  scheduling_queue q;
  const pod a = make_pod("a").priority(3), b = make_pod("b").priority(3), c = make_pod("c").priority(3),
            d = make_pod("d").priority(3);
  const queue_ticket ta = q.push(a, 0);
  const queue_ticket tb = q.push(b, 0);
  q.push(c, 0);
  q.push(d, 0);
  q.remove(tb);  // b, in the middle
  CHECK(q.ready_count(tier::dev) == 3);
  q.remove(ta);  // a, at the front
  CHECK(q.ready_count(tier::dev) == 2);
  CHECK(pop_name(q, 1) == "c");
  CHECK(pop_name(q, 1) == "d");
  CHECK(pop_name(q, 1) == "-");
  CHECK_THROWS_AS(q.remove(ta), invalid_argument_error);
  // The slots are reused; stale entries never resurface.
  const pod e = make_pod("e").priority(3);
  q.push(e, 2);
  CHECK(pop_name(q, 2) == "e");
  CHECK(q.empty());
}
