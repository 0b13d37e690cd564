// schedule_one: filter, score, select, choose devices — one pod, with an explained decision.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gpusched/core/binding.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/core/splitmix64.hpp"
#include "gpusched/schedule/node_versions.hpp"
#include "gpusched/schedule/tie_break.hpp"
#include "gpusched/schedule/transaction.hpp"

namespace gpusched {

// What schedule_one needs of a profile; static_profile and dynamic_profile both model it. score()
// writes every entry of its plugins x nodes matrix (the buffer is reused unfilled; docs/concepts.md).
// Optional: p.pre_filter(c, q), which schedule_one calls first in every cycle (PreFilter; the
// profiles forward it to the scorers that have one, scoring/scorer.hpp).
template <class P, class C>
concept SchedulingProfile = Cluster<C> && requires(const P& p, const C& c, const pod& q, node_index n, reason* out,
                                                  std::span<const node_index> nodes, std::int64_t* raw) {
  p.filter(c, q, n, std::size_t{1}, out);
  { p.score_plugin_count() } -> std::convertible_to<std::size_t>;
  { p.score_plugin_name(std::size_t{0}) } -> std::convertible_to<std::string_view>;
  { p.score_plugin_weight(std::size_t{0}) } -> std::convertible_to<std::int64_t>;
  p.score(c, q, nodes, raw);
  { p.select_gpus(c, q, n) } -> std::same_as<gpu_set>;
};


struct schedule_options {
  // Kubernetes' percentageOfNodesToScore: 100 examines every node; 0 is Kubernetes' adaptive rule
  // (50% - nodes/125, at least 5%, at least 100 nodes); 1..99 a fixed share. Examination starts
  // where the previous cycle stopped, as in Kubernetes.
  int percentage_of_nodes_to_score = 100;
  std::uint64_t seed = 0;       // seeds the tie-break among equal best scores
  bool explain_scores = false;  // fill schedule_result::breakdown for the chosen node
  // How ties at the best score are broken (schedule/tie_break.hpp); `hashed` decides as the batch
  // engines do.
  tie_break_rule tie_break = tie_break_rule::reservoir;
};

struct plugin_score {
  std::string_view plugin;
  std::int64_t score = 0;   // 0..100 after normalisation
  std::int64_t weight = 0;  // contribution = score * weight
};

struct schedule_result {
  bool scheduled = false;
  binding where{};               // node and devices, when scheduled
  std::int64_t score = 0;        // weighted sum of the chosen node
  rejection_counts rejections;   // why the examined nodes that do not fit were rejected
  std::uint32_t feasible = 0;    // nodes that fit among those examined
  std::vector<plugin_score> breakdown;  // per plugin, when options.explain_scores

  explicit operator bool() const noexcept { return scheduled; }
  // "3/8 nodes fit: 5 insufficient GPU share; chose v100-4 with score 570 (LoadAware 32x10 + ...)".
  [[nodiscard]] std::string explain(std::string_view node_name = {}) const;
};

inline std::string schedule_result::explain(std::string_view node_name) const {
  std::string s = rejections.to_string();
  if (scheduled) {
    s += "; chose " + (node_name.empty() ? "node #" + std::to_string(where.node) : std::string(node_name)) +
         " with score " + std::to_string(score);
    if (!breakdown.empty()) {
      s += " (";
      for (std::size_t i = 0; i < breakdown.size(); ++i) {
        if (i) s += " + ";
        s += std::string(breakdown[i].plugin) + " " + std::to_string(breakdown[i].score) + "x" + std::to_string(breakdown[i].weight);
      }
      s += ")";
    }
  }
  return s;
}

// kubernetes pkg/scheduler/schedule_one.go, numFeasibleNodesToFind.
constexpr std::size_t num_feasible_nodes_to_find(int percentage, std::size_t all_nodes) noexcept {
  constexpr std::size_t min_feasible_nodes_to_find = 100;
  constexpr std::int64_t min_feasible_nodes_percentage_to_find = 5;
  if (all_nodes < min_feasible_nodes_to_find || percentage >= 100) return all_nodes;
  std::int64_t pct = percentage;
  if (pct <= 0) {
    pct = 50 - static_cast<std::int64_t>(all_nodes) / 125;
    if (pct < min_feasible_nodes_percentage_to_find) pct = min_feasible_nodes_percentage_to_find;
  }
  const std::size_t n = all_nodes * static_cast<std::size_t>(pct) / 100;
  return n < min_feasible_nodes_to_find ? min_feasible_nodes_to_find : n;
}

// Adds the reasons r[0..n) to out. Four interleaved histograms: one counter incremented node after
// node is a store-to-load chain (the same reason repeats over long runs of nodes), which cost 6-7 %
// of an openb replay when every node was counted into rejection_counts directly (perf, issue 14).
inline void count_reasons(const reason* r, std::size_t n, rejection_counts& out) noexcept {
  std::uint32_t h[4][reason_count] = {};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++h[0][static_cast<std::size_t>(r[i])];
    ++h[1][static_cast<std::size_t>(r[i + 1])];
    ++h[2][static_cast<std::size_t>(r[i + 2])];
    ++h[3][static_cast<std::size_t>(r[i + 3])];
  }
  for (; i < n; ++i) ++h[0][static_cast<std::size_t>(r[i])];
  for (std::size_t k = 0; k < reason_count; ++k) out.by_reason[k] += h[0][k] + h[1][k] + h[2][k] + h[3][k];
}

