// table_scan: schedule_one's full scan through the batch node table (issue 14, item 2).
//
//   using cluster = bound_cluster<in_memory_cluster, batch::node_table_observer>;
//   batch::table_scheduler<cluster, decltype(profile)> s(profile, {100, seed});
//   s.place_one(c, pod);   // filters and scores every node with the batch formulas
//
// A NodeScan (schedule/schedule_one.hpp) for static profiles whose checks and scorers all have
// batch forms (batch/checks.hpp, batch/scorers.hpp): each pod's weighted totals on every node come
// from batch_scorer::score_row over the node table that a node_table_observer keeps in step with
// the cluster, so a pod costs one vectorised pass over the table instead of the plugins' per-node
// calls. The scheduler then takes the per-node path's reasons for the rejected nodes and its
// tie-break over the same totals, so decisions, reasons and counts do not change. It declines (the
// per-node path decides) when the cluster has no such table or cannot be represented in one, or
// when the pod is outside the batch engines' domain.
//
// Memory beyond the node table: the engine's prepared columns (batch_scorer::prepared_bytes; 16
// bytes per node for NodeResourcesFit's ceilings, and per scorer as docs/batch.md lists) and a
// 4-byte total per node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/batch/node_table.hpp"
#include "gpusched/batch/node_table_observer.hpp"
#include "gpusched/batch/pod_table.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/schedule/schedule_one.hpp"

namespace gpusched::batch {

template <class Profile>
class table_scan {
 public:
  table_scan(const Profile& profile, const schedule_options& o) : engine_(profile, batch_options{1, o.seed, 512, 8, 0}) {}

  template <Cluster C>
  bool totals(const C& c, const pod& p, std::span<const std::int32_t>& out) {
    if constexpr (!requires { batch_node_table(c); }) {
      return false;
    } else {
      const table_handle h = batch_node_table(c);
      if (h.table == nullptr) return false;
      node_table& t = *h.table;
      try {
        pods_.assign(std::span<const pod>(&p, 1), t);  // may give p's model type a bit in t
      } catch (const invalid_argument_error&) {
        return false;
      }
      if (engine_.table() != &t || build_ != h.build) {
        engine_.prepare(t);
        build_ = h.build;
      } else {
        engine_.sync();
      }
      if (row_.size() < t.size()) row_.resize(t.size());
      engine_.score_row(engine_.make_check_args(pods_, 0), engine_.make_score_args(pods_, 0), row_.data());
      out = std::span<const std::int32_t>(row_.data(), t.size());
      return true;
    }
  }

  [[nodiscard]] const batch_scorer<std::remove_cv_t<Profile>>& engine() const noexcept { return engine_; }

 private:
  batch_scorer<std::remove_cv_t<Profile>> engine_;
  pod_table pods_;
  std::vector<std::int32_t> row_;
  std::uint64_t build_ = 0;
};

// A scheduler whose full scans go through the cluster's node table.
template <Cluster C, class Profile>
using table_scheduler = scheduler<C, Profile, table_scan<Profile>>;

}  // namespace gpusched::batch
