// Expected compile error: a node_named_resources hook returning the record by value, not a pointer
// expect: hook node_named_resources(c, n) has the wrong signature
#include <gpusched/core/cluster.hpp>
#include <gpusched/core/named_resources.hpp>

namespace host {
struct cluster { int nodes = 1; gpusched::named_resources_state named; };
std::size_t node_count(const cluster& c) { return static_cast<std::size_t>(c.nodes); }
gpusched::node_state node_resources(const cluster&, gpusched::node_index) { return {}; }
gpusched::gpu_device node_gpu(const cluster&, gpusched::node_index, int) { return {}; }
gpusched::named_resources_state node_named_resources(const cluster& c, gpusched::node_index) { return c.named; }
}  // namespace host

int main() { return gpusched::named_resources_of(host::cluster{}, 0) != nullptr ? 1 : 0; }
