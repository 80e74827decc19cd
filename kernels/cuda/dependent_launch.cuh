// Programmatic dependent launch (Hopper and later): a kernel launched with `dependent` set may be scheduled as the
// kernel before it on the same stream finishes, so that its launch latency overlaps that kernel's tail, in the step
// graphs too (stream capture keeps the edge). Such a kernel calls wait_for_prior_grid() before it reads anything:
// that waits until the whole grid before it has finished and its writes are visible, the order a plain launch
// gives. Elsewhere (older GPUs, a previous node that is not a kernel, a plain launch) the wait returns at once.
// Used where it measured faster (docs/PERFORMANCE.md): the list's chain in small boxes, PME's line passes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"

namespace mdsim::cuda {

__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Whether the current device takes programmatic dependent launches (compute capability 9.0 or later).
inline bool dependent_launch_supported() {
  static const bool supported = [] {
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    return major >= 9;
  }();
  return supported;
}

// kernel<<<grid, block, shared_bytes, stream>>>(args...), as a programmatic dependent launch when `dependent` (and
// the device takes one).
template <typename... Params, typename... Args>
void launch_kernel(bool dependent, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                   cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = dependent && dependent_launch_supported() ? 1 : 0;
  MDSIM_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace mdsim::cuda
