// Hot paths stay allocation-free with the new checks: validating a good pod, reserving and releasing
// on a warmed-up in_memory_cluster, and a transaction reusing its log. Counted by replacing the
// global allocation functions for this test executable (counting only while armed).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/schedule/transaction.hpp"
#include "support/builders.hpp"

#include "support/counting_new.hpp"  // armed, allocations

using namespace gpusched;

namespace {
struct arm {
  arm() {
    allocations = 0;
    armed = true;
  }
  ~arm() { armed = false; }
};
}  // namespace

TEST_CASE("invariants.alloc: validation, reserve / release and a reused transaction allocate nothing") {
  in_memory_cluster c;
  for (int i = 0; i < 4; ++i)
    c.add_node(testing::gpu_node("node-with-a-long-name-" + std::to_string(i), 96000, 65536, 8));
  const pod p =
      make_pod("a-pod-name-longer-than-fifteen").cpu(1000).memory(2048).gpu_share(250).gpu_memory(1024).model("bert");
  const binding b = make_binding(p, 2, 0b101);
  c.reserve(p, b);  // warm-up: the node's served-model list gets its first entry
  c.release(p, b);
  transaction_log log;
  {
    transaction<in_memory_cluster> tx(c, std::move(log));
    for (int k = 0; k < 8; ++k) tx.reserve(p, make_binding(p, static_cast<node_index>(k % 4), gpu_set{1} << k));
    tx.rollback();
    log = tx.take_storage();
  }
  long counted = -1;
  {
    arm a;
    validate(p);
    c.reserve(p, b);
    c.release(p, b);
    transaction<in_memory_cluster> tx(c, std::move(log));
    for (int k = 0; k < 8; ++k) tx.reserve(p, make_binding(p, static_cast<node_index>(k % 4), gpu_set{1} << k));
    tx.rollback();
    log = tx.take_storage();
    counted = allocations.load();
  }
  CHECK(counted == 0);
  // The counter works: a refused reservation builds its message.
  {
    arm a;
    CHECK_THROWS_AS(c.release(p, b), invalid_argument_error);
    counted = allocations.load();
  }
  CHECK(counted > 0);
}

TEST_CASE("invariants.alloc: comparing and copying names of any length allocates nothing") {
  const short_name a("NVIDIA-A100-SXM4-80GB");
  const short_name b("NVIDIA-H100-80GB-HBM3");
  const short_name c("T4");
  std::vector<short_name> v{a, b, c};
  int equal = 0;
  int less = 0;
  {
    arm counting;
    for (const auto& x : v) {
      for (const auto& y : v) {
        equal += x == y ? 1 : 0;
        less += x < y ? 1 : 0;
      }
    }
    const short_name again("NVIDIA-A100-SXM4-80GB");  // already interned: a look-up, no allocation
    equal += again == a ? 1 : 0;
    const short_name copy = b;
    equal += copy == b ? 1 : 0;
  }
  CHECK(allocations == 0);
  CHECK(equal == 5);  // the three diagonal pairs, again == a, copy == b
  CHECK(less == 3);   // "NVIDIA-A100..." < "NVIDIA-H100..." < "T4": three ordered pairs
}
