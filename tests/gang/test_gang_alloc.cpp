// Hot path: once warmed up on a cluster, placing and releasing a gang allocates nothing. Counted by
// replacing the global allocation functions for this test executable (counting only while armed).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/gang/nvlink_selector.hpp"
#include "gpusched/gang/placement.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/scoring/node_resources.hpp"

// GCC pairs the replaced operator new with the std::free in the replaced delete and warns; they are
// the matching pair by construction here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<bool> armed{false};
std::atomic<long> allocations{0};
// When this test fails, `gdb -ex 'break alloc_hook'` shows where the allocation came from.
[[gnu::noinline]] void alloc_hook() { asm volatile(""); }
}  // namespace

void* operator new(std::size_t n) {
  if (armed.load(std::memory_order_relaxed)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    alloc_hook();
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form this
// executable's code can reach must come from the same malloc that the replaced delete frees.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (armed.load(std::memory_order_relaxed)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    alloc_hook();
  }
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace gpusched;

TEST_CASE("gang.place allocates nothing after warm-up") {
  in_memory_cluster c;
  for (int i = 0; i < 64; ++i) {
    node_spec n{"n" + std::to_string(i), 96000, 786432, {}, "rack-" + std::to_string(i / 8)};
    n.add_gpus(4, "V100M32", 32768, 0).add_gpus(4, "V100M32", 32768, 1);
    c.add_node(n);
  }
  const gang_spec g = make_gang("train")
                          .role("launcher", make_pod("l").cpu(4000).memory(16384))
                          .role("worker", make_pod("w").cpu(8000).memory(65536).gpus(4), 60, 80);
  const gang_spec too_big = make_gang("big").role("worker", make_pod("w").gpus(4), 200);
  gang_placer placer(make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{most_allocated{}, 1}),
                                  nvlink_aware_gpus{}));
  gang_result r, fail;
  for (int warm = 0; warm < 2; ++warm) {
    REQUIRE(placer.place(c, g, r));
    release_gang(c, g, r);
    REQUIRE_FALSE(placer.place(c, too_big, fail));
  }
  armed = true;
  const bool placed = placer.place(c, g, r);
  release_gang(c, g, r);
  const bool big_placed = placer.place(c, too_big, fail);
  armed = false;
  CHECK(placed);
  CHECK_FALSE(big_placed);
  CHECK(allocations.load() == 0);
}
