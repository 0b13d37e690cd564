// Why a check rejects a node, with the quantities behind it: the optional explain() of a
// PreflightCheck, and explain_rejection() for any check.
//
// For a check `k` that offers it, `const C& c`, `const pod& p`, `node_index n`:
//   k.explain(c, p, n) -> reason_detail   detail.why == k.check(c, p, n); its text and quantities
//                                          (core/reason.hpp) say more than the reason alone
// The hot path (filtering, counting rejections) keeps using check(); explain() is for the one node
// and the one check a person asks about.
#pragma once

#include <concepts>
#include <cstddef>
#include <tuple>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"
#include "gpusched/core/reason.hpp"
#include "gpusched/preflight/preflight.hpp"

namespace gpusched {

template <class K, class C>
concept ExplainingCheck = PreflightCheck<K, C> && requires(const K& k, const C& c, const pod& p, node_index n) {
  { k.explain(c, p, n) } -> std::same_as<reason_detail>;
};

// The check's explanation; for a check without explain(), its reason alone.
template <class K, class C>
  requires PreflightCheck<K, C>
reason_detail explain_rejection(const K& k, const C& c, const pod& p, node_index n) {
  if constexpr (ExplainingCheck<K, C>) {
    return k.explain(c, p, n);
  } else {
    reason_detail d;
    d.why = k.check(c, p, n);
    return d;
  }
}

// The first check of a tuple (a static_profile's check_plugins()) that rejects node n, explained;
// ok when all pass.
template <class... K, class C>
reason_detail explain_rejection(const std::tuple<K...>& checks, const C& c, const pod& p, node_index n) {
  reason_detail d;
  std::apply([&](const auto&... k) { (void)((d = explain_rejection(k, c, p, n), d.ok()) && ...); }, checks);
  return d;
}

}  // namespace gpusched
