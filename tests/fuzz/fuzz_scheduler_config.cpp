// libFuzzer harness: a KubeSchedulerConfiguration (profile/config_yaml.hpp). Contract: the input is
// loaded, or it is refused with gpusched::file_error; nothing else escapes and nothing crashes. A
// loaded profile places one pod on a two-node cluster (the plugins' constructors and scorers run).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/profile/config_yaml.hpp"
#include "gpusched/schedule/schedule_one.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpusched;
  scheduler_config<in_memory_cluster> cfg;
  try {
    cfg = parse_scheduler_config(fuzz::text_of(data, size), "fuzz.yaml");
  } catch (const file_error& e) {
    gpusched::fuzz::refused(e);
    return 0;
  }
  in_memory_cluster c;
  node_spec a{"a", 8000, 16384, {}, "r"};
  a.add_gpus(2, "V100M32", 32768, 0);
  node_spec b{"b", 4000, 8192, {}, "r"};
  b.add_gpus(1, "T4", 16384, 0);
  c.add_node(a);
  c.add_node(b);
  for (const auto& p : cfg.profiles) {
    scheduler<in_memory_cluster, dynamic_profile<in_memory_cluster>> s(p.profile, p.options);
    (void)s.schedule_one(c, make_pod("p").cpu(1000).memory(1024).gpu_share(500).model("resnet50"));
  }
  return 0;
}
