// Shared by the libFuzzer harnesses: the input as text, and a per-process scratch file for readers
// that take a path (the openb readers).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace gpusched::fuzz {

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// An input refused as the contract says; printed when GPUSCHED_FUZZ_VERBOSE is set (to see why a
// corpus file is refused: `GPUSCHED_FUZZ_VERBOSE=1 fuzz_<harness> -runs=0 corpus/<harness>`).
inline void refused(const std::exception& e) {
  static const bool verbose = std::getenv("GPUSCHED_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
}

// Writes the input to this process's scratch file (removed at exit) and returns its path.
inline const std::string& scratch_file(const std::uint8_t* data, std::size_t size, const char* suffix) {
  struct scratch {
    std::string path;
    ~scratch() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  };
  static const scratch file{
      (std::filesystem::temp_directory_path() / ("gpusched-fuzz-" + std::to_string(::getpid()) + suffix)).string()};
  std::ofstream(file.path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file.path;
}

}  // namespace gpusched::fuzz
