// One queue (issue 12): the QueueSort concept every pending-pod order of the library models, so that
// a driver takes any of them. Models: scheduling_queue (the two-tier queue, queue/scheduling_queue.hpp),
// fifo_queue (arrival order) and priority_sort_queue (Kubernetes' PrioritySort: higher priority
// first, then earlier arrival; pkg/scheduler/framework/plugins/queuesort/priority_sort.go).
//
// A driver's cycle pops units until pop() returns nothing, and resolves each: scheduled() or
// unschedulable() with the rejection counts.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/queue/scheduling_queue.hpp"

namespace gpusched {

template <class Q>
concept QueueSort = requires(Q& q, const pod& p, double now, const rejection_counts& why) {
  q.push(p, now);
  { static_cast<bool>(q.pop(now)) };
  { q.pop(now)->pods.size() } -> std::convertible_to<std::size_t>;
  { q.pop(now)->pods[0] } -> std::convertible_to<const pod*>;
  q.scheduled(q.pop(now)->ticket, now);
  q.unschedulable(q.pop(now)->ticket, now, why);
};

static_assert(QueueSort<scheduling_queue>);

// The order of fifo_queue: arrival (push) order only.
struct fifo_order {
  static constexpr bool before(const pod&, const pod&) noexcept { return false; }
};

// The order of priority_sort_queue: higher priority first; equals keep arrival order.
struct priority_order {
  static constexpr bool before(const pod& a, const pod& b) noexcept { return a.priority > b.priority; }
};

// A queue of single pods in Order, then arrival order (the sequence given to push, or push order).
// Pops run in passes: a pass covers the pods waiting when it starts, in order; pods pushed, or
// found unschedulable, during a pass wait for the next one; the pass ends when pop() returns
// nothing. So a driver that pops until nothing is left tries each waiting pod once per cycle, as a
// sort of the pending pods at the start of the cycle would. Pointers to pushed pods must stay valid
// until they leave. Capacity is reused: a pass allocates nothing once the vectors have grown.
template <class Order>
class sorted_queue {
 public:
  struct unit {
    std::uint32_t ticket;                // the pod's position in the pass
    std::span<const pod* const> pods;    // one pod; valid until the ticket is resolved
  };

  sorted_queue() = default;
  // An Order with state (before() a const member): one queue type whose order is chosen at run time.
  explicit sorted_queue(Order order) : order_(order) {}

  // Queues `p` after every waiting pod it does not come before (Order, then `seq`).
  void push(const pod& p, double /*now*/, std::uint64_t seq) { insert(entry{&p, seq}); }
  void push(const pod& p, double now) { push(p, now, next_seq_); }

  std::optional<unit> pop(double /*now*/) {
    if (!in_pass_) {  // a new pass over the pods waiting now
      pass_.swap(waiting_);
      waiting_.clear();
      cursor_ = 0;
      in_pass_ = true;
    }
    if (cursor_ == pass_.size()) {
      in_pass_ = false;
      pass_.clear();
      return std::nullopt;
    }
    ++in_flight_;
    const auto k = static_cast<std::uint32_t>(cursor_++);
    return unit{k, std::span<const pod* const>(&pass_[k].p, 1)};
  }

  void scheduled(std::uint32_t /*ticket*/, double /*now*/) { --in_flight_; }
  // The pod waits for the next pass, in its place.
  void unschedulable(std::uint32_t ticket, double /*now*/, const rejection_counts& /*why*/) {
    --in_flight_;
    insert(pass_[ticket]);
  }

  // Removes the waiting pods (not those in flight) for which pred(const pod&) holds; order kept.
  template <class Pred>
  std::size_t erase_if(Pred pred) {
    const auto drop = [&](const entry& e) { return pred(*e.p); };
    std::size_t n = std::erase_if(waiting_, drop);
    if (in_pass_) {
      const auto rest = pass_.begin() + static_cast<std::ptrdiff_t>(cursor_);
      const auto end = std::remove_if(rest, pass_.end(), drop);
      n += static_cast<std::size_t>(pass_.end() - end);
      pass_.erase(end, pass_.end());
    }
    return n;
  }

  // Calls f(const pod&) for each waiting pod (not those in flight), in queue order.
  template <class F>
  void for_each(F f) const {
    if (in_pass_) {
      for (std::size_t k = cursor_; k < pass_.size(); ++k) f(*pass_[k].p);
    }
    for (const entry& e : waiting_) f(*e.p);
  }

  // Pods queued: waiting, left in the current pass, and in flight.
  [[nodiscard]] std::size_t size() const noexcept {
    return waiting_.size() + (in_pass_ ? pass_.size() - cursor_ : 0) + in_flight_;
  }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }

 private:
  struct entry {
    const pod* p;
    std::uint64_t seq;
  };

  void insert(const entry& e) {
    next_seq_ = std::max(next_seq_, e.seq + 1);
    const auto at = std::upper_bound(waiting_.begin(), waiting_.end(), e, [this](const entry& a, const entry& b) {
      if (order_.before(*a.p, *b.p)) return true;
      if (order_.before(*b.p, *a.p)) return false;
      return a.seq < b.seq;
    });
    waiting_.insert(at, e);
  }

  [[no_unique_address]] Order order_{};
  std::vector<entry> waiting_, pass_;
  std::size_t cursor_ = 0, in_flight_ = 0;
  std::uint64_t next_seq_ = 0;
  bool in_pass_ = false;
};

using fifo_queue = sorted_queue<fifo_order>;
using priority_sort_queue = sorted_queue<priority_order>;

static_assert(QueueSort<fifo_queue>);
static_assert(QueueSort<priority_sort_queue>);

}  // namespace gpusched
