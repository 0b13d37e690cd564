// The parts of Kubernetes' victim selection that the pod preemptor (preemption/preemption.hpp) and
// the gang preemptor (gang/gang_preemption.hpp) share, written once: the importance order of
// candidate units, the PodDisruptionBudget pass over them and the reprieve loop. A unit is a single
// pod or a running gang (every member or none); each caller keeps its own units (any type with
// `priority` (most important member's), `start` (earliest member start), `key` and `violating`).
//
// Sources: kubernetes pkg/scheduler/util/utils.go MoreImportantPod (higher priority first, then the
// earlier start); pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go @5def93b,
// SelectVictimsOnNode (filterPodsWithPDBViolation over the potential victims most important first,
// then the reprieve: violating victims first, each added back and kept if the preemptor still fits).
#pragma once

#include <cstdint>
#include <span>

#include "gpusched/preemption/disruption_budget.hpp"

namespace gpusched::detail {

// MoreImportantPod over units: -1 when x is more important than y, 1 when less, 0 when tied
// (higher priority, then earlier start, then the lower key: the library's deterministic tie-break).
template <class Unit>
[[nodiscard]] int importance_compare(const Unit& x, const Unit& y) noexcept {
  if (x.priority != y.priority) return x.priority > y.priority ? -1 : 1;
  if (x.start != y.start) return x.start < y.start ? -1 : 1;
  if (x.key != y.key) return x.key < y.key ? -1 : 1;
  return 0;
}

// filterPodsWithPDBViolation: with a fresh copy of the budgets' allowances, the units of `order`
// (most important first) take each member's eviction; members(k, take) calls take(member key) for
// each member of unit k and decides what a violating member (take returns true) marks.
template <class Members>
void take_pdb_violations(disruption_tally& tally, const disruption_budgets& pdbs, std::span<const std::uint32_t> order,
                         Members&& members) {
  tally.reset(&pdbs);
  const auto take = [&](std::uint64_t key) noexcept { return tally.take(key); };
  for (const std::uint32_t k : order) members(k, take);
}

// The reprieve: every candidate unit starts removed; the units of `order` are added back one by
// one, and one after which the preemptor no longer fits is removed again and is a victim
// (victim(k)). checked(k) false keeps unit k without a what-if (the caller knows that adding it back
// leaves the last fitting placement as it was). Returns whether a unit was kept unchecked after the
// last what-if, so that the caller can confirm the end state.
template <class AddBack, class Remove, class Fits, class Checked, class Victim>
bool reprieve_units(std::span<const std::uint32_t> order, AddBack&& add_back, Remove&& remove, Fits&& fits,
                    Checked&& checked, Victim&& victim) {
  bool unchecked = false;
  for (const std::uint32_t k : order) {
    add_back(k);
    if (!checked(k)) {
      unchecked = true;
      continue;
    }
    if (fits()) {
      unchecked = false;
      continue;
    }
    remove(k);
    victim(k);
  }
  return unchecked;
}

}  // namespace gpusched::detail
