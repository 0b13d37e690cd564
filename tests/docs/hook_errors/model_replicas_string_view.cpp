// Expected compile error: a model_replicas hook taking std::string_view instead of short_name
// (issue 19's example) is a near miss, not an absent hook.
// expect: hook model_replicas(c, n, m) has the wrong signature
#include <gpusched/core/cluster.hpp>

namespace host {
struct cluster { int nodes = 1; };
std::size_t node_count(const cluster& c) { return static_cast<std::size_t>(c.nodes); }
gpusched::node_state node_resources(const cluster&, gpusched::node_index) { return {}; }
gpusched::gpu_device node_gpu(const cluster&, gpusched::node_index, int) { return {}; }
int model_replicas(const cluster&, gpusched::node_index, std::string_view) { return 1; }
}  // namespace host

static_assert(gpusched::Cluster<host::cluster>);
