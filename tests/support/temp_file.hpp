// A file with the given text in the system's temporary folder, for the tests of file readers.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace testing {

namespace detail {
// The files written by this process, removed when it exits.
struct temp_files {
  std::vector<std::filesystem::path> paths;
  temp_files() = default;
  temp_files(const temp_files&) = delete;
  temp_files& operator=(const temp_files&) = delete;
  ~temp_files() {
    for (const auto& p : paths) {
      std::error_code ignored;
      std::filesystem::remove(p, ignored);
    }
  }
};
inline temp_files& written() {
  static temp_files files;
  return files;
}
}  // namespace detail

// Writes `text` to <temp>/gpusched_test_<pid>_<name> and returns its path; the file is removed when
// the process exits. The process id keeps two test runs at once (of two build folders) from writing
// each other's files.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("gpusched_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p, std::ios::binary) << text;
  detail::written().paths.push_back(p);
  return p.string();
}

}  // namespace testing
