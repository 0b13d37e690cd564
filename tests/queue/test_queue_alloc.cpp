// Pushing and popping allocate nothing once the queue has seen its slots, tenants and buckets.
// Counts every allocation of this test executable while armed (support/counting_new.hpp).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/queue/scheduling_queue.hpp"
#include "support/counting_new.hpp"  // armed, allocations

TEST_CASE("queue.no allocation per push or pop after warm-up") {
  using namespace gpusched;
  std::vector<pod> pods;
  for (int i = 0; i < 5000; ++i) {
    auto b = make_pod("a-rather-long-pod-name-" + std::to_string(i)).cpu(100).priority(i % 13 == 11 ? 2'000'000'000 : i % 13 == 12 ? -1'000'000 : i % 13).tenant(
        "tenant-with-a-long-name-" + std::to_string(i % 4));
    if (i % 3 == 0) b.prod();
    pods.push_back(b);
  }
  queue_options o;
  o.dev_share_period = 4;
  scheduling_queue q(o);
  q.set_capacity({1000000, 1000000, 8000});
  double now = 0;
  auto round = [&] {
    for (const pod& p : pods) q.push(p, now += 0.001);
    while (auto u = q.pop(now += 0.001)) q.scheduled(u->ticket, now);
    for (const pod& p : pods) q.released(p);
  };
  round();  // warm-up
  allocations = 0;
  armed = true;
  round();
  armed = false;
  CHECK(allocations == 0);
}
