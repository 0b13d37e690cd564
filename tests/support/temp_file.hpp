// A file with the given text in the system's temporary folder, for the tests of file readers.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace testing {

// Writes `text` to <temp>/gpusched_test_<name> and returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / ("gpusched_test_" + name);
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

}  // namespace testing
