// Pushing and popping allocate nothing once the queue has seen its slots, tenants and buckets.
// Counts every allocation of this test executable while a flag is set.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "gpusched/queue/scheduling_queue.hpp"

namespace {
bool counting = false;
std::size_t allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

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
  counting = true;
  allocations = 0;
  round();
  counting = false;
  CHECK(allocations == 0);
}
