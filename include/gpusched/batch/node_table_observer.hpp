// node_table_observer: the batch node table (batch/node_table.hpp) kept in step with a
// bound_cluster (core/bound_cluster.hpp) by observing it, so that schedule_one can filter and
// score with the batch formulas (batch/table_scan.hpp) without a copy of the cluster kept by hand.
//
//   bound_cluster<in_memory_cluster, batch::node_table_observer> c;
//   c.add_node(spec);                // the table is (re)built from c on its next use
//   c.bind(pod, binding);            // node b.node re-read from c (refresh), nothing allocated
//   c.base().set_load(n, &m); c.changed(n);   // a change made through base() must be announced
//   batch_node_table(c);             // the table, or nullptr when c cannot be represented
//
// A reservation or release re-reads its node from the wrapped cluster (node_table::refresh), so the
// table holds exactly what the per-node plugins read. Adding a node marks the table stale; it is
// rebuilt in one pass when next asked for (adding n nodes costs one build, not n). A cluster the
// table cannot represent (a value outside the batch engines' exact domain, a 65th GPU model or
// served model type) gives nullptr, and schedule_one takes its per-node path.
//
// Memory: the node table's own (docs/batch.md: 97 bytes per node plus 16 per GPU slot) and 16 bytes.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gpusched/batch/node_table.hpp"
#include "gpusched/core/binding.hpp"
#include "gpusched/core/bound_cluster.hpp"
#include "gpusched/core/cluster.hpp"
#include "gpusched/core/error.hpp"
#include "gpusched/core/pod.hpp"

namespace gpusched::batch {

class node_table_observer {
 public:
  // The table, current with c (the cluster this observer watches), or nullptr when c cannot be
  // represented. Builds it when stale (after construction or added nodes), which allocates.
  template <Cluster C>
  [[nodiscard]] node_table* table(const C& c) const {
    if (state_ == state::stale) {
      try {
        table_ = node_table(c);
        state_ = state::ready;
        ++builds_;
      } catch (const invalid_argument_error&) {
        state_ = state::unrepresentable;
      }
    }
    return state_ == state::ready ? &table_ : nullptr;
  }
  [[nodiscard]] bool stale() const noexcept { return state_ == state::stale; }
  // How many times the table was built: an engine prepared on an earlier build must prepare again
  // (a rebuilt table may sit at the same address with a smaller revision).
  [[nodiscard]] std::uint64_t builds() const noexcept { return builds_; }

  template <Cluster C>
  void attach(const C&) noexcept {
    state_ = state::stale;
  }
  template <Cluster C>
  void node_added(const C&, node_index) noexcept {
    state_ = state::stale;
  }
  template <Cluster C>
  void node_changed(const C& c, node_index n) noexcept {
    update(c, n);
  }
  template <class C>
  void reserved(const C& c, const pod&, const binding& b) noexcept {
    update(c, b.node);
  }
  template <class C>
  void released(const C& c, const pod&, const binding& b) noexcept {
    update(c, b.node);
  }

 private:
  enum class state : std::uint8_t { stale, ready, unrepresentable };

  template <class C>
  void update(const C& c, node_index n) noexcept {
    if (state_ != state::ready) return;  // rebuilt on next use, or not representable anyway
    try {
      table_.refresh(c, n);
    } catch (...) {  // the node left the exact domain (or memory ran out): rebuild, which decides
      state_ = state::stale;
    }
  }

  // Mutable: building the table when first asked, and interning a pod's model type (pod_table),
  // fill caches without changing what the table says about any node.
  mutable node_table table_;
  mutable state state_ = state::stale;
  mutable std::uint64_t builds_ = 0;
};

namespace detail {
template <class T, class... O>
inline constexpr bool observed_by = (std::is_same_v<T, O> || ...);
}  // namespace detail

// The batch node table of a bound_cluster observed by node_table_observer (found by ADL through the
// observer's namespace): the table (nullptr when the cluster cannot be represented) and its build.
struct table_handle {
  node_table* table = nullptr;
  std::uint64_t build = 0;
};
template <class C, class... O>
  requires detail::observed_by<node_table_observer, O...>
table_handle batch_node_table(const bound_cluster<C, O...>& c) {
  const node_table_observer& o = c.template observer<node_table_observer>();
  node_table* t = o.table(c.base());
  return {t, o.builds()};
}

}  // namespace gpusched::batch
