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
  using log_type = std::vector<std::pair<const pod*, binding>>;

  explicit transaction(C& c, std::size_t expected = 0) : c_(&c) { log_.reserve(expected); }
  // Adopts `storage` (its contents are dropped) as the log, so that a caller placing group after
  // group reuses one buffer and allocates nothing once it is large enough; take_storage() returns it.
  transaction(C& c, log_type&& storage) noexcept : c_(&c), log_(std::move(storage)) { log_.clear(); }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  transaction(transaction&& o) noexcept : c_(o.c_), log_(std::move(o.log_)), done_(std::exchange(o.done_, true)) {}
  ~transaction() {
    if (!done_) rollback();
  }

  // Reserves b for p. Throws (and changes nothing) when the cluster refuses it.
  void reserve(const pod& p, const binding& b) {
    log_.reserve(log_.size() + 1);  // so that recording cannot fail after the cluster changed
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
  [[nodiscard]] const log_type& reservations() const noexcept { return log_; }

  // After commit() or rollback(): hands the (empty) log buffer back for reuse.
  [[nodiscard]] log_type take_storage() noexcept {
    if (!done_) rollback();
    return std::move(log_);
  }

 private:
  C* c_;
  log_type log_;
  bool done_ = false;
};

}  // namespace gpusched
