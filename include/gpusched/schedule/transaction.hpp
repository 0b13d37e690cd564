// Reserve / commit / rollback: either all of a group of reservations applies or none does.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"

namespace gpusched {

// Records each reservation; rollback() (or destruction without commit()) releases them in reverse
// order, so the cluster is exactly as before. The pods passed to reserve() must outlive the
// transaction.
template <MutableCluster C>
class transaction {
 public:
  explicit transaction(C& c, std::size_t expected = 0) : c_(&c) { log_.reserve(expected); }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  transaction(transaction&& o) noexcept : c_(o.c_), log_(std::move(o.log_)), done_(std::exchange(o.done_, true)) {}
  ~transaction() {
    if (!done_) rollback();
  }

  // Reserves b for p. Throws (and changes nothing) when the cluster refuses it.
  void reserve(const pod& p, const binding& b) {
    // Room first, so that recording cannot fail after the cluster changed (geometric growth).
    if (log_.size() == log_.capacity()) log_.reserve(log_.empty() ? 8 : 2 * log_.size());
    traits_of<C>::reserve(*c_, p, b);
    log_.emplace_back(&p, b);
  }

  void commit() noexcept {
    done_ = true;
    log_.clear();
  }

  void rollback() noexcept {
    for (auto it = log_.rbegin(); it != log_.rend(); ++it) traits_of<C>::release(*c_, *it->first, it->second);
    log_.clear();
    done_ = true;
  }

  [[nodiscard]] std::size_t size() const noexcept { return log_.size(); }
  [[nodiscard]] const std::vector<std::pair<const pod*, binding>>& reservations() const noexcept { return log_; }

 private:
  C* c_;
  std::vector<std::pair<const pod*, binding>> log_;
  bool done_ = false;
};

}  // namespace gpusched
