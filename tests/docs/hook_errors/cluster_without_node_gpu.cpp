// Expected compile error: a host type with node_count and node_resources but no node_gpu, used
// with a scheduler: the message names the missing hook.
// expect: has no hook `gpusched::gpu_device node_gpu
#include <gpusched/gpusched.hpp>

namespace host {
struct cluster { int nodes = 1; };
std::size_t node_count(const cluster& c) { return static_cast<std::size_t>(c.nodes); }
gpusched::node_state node_resources(const cluster&, gpusched::node_index) { return {}; }
}  // namespace host

auto profile = gpusched::make_profile(gpusched::checks(gpusched::gpu_check{}), gpusched::scores());
gpusched::scheduler<host::cluster, decltype(profile)> s(profile);
