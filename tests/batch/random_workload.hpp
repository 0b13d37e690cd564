// Random clusters and pods for differential tests of the batch engines against the per-pod path.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpusched/core/in_memory_cluster.hpp"
#include "support/builders.hpp"

namespace testing {

// Nodes with 0..8 GPUs of three models, some already partly used, half of them with measured load,
// some serving model types.
inline gpusched::in_memory_cluster random_cluster(std::mt19937_64& rng, int nodes) {
  using namespace gpusched;
  in_memory_cluster c;
  const std::array<const char*, 3> models{"V100M32", "T4", "A10"};
  const std::array<const char*, 3> served{"resnet50", "bert", "llama"};
  for (int i = 0; i < nodes; ++i) {
    const int gpus = static_cast<int>(rng() % 9);
    const auto idx = c.add_node(gpu_node("n" + std::to_string(i), 1000 * static_cast<milli>(4 + rng() % 60),
                                         1024 * static_cast<mib>(8 + rng() % 200), gpus, models[rng() % 3], gpus ? 16384 : 0));
    if (rng() % 2) {
      const node_metrics m{static_cast<double>(rng() % 1000) / 1000.0, static_cast<double>(rng() % 1000) / 1000.0,
                           static_cast<double>(rng() % 1000) / 1000.0};
      c.set_load(idx, &m);
    }
    // A few running pods: CPU / memory, GPU shares, whole GPUs, with model types.
    const int running = static_cast<int>(rng() % 4);
    for (int r = 0; r < running; ++r) {
      pod_builder b = make_pod("run" + std::to_string(i) + "-" + std::to_string(r));
      b.cpu(static_cast<milli>(rng() % 2000)).memory(static_cast<mib>(rng() % 4096)).model(served[rng() % 3]);
      gpu_set g = 0;
      if (gpus > 0 && rng() % 2) {
        const int dev = static_cast<int>(rng() % static_cast<std::uint64_t>(gpus));
        if (c.gpus(idx)[static_cast<std::size_t>(dev)].milli_free >= 500) {
          b.gpu_share(static_cast<std::int32_t>(100 + rng() % 400)).gpu_memory(static_cast<std::int32_t>(rng() % 4000));
          g = gpu_set{1} << dev;
        }
      }
      const pod p = b;
      c.reserve(p, make_binding(p, idx, g));
    }
  }
  return c;
}

inline gpusched::pod random_pod(std::mt19937_64& rng, int i) {
  using namespace gpusched;
  auto b = make_pod("p" + std::to_string(i)).cpu(static_cast<milli>(rng() % 16000)).memory(static_cast<mib>(rng() % 65536));
  switch (rng() % 5) {
    case 0: break;
    case 1: b.gpu_share(static_cast<std::int32_t>(1 + rng() % 999)).gpu_memory(static_cast<std::int32_t>(rng() % 12000)); break;
    case 2: b.gpus(static_cast<std::int32_t>(1 + rng() % 8)); break;
    case 3: b.gpus(1).allow_model("T4"); break;
    default: b.gpu_share(500).allow_model("A10").allow_model("V100M32"); break;
  }
  const std::array<qos_class, 3> q{qos_class::guaranteed, qos_class::burstable, qos_class::best_effort};
  b.qos(q[rng() % 3]).priority(static_cast<std::int32_t>(rng() % 11));
  if (rng() % 4 != 0) b.model(rng() % 2 ? "resnet50" : "bert");
  return b;
}

inline std::vector<gpusched::pod> random_pods(std::mt19937_64& rng, int count) {
  std::vector<gpusched::pod> v;
  for (int i = 0; i < count; ++i) v.push_back(random_pod(rng, i));
  return v;
}

}  // namespace testing
