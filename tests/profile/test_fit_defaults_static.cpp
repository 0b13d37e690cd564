// Issue 19: a static profile built in code follows the same CPU/memory fit default as YAML and
// dynamic profiles (docs/plugins.md, "The CPU/memory fit in code"): make_profile(checks(gpu_check{}), ...) also checks
// CPU and memory, so a 500-core pod does not land on a 96-core node.
#include <doctest/doctest.h>

#include <tuple>
#include <type_traits>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/overcommit/overcommit_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
const pod cpu_heavy_pod = make_pod("p").cpu(500000).memory(1024).gpus(1).build();

template <class Profile>
schedule_result place_static(const Profile& prof) {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n96", 96000, 262144, 8));
  scheduler<in_memory_cluster, Profile> s(prof, {100, 0, false});
  return s.schedule_one(c, cpu_heavy_pod);
}

template <class Profile>
using check_types_of = std::remove_cvref_t<decltype(std::declval<const Profile&>().check_plugins())>;
}  // namespace

TEST_CASE("fit defaults (static): without a fit check, resource_fit is the first check") {
  const auto prof = make_profile(checks(gpu_check{}), scores());
  static_assert(std::is_same_v<check_types_of<decltype(prof)>, std::tuple<resource_fit, gpu_check>>);
  const schedule_result r = place_static(prof);
  CHECK_FALSE(r.scheduled);
  CHECK(r.rejections[reason::insufficient_cpu] == 1);
}

TEST_CASE("fit defaults (static): no_default_fit checks exactly the listed types") {
  const auto prof = make_profile(checks(no_default_fit{}, gpu_check{}), scores());
  static_assert(std::is_same_v<check_types_of<decltype(prof)>, std::tuple<gpu_check>>);
  CHECK(place_static(prof).scheduled);  // only the GPU is checked: the host asked for that
}

TEST_CASE("fit defaults (static): a fit given explicitly runs where it is listed, once") {
  const auto prof = make_profile(checks(gpu_check{}, resource_fit{2000, 1000}), scores());
  static_assert(std::is_same_v<check_types_of<decltype(prof)>, std::tuple<gpu_check, resource_fit>>);
  CHECK_FALSE(place_static(prof).scheduled);  // 500 cores > 96 x 2 (overcommit 2.0)
  // overcommit_fit decides CPU and memory itself, so it replaces the default too.
  const auto over = make_profile(checks(overcommit_fit{}), scores());
  static_assert(std::is_same_v<check_types_of<decltype(over)>, std::tuple<overcommit_fit>>);
  CHECK_FALSE(place_static(over).scheduled);  // no overcommit configured: 500 cores > 96
}
