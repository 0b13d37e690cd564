// Candidates, their order, and bounded best-first lists: the Select step of the batch engines.
//
// Order (the same on every engine, and schedule_one's under tie_break_rule::hashed): higher
// weighted score first; among equal scores the larger tie_key(seed, pod, node); then the lower
// node index. The first candidate is the pod's best node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gpusched/config.hpp"
#include "gpusched/schedule/tie_break.hpp"

namespace gpusched::batch {

struct candidate {
  std::int32_t score = -1;  // weighted sum of the plugin scores; -1: no candidate
  std::uint32_t node = 0;
  std::uint64_t key = 0;    // tie_key(seed, pod, node)
  friend bool operator==(const candidate&, const candidate&) = default;
};

GPUSCHED_HD constexpr bool better(const candidate& a, const candidate& b) noexcept {
  return ranks_before(a.score, a.key, a.node, b.score, b.key, b.node);
}

// Inserts c into list[0..size) (best first, at most k entries) when it belongs there.
GPUSCHED_HD void top_k_insert(candidate* list, std::uint32_t k, std::uint32_t& size, const candidate& c) noexcept {
  if (size == k && !better(c, list[k - 1])) return;
  std::uint32_t i = size < k ? size++ : k - 1;
  while (i > 0 && better(c, list[i - 1])) {
    list[i] = list[i - 1];
    --i;
  }
  list[i] = c;
}

// The k best nodes of each pod, plus how many nodes fit it.
class top_k_result {
 public:
  void reset(std::size_t pods, std::size_t k) {
    pods_ = pods;
    k_ = k;
    entries_.assign(pods * k, candidate{});
    counts_.assign(pods, 0);
    feasible_.assign(pods, 0);
  }
  [[nodiscard]] std::size_t pods() const noexcept { return pods_; }
  [[nodiscard]] std::size_t k() const noexcept { return k_; }
  // Best first; fewer than k when fewer nodes fit.
  [[nodiscard]] std::span<const candidate> candidates(std::size_t pod) const noexcept {
    return {entries_.data() + pod * k_, counts_[pod]};
  }
  // The best node, or a candidate with score -1 when no node fits.
  [[nodiscard]] candidate best(std::size_t pod) const noexcept { return counts_[pod] ? entries_[pod * k_] : candidate{}; }
  [[nodiscard]] std::uint32_t feasible(std::size_t pod) const noexcept { return feasible_[pod]; }

  // For the engines.
  [[nodiscard]] candidate* list(std::size_t pod) noexcept { return entries_.data() + pod * k_; }
  [[nodiscard]] std::uint32_t& count(std::size_t pod) noexcept { return counts_[pod]; }
  [[nodiscard]] std::uint32_t& feasible_count(std::size_t pod) noexcept { return feasible_[pod]; }

 private:
  std::size_t pods_ = 0, k_ = 0;
  std::vector<candidate> entries_;
  std::vector<std::uint32_t> counts_, feasible_;
};

}  // namespace gpusched::batch
