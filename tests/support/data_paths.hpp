// Paths of the repository's data files that several test files read (GPUSCHED_SOURCE_DIR is set
// by tests/CMakeLists.txt). One definition each, so the test files of an area can share one
// translation unit (the unity build, GPUSCHED_UNITY_TESTS).
#pragma once

#include <string>

namespace test_data {

inline const std::string source_dir = GPUSCHED_SOURCE_DIR;
// The seed's experiment (docs/experiment.md) and its world (docs/experiment-world.md).
inline const std::string seed_scenario = source_dir + "/data/scenarios/seed.yaml";
inline const std::string seed_world = source_dir + "/data/scenarios/seed-world.yaml";
// The gpu-let interference tables of the RTX 2080 Ti (data/interference/README.md).
inline const std::string glet_2080ti_dir = source_dir + "/data/interference/glet_2080ti/";

}  // namespace test_data
