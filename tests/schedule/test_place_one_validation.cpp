// place_one validates its pod (issue 15, reproducer 5): an invalid pod throws invalid_argument_error
// naming the field and changes nothing; the same pod placed twice is refused by bound_cluster.
#include <doctest/doctest.h>

#include <string>

#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "support/builders.hpp"
#include "support/fit_profile.hpp"

using namespace gpusched;

namespace {

template <class S, class C>
std::string field_of_place(S& s, C& c, const pod& p) {
  try {
    (void)s.place_one(c, p);
  } catch (const invalid_argument_error& e) {
    return e.field();
  }
  return "no error";
}
}  // namespace

TEST_CASE("place_one.an invalid pod is refused, naming the field, and nothing changes") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n0", 96000, 65536, 4));
  const in_memory_cluster before = c;
  scheduler<in_memory_cluster, decltype(testing::gpu_first_profile())> s(testing::gpu_first_profile());
  pod p = make_pod("p").cpu(1000).gpus(1);
  p.num_gpu = -3;
  CHECK(field_of_place(s, c, p) == "pod 'p'.num_gpu");
  p = make_pod("p").cpu(1000);
  p.submit_time = -1.0;  // every int32 priority is valid since issue 13; a negative time is not
  CHECK(field_of_place(s, c, p) == "pod 'p'.submit_time");
  p = make_pod("p").cpu(1000);
  p.name.clear();
  CHECK(field_of_place(s, c, p) == "pod.name");
  CHECK(c == before);
  // A valid pod is placed: 1 GPU taken, 1000m allocated.
  const schedule_result r = s.place_one(c, make_pod("ok").cpu(1000).gpus(1));
  CHECK(r.scheduled);
  CHECK(c.resources(0).cpu_allocated == 1000);
}

TEST_CASE("place_one.after a refused release the node's CPU still bounds the next pod") {
  // Issue 15: a release of a never-bound 2000m pod drove CPU to -2000 and a 100000m pod then landed
  // on a 96000m node. The release is refused, so 100000m > 96000m is still rejected.
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n0", 96000, 65536, 0));
  const pod ghost = make_pod("ghost").cpu(2000);
  CHECK_THROWS_AS(c.release(ghost, make_binding(ghost, 0, 0)), invalid_argument_error);
  scheduler<in_memory_cluster, decltype(testing::gpu_first_profile())> s(testing::gpu_first_profile());
  CHECK_FALSE(s.place_one(c, make_pod("big").cpu(100000)).scheduled);
  CHECK(c.resources(0).cpu_allocated == 0);
}

TEST_CASE("place_one.the same pod placed twice on a bound_cluster is refused") {
  // in_memory_cluster does not know pods by name (it would take the second copy where it fits);
  // bound_cluster does, and refuses the second placement.
  bound_cluster<> c;
  c.base().add_node(testing::gpu_node("n0", 96000, 65536, 4));
  scheduler<bound_cluster<>, decltype(testing::gpu_first_profile())> s(testing::gpu_first_profile());
  const pod p = make_pod("p").cpu(1000).gpus(1);
  CHECK(s.place_one(c, p).scheduled);
  const bound_cluster<> once = c;
  CHECK(field_of_place(s, c, p) == "pod 'p'.name");
  CHECK(c == once);
  CHECK(c.bound_count() == 1);
}
