// Candidates, their order, and bounded best-first lists: the Select step of the batch engines.
//
// Order (the same on every engine, and schedule_one's under tie_break_rule::hashed): higher
// weighted score first; among equal scores the larger tie_key(seed, pod, node); then the lower
// node index. The first candidate is the pod's best node.
#pragma once

#include <cstddef>
#include <algorithm>
#include <bit>
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

// The lowest total that can still enter list[0..size) (at most k): the k-th best once the list is
// full, else 0; at least `at_least`.
inline std::int32_t list_floor(const candidate* list, std::uint32_t k, std::uint32_t size, std::int32_t at_least = 0) noexcept {
  const std::int32_t f = size == k ? list[k - 1].score : 0;
  return f > at_least ? f : at_least;
}

// Node node0 + i with total[i] into the list when it reaches the floor (its tie key computed only then).
inline void offer_candidate(candidate* list, std::uint32_t k, std::uint32_t& size, const std::int32_t* total, std::uint32_t node0,
                            std::uint32_t i, std::uint64_t seed, std::uint64_t pod_key, std::int32_t at_least) noexcept {
  if (total[i] < list_floor(list, k, size, at_least)) return;
  const std::uint32_t node = node0 + i;
  top_k_insert(list, k, size, candidate{total[i], node, tie_key(seed, pod_key, node)});
}

// Folds totals[0..count) of nodes node0.. (-1: does not fit) into list[0..size) (best first, at
// most k). Runs of nodes below the list's floor are skipped with a vectorised test. `at_least`: a
// total below it cannot enter the list (the caller knows; e.g. for k = 1, the tile's highest).
inline void merge_candidates(candidate* list, std::uint32_t k, std::uint32_t& size, const std::int32_t* total,
                             std::uint32_t node0, std::uint32_t count, std::uint64_t seed, std::uint64_t pod_key,
                             std::int32_t at_least = 0) noexcept {
  constexpr std::uint32_t chunk = 32;
  for (std::uint32_t c0 = 0; c0 < count; c0 += chunk) {
    const std::uint32_t c1 = count - c0 < chunk ? count : c0 + chunk;
    // Whether any total of the chunk reaches the floor: the AND of (total - floor) is negative
    // exactly when all are below it. A sign-bit reduction vectorises to two operations per vector
    // on any x86-64 target (a max of int32 lanes needs SSE4.1; without it, four).
    const std::int32_t floor = list_floor(list, k, size, at_least);
    std::int32_t below = -1;
    for (std::uint32_t i = c0; i < c1; ++i) below &= total[i] - floor;
    if (below < 0) continue;
    for (std::uint32_t i = c0; i < c1; ++i) offer_candidate(list, k, size, total, node0, i, seed, pod_key, at_least);
  }
}

// As merge_candidates, over the nodes whose bit is set in bits[0..words) (bit i % 64 of word i / 64:
// total[i] was at least the floor, or at_least, when the bits were taken). The floor only rises as
// the list fills, so offer_candidate tests each marked total again before it is hashed.
inline void merge_marked(candidate* list, std::uint32_t k, std::uint32_t& size, const std::int32_t* total, std::uint32_t node0,
                         const std::uint64_t* bits, std::uint32_t words, std::uint64_t seed, std::uint64_t pod_key,
                         std::int32_t at_least = 0) noexcept {
  for (std::uint32_t w = 0; w < words; ++w) {
    for (std::uint64_t word = bits[w]; word != 0; word &= word - 1) {
      offer_candidate(list, k, size, total, node0, w * 64 + static_cast<std::uint32_t>(std::countr_zero(word)), seed, pod_key, at_least);
    }
  }
}

// The k best of row[0..n) (totals, -1: does not fit) into list (best first); returns how many and
// sets `feasible`. For any k in O(n + highest total + k log k): a histogram of the totals gives
// the k-th best total; keys are computed only for the nodes at or above it. `counts` and `ties`
// are scratch.
inline std::uint32_t select_top_k(const std::int32_t* row, std::uint32_t n, std::uint64_t seed, std::uint64_t pod_key,
                                  std::uint32_t k, candidate* list, std::uint32_t& feasible, std::vector<std::uint32_t>& counts,
                                  std::vector<candidate>& ties) {
  std::int32_t high = -1;
  for (std::uint32_t i = 0; i < n; ++i) high = high > row[i] ? high : row[i];
  feasible = 0;
  if (high < 0 || k == 0) return 0;
  counts.assign(static_cast<std::size_t>(high) + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (row[i] >= 0) ++counts[static_cast<std::size_t>(row[i])];
  }
  for (std::uint32_t c : counts) feasible += c;
  std::int32_t threshold = high;
  std::uint32_t above = 0;  // nodes with a total above the threshold
  while (threshold > 0 && above + counts[static_cast<std::size_t>(threshold)] < k) above += counts[static_cast<std::size_t>(threshold--)];
  std::uint32_t size = 0;
  ties.clear();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (row[i] > threshold) {
      list[size++] = candidate{row[i], i, tie_key(seed, pod_key, i)};
    } else if (row[i] == threshold) {
      ties.push_back(candidate{row[i], i, tie_key(seed, pod_key, i)});
    }
  }
  auto order = [](const candidate& a, const candidate& b) { return better(a, b); };
  const std::size_t room = std::min<std::size_t>(k - above, ties.size());
  if (room < ties.size()) std::nth_element(ties.begin(), ties.begin() + static_cast<std::ptrdiff_t>(room), ties.end(), order);
  for (std::size_t j = 0; j < room; ++j) list[size++] = ties[j];
  std::sort(list, list + size, order);
  return size;
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
