// gpusched — configuration macros shared by every header.
#pragma once

#define GPUSCHED_VERSION_MAJOR 0
#define GPUSCHED_VERSION_MINOR 1
#define GPUSCHED_VERSION_PATCH 0
#define GPUSCHED_VERSION_STRING "0.1.0"

// One formula, three engines: every scoring and fit rule is a GPUSCHED_HD function so that the
// per-pod path, the CPU batch path and the CUDA kernels call the very same code.
// (Same idea as CUTLASS_HOST_DEVICE in cutlass/detail/helper_macros.hpp.)
#if defined(__CUDACC__)
#define GPUSCHED_HD __host__ __device__ __forceinline__
#define GPUSCHED_CUDA_COMPILER 1
#else
#define GPUSCHED_HD inline
#define GPUSCHED_CUDA_COMPILER 0
#endif
