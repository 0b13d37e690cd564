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

// Thrown by transaction::rollback() when the cluster refused to undo some of the transaction's
// changes (the host changed the cluster under it): every other change was undone. what() names the
// first refused change and the cluster's reason.
class rollback_error : public std::runtime_error {
 public:
  rollback_error(std::size_t failed, std::size_t total, const std::string& first)
      : std::runtime_error("transaction rollback: " + std::to_string(failed) + " of " + std::to_string(total) +
                           " changes could not be undone (the cluster changed under the transaction); first: " + first),
        failed_(failed),
        total_(total) {}
  [[nodiscard]] std::size_t failed() const noexcept { return failed_; }
  [[nodiscard]] std::size_t total() const noexcept { return total_; }

 private:
  std::size_t failed_;
  std::size_t total_;
};

}  // namespace gpusched
