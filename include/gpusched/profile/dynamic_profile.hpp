// Dynamic profiles: plugins chosen at run time (by name, from a config file) behind type erasure.
//
// Each plugin is erased once per profile, not once per node: a check filters a chunk of nodes and
// a scorer scores all feasible nodes in one virtual call, so the inner loops stay as fast as in a
// static_profile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/preflight/preflight.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/schedule/gpu_selection.hpp"
#include "gpusched/schedule/tie_break.hpp"
#include "gpusched/scoring/scorer.hpp"

namespace gpusched {

template <Cluster C>
class dynamic_profile {
 public:
  // A new profile checks CPU and memory: NodeResourcesFit's filter (resource_fit) is its first
  // check, as in a KubeSchedulerConfiguration, until a CPU/memory fit check is added (it then runs
  // where it is added) or without_default_fit() removes it (docs/plugins.md, "The CPU/memory fit in code").
  dynamic_profile() : selector_(std::make_shared<selector_model<best_fit_gpus>>(best_fit_gpus{})) {
    checks_.push_back(std::make_shared<check_model<resource_fit>>(resource_fit{}));
  }

  // Appends a check; checks run in the order added and a node counts under the first that rejects it.
  // Adding resource_fit, or a check that declares `static constexpr bool fits_cpu_memory = true`,
  // replaces the default fit.
  template <class K>
    requires PreflightCheck<K, C>
  dynamic_profile& add_check(K k) {
    if constexpr (fit_check<K>) without_default_fit();
    checks_.push_back(std::make_shared<check_model<K>>(std::move(k)));
    return *this;
  }

  // Removes the default NodeResourcesFit filter (Kubernetes: `disabled: - name: NodeResourcesFit`);
  // a fit check added explicitly stays.
  dynamic_profile& without_default_fit() noexcept {
    if (default_fit_) {
      checks_.erase(checks_.begin());
      default_fit_ = false;
    }
    return *this;
  }
  // Whether the first check is the default fit (not added explicitly).
  [[nodiscard]] bool has_default_fit() const noexcept { return default_fit_; }

  // Appends a scorer (per node, or a SpanScorer over all feasible nodes at once) with its weight
  // (1..100; throws invalid_argument_error otherwise).
  template <class S>
    requires Scorer<S, C> || SpanScorer<S, C>
  dynamic_profile& add_score(S s, std::int64_t weight) {
    validate_weight(weight, s.name());
    if constexpr (PreFilteringScorer<S, C>) pre_filters_.push_back(scores_.size());
    scores_.push_back(score_entry{std::make_shared<score_model<S>>(std::move(s)), weight});
    return *this;
  }

  template <class G>
    requires GpuSelector<G, C>
  dynamic_profile& set_gpu_selector(G g) {
    selector_ = std::make_shared<selector_model<G>>(std::move(g));
    return *this;
  }

  [[nodiscard]] std::size_t check_count() const noexcept { return checks_.size(); }
  [[nodiscard]] std::string_view check_name(std::size_t i) const { return checks_[i]->name(); }
  [[nodiscard]] std::string_view gpu_selector_name() const { return selector_->name(); }

  // The plugin objects behind the erasure, for adapters that need their type (the batch engine's
  // batch forms, batch/dynamic_batch.hpp): a pointer to check i / scorer i / the selector when it is
  // a T, else null.
  template <class T>
  [[nodiscard]] const T* check_as(std::size_t i) const noexcept {
    return static_cast<const T*>(checks_[i]->target(typeid(T)));
  }
  template <class T>
  [[nodiscard]] const T* score_as(std::size_t i) const noexcept {
    return static_cast<const T*>(scores_[i].impl->target(typeid(T)));
  }
  template <class T>
  [[nodiscard]] const T* gpu_selector_as() const noexcept {
    return static_cast<const T*>(selector_->target(typeid(T)));
  }

  // How ties at the best score should be broken, where a plugin asks for a rule (the Random baseline
  // draws uniformly among equally scored nodes); the driver decides whether to follow it.
  dynamic_profile& prefer_ties(tie_break_rule r) noexcept {
    ties_ = r;
    return *this;
  }
  [[nodiscard]] std::optional<tie_break_rule> preferred_ties() const noexcept { return ties_; }