// A full-scan fast path for schedule_one: scan.totals(c, p, out) sets `out` to the profile's
// weighted total on every node of c, in node order, -1 where the node does not fit, and returns
// true; or returns false to leave the pod to the per-node path. The totals must be exactly those
// the per-node path computes (gpusched::batch::table_scan, batch/table_scan.hpp, computes them with
// the batch formulas from a node table kept in step with the cluster). no_node_scan: no fast path.
struct no_node_scan {};
template <class S, class C>
concept NodeScan = requires(S& s, const C& c, const pod& p, std::span<const std::int32_t>& out) {
  { s.totals(c, p, out) } -> std::same_as<bool>;
};

// A scheduler holds what persists between cycles: the profile, the seeded tie-break generator,
// the round-robin start index, and scratch buffers that are reused so that scheduling a pod
// allocates nothing after the first few cycles (nor, on a NodeVersioned cluster whose profile's
// checks read only the node and the pod's shape, after each pod shape's first cycle: the filter
// verdicts are cached per shape and node under the node's stamp, schedule/node_versions.hpp).
//
// With a NodeScan (third parameter), a full scan (percentage_of_nodes_to_score = 100) without
// explain_scores takes the scan's totals: nodes it rejects are filtered one run at a time for
// their reasons (as the per-node path does), the rest are not filtered or scored per node, and
// the same tie-break picks among the same totals in the same order. Decisions, reasons and
// counts are those of the per-node path (tests/batch/test_table_scan.cpp).
//
// Not constrained in the template head: the static_asserts below say which requirement is missing
// (the hook, or the profile member) instead of a constraint dump (issue 19).
template <class C, class Profile, class Scan = no_node_scan>
class scheduler {
  static_assert(require_cluster<C>());
  static_assert(SchedulingProfile<Profile, C>,
                "gpusched: the profile does not model SchedulingProfile (filter, score_plugin_count/name/weight, "
                "score, select_gpus; docs/concepts.md, SchedulingProfile): build it with make_profile(checks(...), "
                "scores(...)) or load a dynamic_profile<C>; for a loaded config pass cfg.profile(name).profile, "
                "not the scheduler_profile itself");

 public:
  explicit scheduler(Profile profile, schedule_options opts = {})
      : profile_(std::move(profile)), opts_(opts), scan_(make_scan(profile_, opts)), rng_(opts.seed ^ 0x9E3779B97F4A7C15ULL) {
    if (opts.percentage_of_nodes_to_score < 0 || opts.percentage_of_nodes_to_score > 100) {
      throw invalid_argument_error("schedule_options.percentage_of_nodes_to_score", "must be within 0..100");
    }
  }

  [[nodiscard]] const Profile& profile() const noexcept { return profile_; }
  [[nodiscard]] const schedule_options& options() const noexcept { return opts_; }
  [[nodiscard]] Scan& scan() noexcept { return scan_; }
  // Pods decided from the scan's totals, and pods the scan declined or contradicted (a node it
  // rejected that the per-node checks accept: the per-node path then decided).
  [[nodiscard]] std::uint64_t scanned_decisions() const noexcept { return scanned_; }
  [[nodiscard]] std::uint64_t scan_fallbacks() const noexcept { return fallbacks_; }

