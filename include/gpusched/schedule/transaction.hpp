// Reserve / commit / rollback: either all of a group of reservations applies or none does.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched {

// The log of a transaction: a copy of each pod and binding it changed, in order. Its slots are kept
// (not destroyed) between uses, so that a caller placing group after group through one log
// (transaction(c, std::move(log)) ... take_storage()) copies pods into strings that already have
// room and allocates nothing once the log has grown.
class transaction_log {
 public:
  enum class kind : unsigned char { reserved, released };
  struct entry {
    pod p;
    binding b{};
    kind what = kind::reserved;
  };

  [[nodiscard]] std::size_t size() const noexcept { return used_; }
  [[nodiscard]] const entry& operator[](std::size_t i) const noexcept { return slots_[i]; }

 private:
  template <MutableCluster C>
  friend class transaction;

  // The next slot, holding a copy of p (it may alias a slot of this log). May allocate; the log is
  // unchanged when it throws.
  entry& stage(const pod& p, const binding& b, kind what) {
    if (used_ == slots_.size()) {
      if (owns(p)) {
        pod copy = p;  // p lives in this log: copy it before the slots move
        slots_.emplace_back();
        slots_.back().p = std::move(copy);
      } else {
        slots_.emplace_back();
        slots_.back().p = p;
      }
    } else if (&slots_[used_].p != &p) {
      slots_[used_].p = p;  // copy-assignment reuses the slot's string and vector capacity
    }
    entry& e = slots_[used_];
    e.b = b;
    e.what = what;
    return e;
  }
  [[nodiscard]] bool owns(const pod& p) const noexcept {
    const void* const q = &p;
    return std::less_equal<const void*>{}(static_cast<const void*>(slots_.data()), q) &&
           std::less<const void*>{}(q, static_cast<const void*>(slots_.data() + slots_.size()));
  }

  std::vector<entry> slots_;
  std::size_t used_ = 0;
};

// Records each reservation (and each release, for preemption's evictions) with its own copy of the
// pod and binding, so the pods passed in need not outlive the transaction (a temporary is safe).
// rollback() (or destruction without commit()) undoes them in reverse order: a reservation is
// released, a release is reserved again.
//
// If the host changes the cluster under an open transaction (releases a binding it holds, say), an
// undo may be refused. rollback() then still undoes every other change and throws rollback_error
// naming the first refused one; the destructor, which cannot throw, undoes what it can and drops the
// refusals, so a host that may change the cluster under a transaction calls rollback() itself.
template <MutableCluster C>
class transaction {
 public:
  using log_type = transaction_log;

  explicit transaction(C& c, std::size_t expected = 0) : c_(&c) { log_.slots_.reserve(expected); }
  // Adopts `storage` (its entries are dropped) as the log, so that a caller placing group after
  // group reuses one buffer and allocates nothing once it is large enough; take_storage() returns it.
  transaction(C& c, log_type&& storage) noexcept : c_(&c), log_(std::move(storage)) { log_.used_ = 0; }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  transaction(transaction&& o) noexcept
      : c_(o.c_), log_(std::move(o.log_)), reserved_(o.reserved_), done_(std::exchange(o.done_, true)) {
    o.log_.used_ = 0;
  }
  ~transaction() {
    if (!done_) undo_all(nullptr);
  }

  // Reserves b for p. Throws (and changes nothing) when the cluster refuses it.
  void reserve(const pod& p, const binding& b) { apply(p, b, log_type::kind::reserved); }

  // Releases b of p (a victim leaving). Throws (and changes nothing) when the cluster refuses it;
  // rollback reserves it again.
  void release(const pod& p, const binding& b) { apply(p, b, log_type::kind::released); }

  void commit() noexcept {
    done_ = true;
    log_.used_ = 0;
    reserved_ = 0;
  }

  // Undoes everything, newest first. Throws rollback_error when the cluster refused to undo some
  // change (it was changed under the transaction); every other change is undone all the same, and
  // the transaction is closed either way.
  void rollback() {
    std::string first;
    const std::size_t total = log_.used_;
    const std::size_t failed = undo_all(&first);
    if (failed > 0) throw rollback_error(failed, total, first);
  }

  [[nodiscard]] std::size_t size() const noexcept { return reserved_; }
  [[nodiscard]] std::size_t released_count() const noexcept { return log_.used_ - reserved_; }
  // Every change, oldest first, with the transaction's copies of the pods.
  [[nodiscard]] const log_type& log() const noexcept { return log_; }

  // Closes the transaction (rolling back unless committed) and hands the log back for reuse.
  [[nodiscard]] log_type take_storage() {
    if (!done_) rollback();
    return std::move(log_);
  }

 private:
  void apply(const pod& p, const binding& b, log_type::kind what) {
    // The copy first (it may allocate), so that recording cannot fail after the cluster changed; the
    // cluster is handed the copy, which stays valid whatever the call does to p's storage.
    log_type::entry& e = log_.stage(p, b, what);
    if (what == log_type::kind::reserved) {
      traits_of<C>::reserve(*c_, e.p, e.b);
      ++reserved_;
    } else {
      traits_of<C>::release(*c_, e.p, e.b);
    }
    ++log_.used_;
  }

  // Undoes every change newest first; returns how many the cluster refused, describing the first
  // in *first (when first is not null).
  std::size_t undo_all(std::string* first) noexcept {
    std::size_t failed = 0;
    for (std::size_t i = log_.used_; i-- > 0;) {
      const log_type::entry& e = log_.slots_[i];
      try {
        if (e.what == log_type::kind::reserved) {
          traits_of<C>::release(*c_, e.p, e.b);
        } else {
          traits_of<C>::reserve(*c_, e.p, e.b);
        }
      } catch (...) {
        if (failed++ == 0 && first != nullptr) describe(e, std::current_exception(), *first);
      }
    }
    log_.used_ = 0;
    reserved_ = 0;
    done_ = true;
    return failed;
  }

  static void describe(const log_type::entry& e, const std::exception_ptr& ex, std::string& out) noexcept {
    try {
      out = std::string(e.what == log_type::kind::reserved ? "releasing" : "reserving again") + " pod '" + e.p.name +
            "' on node #" + std::to_string(e.b.node) + ": ";
      try {
        std::rethrow_exception(ex);
      } catch (const std::exception& x) {
        out += x.what();
      } catch (...) {
        out += "unknown error";
      }
    } catch (...) {  // no memory for the message: the count still says what happened
    }
  }

  C* c_;
  log_type log_;
  std::size_t reserved_ = 0;  // reservations among the log's entries
  bool done_ = false;
};

}  // namespace gpusched
