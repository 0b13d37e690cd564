// Reserve / commit / rollback: either all of a group of reservations applies or none does.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"

namespace gpusched {

// Records each reservation (and each release, for preemption's evictions); rollback() (or
// destruction without commit()) undoes them in reverse order: a reservation is released, a release
// is reserved again. The pods passed to reserve() and release() must outlive the transaction.
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
  transaction(transaction&& o) noexcept
      : c_(o.c_), log_(std::move(o.log_)), released_(std::move(o.released_)), done_(std::exchange(o.done_, true)) {}
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

  // Releases b of p (a victim leaving). Throws (and changes nothing) when the cluster refuses it;
  // rollback reserves it again.
  void release(const pod& p, const binding& b) {
    if (released_.size() == released_.capacity()) released_.reserve(released_.empty() ? 8 : 2 * released_.size());
    traits_of<C>::release(*c_, p, b);
    released_.push_back(released_entry{&p, b, log_.size()});
  }

  void commit() noexcept {
    done_ = true;
    log_.clear();
    released_.clear();
  }

  // Undoes everything, newest first. Re-reserving a released binding restores a state that held
  // before, so it can only fail if the cluster cannot allocate (then std::terminate).
  void rollback() noexcept {
    auto r = released_.rbegin();
    for (std::size_t i = log_.size(); i-- > 0;) {
      for (; r != released_.rend() && r->reservations_before > i; ++r) traits_of<C>::reserve(*c_, *r->p, r->b);
      traits_of<C>::release(*c_, *log_[i].first, log_[i].second);
    }
    for (; r != released_.rend(); ++r) traits_of<C>::reserve(*c_, *r->p, r->b);
    log_.clear();
    released_.clear();
    done_ = true;
  }

  [[nodiscard]] std::size_t size() const noexcept { return log_.size(); }
  [[nodiscard]] std::size_t released_count() const noexcept { return released_.size(); }
  [[nodiscard]] const log_type& reservations() const noexcept { return log_; }

  // After commit() or rollback(): hands the (empty) log buffer back for reuse.
  [[nodiscard]] log_type take_storage() noexcept {
    if (!done_) rollback();
    return std::move(log_);
  }

 private:
  struct released_entry {
    const pod* p;
    binding b;
    std::size_t reservations_before;  // log_.size() when the release happened
  };

  C* c_;
  log_type log_;
  std::vector<released_entry> released_;
  bool done_ = false;
};

}  // namespace gpusched
