// Expected compile error: a node_labels hook returning strings instead of gpusched::label
// expect: hook node_labels(c, n) has the wrong signature
#include <gpusched/core/cluster.hpp>
#include <gpusched/core/node_constraints.hpp>

#include <string>
#include <vector>

namespace host {
struct cluster { int nodes = 1; std::vector<std::string> labels{"zone=a"}; };
std::size_t node_count(const cluster& c) { return static_cast<std::size_t>(c.nodes); }
gpusched::node_state node_resources(const cluster&, gpusched::node_index) { return {}; }
gpusched::gpu_device node_gpu(const cluster&, gpusched::node_index, int) { return {}; }
const std::vector<std::string>& node_labels(const cluster& c, gpusched::node_index) { return c.labels; }
}  // namespace host

int main() { return static_cast<int>(gpusched::labels_of(host::cluster{}, 0).size()); }
