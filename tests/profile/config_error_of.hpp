// What parse_scheduler_config says of a configuration text: the file_error's message, or "no error".
#pragma once

#include <string>

#include "gpusched/core/error.hpp"
#include "gpusched/profile/config_yaml.hpp"

namespace gpusched::test {

inline std::string config_error_of(const std::string& yaml) {
  try {
    (void)parse_scheduler_config(yaml, "cfg.yaml");
  } catch (const file_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace gpusched::test
