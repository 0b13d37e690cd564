// A rejection with its quantities: resource_fit's InsufficientResource text and a host's own check
// carrying its own resource and numbers into the reason text.
#include <doctest/doctest.h>

#include <string_view>
#include <tuple>

#include "gpusched/core/in_memory_cluster.hpp"
#include "gpusched/preflight/explain.hpp"
#include "gpusched/preflight/gpu_check.hpp"
#include "gpusched/preflight/resource_fit.hpp"
#include "support/builders.hpp"

using namespace gpusched;

namespace {
// A host's licence check: each node has 4 seats; node 1 has 3 in use.
struct licence_check {
  [[nodiscard]] static constexpr std::string_view name() noexcept { return "Licences"; }
  static std::int64_t used(node_index n) noexcept { return n == 1 ? 3 : 0; }
  static std::int64_t wanted(const pod& p) noexcept { return p.num_gpu; }  // one seat per GPU
  template <Cluster C>
  [[nodiscard]] reason check(const C&, const pod& p, node_index n) const {
    return used(n) + wanted(p) <= 4 ? reason::ok : reason::custom;
  }
  template <Cluster C>
  [[nodiscard]] reason_detail explain(const C& c, const pod& p, node_index n) const {
    if (check(c, p, n) == reason::ok) return {};
    return insufficient_resource(reason::custom, "example.com/licence", wanted(p), used(n), 4);
  }
};
static_assert(ExplainingCheck<licence_check, in_memory_cluster>);
static_assert(ExplainingCheck<resource_fit, in_memory_cluster>);
static_assert(!ExplainingCheck<gpu_check, in_memory_cluster>);
}  // namespace

TEST_CASE("explain.resource_fit: Insufficient cpu / memory with requested, used and capacity") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 4000, 8192, 0));
  const pod filler = make_pod("filler").cpu(2000).memory(2048);
  c.reserve(filler, make_binding(filler, 0, 0));
  const resource_fit fit;
  const reason_detail cpu = explain_rejection(fit, c, make_pod("p").cpu(3000), 0);
  CHECK(cpu.why == reason::insufficient_cpu);
  CHECK(cpu.resource == "cpu");
  CHECK(cpu.to_string() == "Insufficient cpu (requested 3000, used 2000, capacity 4000)");
  const reason_detail mem = explain_rejection(fit, c, make_pod("p").cpu(1000).memory(7000), 0);
  CHECK(mem.to_string() == "Insufficient memory (requested 7000, used 2048, capacity 8192)");
  // Under a 150% CPU ceiling the capacity shown is the ceiling.
  const resource_fit over{1500, 1000};
  CHECK(explain_rejection(over, c, make_pod("p").cpu(4500), 0).to_string() ==
        "Insufficient cpu (requested 4500, used 2000, capacity 6000)");
  CHECK(explain_rejection(fit, c, make_pod("p").cpu(1000), 0).ok());
}

TEST_CASE("explain.a host's own check carries its quantities; a check without explain() gives its reason") {
  in_memory_cluster c;
  c.add_node(testing::gpu_node("a", 8000, 16384, 4));
  c.add_node(testing::gpu_node("b", 8000, 16384, 4));
  const pod p = make_pod("p").cpu(1000).gpus(2);
  const auto checks = std::make_tuple(resource_fit{}, licence_check{});
  CHECK(explain_rejection(checks, c, p, 0).ok());
  const reason_detail d = explain_rejection(checks, c, p, 1);
  CHECK(d.why == reason::custom);
  CHECK(d.to_string() == "Insufficient example.com/licence (requested 2, used 3, capacity 4)");
  const reason_detail g = explain_rejection(gpu_check{}, c, make_pod("q").gpus(8), 0);
  CHECK(g.why == reason::insufficient_gpu_count);
  CHECK(g.to_string() == "too few GPUs of an allowed model");
}
