// A consumer that includes the umbrella header and places one pod: exits 0 when it lands.
#include <gpusched/gpusched.hpp>

int main() {
  gpusched::in_memory_cluster c;
  gpusched::node_spec n{"node-a", 16000, 65536, {}, ""};
  n.add_gpus(2, "T4", 16384);
  c.add_node(n);
  auto prof = gpusched::make_profile(gpusched::checks(gpusched::gpu_check{}, gpusched::resource_fit{}),
                                     gpusched::scores(gpusched::weighted{gpusched::least_allocated{}, 1}));
  gpusched::scheduler<gpusched::in_memory_cluster, decltype(prof)> s(prof);
  const gpusched::pod p = gpusched::make_pod("p").cpu(1000).memory(1024).gpus(1);
  return s.place_one(c, p).scheduled ? 0 : 1;
}
