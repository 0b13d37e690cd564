// The unrequested-scalar rule of least_allocated_test.go, most_allocated_test.go and
// requested_to_capacity_ratio_test.go (commits as in their transcriptions here) through the CPU batch
// engine: the same scores as the per-pod plugins give for the bypass / honour / missing-resource
// cases, with a CPU-only and a GPU pod in one batch.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "conformance/kube_table.hpp"
#include "gpusched/batch/batch_scorer.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "gpusched/profile/static_profile.hpp"
#include "gpusched/scoring/node_resources.hpp"

using namespace gpusched;
using namespace conformance;

namespace {
template <class S>
std::vector<std::vector<std::int64_t>> batch_scores(const S& s, const in_memory_cluster& c, const std::vector<pod>& pods) {
  const auto prof = make_profile(checks(resource_fit{}), scores(weighted{s, 1}));  // every pod here fits
  batch::node_table t(c);
  batch::pod_table pt(pods, t);
  auto engine = batch::make_batch_scorer(prof, {1, 1, 64, 3});
  engine.prepare(t);
  batch::score_matrix m;
  engine.scores(pt, m);
  std::vector<std::vector<std::int64_t>> out;
  for (int i = 0; i < static_cast<int>(pods.size()); ++i) {
    std::vector<std::int64_t> row;
    for (int n = 0; n < static_cast<int>(c.size()); ++n) row.push_back(m(i, n));
    out.push_back(row);
  }
  return out;
}
using rows = std::vector<std::vector<std::int64_t>>;
}  // namespace

TEST_CASE("conformance.batch: bypass and honour extended resource (LeastAllocated, MostAllocated)") {
  // Nodes 6000 / 10000 with 4 and 10 units; pods "bypass" (no extended) and "honor" (2 units).
  const auto c = cluster({{6000, 10000, 4}, {6000, 10000, 10}});
  const std::vector<pod> pods{make({3000, 5000}), make({3000, 5000, 2})};
  CHECK(batch_scores(least_allocated{{1, 1, 1}}, c, pods) == rows{{50, 50}, {50, 60}});
  CHECK(batch_scores(most_allocated{{1, 1, 1}}, c, pods) == rows{{50, 50}, {50, 40}});
}

TEST_CASE("conformance.batch: if the node doesn't have a resource (extended weight 2)") {
  const auto c = cluster({{6000, 10000}, {6000, 10000, 4}});
  const std::vector<pod> pods{make({3000, 4000})};
  CHECK(batch_scores(least_allocated{{1, 1, 2}}, c, pods) == rows{{55, 55}});
  CHECK(batch_scores(most_allocated{{1, 1, 2}}, c, pods) == rows{{45, 45}});
}

TEST_CASE("conformance.batch: TestResourceBinPackingSingleExtended") {
  const std::int64_t mem = std::int64_t{10000} * 1024 * 1024;
  const auto c = cluster({{4000, mem, 8}, {4000, mem, 4}});
  const requested_to_capacity_ratio s({{0, 0}, {100, 1}}, resource_weights{0, 0, 1});
  CHECK(batch_scores(s, c, {make({}), make({0, 0, 2}), make({0, 0, 4})}) == rows{{0, 0}, {2, 5}, {5, 10}});
}

TEST_CASE("conformance.batch: named resources and pod limits are refused by the batch engines, naming the field") {
  // docs/adr/0015-resources-by-name.md: the batch node and pod tables have no columns for them yet.
  const auto error_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const invalid_argument_error& e) {
      return e.what();
    }
    return "";
  };
  in_memory_cluster limited;
  node_spec s{"n", 1000, 1000, {}, ""};
  s.pods = 10;
  limited.add_node(s);
  CHECK(error_of([&] { batch::node_table t(limited); }).find("pods") != std::string::npos);
  const auto c = cluster({{6000, 10000}});
  batch::node_table t(c);
  const std::vector<pod> pods{make_pod("p").scalar("example.com/foo", 1)};
  CHECK(error_of([&] { batch::pod_table pt(pods, t); }).find("pod 'p'.scalars") != std::string::npos);
  least_allocated named{{1, 1, 0}, {{resource_name("example.com/foo"), 1}}};
  const auto prof = make_profile(checks(resource_fit{}), scores(weighted{named, 1}));
  auto engine = batch::make_batch_scorer(prof, {1, 1, 64, 3});
  CHECK(error_of([&] { engine.prepare(t); }).find("LeastAllocated.resources") != std::string::npos);
}
