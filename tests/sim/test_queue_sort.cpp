// The QueueSort models the drivers use (queue/queue_sort.hpp): FIFO and Kubernetes' PrioritySort,
// popped in passes; orders worked out by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/queue/queue_sort.hpp"

using namespace gpusched;

namespace {
pod named(const char* n, std::int32_t prio = 0) {
  pod p;
  p.name = n;
  p.priority = prio;
  return p;
}

template <class Q>
std::vector<std::string> pass(Q& q, const std::vector<std::string>& fail = {}) {
  std::vector<std::string> out;
  while (auto u = q.pop(0.0)) {
    const std::string n = u->pods[0]->name;
    out.push_back(n);
    if (std::find(fail.begin(), fail.end(), n) != fail.end()) {
      q.unschedulable(u->ticket, 0.0, rejection_counts{});
    } else {
      q.scheduled(u->ticket, 0.0);
    }
  }
  return out;
}
}  // namespace

TEST_CASE("fifo_queue: arrival order; an unschedulable pod keeps its place for the next pass") {
  const pod a = named("a"), b = named("b"), c = named("c"), d = named("d");
  fifo_queue q;
  q.push(a, 0.0);
  q.push(b, 0.0);
  q.push(c, 0.0);
  CHECK(pass(q, {"a", "c"}) == std::vector<std::string>{"a", "b", "c"});
  q.push(d, 1.0);  // arrives after a and c were queued: behind them
  CHECK(q.size() == 3);
  CHECK(pass(q, {"a", "c", "d"}) == std::vector<std::string>{"a", "c", "d"});
  CHECK(q.erase_if([](const pod& p) { return p.name == "c"; }) == 1);
  CHECK(pass(q) == std::vector<std::string>{"a", "d"});
  CHECK(q.empty());
}

TEST_CASE("priority_sort_queue: higher priority first, equals in sequence order; pushes during a pass wait") {
  const pod lo1 = named("lo1", 1), hi = named("hi", 5), lo0 = named("lo0", 1), mid = named("mid", 3);
  priority_sort_queue q;
  q.push(lo1, 0.0, 7);
  q.push(hi, 0.0, 9);
  q.push(lo0, 0.0, 2);  // same priority as lo1, earlier sequence: before it
  auto u = q.pop(0.0);
  REQUIRE(u);
  CHECK(u->pods[0]->name == "hi");
  q.push(mid, 0.0, 1);  // during the pass: not in it
  q.scheduled(u->ticket, 0.0);
  CHECK(pass(q, {"lo0"}) == std::vector<std::string>{"lo0", "lo1"});
  CHECK(pass(q) == std::vector<std::string>{"mid", "lo0"});
}
