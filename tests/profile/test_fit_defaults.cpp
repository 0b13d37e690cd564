// Issue 19: profiles built in code follow the same fit default as YAML profiles — NodeResourcesFit's
// CPU / memory filter unless it is disabled explicitly (docs/plugins.md, "The CPU/memory fit in code").
#include <doctest/doctest.h>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/profile/dynamic_profile.hpp"
#include "gpusched/schedule/schedule_one.hpp"
#include "support/builders.hpp"

using namespace gpusched;
using dyn = dynamic_profile<in_memory_cluster>;

namespace {
// One node of 96 cores, 256 GiB and 8 GPUs; a pod asking 500 cores and one GPU.
in_memory_cluster one_node() {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("n96", 96000, 262144, 8));
  return c;
}
const pod big = make_pod("p").cpu(500000).memory(1024).gpus(1).build();

schedule_result place(const dyn& prof) {
  in_memory_cluster c = one_node();
  scheduler<in_memory_cluster, dyn> s(prof, {100, 0, false});
  return s.schedule_one(c, big);
}
}  // namespace

TEST_CASE("fit defaults: a code-built profile does not place a 500-core pod on a 96-core node") {
  dyn p;
  p.add_check(gpu_check{});
  REQUIRE(p.check_count() == 2);
  CHECK(p.check_name(0) == "NodeResourcesFit");
  CHECK(p.check_name(1) == "GPUCheck");
  CHECK(p.has_default_fit());
  const schedule_result r = place(p);
  CHECK_FALSE(r.scheduled);
  CHECK(r.rejections[reason::insufficient_cpu] == 1);
}

TEST_CASE("fit defaults: disabled explicitly, as `disabled: - name: NodeResourcesFit` does") {
  dyn p;
  p.without_default_fit().add_check(gpu_check{});
  REQUIRE(p.check_count() == 1);
  CHECK(p.check_name(0) == "GPUCheck");
  CHECK(place(p).scheduled);  // only the GPU is checked
  const auto cfg = parse_scheduler_config(
      "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n"
      "    filter:\n      disabled:\n      - name: NodeResourcesFit\n      enabled:\n      - name: GPUCheck\n");
  const dyn& y = cfg.profiles.front().profile;
  REQUIRE(y.check_count() == 1);
  CHECK(y.check_name(0) == "GPUCheck");
}

TEST_CASE("fit defaults: a fit added explicitly replaces the default and runs where it is added") {
  dyn p;
  p.add_check(gpu_check{}).add_check(resource_fit{2000, 1000});
  REQUIRE(p.check_count() == 2);
  CHECK(p.check_name(0) == "GPUCheck");
  CHECK(p.check_name(1) == "NodeResourcesFit");
  CHECK_FALSE(p.has_default_fit());
  CHECK_FALSE(place(p).scheduled);  // 500 cores > 96 x 2 (overcommit 2.0)
  // The YAML default is the same profile: fit first, then GPUCheck.
  const auto cfg = parse_scheduler_config(
      "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n"
      "    filter:\n      enabled:\n      - name: GPUCheck\n");
  const dyn& y = cfg.profiles.front().profile;
  REQUIRE(y.check_count() == 2);
  CHECK(y.check_name(0) == "NodeResourcesFit");
  CHECK(y.check_name(1) == "GPUCheck");
}

TEST_CASE("config: extenders are refused at their line, never ignored") {
  CHECK_THROWS_WITH_AS(parse_scheduler_config("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                                              "extenders:\n- urlPrefix: http://x\nprofiles:\n- schedulerName: a\n",
                                              "cfg.yaml"),
                       "cfg.yaml:4: extenders: not supported in a gpusched profile: extenders are called by "
                       "kube-scheduler; gpusched's own extender service (gpusched-extender, issue 16, docs/kubernetes.md) "
                       "is a separate program — remove this key",
                       file_error);
}