  // Decides where p would go; changes nothing in c.
  [[nodiscard]] schedule_result schedule_one(const C& c, const pod& p) {
    schedule_result res;
    if constexpr (requires { profile_.pre_filter(c, p); }) profile_.pre_filter(c, p);  // PreFilter: every cycle
    const std::size_t all = num_nodes(c);
    if (all == 0) return res;
    if constexpr (NodeScan<Scan, C>) {
      if (opts_.percentage_of_nodes_to_score == 100 && !opts_.explain_scores) {
        std::span<const std::int32_t> totals;
        if (scan_.totals(c, p, totals) && totals.size() == all && from_totals(c, p, totals, res)) {
          ++scanned_;
          if (res.feasible == 0) return res;
          choose(c, p, res, res.feasible);
          return res;
        }
        ++fallbacks_;
        res = schedule_result{};
      }
    }
    const std::size_t want = num_feasible_nodes_to_find(opts_.percentage_of_nodes_to_score, all);
    if (next_start_ >= all) next_start_ = 0;

    feasible_.clear();
    std::size_t processed = 0;
    while (processed < all && feasible_.size() < want) {
      const std::size_t start = (next_start_ + processed) % all;
      const std::size_t len = std::min({chunk, all - processed, all - start});
      if constexpr (NodeVersioned<C> && filter_reads_shape_only<Profile>) {
        verdicts_.filter(profile_, c, p, static_cast<node_index>(start), len, reasons_);
      } else {
        profile_.filter(c, p, static_cast<node_index>(start), len, reasons_);
      }
      for (std::size_t i = 0; i < len; ++i) {
        if (reasons_[i] == reason::ok) {
          feasible_.push_back(static_cast<node_index>(start + i));
          if (feasible_.size() == want) {
            count_reasons(reasons_, i + 1, res.rejections);
            processed += i + 1;
            goto done;  // Kubernetes stops as soon as enough feasible nodes are found
          }
        }
      }
      count_reasons(reasons_, len, res.rejections);
      processed += len;
    }
  done:
    res.rejections.examined = static_cast<std::uint32_t>(processed);
    res.feasible = static_cast<std::uint32_t>(feasible_.size());
    next_start_ = (next_start_ + processed) % all;
    if (feasible_.empty()) return res;

    const std::size_t plugins = profile_.score_plugin_count();
    const std::size_t m = feasible_.size();
    // No zero fill: the profile writes every entry (SchedulingProfile; the fill was 3% of a cycle's
    // instructions at 1,000 nodes, callgrind on BM_ScorePairs/per_pair).
    if (raw_.size() < plugins * m) raw_.resize(plugins * m);
    if (plugins > 0) profile_.score(c, p, std::span<const node_index>(feasible_), raw_.data());
    totals_.resize(m);
    for (std::size_t j = 0; j < m; ++j) {
      std::int64_t total = 0;
      for (std::size_t k = 0; k < plugins; ++k) total += raw_[k * m + j] * weights_at(k);
      totals_[j] = total;
    }
    const std::size_t best = choose(c, p, res, m);
    if (opts_.explain_scores) {
      res.breakdown.reserve(plugins);
      for (std::size_t k = 0; k < plugins; ++k) {
        res.breakdown.push_back(plugin_score{profile_.score_plugin_name(k), raw_[k * m + best], weights_at(k)});
      }
    }
    return res;
  }

  // Decides and reserves. Returns the decision; the cluster changes only when scheduled. An invalid
  // pod (validate(pod)) throws and changes nothing.
  schedule_result place_one(C& c, const pod& p)
    requires MutableCluster<C>
  {
    validate(p);  // throws invalid_argument_error naming the field; allocates nothing for a valid pod
    schedule_result res = schedule_one(c, p);
    if (res.scheduled) traits_of<C>::reserve(c, p, res.where);
    return res;
  }

 private:
  static constexpr std::size_t chunk = 512;

  static Scan make_scan(const Profile& prof, const schedule_options& o) {
    if constexpr (std::is_constructible_v<Scan, const Profile&, const schedule_options&>) {
      return Scan(prof, o);
    } else {
      return Scan();
    }
  }

