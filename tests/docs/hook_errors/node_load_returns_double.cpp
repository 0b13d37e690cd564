// Expected compile error: a node_load hook returning a utilisation instead of const node_metrics*
// expect: hook node_load(c, n) has the wrong signature
#include <gpusched/core/cluster.hpp>

namespace host {
struct cluster { int nodes = 1; };
std::size_t node_count(const cluster& c) { return static_cast<std::size_t>(c.nodes); }
gpusched::node_state node_resources(const cluster&, gpusched::node_index) { return {}; }
gpusched::gpu_device node_gpu(const cluster&, gpusched::node_index, int) { return {}; }
double node_load(const cluster&, gpusched::node_index) { return 0.5; }
}  // namespace host

static_assert(gpusched::Cluster<host::cluster>);
