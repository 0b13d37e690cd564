// Greedy rounds: many pods onto nodes at once, with the same decisions as schedule_one.
//
// Each round, every pod still waiting proposes its best node. Proposals are taken in the order
// (priority desc, score desc, pod index asc); a pod commits unless
//   - its node was already taken by an earlier commit of this round, or
//   - a node committed to earlier in this round now ranks above its choice (re-scored for it);
// such a pod waits for the next round. After the round only the nodes it touched are re-scored,
// for every waiting pod: each keeps its best `cache_k` candidates and a bound below which all
// other nodes rank, so untouched nodes are never scored again (a pod whose candidates run out is
// scored against all nodes once more).
//
// Relation to schedule_one (stated and tested): the placements are exactly those a scheduler with
// tie_break_rule::hashed, the same seed and percentage_of_nodes_to_score = 100 makes when it
// places the same pods one by one, reserving each, in the order `order` reports. That holds for
// every profile: a pod commits only while its choice is still the best on the state left by the
// commits before it (the untouched nodes cannot have changed, and the touched ones are re-scored).
// The order itself is the greedy's: round by round, and within a round by (priority, score) —
// so a higher-priority pod never loses a contested node to a lower-priority one in the same
// round, but a lower-priority pod placed in an earlier round keeps its node.
//
// Profiles with a normalising scorer are not supported here (a change to one node changes the
// normalised scores of all nodes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/batch/top_k.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/schedule/tie_break.hpp"

namespace gpusched::batch {

struct greedy_options {
  std::uint32_t cache_k = 8;   // candidates each waiting pod keeps between rounds, >= 1
  bool one_per_round = false;  // commit only the first proposal of each round
};

struct assignment {
  static constexpr std::int32_t unplaced = -1;
  std::vector<std::int32_t> node;    // per pod: its node, or unplaced
  std::vector<binding> bindings;     // per pod, where placed
  std::vector<std::int32_t> score;   // per pod: weighted total of its node when it was placed
  std::vector<std::uint32_t> order;  // placed pods in commit order
  std::uint32_t rounds = 0;
  std::uint64_t rescored_pairs = 0;  // pairs scored after the first full pass
  std::uint32_t full_rescans = 0;    // pods scored against all nodes again