  // The filter step of a full scan from the scan's totals: the feasible nodes in node order with
  // their totals, and each rejected node's reason from the per-node checks (runs of rejected nodes
  // at a time). False when a node the scan rejected passes the per-node checks.
  bool from_totals(const C& c, const pod& p, std::span<const std::int32_t> totals, schedule_result& res) {
    const std::size_t all = totals.size();
    if (next_start_ >= all) next_start_ = 0;  // as the per-node path; a full scan leaves it in place
    // The feasible nodes in node order with their totals, compacted without a branch per node (which
    // node fits varies from node to node; perf put from_totals at a quarter of BM_ScheduleOne_Table
    // with one push_back pair per node). The buffers stay sized to the cluster (the first m entries
    // count), so that no cycle refills them.
    if (feasible_.size() < all) feasible_.resize(all);
    if (totals_.size() < all) totals_.resize(all);
    node_index* f = feasible_.data();
    std::int64_t* t = totals_.data();
    std::size_t m = 0;
    for (std::size_t j = 0; j < all; ++j) {
      f[m] = static_cast<node_index>(j);
      t[m] = totals[j];
      m += totals[j] >= 0 ? 1 : 0;
    }
    // Each rejected node's reason from the per-node checks, a run of rejected nodes at a time.
    std::size_t j = 0;
    while (m < all && j < all) {
      if (totals[j] >= 0) {
        ++j;
        continue;
      }
      std::size_t k = j + 1;
      while (k < all && totals[k] < 0 && k - j < chunk) ++k;
      profile_.filter(c, p, static_cast<node_index>(j), k - j, reasons_);
      for (std::size_t i = 0; i < k - j; ++i) {
        if (reasons_[i] == reason::ok) return false;
      }
      count_reasons(reasons_, k - j, res.rejections);
      j = k;
    }
    res.rejections.by_reason[static_cast<std::size_t>(reason::ok)] += static_cast<std::uint32_t>(m);
    res.rejections.examined = static_cast<std::uint32_t>(all);
    res.feasible = static_cast<std::uint32_t>(m);
    return true;
  }

  // selectHost over the first m entries of feasible_ / totals_, then the devices; fills res and
  // returns the chosen position in feasible_.
  std::size_t choose(const C& c, const pod& p, schedule_result& res, std::size_t m) {
    // selectHost: highest weighted sum; reservoir sampling among ties (schedule_one.go, selectHost),
    // driven by the scheduler's seeded generator so equal inputs and seed give equal decisions.
    std::size_t best = 0;
    std::int64_t best_score = 0;
    std::uint64_t ties = 0;
    const bool hashed = opts_.tie_break == tie_break_rule::hashed;
    const std::uint64_t pod_key = hashed ? pod_tie_key(p.name) : 0;
    std::uint64_t best_key = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const std::int64_t total = totals_[j];
      if (hashed) {  // the largest (score, key, lowest index) wins; keys only computed for contenders
        if (j == 0 || total >= best_score) {
          const std::uint64_t key = tie_key(opts_.seed, pod_key, feasible_[j]);
          if (j == 0 || ranks_before(total, key, feasible_[j], best_score, best_key, feasible_[best])) {
            best = j;
            best_score = total;
            best_key = key;
          }
        }
        continue;
      }
      if (j == 0 || total > best_score) {
        best = j;
        best_score = total;
        ties = 1;
      } else if (total == best_score && opts_.tie_break == tie_break_rule::reservoir) {
        ++ties;
        if (next_random() % ties == 0) best = j;
      }
    }
    const node_index n = feasible_[best];
    const gpu_set gpus = profile_.select_gpus(c, p, n);
    if (p.wants_gpu() && gpus == 0) {
      throw invalid_argument_error("profile.gpu_selector", "chose no devices on a node the checks accepted");
    }
    res.scheduled = true;
    res.where = make_binding(p, n, gpus);
    res.score = best_score;
    return best;
  }

  std::int64_t weights_at(std::size_t k) const {
    if (weights_.size() != profile_.score_plugin_count()) {
      weights_.resize(profile_.score_plugin_count());
      for (std::size_t i = 0; i < weights_.size(); ++i) weights_[i] = profile_.score_plugin_weight(i);
    }
    return weights_[k];
  }

  std::uint64_t next_random() noexcept { return splitmix64(rng_); }

  Profile profile_;
  schedule_options opts_;
  [[no_unique_address]] Scan scan_;
  std::uint64_t rng_;
  std::uint64_t scanned_ = 0, fallbacks_ = 0;
  std::size_t next_start_ = 0;
  reason reasons_[chunk]{};
  std::vector<node_index> feasible_;
  std::vector<std::int64_t> raw_;
  std::vector<std::int64_t> totals_;  // weighted total per feasible node
  mutable std::vector<std::int64_t> weights_;
  filter_memo verdicts_;  // used on NodeVersioned clusters with shape-only checks
};

// One-shot convenience: a fresh scheduler per call (allocates; hosts that schedule many pods keep
// a scheduler instead).
template <Cluster C, class Profile>
  requires SchedulingProfile<Profile, C>
schedule_result schedule_one(const pod& p, const C& c, const Profile& profile, schedule_options opts = {}) {
  scheduler<C, Profile> s(profile, opts);
  return s.schedule_one(c, p);
}

}  // namespace gpusched
