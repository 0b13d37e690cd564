// A scorer that records PreFilter calls, shared by the gang tests (their profile and GPU pods:
// support/fit_profile.hpp, support/builders.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/core/cluster.hpp"
#include "gpusched/core/pod.hpp"

namespace gang_test {

// A scorer with a PreFilter hook (scoring/scorer.hpp) that records the pods it is asked about.
struct prefilter_log {
  std::shared_ptr<std::vector<std::string>> seen = std::make_shared<std::vector<std::string>>();
  static constexpr std::string_view name() noexcept { return "PreFilterLog"; }
  template <gpusched::Cluster C>
  std::int64_t score(const C&, const gpusched::pod&, gpusched::node_index) const { return 0; }
  template <gpusched::Cluster C>
  void pre_filter(const C&, const gpusched::pod& p) const { seen->push_back(p.name); }
};

}  // namespace gang_test
