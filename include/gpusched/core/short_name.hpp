// short_name: an inline, allocation-free name of at most 15 bytes (GPU models, model types).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "gpusched/core/error.hpp"

namespace gpusched {

// GPU models ("V100M32", "A100-SXM4-80GB") and served model types ("resnet50", "bert") are
// compared on every node of every scheduling cycle, so they are stored inline and compared as two
// 64-bit words instead of as heap strings.
class short_name {
 public:
  static constexpr std::size_t max_size = 15;

  constexpr short_name() noexcept = default;

  // Throws invalid_argument_error naming `field` when `s` is longer than max_size.
  explicit short_name(std::string_view s, const char* field = "name") {
    if (s.size() > max_size) {
      throw invalid_argument_error(field, "'" + std::string(s) + "' is longer than 15 characters");
    }
    std::memcpy(bytes_.data(), s.data(), s.size());
    bytes_[max_size] = static_cast<char>(s.size());
  }

  [[nodiscard]] std::string_view view() const noexcept {
    return {bytes_.data(), static_cast<std::size_t>(bytes_[max_size])};
  }
  [[nodiscard]] std::string str() const { return std::string(view()); }
  [[nodiscard]] bool empty() const noexcept { return bytes_[max_size] == 0; }

  friend bool operator==(const short_name& a, const short_name& b) noexcept {
    return a.word(0) == b.word(0) && a.word(1) == b.word(1);
  }
  friend bool operator<(const short_name& a, const short_name& b) noexcept {
    return a.view() < b.view();
  }

 private:
  [[nodiscard]] std::uint64_t word(std::size_t i) const noexcept {
    std::uint64_t w;
    std::memcpy(&w, bytes_.data() + 8 * i, 8);
    return w;
  }
  std::array<char, max_size + 1> bytes_{};  // last byte holds the length; unused bytes are zero
};

static_assert(sizeof(short_name) == 16);

}  // namespace gpusched
