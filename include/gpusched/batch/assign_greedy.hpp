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
// Pods that are alike (equal in every pod_table column but the name, hence in every plugin's
// arguments) form a class and share their scores: each class keeps a row of its totals on every
// node (while classes x nodes x 4 bytes stays within greedy_options::row_budget_bytes), updated
// for the touched node after each placement, so a pod whose candidates run out re-reads the row
// instead of scoring all nodes again. Without rows (over budget), each pod re-scores.
//
// Profiles with a normalising scorer are not supported here (a change to one node changes the
// normalised scores of all nodes).
#pragma once

#include <algorithm>
#include <map>
#include <tuple>
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
  std::uint32_t cache_k = 64;  // candidates each waiting pod keeps between rounds at first, >= 1;
                               // doubled for a pod each time its candidates run out (up to 1024)
  bool one_per_round = false;  // commit only the first proposal of each round
  std::size_t row_budget_bytes = std::size_t{256} << 20;  // for the classes' score rows
};

struct assignment {
  static constexpr std::int32_t unplaced = -1;
  std::vector<std::int32_t> node;    // per pod: its node, or unplaced
  std::vector<binding> bindings;     // per pod, where placed
  std::vector<std::int32_t> score;   // per pod: weighted total of its node when it was placed
  std::vector<std::uint32_t> order;  // placed pods in commit order
  std::uint32_t rounds = 0;
  std::uint64_t rescored_pairs = 0;  // pairs scored after the first full pass
  std::uint32_t full_rescans = 0;    // pods whose candidates ran out: all nodes ranked again
  std::uint32_t classes = 0;         // classes of alike pods
  bool class_rows = false;           // whether the classes kept score rows

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
  std::uint32_t k = 0;  // how many it keeps
};

inline bool at_or_before(const candidate& a, const candidate& b) noexcept { return !better(b, a); }

// Drops the cache entries of the nodes marked in `touched` (they are re-scored).
inline void cache_drop(candidate_cache& cache, const std::vector<std::uint8_t>& touched) {
  auto& l = cache.list;
  l.erase(std::remove_if(l.begin(), l.end(), [&](const candidate& x) { return touched[x.node] != 0; }), l.end());
}

// A touched node re-scored for the pod: `c` (score -1: no longer fits).
inline void cache_update(candidate_cache& cache, const candidate& c) {
  auto& l = cache.list;
  const std::uint32_t k = cache.k;
  if (c.score < 0 || better(cache.bound, c)) return;  // outside, and below the bound
  l.insert(std::upper_bound(l.begin(), l.end(), c, [](const candidate& a, const candidate& b) { return better(a, b); }), c);
  if (l.size() > k) {
    l.pop_back();
    cache.bound = l.back();
  }
}

