// Typical-pod distributions (FGD's target workload, scoring/typical_pods.hpp) that several tests score against.
#pragma once

#include "gpusched/scoring/typical_pods.hpp"

namespace testing {

// Half of the pods ask for 1000m CPU and 500 milli of one GPU, half are CPU-only.
inline gpusched::typical_workload half_and_half() {
  gpusched::typical_pod share;
  share.cpu_milli = 1000;
  share.gpu_milli = 500;
  share.num_gpu = 1;
  share.probability = 0.5;
  gpusched::typical_pod cpu;
  cpu.probability = 0.5;
  return gpusched::typical_workload({share, cpu});
}

// Two whole-GPU shapes, 4000 and 12000 milli-CPU per GPU, 0.4 each; a CPU-only shape, 2000, at 0.2.
inline gpusched::typical_workload two_ratios() {
  gpusched::typical_pod a, b, c;
  a.cpu_milli = 4000, a.gpu_milli = 1000, a.num_gpu = 1, a.probability = 0.4;
  b.cpu_milli = 12000, b.gpu_milli = 1000, b.num_gpu = 1, b.probability = 0.4;
  c.cpu_milli = 2000, c.probability = 0.2;
  return gpusched::typical_workload({a, b, c});
}

}  // namespace testing
