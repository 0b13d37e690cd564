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

}  // namespace testing
