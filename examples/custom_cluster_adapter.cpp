// A host's own inventory — a struct of vectors it already keeps — adapted to gpusched's Cluster
// concept with four free functions, found by ADL. Nothing is copied into gpusched's types.
#include <cstdio>
#include <string>
#include <vector>

#include <gpusched/gpusched.hpp>

namespace host {

struct inventory {  // one entry per node; GPUs flattened, node i owns [gpu_begin[i], gpu_begin[i] + gpus[i])
  std::vector<std::string> name;
  std::vector<long> cpu_milli, cpu_used, mem_mib, mem_used;
  std::vector<int> gpu_begin, gpus;
  std::vector<gpusched::short_name> model;  // per node: this host has homogeneous nodes
  std::vector<int> gpu_free_milli, gpu_mem_mib, gpu_mem_free;
};

std::size_t node_count(const inventory& v) { return v.name.size(); }
gpusched::node_state node_resources(const inventory& v, gpusched::node_index n) {
  return {v.cpu_milli[n], v.cpu_used[n], v.mem_mib[n], v.mem_used[n], v.gpus[n]};
}
gpusched::gpu_device node_gpu(const inventory& v, gpusched::node_index n, int g) {
  const auto i = static_cast<std::size_t>(v.gpu_begin[n] + g);
  return {v.model[n], v.gpu_free_milli[i], v.gpu_mem_mib[i], v.gpu_mem_free[i], 0, 0};
}
std::string_view node_name(const inventory& v, gpusched::node_index n) { return v.name[n]; }  // optional hook

}  // namespace host

static_assert(gpusched::Cluster<host::inventory>);
static_assert(gpusched::NamedNodes<host::inventory>);
static_assert(!gpusched::MutableCluster<host::inventory>);  // read-only: the host binds pods itself

int main() {
  host::inventory inv{{"a", "b"}, {32000, 32000}, {30000, 4000}, {131072, 131072}, {1024, 1024},
                      {0, 2}, {2, 2}, {gpusched::short_name("T4"), gpusched::short_name("T4")},
                      {1000, 1000, 250, 1000}, {16384, 16384, 16384, 16384}, {16384, 16384, 4096, 16384}};
  using namespace gpusched;
  auto profile = make_profile(checks(gpu_check{}, resource_fit{}), scores(weighted{least_allocated{}, 1}));
  const schedule_result r = schedule_one(make_pod("p").cpu(4000).memory(8192).gpus(1).build(), inv, profile);
  std::printf("%s\n", r.explain(node_label(inv, r.where.node)).c_str());
  return r.scheduled && r.where.node == 1 ? 0 : 1;
}