  // --- SchedulingProfile ---
  void filter(const C& c, const pod& p, node_index first, std::size_t count, reason* out) const {
    for (std::size_t i = 0; i < count; ++i) out[i] = reason::ok;
    for (const auto& k : checks_) k->filter(c, p, first, count, out);
  }
  // Check k alone, on the nodes still marked ok in out (as filter runs it after checks 0..k-1):
  // for hosts that run some checks elsewhere (batch::configured_split).
  void filter_check(std::size_t k, const C& c, const pod& p, node_index first, std::size_t count, reason* out) const {
    checks_.at(k)->filter(c, p, first, count, out);
  }
  [[nodiscard]] std::size_t score_plugin_count() const noexcept { return scores_.size(); }
  [[nodiscard]] std::string_view score_plugin_name(std::size_t i) const { return scores_[i].impl->name(); }
  [[nodiscard]] std::int64_t score_plugin_weight(std::size_t i) const { return scores_[i].weight; }
  // Scorer k alone (PreScore, Score, NormalizeScore over `nodes`) into raw[0..nodes.size()): for hosts
  // that run the other scorers elsewhere (batch::configured_split).
  void score_plugin(std::size_t k, const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* raw) const {
    scores_.at(k).impl->score(c, p, nodes, raw);
  }
  // PreFilter: the scorers that have one (scoring/scorer.hpp), once per cycle before filter; none
  // runs for a profile without such scorers (the common case: one empty loop).
  void pre_filter(const C& c, const pod& p) const {
    for (const std::size_t k : pre_filters_) scores_[k].impl->pre_filter(c, p);
  }
  void score(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* raw) const {
    for (std::size_t k = 0; k < scores_.size(); ++k) scores_[k].impl->score(c, p, nodes, raw + k * nodes.size());
  }
  [[nodiscard]] gpu_set select_gpus(const C& c, const pod& p, node_index n) const { return selector_->select(c, p, n); }

 private:
  template <class K>
  static constexpr bool fit_check = std::is_same_v<K, resource_fit> || requires { requires K::fits_cpu_memory; };

  struct check_concept {
    virtual ~check_concept() = default;
    // Examines only the nodes still marked ok, so that the first rejecting check wins.
    virtual void filter(const C& c, const pod& p, node_index first, std::size_t count, reason* out) const = 0;
    [[nodiscard]] virtual std::string_view name() const = 0;
    [[nodiscard]] virtual const void* target(const std::type_info& t) const noexcept = 0;
  };
  template <class K>
  struct check_model final : check_concept {
    explicit check_model(K k) : impl(std::move(k)) {}
    void filter(const C& c, const pod& p, node_index first, std::size_t count, reason* out) const override {
      for (std::size_t i = 0; i < count; ++i) {
        if (out[i] == reason::ok) out[i] = impl.check(c, p, static_cast<node_index>(first + i));
      }
    }
    [[nodiscard]] std::string_view name() const override { return impl.name(); }
    [[nodiscard]] const void* target(const std::type_info& t) const noexcept override {
      return t == typeid(K) ? &impl : nullptr;
    }
    K impl;
  };
  struct score_concept {
    virtual ~score_concept() = default;
    virtual void score(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const = 0;
    virtual void pre_filter(const C& c, const pod& p) const = 0;
    [[nodiscard]] virtual std::string_view name() const = 0;
    [[nodiscard]] virtual const void* target(const std::type_info& t) const noexcept = 0;
  };
  template <class S>
  struct score_model final : score_concept {
    explicit score_model(S s) : impl(std::move(s)) {}
    void score(const C& c, const pod& p, std::span<const node_index> nodes, std::int64_t* out) const override {
      run_scorer(impl, c, p, nodes, out);  // PreScore (Skip), Score, NormalizeScore
    }
    void pre_filter(const C& c, const pod& p) const override {
      if constexpr (PreFilteringScorer<S, C>) impl.pre_filter(c, p);
    }
    [[nodiscard]] std::string_view name() const override { return impl.name(); }
    [[nodiscard]] const void* target(const std::type_info& t) const noexcept override {
      return t == typeid(S) ? &impl : nullptr;
    }
    S impl;
  };
  struct selector_concept {
    virtual ~selector_concept() = default;
    [[nodiscard]] virtual gpu_set select(const C& c, const pod& p, node_index n) const = 0;
    [[nodiscard]] virtual std::string_view name() const = 0;
    [[nodiscard]] virtual const void* target(const std::type_info& t) const noexcept = 0;
  };
  template <class G>
  struct selector_model final : selector_concept {
    explicit selector_model(G g) : impl(std::move(g)) {}
    [[nodiscard]] gpu_set select(const C& c, const pod& p, node_index n) const override { return impl.select(c, p, n); }
    [[nodiscard]] std::string_view name() const override { return impl.name(); }
    [[nodiscard]] const void* target(const std::type_info& t) const noexcept override {
      return t == typeid(G) ? &impl : nullptr;
    }
    G impl;
  };
  struct score_entry {
    std::shared_ptr<const score_concept> impl;
    std::int64_t weight = 1;
  };

  // Plugins are immutable once added, so copies of a profile share them.
  std::vector<std::shared_ptr<const check_concept>> checks_;
  std::vector<score_entry> scores_;
  std::vector<std::size_t> pre_filters_;  // the scorers with a PreFilter, by index in scores_
  std::shared_ptr<const selector_concept> selector_;
  std::optional<tie_break_rule> ties_;
  bool default_fit_ = true;  // checks_[0] is the default resource_fit
};

}  // namespace gpusched
