// The minimal valid scenario the serving tests start from, and a line replacer: tests replace one
// line to make it invalid, so an error's line number is known by hand.
#pragma once

#include <cstddef>
#include <string>

#include "support/data_paths.hpp"

namespace gpusched::test {

inline const std::string& interference_dir = test_data::glet_2080ti_dir;

// Lines 1-18: a scenario with one service, `duration_s` on line 2 and its `arrivals` on line 18.
inline std::string minimal_scenario_head() {
  return "name: t\n"          // 1
         "duration_s: 100\n"  // 2
         "seeds: [1]\n"       // 3
         "nodes: {count: 1, gpus_per_node: 2, gpu_model: V100M32, gpu_memory_mib: 32768, cpu_milli: 8000, memory_mib: "
         "1000}\n"                                            // 4
         "latency_model:\n"                                   // 5
         "  util_csv: UTIL.CSV\n"                             // 6
         "  constants_csv: INT_MODEL_CONSTANT.CSV\n"          // 7
         "  duration_unit: s\n"                               // 8
         "  models: [{name: resnet50, gpu_scale: 0.2085}]\n"  // 9
         "services:\n"                                        // 10
         "  - name: r\n"                                      // 11
         "    model: resnet50\n"                              // 12
         "    replicas: 2\n"                                  // 13
         "    gpu_share_milli: 500\n"                         // 14
         "    gpu_memory_mib: 2000\n"                         // 15
         "    max_batch: 8\n"                                 // 16
         "    slo_ms: 100\n"                                  // 17
         "    arrivals: {rate_qps: 50}\n";                    // 18
}

// The head plus one leak (lines 19-20).
inline std::string minimal_scenario() {
  return minimal_scenario_head() +
         "leaks:\n"                                                    // 19
         "  - {at_s: 10, service: r, replica: 1, mib_per_min: 60}\n";  // 20
}

inline std::string replace_line(const std::string& text, int line, const std::string& with) {
  std::string out;
  int n = 1;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    out += n == line ? with : text.substr(pos, end - pos);
    out += '\n';
    pos = end + 1;
    ++n;
  }
  return out;
}

}  // namespace gpusched::test
