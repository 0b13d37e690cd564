// Small fluent builders for test clusters.
#pragma once

#include <string>

#include "gpusched/core/in_memory_cluster.hpp"

namespace testing {

inline gpusched::node_spec gpu_node(std::string name, gpusched::milli cpu, gpusched::mib mem, int gpus,
                                    const char* model = "V100M32", std::int32_t gpu_mem = 32768) {
  gpusched::node_spec n{std::move(name), cpu, mem, {}, ""};
  n.add_gpus(gpus, model, gpu_mem);
  return n;
}

// 1 core, 1 GiB and `gpus` whole GPUs at `priority` (in the prod tier when `prod`).
inline gpusched::pod gpu_pod(const std::string& name, int priority, int gpus, bool prod = false) {
  auto b = gpusched::make_pod(name).cpu(1000).memory(1024).gpus(gpus).priority(priority);
  if (prod) b.prod();
  return b;
}

}  // namespace testing
