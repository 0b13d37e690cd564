// Errors: bad input names the offending field (and file:line for files) and changes nothing.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpusched {

// Thrown when a value supplied by the caller is invalid; field() names it ("pod.gpu_milli").
class invalid_argument_error : public std::invalid_argument {
 public:
  invalid_argument_error(std::string field, const std::string& why)
      : std::invalid_argument(field + ": " + why), field_(std::move(field)) {}
  [[nodiscard]] const std::string& field() const noexcept { return field_; }

 private:
  std::string field_;
};

// Thrown when a file (config, trace) is malformed; carries file and 1-based line.
class file_error : public std::runtime_error {
 public:
  file_error(std::string file, std::size_t line, const std::string& why)
      : std::runtime_error(file + ":" + std::to_string(line) + ": " + why),
        file_(std::move(file)),
        line_(line) {}
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] std::size_t line() const noexcept { return line_; }

 private:
  std::string file_;
  std::size_t line_;
};

}  // namespace gpusched