// Classes of alike pods: equal in every pod_table column but the tie key.
inline std::uint32_t pod_classes(const pod_table& t, std::span<const std::uint32_t> pods, std::vector<std::uint32_t>& class_of,
                                 std::vector<std::uint32_t>& representative) {
  using key = std::tuple<std::int64_t, std::int64_t, std::int32_t, std::int32_t, std::int32_t, std::uint64_t, std::uint64_t,
                         std::int32_t, std::uint8_t>;
  std::map<key, std::uint32_t> ids;
  for (std::uint32_t p : pods) {
    const auto i = static_cast<Eigen::Index>(p);
    const key k{t.cpu_milli()[i], t.memory_mib()[i], t.num_gpu()[i], t.gpu_milli()[i], t.gpu_mem_mib()[i],
                t.allowed_gpu_models()[i], t.model_type_bit()[i], t.priority()[i], t.qos()[i]};
    const auto [it, inserted] = ids.emplace(k, static_cast<std::uint32_t>(representative.size()));
    if (inserted) representative.push_back(p);
    class_of[p] = it->second;
  }
  return static_cast<std::uint32_t>(representative.size());
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

  std::vector<std::uint32_t> waiting;
  if (only.empty()) {
    waiting.resize(n_pods);
    std::iota(waiting.begin(), waiting.end(), 0U);
  } else {
    for (std::uint32_t p : only) {
      if (p >= n_pods) throw invalid_argument_error("only", "names a pod index out of range");
    }
    waiting.assign(only.begin(), only.end());
  }

  // Classes of alike pods and, within budget, their score rows.
  std::vector<std::uint32_t> class_of(n_pods, 0), rep;
  out.classes = detail::pod_classes(pods_table, waiting, class_of, rep);
  const std::size_t n_nodes = nodes.size();
  out.class_rows = static_cast<std::size_t>(out.classes) * n_nodes * sizeof(std::int32_t) <= opts.row_budget_bytes;
  std::vector<std::int32_t> rows;
  auto row_of = [&](std::uint32_t p) { return rows.data() + static_cast<std::size_t>(class_of[p]) * n_nodes; };
  if (out.class_rows) {
    rows.resize(static_cast<std::size_t>(out.classes) * n_nodes);
    engine.parallel_for(rep.size(), [&](std::size_t c, unsigned worker) {
      engine.score_row(cargs[rep[c]], sargs[rep[c]], rows.data() + c * n_nodes, worker);
    });
  }

  std::vector<std::vector<std::uint32_t>> counts(engine.threads());
  std::vector<std::vector<candidate>> tie_scratch(engine.threads());
  std::vector<std::vector<std::int32_t>> own_rows(engine.threads());
  std::vector<std::vector<std::int32_t>> chunk_max(engine.threads());
  // Ranks all nodes for pod p again: its cache becomes its best (doubling its size each time).
  // With class rows, the class's nodes above its k-th best total and those at it are found once
  // (class_pick) and each pod only orders those by its own tie keys.
  struct class_pick {
    std::uint32_t k = 0, feasible = 0;
    std::vector<node_index> above, at;
  };
  std::vector<class_pick> picks(out.class_rows ? rep.size() : 0);
  std::vector<std::uint32_t> need(picks.size(), 0);
  auto pick_class = [&](std::size_t cl, unsigned worker) {
    class_pick& cp = picks[cl];
    const std::int32_t* row = rows.data() + cl * n_nodes;
    // One vectorised pass: each chunk's highest total, the highest, and the feasible count.
    constexpr std::size_t chunk = 32;
    auto& cmax = chunk_max[worker];
    cmax.resize((n_nodes + chunk - 1) / chunk);
    std::int32_t high = -1;
    std::uint32_t feasible = 0;
    for (std::size_t c = 0; c < cmax.size(); ++c) {
      const std::int32_t* r = row + c * chunk;
      std::int32_t m = -1;
      std::uint32_t f = 0;
      if ((c + 1) * chunk <= n_nodes) {
        for (std::size_t j = 0; j < chunk; ++j) {  // a constant trip count, so that it vectorises
          m = std::max(m, r[j]);
          f += r[j] >= 0 ? 1U : 0U;
        }
      } else {
        for (std::size_t j = 0; j < n_nodes - c * chunk; ++j) {
          m = std::max(m, r[j]);
          f += r[j] >= 0 ? 1U : 0U;
        }
      }
      cmax[c] = m;
      high = std::max(high, m);
      feasible += f;
    }
    cp.feasible = feasible;
    // The k-th best total is at least `low`, the need-th highest chunk maximum (that many chunks
    // hold a node at or above it), so only the chunks reaching `low` are counted, and only their
    // totals from `low` up (0 when there are fewer chunks than needed).
    auto& hist = counts[worker];
    std::int32_t low = 0;
    if (need[cl] <= cmax.size() && high > 0) {
      hist.assign(static_cast<std::size_t>(high) + 1, 0);
      for (std::int32_t m : cmax) {
        if (m >= 0) ++hist[static_cast<std::size_t>(m)];
      }
      std::uint32_t chunks = 0;
      low = high;
      while (low > 0 && chunks + hist[static_cast<std::size_t>(low)] < need[cl]) chunks += hist[static_cast<std::size_t>(low--)];
    }
    hist.assign(static_cast<std::size_t>(std::max(high, 0) - low) + 1, 0);
    for (std::size_t c = 0; c < cmax.size(); ++c) {
      if (cmax[c] < low) continue;
      for (std::size_t n = c * chunk; n < std::min(n_nodes, (c + 1) * chunk); ++n) {
        if (row[n] >= low) ++hist[static_cast<std::size_t>(row[n] - low)];
      }
    }
    // The highest total that `need` nodes reach (at least low; 0 at the lowest, as select_top_k).
    std::int32_t threshold = std::max(high, 0);
    std::uint32_t above = 0;
    while (threshold > low && above + hist[static_cast<std::size_t>(threshold - low)] < need[cl]) {
      above += hist[static_cast<std::size_t>(threshold-- - low)];
    }
    cp.above.clear();
    cp.at.clear();
    // Chunks whose highest total is below the threshold (most of them) are skipped.
    for (std::size_t c = 0; c < cmax.size(); ++c) {
      if (cmax[c] < threshold) continue;
      for (std::size_t n = c * chunk; n < std::min(n_nodes, (c + 1) * chunk); ++n) {
        if (row[n] > threshold) cp.above.push_back(static_cast<node_index>(n));
        else if (row[n] == threshold) cp.at.push_back(static_cast<node_index>(n));
      }
    }
    cp.k = need[cl];
  };
  auto rescan = [&](std::size_t p, unsigned worker) {
    auto& c = cache[p];
    c.k = c.k == 0 ? k : std::min<std::uint32_t>(2 * c.k, 1024);
    c.list.resize(c.k);
    std::uint32_t feasible = 0, size = 0;
    if (out.class_rows) {
      const class_pick& cp = picks[class_of[p]];
      const std::int32_t* row = row_of(static_cast<std::uint32_t>(p));
      auto& all = tie_scratch[worker];
      all.clear();
      for (node_index n : cp.above) all.push_back(candidate{row[n], n, tie_key(seed, keys[p], n)});
      if (!cp.at.empty() && row[cp.at.front()] >= 0) {  // reads no score when no node is at the threshold
        for (node_index n : cp.at) all.push_back(candidate{row[n], n, tie_key(seed, keys[p], n)});
      }
      auto order = [](const candidate& a, const candidate& b) { return better(a, b); };
      size = static_cast<std::uint32_t>(std::min<std::size_t>(c.k, all.size()));
      if (size < all.size()) std::nth_element(all.begin(), all.begin() + size, all.end(), order);
      std::sort(all.begin(), all.begin() + size, order);
      std::copy(all.begin(), all.begin() + size, c.list.begin());
      feasible = cp.feasible;
    } else {
      own_rows[worker].resize(n_nodes);
      engine.score_row(cargs[p], sargs[p], own_rows[worker].data(), worker);
      size = select_top_k(own_rows[worker].data(), static_cast<std::uint32_t>(n_nodes), seed, keys[p], c.k, c.list.data(),
                          feasible, counts[worker], tie_scratch[worker]);
    }
    c.list.resize(size);
    c.bound = (feasible > size && size > 0) ? c.list.back() : candidate{};  // candidate{}: score -1
  };
  // Rescans a set of pods: with class rows, first the picks of their classes (for the largest k
  // any of them will keep).
  std::vector<std::uint32_t> pick_list;
  auto rescan_all = [&](const std::vector<std::uint32_t>& which) {
    if (out.class_rows) {
      std::fill(need.begin(), need.end(), 0U);
      for (std::uint32_t p : which) {
        const std::uint32_t next_k = cache[p].k == 0 ? k : std::min<std::uint32_t>(2 * cache[p].k, 1024);
        need[class_of[p]] = std::max(need[class_of[p]], next_k);
      }
      pick_list.clear();
      for (std::size_t cl = 0; cl < need.size(); ++cl) {
        if (need[cl] > 0) pick_list.push_back(static_cast<std::uint32_t>(cl));
      }
      engine.parallel_for(pick_list.size(), [&](std::size_t i, unsigned worker) { pick_class(pick_list[i], worker); });
    }
    engine.parallel_for(which.size(), [&](std::size_t i, unsigned worker) { rescan(which[i], worker); });
  };
  rescan_all(waiting);

  std::vector<std::uint32_t> proposals, next, rescans;
  std::vector<node_index> touched;
  std::vector<std::uint8_t> taken(n_nodes, 0);
  std::vector<std::int32_t> rescored;
  std::vector<std::vector<std::int32_t>> buffers(engine.threads());
  const auto& prio = pods_table.priority();
  // The score pod p's class now has on node n.
  auto current = [&](std::uint32_t p, node_index n) {
    if (out.class_rows) return row_of(p)[n];
    std::int32_t v = -1;
    engine.score_nodes(cargs[p], sargs[p], std::span<const node_index>(&n, 1), &v);
    return v;
  };

  // Waiting pods per class: a class none of whose pods waits never reads its row again, so a
  // placement does not re-score it.
  std::vector<std::uint32_t> alive(out.class_rows ? rep.size() : 0);
  while (!waiting.empty()) {
    ++out.rounds;
    if (out.class_rows) {
      std::fill(alive.begin(), alive.end(), 0U);
      for (std::uint32_t p : waiting) ++alive[class_of[p]];
    }
    // Pods without a candidate: rank again where nodes outside the cache may fit; else unplaceable.
    rescans.clear();
    for (std::uint32_t p : waiting) {
      if (cache[p].list.empty() && cache[p].bound.score >= 0) rescans.push_back(p);
    }
    if (!rescans.empty()) {
      out.full_rescans += static_cast<std::uint32_t>(rescans.size());
      rescan_all(rescans);
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
      bool beaten = false;  // would a node changed in this round now beat the choice?
      for (std::size_t j = 0; j < touched.size() && !beaten; ++j) {
        const std::int32_t now = current(p, touched[j]);
        beaten = now >= 0 && better(candidate{now, touched[j], tie_key(seed, keys[p], touched[j])}, choice);
      }
      out.rescored_pairs += out.class_rows ? 0 : touched.size();
      if (beaten) continue;
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
      if (out.class_rows) {  // only the touched node is re-scored, once per class that still waits
        --alive[class_of[p]];
        for (std::size_t c = 0; c < rep.size(); ++c) {
          if (alive[c] == 0) continue;
          engine.score_nodes(cargs[rep[c]], sargs[rep[c]], std::span<const node_index>(&choice.node, 1),
                             rows.data() + c * n_nodes + choice.node);
          ++out.rescored_pairs;
        }
      }
      if (opts.one_per_round) break;
    }

    next.clear();
    for (std::uint32_t p : waiting) {
      if (out.node[p] == assignment::unplaced && !(cache[p].list.empty() && cache[p].bound.score < 0)) next.push_back(p);
    }
    // Every pod still waiting learns the touched nodes' new scores; no other node is scored.
    const std::size_t chunk = 64;
    for (auto& b : buffers) b.resize(touched.size());
    engine.parallel_for((next.size() + chunk - 1) / chunk, [&](std::size_t task, unsigned worker) {
      std::vector<std::int32_t>& sc = buffers[worker];
      for (std::size_t i = task * chunk; i < std::min(next.size(), (task + 1) * chunk); ++i) {
        const std::uint32_t p = next[i];
        if (out.class_rows) {
          const std::int32_t* row = row_of(p);
          for (std::size_t j = 0; j < touched.size(); ++j) sc[j] = row[touched[j]];
        } else {
          engine.score_nodes(cargs[p], sargs[p], touched, sc.data());
        }
        detail::cache_drop(cache[p], taken);
        for (std::size_t j = 0; j < touched.size(); ++j) {
          // A total below the bound's ranks below it whatever its tie key: cache_update would drop
          // it; skip the key's hash (most touched nodes fall here).
          if (sc[j] < 0 || sc[j] < cache[p].bound.score) continue;
          detail::cache_update(cache[p], candidate{sc[j], touched[j], tie_key(seed, keys[p], touched[j])});
        }
      }
    });
    if (!out.class_rows) out.rescored_pairs += static_cast<std::uint64_t>(next.size()) * touched.size();
    for (node_index t : touched) taken[t] = 0;
    waiting.swap(next);
  }
  return out;
}

}  // namespace gpusched::batch
