// Expected compile error: a node_unschedulable hook without the node index
// expect: hook node_unschedulable(c, n) has the wrong signature
#include <gpusched/core/cluster.hpp>
#include <gpusched/core/node_constraints.hpp>

namespace host {
struct cluster { int nodes = 1; bool cordoned = false; };
std::size_t node_count(const cluster& c) { return static_cast<std::size_t>(c.nodes); }
gpusched::node_state node_resources(const cluster&, gpusched::node_index) { return {}; }
gpusched::gpu_device node_gpu(const cluster&, gpusched::node_index, int) { return {}; }
bool node_unschedulable(const cluster& c) { return c.cordoned; }
}  // namespace host

int main() { return gpusched::is_unschedulable(host::cluster{}, 0) ? 1 : 0; }