  [[nodiscard]] std::size_t placed() const noexcept { return order.size(); }
  // Sum of the placed pods' scores (each at its placement).
  [[nodiscard]] std::int64_t total_score() const noexcept {
    std::int64_t t = 0;
    for (std::uint32_t p : order) t += score[p];
    return t;
  }
};

namespace detail {

// A pod's candidates between rounds: best first; every node not among them ranks below `bound`.
// bound.score == -1: no node outside fits.
struct candidate_cache {
  std::vector<candidate> list;
  candidate bound;
};

inline bool at_or_before(const candidate& a, const candidate& b) noexcept { return !better(b, a); }

// Node t was re-scored for the pod: `c` (score -1: no longer fits).
inline void cache_update(candidate_cache& cache, const candidate& c, std::uint32_t k) {
  auto& l = cache.list;
  l.erase(std::remove_if(l.begin(), l.end(), [&](const candidate& x) { return x.node == c.node; }), l.end());
  if (c.score < 0 || better(cache.bound, c)) return;  // outside, and below the bound
  l.insert(std::upper_bound(l.begin(), l.end(), c, [](const candidate& a, const candidate& b) { return better(a, b); }), c);
  if (l.size() > k) {
    l.pop_back();
    cache.bound = l.back();
  }
}

}  // namespace detail

// Places pods (the pods pods_table was built from, in the same order) onto `nodes` with greedy
// rounds. `engine` must have been prepared on `nodes`; `nodes` is changed (apply) for every
// placement; to change the host's cluster, reserve the returned bindings there (for example in a
// transaction).
//
// `only`, when not empty, restricts the rounds to those pod indices (the others stay unplaced).
template <class Profile>
assignment assign_greedy(batch_scorer<Profile>& engine, node_table& nodes, std::span<const pod> pods, const pod_table& pods_table,
                         greedy_options opts = {}, std::span<const std::uint32_t> only = {}) {
  using engine_t = batch_scorer<Profile>;
  static_assert(!engine_t::normalizes, "assign_greedy needs a profile without normalising scorers");
  if (engine.table() != &nodes) throw std::logic_error("assign_greedy: the engine was prepared on another node table");
  if (pods.size() != pods_table.size()) throw invalid_argument_error("pods", "must be the pods the pod table was built from");
  if (opts.cache_k == 0) throw invalid_argument_error("greedy_options.cache_k", "must be >= 1");
  engine.sync();

  const std::size_t n_pods = pods.size();
  const std::uint32_t k = opts.cache_k;
  const std::uint64_t seed = engine.seed();
  assignment out;
  out.node.assign(n_pods, assignment::unplaced);
  out.bindings.assign(n_pods, binding{});
  out.score.assign(n_pods, 0);

  std::vector<typename engine_t::check_args> cargs(n_pods);
  std::vector<typename engine_t::score_args> sargs(n_pods);
  std::vector<detail::candidate_cache> cache(n_pods);
  std::vector<std::uint64_t> keys(n_pods);
  for (std::size_t p = 0; p < n_pods; ++p) {
    cargs[p] = engine.make_check_args(pods_table, p);
    sargs[p] = engine.make_score_args(pods_table, p);
    keys[p] = pods_table.tie_keys()[static_cast<Eigen::Index>(p)];
  }

  // Scores pod p against every node: its cache becomes its k best.
  auto rescan = [&](std::size_t p, unsigned worker) {
    auto& c = cache[p];
    c.list.resize(k);
    std::uint32_t feasible = 0;
    const std::uint32_t size = engine.top_k_one(cargs[p], sargs[p], keys[p], k, c.list.data(), feasible, worker);
    c.list.resize(size);
    c.bound = (feasible > size && size > 0) ? c.list.back() : candidate{};  // candidate{}: score -1
  };
  std::vector<std::uint32_t> waiting;
  if (only.empty()) {
    waiting.resize(n_pods);
    std::iota(waiting.begin(), waiting.end(), 0U);
    top_k_result first;
    engine.top_k(pods_table, k, first);
    for (std::size_t p = 0; p < n_pods; ++p) {
      const auto l = first.candidates(p);
      cache[p].list.assign(l.begin(), l.end());
      cache[p].bound = (first.feasible(p) > l.size() && !l.empty()) ? l.back() : candidate{};
    }
  } else {
    for (std::uint32_t p : only) {
      if (p >= n_pods) throw invalid_argument_error("only", "names a pod index out of range");
    }
    waiting.assign(only.begin(), only.end());
    engine.parallel_for(waiting.size(), [&](std::size_t i, unsigned worker) { rescan(waiting[i], worker); });
  }
  std::vector<std::uint32_t> proposals, next;
  std::vector<node_index> touched;
  std::vector<std::uint8_t> taken(nodes.size(), 0);
  std::vector<std::int32_t> rescored;
  std::vector<std::vector<std::int32_t>> buffers(engine.threads());
  std::vector<std::uint32_t> rescans;
  const auto& prio = pods_table.priority();

  while (!waiting.empty()) {
    ++out.rounds;
    // Pods without a candidate: rescan where nodes outside the cache may fit; else unplaceable.
    rescans.clear();
    for (std::uint32_t p : waiting) {
      if (cache[p].list.empty() && cache[p].bound.score >= 0) rescans.push_back(p);
    }
    if (!rescans.empty()) {
      out.full_rescans += static_cast<std::uint32_t>(rescans.size());
      engine.parallel_for(rescans.size(), [&](std::size_t i, unsigned worker) { rescan(rescans[i], worker); });
    }
    proposals.clear();
    for (std::uint32_t p : waiting) {
      if (!cache[p].list.empty()) proposals.push_back(p);
    }
    if (proposals.empty()) break;  // nothing left fits anywhere
    std::sort(proposals.begin(), proposals.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto pa = prio[static_cast<Eigen::Index>(a)], pb = prio[static_cast<Eigen::Index>(b)];
      if (pa != pb) return pa > pb;
      const std::int32_t sa = cache[a].list.front().score, sb = cache[b].list.front().score;
      if (sa != sb) return sa > sb;
      return a < b;
    });

    touched.clear();
    for (std::uint32_t p : proposals) {
      const candidate choice = cache[p].list.front();
      if (taken[choice.node] != 0) continue;
      if (!touched.empty()) {  // would a node changed in this round now beat the choice?
        rescored.resize(touched.size());
        engine.score_nodes(cargs[p], sargs[p], touched, rescored.data());
        out.rescored_pairs += touched.size();
        bool beaten = false;
        for (std::size_t j = 0; j < touched.size() && !beaten; ++j) {
          beaten = rescored[j] >= 0 && better(candidate{rescored[j], touched[j], tie_key(seed, keys[p], touched[j])}, choice);
        }
        if (beaten) continue;
      }
      const pod& q = pods[p];
      const gpu_set gpus = engine.profile().select_gpus(nodes, q, choice.node);
      if (q.wants_gpu() && gpus == 0) {
        throw invalid_argument_error("profile.gpu_selector", "chose no devices on a node the checks accepted");
      }
      const binding b = make_binding(q, choice.node, gpus);
      nodes.apply(q, b);
      engine.sync_node(choice.node);
      taken[choice.node] = 1;
      touched.push_back(choice.node);
      out.node[p] = static_cast<std::int32_t>(choice.node);
      out.bindings[p] = b;
      out.score[p] = choice.score;
      out.order.push_back(p);
      if (opts.one_per_round) break;
    }
    next.clear();
    for (std::uint32_t p : waiting) {
      if (out.node[p] == assignment::unplaced && !(cache[p].list.empty() && cache[p].bound.score < 0)) next.push_back(p);
    }
    // Only the touched nodes are re-scored, for every pod still waiting.
    const std::size_t chunk = 64;
    for (auto& b : buffers) b.resize(touched.size());
    engine.parallel_for((next.size() + chunk - 1) / chunk, [&](std::size_t task, unsigned worker) {
      std::vector<std::int32_t>& s = buffers[worker];
      for (std::size_t i = task * chunk; i < std::min(next.size(), (task + 1) * chunk); ++i) {
        const std::uint32_t p = next[i];
        engine.score_nodes(cargs[p], sargs[p], touched, s.data());
        for (std::size_t j = 0; j < touched.size(); ++j) {
          detail::cache_update(cache[p], candidate{s[j], touched[j], tie_key(seed, keys[p], touched[j])}, k);
        }
      }
    });
    out.rescored_pairs += static_cast<std::uint64_t>(next.size()) * touched.size();
    for (node_index t : touched) taken[t] = 0;
    waiting.swap(next);
  }
  return out;
}

}  // namespace gpusched::batch
