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
  explicit transaction(C& c, std::size_t expected = 0) : c_(&c) { log_.reserve(expected); }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  transaction(transaction&& o) noexcept
      : c_(o.c_), log_(std::move(o.log_)), released_(std::move(o.released_)), done_(std::exchange(o.done_, true)) {}
  ~transaction() {
    if (!done_) rollback();
  }

  // Reserves b for p. Throws (and changes nothing) when the cluster refuses it.
  void reserve(const pod& p, const binding& b) {
    // Room for one more entry (grown geometrically), so that recording cannot fail after the cluster changed.
    if (log_.size() == log_.capacity()) log_.reserve(2 * log_.size() + 4);
    traits_of<C>::reserve(*c_, p, b);
    log_.emplace_back(&p, b);
  }

  // Releases b of p (a victim leaving). Throws (and changes nothing) when the cluster refuses it;
  // rollback reserves it again.
  void release(const pod& p, const binding& b) {
    if (released_.size() == released_.capacity()) released_.reserve(2 * released_.size() + 4);
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
  [[nodiscard]] const std::vector<std::pair<const pod*, binding>>& reservations() const noexcept { return log_; }

 private:
  struct released_entry {
    const pod* p;
    binding b;
    std::size_t reservations_before;  // log_.size() when the release happened
  };

  C* c_;
  std::vector<std::pair<const pod*, binding>> log_;
  std::vector<released_entry> released_;
  bool done_ = false;
};

}  // namespace gpusched
