// short_name: an allocation-free-to-compare name of any length (GPU models, model types).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "gpusched/core/error.hpp"

namespace gpusched {

namespace detail {
// The process-wide intern table of names longer than short_name::inline_size. Entries are never
// freed (a handle is a raw pointer into the table, valid for the life of the process), and the table
// itself is never destroyed, so that names in static objects stay valid during shutdown. Thread-safe:
// one mutex; interning is done when a name is built (reading a file, adding a node), never while
// scheduling.
class name_intern_table {
 public:
  static name_intern_table& instance() {
    static name_intern_table* const table = new name_intern_table();  // never freed, on purpose
    return *table;
  }

  // The stable address of the one stored copy of `s`; equal strings give the same address.
  const std::string* intern(std::string_view s) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = index_.find(s); it != index_.end()) return it->second;
    auto owned = std::make_unique<const std::string>(s);
    const std::string* p = owned.get();
    index_.emplace(std::string_view(*p), p);
    owned.release();  // NOLINT(bugprone-unused-return-value): owned by the table forever
    return p;
  }

  [[nodiscard]] std::size_t size() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return index_.size();
  }

 private:
  name_intern_table() = default;
  mutable std::mutex mutex_;
  std::unordered_map<std::string_view, const std::string*> index_;  // keys view the stored strings
};
}  // namespace detail

// GPU models ("V100M32", "NVIDIA-A100-SXM4-80GB") and served model types ("resnet50",
// "meta-llama-3-70b-instruct") are compared on every node of every scheduling cycle, so a name is
// 16 bytes compared as two 64-bit words instead of a heap string: names of up to 15 bytes are stored
// inline (byte 15 holds the length), longer ones are interned once in a process-wide table
// (detail::name_intern_table) and stored as a pointer to the one copy, tagged by byte 15 == 0xFF.
// Equal strings therefore have equal words either way, and comparing, copying and hashing never
// allocate.
class short_name {
 public:
  static constexpr std::size_t inline_size = 15;  // longer names are interned
  // A guard against a whole file read as one name, not a limit on real names: Kubernetes' longest
  // names (DNS subdomains, qualified resource names) are 253 bytes.
  static constexpr std::size_t max_size = 1024;

  constexpr short_name() noexcept = default;

  // Throws invalid_argument_error naming `field` when `s` is longer than max_size. Allocates only
  // the first time a long name is seen in the process.
  explicit short_name(std::string_view s, const char* field = "name") {
    if (s.size() > max_size) {
      throw invalid_argument_error(field, "'" + std::string(s.substr(0, 60)) + "...' is " + std::to_string(s.size()) +
                                              " characters long, more than " + std::to_string(max_size));
    }
    if (s.size() <= inline_size) {
      std::memcpy(bytes_.data(), s.data(), s.size());
      bytes_[inline_size] = static_cast<char>(s.size());
    } else {
      const std::string* p = detail::name_intern_table::instance().intern(s);
      std::memcpy(bytes_.data(), &p, sizeof p);
      bytes_[inline_size] = static_cast<char>(interned_tag);
    }
  }

  [[nodiscard]] std::string_view view() const noexcept {
    if (interned()) return std::string_view(*pointer());
    return {bytes_.data(), static_cast<std::size_t>(static_cast<unsigned char>(bytes_[inline_size]))};
  }
  [[nodiscard]] std::string str() const { return std::string(view()); }
  [[nodiscard]] bool empty() const noexcept { return bytes_[inline_size] == 0; }
  [[nodiscard]] std::size_t size() const noexcept { return view().size(); }
  // True when the name is stored in the intern table (longer than inline_size).
  [[nodiscard]] bool interned() const noexcept { return static_cast<unsigned char>(bytes_[inline_size]) == interned_tag; }

  friend bool operator==(const short_name& a, const short_name& b) noexcept {
    return a.word(0) == b.word(0) && a.word(1) == b.word(1);
  }
  friend bool operator!=(const short_name& a, const short_name& b) noexcept { return !(a == b); }
  // By string value (the pointer of an interned name says nothing about its order).
  friend bool operator<(const short_name& a, const short_name& b) noexcept { return a.view() < b.view(); }

 private:
  static constexpr unsigned char interned_tag = 0xFF;

  [[nodiscard]] const std::string* pointer() const noexcept {
    const std::string* p = nullptr;
    std::memcpy(&p, bytes_.data(), sizeof p);
    return p;
  }
  [[nodiscard]] std::uint64_t word(std::size_t i) const noexcept {
    std::uint64_t w;
    std::memcpy(&w, bytes_.data() + 8 * i, 8);
    return w;
  }
  // Inline: the bytes, zero-padded, last byte the length. Interned: the pointer in the first
  // sizeof(void*) bytes, zeros up to the last byte, which holds interned_tag.
  std::array<char, inline_size + 1> bytes_{};
};

static_assert(sizeof(short_name) == 16);
static_assert(sizeof(void*) <= short_name::inline_size);
static_assert(std::is_trivially_copyable_v<short_name>);

}  // namespace gpusched
