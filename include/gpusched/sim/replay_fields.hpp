// The openb replay's result fields, listed once (sim/result_fields.hpp): gpusched-sim's table and
// JSON and Python's run_paper / run_dynamic dicts are rendered from these lists.
#pragma once

#include <array>
#include <string_view>

#include "gpusched/sim/dynamic.hpp"
#include "gpusched/sim/paper.hpp"
#include "gpusched/sim/result_fields.hpp"

namespace gpusched::sim {

// One paper-mode run with the allocation read where the table reports it: the bucket at
// round(tune x 100)% arrived (merge_alloc_discrete_0920.py's curve), or the final allocation when
// the curve is empty.
struct paper_run {
  const paper_result* r = nullptr;
  double allocation_pct_at_tune = 0.0;
};

inline paper_run view(const paper_result& r, int max_pct) {
  const auto curve = r.curve(max_pct);
  return paper_run{&r, curve.empty() ? r.final_allocation_pct() : curve.back().allocation_pct};
}

// The preemption counts (paper_options / dynamic_options::preemption): in every JSON run and Python
// dict (zero with preemption off), in the table only when the replay preempts, so that the table of
// the protocol without preemption keeps its columns.
[[nodiscard]] constexpr bool preemption_field(std::string_view key) noexcept {
  return key == "preemptions" || key == "preempted_pods" || key == "time_weighted_preempted_allocation_pct";
}

// Paper mode's scalars per run. Fields with a width are the table's trailing columns, in order
// (preemption_field ones only with preemption on).
inline constexpr std::array<result_field<paper_run>, 11> paper_fields{{
    {"allocation_pct_at_tune", "alloc %", value_kind::real, 2, [](const paper_run& p) { return p.allocation_pct_at_tune; }},
    {"unallocated_pct_at_tune", "unalloc %", value_kind::real, 2,
     [](const paper_run& p) { return 100.0 - p.allocation_pct_at_tune; }, true, 11},
    {"final_frag_amount_pct", "frag amt %", value_kind::real, 2,
     [](const paper_run& p) { return p.r->final_frag_amount_pct(); }, true, 9},
    {"final_frag_ratio_pct", "frag ratio", value_kind::real, 2,
     [](const paper_run& p) { return p.r->final_frag_ratio_pct(); }, true, 9},
    {"failed_pods", "failed pods", value_kind::integer, 0,
     [](const paper_run& p) { return static_cast<double>(p.r->pods_failed); }, true, 11},
    {"wall_s", "s/run", value_kind::real, 2, [](const paper_run& p) { return p.r->seconds; }, true, 6},
    {"arrived_pods", "arrived pods", value_kind::integer, 0,
     [](const paper_run& p) { return static_cast<double>(p.r->pods_arrived); }},
    {"final_arrived_pct", "final arrived %", value_kind::real, 2,
     [](const paper_run& p) { return p.r->final_arrived_pct(); }},
    {"final_allocation_pct", "final alloc %", value_kind::real, 2,
     [](const paper_run& p) { return p.r->final_allocation_pct(); }},
    {"preemptions", "preemptions", value_kind::integer, 0,
     [](const paper_run& p) { return static_cast<double>(p.r->preemptions); }, false, 11},
    {"preempted_pods", "preempted", value_kind::integer, 0,
     [](const paper_run& p) { return static_cast<double>(p.r->pods_preempted); }, true, 9},
}};

// Dynamic mode's scalars per run. Fields with a width are the table's columns after "runs", in order
// (preemption_field ones only with preemption on).
inline constexpr std::array<result_field<dynamic_result>, 17> dynamic_fields{{
    {"time_weighted_allocation_pct", "tw alloc %", value_kind::real, 3,
     [](const dynamic_result& r) { return r.time_weighted_allocation_pct; }, false, 12},
    {"time_weighted_pending_pods", "tw pending", value_kind::real, 3,
     [](const dynamic_result& r) { return r.time_weighted_pending; }, true, 12},
    {"delay_mean_s", "delay mean", value_kind::real, 1, [](const dynamic_result& r) { return r.mean_delay; }, true, 10},
    {"delay_p95_s", "delay p95", value_kind::real, 1, [](const dynamic_result& r) { return r.p95_delay; }, true, 10},
    {"delay_max_s", "delay max", value_kind::real, 1, [](const dynamic_result& r) { return r.max_delay; }, true, 10},
    {"waited_pods", "waited", value_kind::integer, 0,
     [](const dynamic_result& r) { return static_cast<double>(r.placed_after_wait); }, true, 8},
    {"withdrawn_pods", "withdrawn", value_kind::integer, 0,
     [](const dynamic_result& r) { return static_cast<double>(r.withdrawn); }, true, 9},
    {"wall_s", "s/run", value_kind::real, 2, [](const dynamic_result& r) { return r.seconds; }, true, 6},
    {"delay_p50_s", "delay p50", value_kind::real, 1, [](const dynamic_result& r) { return r.p50_delay; }, true},
    {"delay_p99_s", "delay p99", value_kind::real, 1, [](const dynamic_result& r) { return r.p99_delay; }, true},
    {"pods", "pods", value_kind::integer, 0, [](const dynamic_result& r) { return static_cast<double>(r.pods); }},
    {"placed_pods", "placed", value_kind::integer, 0,
     [](const dynamic_result& r) { return static_cast<double>(r.placed); }},
    {"max_pending_pods", "max pending", value_kind::integer, 0,
     [](const dynamic_result& r) { return static_cast<double>(r.max_pending); }, true},
    {"preemptions", "preemptions", value_kind::integer, 0,
     [](const dynamic_result& r) { return static_cast<double>(r.preemptions); }, false, 11},
    {"preempted_pods", "preempted", value_kind::integer, 0,
     [](const dynamic_result& r) { return static_cast<double>(r.preempted); }, true, 9},
    {"time_weighted_frag_amount_pct", "tw frag %", value_kind::real, 3,
     [](const dynamic_result& r) { return r.time_weighted_frag_amount_pct; }, true},
    {"time_weighted_preempted_allocation_pct", "tw lost %", value_kind::real, 3,
     [](const dynamic_result& r) { return r.time_weighted_preempted_allocation_pct; }, true, 10},
}};

}  // namespace gpusched::sim
